"""OpenAI-compatible HTTP server on 127.0.0.1 for exercising the real client end to end.

Tests and benchmarks need real sockets, real retries and real failures (500/429/hangs/dropped
connections/garbage bodies) at reproducible rates, which no mock of the client can give.
Use it in-process (``with TestServer(fault_500=0.1) as srv: srv.base_url``) or as
``python -m mindprobe.testing.server --port 0``, which prints ``READY <base_url>`` when listening.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from aiohttp import web

from mindprobe.errors import DataError
from mindprobe.testing.service import ServerConfig, Service
from mindprobe.testing.shapes import CONTENT_FORMS


async def serve(
    service: Service, port: int, stop: asyncio.Event, on_ready: Callable[[str], None]
) -> None:
    """Listen on 127.0.0.1:port (0 = any free port), call on_ready(base_url), serve until stop."""
    # handler_cancellation: a client that times out or disconnects ends its hung handler.
    runner = web.AppRunner(
        service.app(), access_log=None, handler_cancellation=True, shutdown_timeout=0.5
    )
    await runner.setup()
    try:
        await web.TCPSite(runner, "127.0.0.1", port).start()
        on_ready(f"http://127.0.0.1:{runner.addresses[0][1]}/v1")
        await stop.wait()
    finally:
        await runner.cleanup()


class TestServer:
    """The server in a background thread with its own event loop, for synchronous tests.

    ``TestServer(**kwargs)`` takes the fields of :class:`ServerConfig` plus ``port``.
    """

    __test__ = False  # not a pytest test class despite the name

    def __init__(self, *, port: int = 0, **config: Any) -> None:
        self._service = Service(ServerConfig(**config))
        self._port = port
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._base_url: str | None = None
        self._failure: BaseException | None = None

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1``; only valid while started."""
        if self._base_url is None:
            raise RuntimeError("TestServer is not running; call start() or use it as a context")
        return self._base_url

    @property
    def port(self) -> int:
        """The bound port (the OS picks one when constructed with ``port=0``)."""
        return int(urlsplit(self.base_url).port or 0)

    def start(self, timeout: float = 30.0) -> TestServer:
        """Start serving and block until the port is bound (or startup failed)."""
        if self._thread is not None:
            raise RuntimeError("TestServer is already running")
        ready = threading.Event()
        self._failure = None
        self._thread = threading.Thread(
            target=self._run, args=(ready,), daemon=True, name="mindprobe-testserver"
        )
        self._thread.start()
        if not ready.wait(timeout) or self._failure is not None:
            self._thread.join(timeout)
            self._thread = None
            raise RuntimeError(f"TestServer failed to start: {self._failure!r}") from self._failure
        return self

    def _run(self, ready: threading.Event) -> None:
        async def main() -> None:
            self._loop, self._stop = asyncio.get_running_loop(), asyncio.Event()

            def announce(url: str) -> None:
                self._base_url = url
                ready.set()

            await serve(self._service, self._port, self._stop, announce)

        try:
            asyncio.run(main())
        except BaseException as exc:  # surfaced to start(); after startup there is no caller
            self._failure = exc
        finally:
            self._base_url = None
            ready.set()

    def stop(self, timeout: float = 10.0) -> None:
        """Stop serving (hung handlers are cancelled) and join the thread; idempotent."""
        if self._thread is None:
            return
        if self._loop is not None and self._stop is not None and not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(timeout)
        self._thread, self._loop, self._stop = None, None, None

    def _call(self, fn: Callable[[], dict[str, Any]]) -> dict[str, Any]:
        """Run fn on the server's loop so counters are never read mid-update."""
        if self._loop is None or self._base_url is None:
            raise RuntimeError("TestServer is not running")

        async def run() -> dict[str, Any]:
            return fn()

        return asyncio.run_coroutine_threadsafe(run(), self._loop).result(timeout=10)

    def stats(self) -> dict[str, Any]:
        """Same JSON as GET /stats."""
        return self._call(self._service.stats.snapshot)

    def reset_stats(self) -> dict[str, Any]:
        """Zero the counters (fail_first_n progress and the prefix cache are kept)."""
        return self._call(self._service.stats.reset)

    def __enter__(self) -> TestServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


