"""The embedded backend: any GGUF served in-process by llama.cpp (xllamacpp) on 127.0.0.1.

The server is a real HTTP server, so it is locked down: a random per-process API key, no CORS
origins, no web UI, no tools. Each live conversation owns one slot, so llama.cpp reuses that
slot's KV cache for the shared prefix and a 100-turn chat costs linear, not quadratic, prefill.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import json
import secrets
import tempfile
from pathlib import Path
from typing import Any

from mindprobe.core.data import file_sha256
from mindprobe.core.files import write_file
from mindprobe.core.model import NO_REASONING, Reasoning
from mindprobe.core.paths import cache_dir
from mindprobe.core.process import usable_cpus
from mindprobe.errors import ModelError
from mindprobe.models.embedded import GEMMA, Embedded, ensure, pinned_sha256
from mindprobe.models.gguf import read_gguf_info
from mindprobe.models.llamacpp import LlamaCppFeatures
from mindprobe.models.openai_compat import OpenAICompatModel
from mindprobe.models.slots import SlotPool

DEFAULT_MODEL_NAME = GEMMA.label
#: Prompt tokens the engine evaluates per step (llama.cpp's physical batch, `n_ubatch`).
DEFAULT_BATCH = 512


def default_threads() -> int:
    """Engine threads when --threads is not given: half the CPUs this process may use, at
    least one. llama.cpp's threads meet at a barrier for every layer, so one thread that the
    OS deschedules stalls them all: on a 2-core machine shared with other work (load average
    15, bench/engine_threads.py) 1 thread generated 11.8 tokens/s and 2 threads 1.4-1.9; on
    idle cores more threads are faster (`--threads`)."""
    return max(1, usable_cpus() // 2)


def default_gguf() -> Path:
    """The embedded Gemma 3 270M, joined from its installed chunks into the data cache once
    (never into the installed package: `models.embedded`)."""
    return ensure(GEMMA)


def _stat_key(path: Path) -> str:
    st = path.stat()
    return f"{st.st_size}:{st.st_mtime_ns}"


def _hash_cache_path() -> Path:
    return cache_dir() / "models" / "sha256.json"


def _hash_cache_put(path: Path, digest: str) -> None:
    p = _hash_cache_path()
    try:
        data = json.loads(p.read_text())
    except (OSError, ValueError):
        data = {}
    data[str(path.resolve())] = {"stat": _stat_key(path), "sha256": digest}
    p.parent.mkdir(parents=True, exist_ok=True)
    write_file(p, json.dumps(data, indent=1), replace=True)


def gguf_sha256(path: Path) -> str:
    """sha256 of a GGUF, memoised by size+mtime: the identity of a local model in the cache."""
    known = pinned_sha256(path)
    if known is not None:
        return known
    p = _hash_cache_path()
    try:
        entry = json.loads(p.read_text()).get(str(path.resolve()))
    except (OSError, ValueError):
        entry = None
    if entry and entry.get("stat") == _stat_key(path):
        return entry["sha256"]
    digest = file_sha256(path)
    _hash_cache_put(path, digest)
    return digest


def start_llama_server(path: Path, *, embedded: bool, n_parallel: int, ctx_per_slot: int,
                       threads: int, host: str, batch: int | None = None,
                       slot_dir: str | None = None) -> tuple[Any, str, str]:
    """(server, base URL, API key) of a locked-down llama.cpp server: a random API key, no
    CORS origins, no web UI, no tools; full KV for sliding-window models so prefixes can be
    reused. Shared by `local` and the Ray replicas, so both answer alike."""
    try:
        import xllamacpp
    except ImportError:
        raise ModelError("xllamacpp is not installed; `pip install xllamacpp`") from None
    key = secrets.token_urlsafe(24)
    p = xllamacpp.CommonParams()
    p.model.path = str(path)
    p.n_parallel = n_parallel
    p.n_ctx = ctx_per_slot * n_parallel
    p.hostnames = [host]
    p.port = 0
    p.api_keys = [key]
    p.ui = False
    p.cors_origins = ""
    p.server_tools = []
    p.swa_full = True
    p.cache_prompt = True
    p.warmup = False
    # Plain (not repacked) weights: the repacked CPU kernels sum in another order for one row
    # than for four, so a greedy reply depended on which other slots' requests were batched
    # with it (4 of 8 short-prompt replies changed at 4 slots; with plain kernels 8 of 8 were
    # those of one slot).
    p.no_extra_bufts = True
    p.verbosity = -1
    if embedded:
        # The embedded GGUF is the base model and carries no chat template; use Gemma's turn
        # format rather than llama.cpp's ChatML fallback.
        p.use_jinja = False
        p.chat_template = "gemma"
    p.cpuparams.n_threads = threads
    p.cpuparams_batch.n_threads = threads
    if batch:
        p.n_batch = batch
        p.n_ubatch = batch
    if slot_dir:  # slots' KV saved and restored there (prefix copies between slots)
        p.slot_save_path = slot_dir
    try:
        server = xllamacpp.Server(p)
    except Exception as exc:  # the engine reports bad files with a bare RuntimeError
        raise ModelError(f"llama.cpp could not load {path}: {exc}") from None
    address = server.listening_address
    root = address if "://" in address else f"http://{address}"
    _await_task_loop(server, root, key)
    return server, root + "/v1", key


#: A server that never ran a task, kept referenced: dropping it would block the process.
_UNSTOPPABLE: list[Any] = []

#: Seconds a just-started server may take to run its first task.
LOOP_WAIT = 30.0


def _await_task_loop(server: Any, root: str, key: str) -> None:
    """Return once the server's task loop has run a task (`GET /slots` is one).

    `xllamacpp.Server` returns before that loop starts, and a stop request sent in that window
    is lost: the server's destructor then waits for the loop forever. An interrupt right after
    the start (or any error then) hung the process about one time in ten; dropping the server
    at once after starting it hung within two tries, and never in 40 after this wait (~5 ms)."""
    import urllib.request

    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # 127.0.0.1 direct
    request = urllib.request.Request(root + "/slots", headers={"Authorization": f"Bearer {key}"})
    try:
        with opener.open(request, timeout=LOOP_WAIT) as reply:
            reply.read()
    except OSError as exc:  # URLError and HTTPError among them
        _UNSTOPPABLE.append(server)  # the process's exit ends it; a join here would not return
        raise ModelError(f"the embedded llama.cpp server started but did not run its first "
                         f"task within {LOOP_WAIT:.0f} s ({exc}); its process must end to "
                         f"stop it") from None


def engine_window(trained: int | None, ctx_per_slot: int) -> tuple[int, str]:
    """(window, source): the engine's n_ctx per slot, or the window the GGUF was trained for
    (`<arch>.context_length`, read from its header) where that is smaller."""
    if trained is not None and trained < ctx_per_slot:
        return trained, "the GGUF's context_length"
    return ctx_per_slot, "the embedded engine's n_ctx per slot"


class LocalModel(LlamaCppFeatures, OpenAICompatModel):
    """A GGUF served by an in-process llama.cpp server that lives as long as this object."""

    supports_slots = True
    heavy_start = True  # llama.cpp loads the GGUF (seconds)

    def deterministic(self, concurrency: int) -> bool | None:
        """Measured on the embedded engine: one request at a time, replies repeat exactly.
        With plain kernels (see `start_llama_server`) short prompts batched together give
        the same greedy replies too, but prompts longer than a batch step are cut into steps
        shared with other slots' tokens, and how they are cut still changes a reply now and
        then (7 of 8 equal for 1,355-token prompts at 4 slots)."""
        return concurrency == 1
    default_concurrency = 1
    token_count_method = "llama.cpp tokenizer of the GGUF"

    def __init__(self, path: Path | None, *, spec: str, ctx_per_slot: int = 8192,
                 threads: int | None = None, batch: int | None = None,
                 reasoning: Reasoning = NO_REASONING, slot_dir: str | None = None,
                 embedded: Embedded | None = None) -> None:
        self._path_arg = path
        #: The embedded model served (`path` None), or None for a GGUF of the user's.
        self.embedded = (embedded or GEMMA) if path is None else None
        #: A slot folder shared with other servers on this machine (else a private one).
        self.slot_dir = slot_dir
        self.ctx_per_slot = ctx_per_slot
        self.threads = threads or default_threads()
        self.batch = batch or DEFAULT_BATCH
        label = self.embedded.label if self.embedded else Path(path).stem  # type: ignore[arg-type]
        super().__init__(
            model=label, base_url="http://127.0.0.1:1/v1", api_key=None, spec=spec,
            label=f"local-{label}" if path is not None else label, grammar="llama",
            reasoning=reasoning,
        )
        #: The GGUF's trained context (`<arch>.context_length`; None: not stated).
        self.trained_context: int | None
        # The protocol follows the GGUF: a chat template makes it an instruct model (the
        # paper's chat requests), none a base model that completes text, so its replies stop
        # at a benchmark's answer end. An embedded model's is declared with its pin (its file
        # may not be fetched yet, and a dry run must plan the same protocol as the run).
        if self.embedded is not None:
            chat, self.trained_context = (self.embedded.chat_template,
                                          self.embedded.context_length)
            where = f"{self.embedded.spec}'s GGUF"
        else:
            meta = read_gguf_info(Path(path).expanduser())  # type: ignore[arg-type]
            chat, self.trained_context = meta.has_chat_template, meta.context_length
            where = "the GGUF"
        caps = {"logprobs", "prefix", "tokenize", "template", "grammar"}
        self.capabilities = frozenset(caps | {"chat" if chat else "base"})
        self.protocol_reason = (f"chat template in {where} (tokenizer.chat_template): an "
                                "instruct model" if chat else
                                f"no chat template in {where}: a base model")
        self.grammar_fixed = True
        self.set_context_window(*engine_window(self.trained_context, ctx_per_slot))
        self._server: Any = None
        self._slots: SlotPool | None = None
        self._slot_dir: tempfile.TemporaryDirectory[str] | None = None
        self.n_slots = 0
        self.gguf: Path | None = None
        self._sha = ""

    def _learn_window(self, card: Any, props: dict[str, Any] | None) -> None:
        """Known before the engine starts (`engine_window`): its /props restates n_ctx only."""

    def identity(self) -> dict[str, Any]:
        # The port and key change every process; the weights and the engine do not. Known
        # before the engine starts (the sha256 is memoised), so a re-run with nothing left to
        # ask is identified without loading the model.
        if not self._sha and self.embedded is not None:
            self._sha = str(self.embedded.file.sha256)  # pinned: known before it is fetched
        elif not self._sha:
            path = self._gguf_path()
            if path.is_file():
                self.gguf, self._sha = path, gguf_sha256(path)
        return {"engine": "llama.cpp", "gguf_sha256": self._sha, "model": self.model}

    def _gguf_path(self) -> Path:
        """The GGUF to load: an embedded model's fetched or assembled on first use."""
        if self.embedded is not None:
            return ensure(self.embedded)
        return Path(self._path_arg).expanduser()  # type: ignore[arg-type]

    def describe(self) -> dict[str, Any]:
        """The engine's settings belong in the manifest (they change speed, not answers)."""
        return {**super().describe(), "engine": {"threads": self.threads, "batch": self.batch,
                                                 "slots": self.n_slots or 1,
                                                 "ctx_per_slot": self.ctx_per_slot}}

    def configure(self, concurrency: int) -> None:
        """Decide the number of slots before start: one per concurrently running item."""
        self.n_slots = max(1, concurrency)

    async def start(self) -> None:
        if self._server is None:
            starting = asyncio.ensure_future(asyncio.to_thread(self._start_server))
            try:
                await asyncio.shield(starting)
            except asyncio.CancelledError:
                # Ctrl-C while llama.cpp loads: the thread cannot be stopped, so let it finish
                # and stop what it started here, before the interrupt goes on (never a server
                # left running behind an interrupted run, nor a thread racing the exit).
                with contextlib.suppress(BaseException):
                    await starting
                self._stop_server()
                raise
        await super().start()

    def _start_server(self) -> None:
        path = self._gguf_path()
        if not path.is_file():
            raise ModelError(f"GGUF file not found: {path} (use local:PATH/TO/model.gguf)")
        self.gguf = path
        # an embedded model's file was verified against its pin when it was found
        self._sha = str(self.embedded.file.sha256) if self.embedded else gguf_sha256(path)
        if self.slot_dir is None:
            self._slot_dir = tempfile.TemporaryDirectory(prefix="mindprobe-slots-")
        self._server, self.base_url, key = start_llama_server(
            path, embedded=self.embedded is GEMMA, n_parallel=self.n_slots or 1,
            ctx_per_slot=self.ctx_per_slot, threads=self.threads, host="127.0.0.1",
            batch=self.batch,
            slot_dir=self.slot_dir if self._slot_dir is None else self._slot_dir.name)
        self._api_key = key
        self._headers["Authorization"] = f"Bearer {key}"
        atexit.register(self._stop_server)

    async def _preflight(self) -> None:
        """Our own server was just started in-process: nothing to check."""

    def _stop_server(self) -> None:
        self._server = None  # dropping the last reference stops and joins the server
        if self._slot_dir is not None:
            self._slot_dir.cleanup()
            self._slot_dir = None

    async def close(self) -> None:
        await super().close()
        self._stop_server()

    async def acquire_slot(self, group: str | None = None) -> int:
        if self._slots is None:
            self._slots = SlotPool(self.n_slots or 1)
            self._slots.attach(self)
        return await self._slots.take(group)

    def release_slot(self, slot: int) -> None:
        if self._slots is not None:
            self._slots.give(slot)

    def slots_contended(self) -> bool:
        return self._slots is not None and self._slots.waiting > 0
