"""An embedded llama.cpp server stopped right after it started: the process goes on.

`xllamacpp.Server` returns before its task loop runs; a stop sent in that window was lost and
the destructor waited forever (CI: SIGTERM during the embedded model's start hung the run)."""

from __future__ import annotations

import subprocess
import sys

import pytest

SCRIPT = """
import sys
from mindprobe.models.embedded import GEMMA, find
from mindprobe.models.local import start_llama_server

path = find(GEMMA)
if path is None:
    sys.exit(3)
for _ in range(6):
    server, url, key = start_llama_server(path, embedded=True, n_parallel=1, ctx_per_slot=2048,
                                          threads=2, host="127.0.0.1")
    server = None  # stops it: the destructor joins the server's loop
print("stopped")
"""


@pytest.mark.slow
def test_a_server_dropped_as_soon_as_it_started_stops():
    pytest.importorskip("xllamacpp")
    try:
        done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                              timeout=90)
    except subprocess.TimeoutExpired:
        pytest.fail("dropping a just-started embedded server blocked the process")
    if done.returncode == 3:
        pytest.skip("the embedded Gemma GGUF is not installed here")
    assert done.returncode == 0 and "stopped" in done.stdout, done.stderr
