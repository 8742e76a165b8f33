"""A real MLflow tracking server on 127.0.0.1 for tests (`mlflow server`, a SQLite store and a
local artifact folder), and a proxy in front of it that a test can make demand HTTP Basic
credentials or hold requests (a tracker that is slow while a run is interrupted), so the
tracker paths are tested over real sockets with MLflow's own client, never a mock."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def mlflow_server(root: Path, timeout: float = 120.0) -> Iterator[str]:
    """`mlflow server` with its store and artifacts under `root`; yields its URL."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "mlflow", "server", "--host", "127.0.0.1", "--port", str(port),
         "--backend-store-uri", f"sqlite:///{root / 'mlflow.db'}",
         "--default-artifact-root", (root / "artifacts").as_uri(), "--workers", "1"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=root,
        start_new_session=True)  # its uvicorn and job workers go with it at the end
    uri = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                with urllib.request.urlopen(uri + "/health", timeout=2):
                    break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("mlflow server did not start: "
                                       + proc.stderr.read().decode()[-2000:]) from None
                time.sleep(0.5)
        yield uri
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)


class TrackerProxy(ThreadingHTTPServer):
    """Forwards every request to `upstream`. `auth`: the `Authorization` header it demands
    (401 without it); `hold`: a request whose path contains it is held (`held` is set) until
    `release` is set or `hold_s` pass, then answered 503 and never forwarded (its client was
    interrupted meanwhile: a late write must not land after the test moved on)."""

    daemon_threads = True

    def __init__(self, upstream: str, auth: str | None = None) -> None:
        super().__init__(("127.0.0.1", 0), _Forward)
        self.upstream = upstream.rstrip("/")
        self.auth = auth
        self.hold: str | None = None
        self.hold_s = 120.0
        self.held = threading.Event()
        self.release = threading.Event()
        self.seen_auth: set[str] = set()
        self._thread = threading.Thread(target=self.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def __enter__(self) -> TrackerProxy:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()
        self.server_close()


class _Forward(BaseHTTPRequestHandler):
    server: TrackerProxy

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 (stdlib name)
        pass

    def _forward(self) -> None:
        given = self.headers.get("Authorization")
        if given:
            self.server.seen_auth.add(given)
        if self.server.auth is not None and given != self.server.auth:
            self._answer(401, b"", "text/plain")
            return
        if self.server.hold and self.server.hold in self.path:
            self.server.held.set()
            self.server.release.wait(self.server.hold_s)
            self._answer(503, b"", "text/plain")
            return
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0)) or None
        req = urllib.request.Request(self.server.upstream + self.path, data=body,
                                     method=self.command)
        for name in ("Content-Type", "Accept"):
            if self.headers.get(name):
                req.add_header(name, self.headers[name])
        try:
            with urllib.request.urlopen(req, timeout=60) as resp:
                status, data, ctype = resp.status, resp.read(), resp.headers.get(
                    "Content-Type", "application/json")
        except urllib.error.HTTPError as exc:
            status, data, ctype = exc.code, exc.read(), exc.headers.get(
                "Content-Type", "application/json")
        self._answer(status, data, ctype)

    def _answer(self, status: int, data: bytes, ctype: str) -> None:
        with contextlib.suppress(OSError):  # the client may be gone (killed meanwhile)
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _forward