@contextlib.contextmanager
def server_group(*configs: dict[str, Any], **common: Any) -> Iterator[list[TestServer]]:
    """Several servers at once, e.g. endpoints of one model with different latencies:
    ``with server_group({"latency": 0.01}, {"latency": 0.05}, reply="OK") as servers``.
    Each dict overrides `common`; all are stopped at the end (a stopped one is skipped)."""
    servers = [TestServer(**{**common, **c}) for c in configs]
    try:
        for srv in servers:
            srv.start()
        yield servers
    finally:
        for srv in servers:
            srv.stop()


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m mindprobe.testing.server",
        description="OpenAI-compatible test server on 127.0.0.1.",
    )
    p.add_argument("--port", type=int, default=0, help="0 = pick a free port (default)")
    p.add_argument("--models", default="test-model", help="comma-separated model names")
    p.add_argument("--api-key", default=None, help="require 'Authorization: Bearer KEY'")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--script", type=Path, help='JSONL of {"match": regex, "reply": text}')
    mode.add_argument("--echo", action="store_true", help="reply with the last user message")
    p.add_argument("--reply", default="OK", help="fixed reply (and the script fallback)")
    p.add_argument("--seed", type=int, default=0, help="seed for fault and jitter draws")
    p.add_argument("--prefix-cache", action="store_true", help="simulate cached_tokens")
    p.add_argument("--reasoning-parser", action="store_true",
                   help="send a reply's leading <think> block as reasoning_content")
    for flag in (
        "latency",
        "latency-jitter",
        "fault-500",
        "fault-429",
        "fault-timeout",
        "fault-drop",
        "fault-malformed",
    ):
        p.add_argument(f"--{flag}", type=float, default=0.0)
    p.add_argument("--hang-seconds", type=float, default=30.0, help="how long a timeout hangs")
    p.add_argument("--retry-after", type=int, default=1, help="Retry-After seconds on 429")
    p.add_argument("--fail-first-n", type=int, default=0, help="first N requests get a 500")
    p.add_argument("--echo-headers", default="",
                   help="comma-separated request headers repeated at the start of every "
                        "reply and error message (e.g. Authorization)")
    p.add_argument("--max-concurrency", type=int, default=0,
                   help="requests served at once (0: unlimited); the rest queue")
    p.add_argument("--max-model-len", type=int, default=None,
                   help="a context window stated as vLLM does (the model card) and enforced")
    p.add_argument("--n-ctx", type=int, default=None,
                   help="a context window stated as llama.cpp does (/props) and enforced")
    p.add_argument("--owned-by", default="mindprobe-test",
                   help="who /v1/models says owns the models (llamacpp, vllm: recognised)")
    p.add_argument("--content-form", choices=CONTENT_FORMS, default="string",
                   help="how a chat reply's text is sent: a string, a list of parts, null "
                   "beside reasoning_content, or an integer/object no client can read")
    return p


def config_from_args(args: argparse.Namespace) -> ServerConfig:
    """Map parsed CLI flags onto a ServerConfig (flag names are the field names, dashed)."""
    fields = {k: v for k, v in vars(args).items() if k in ServerConfig.__dataclass_fields__}
    fields["models"] = [m.strip() for m in args.models.split(",") if m.strip()]
    fields["simulate_prefix_cache"] = args.prefix_cache
    fields["echo_headers"] = [h.strip() for h in args.echo_headers.split(",") if h.strip()]
    return ServerConfig(**fields)


async def _serve_until_signalled(service: Service, port: int) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await serve(service, port, stop, lambda url: print(f"READY {url}", flush=True))


def main(argv: Sequence[str] | None = None) -> int:
    """CLI entry point: serve until SIGTERM/SIGINT; bad flags or script exit with status 2."""
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        service = Service(config_from_args(args))
    except DataError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except ValueError as exc:
        parser.error(str(exc))
    asyncio.run(_serve_until_signalled(service, args.port))
    return 0


if __name__ == "__main__":
    sys.exit(main())
