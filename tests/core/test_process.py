"""The `mindprobe` program's process: collector thresholds set for it, and an exit that skips
the interpreter's teardown but never what a command or library still has to do."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import pytest

from mindprobe.core.process import GC_THRESHOLD

REPO = Path(__file__).resolve().parents[2]


def _program(body: str, tmp_path: Path) -> subprocess.CompletedProcess:
    code = textwrap.dedent(body).replace("@TMP@", str(tmp_path))
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60)


def test_exit_runs_atexit_handlers_flushes_output_and_keeps_the_code(tmp_path):
    done = _program("""
        import atexit, sys
        from pathlib import Path
        from mindprobe.core.process import exit_now
        atexit.register(lambda: Path("@TMP@/handler-ran").write_text("yes"))
        sys.stdout.write("buffered line, not yet flushed")  # a pipe: block-buffered
        exit_now(3)
        print("never")
    """, tmp_path)
    assert done.returncode == 3, done.stderr
    assert done.stdout == "buffered line, not yet flushed"
    assert (tmp_path / "handler-ran").read_text() == "yes"


def test_exit_waits_for_a_running_non_daemon_thread(tmp_path):
    done = _program("""
        import threading, time
        from pathlib import Path
        from mindprobe.core.process import exit_now
        def work():
            time.sleep(0.3)
            Path("@TMP@/thread-finished").write_text("yes")
        threading.Thread(target=work).start()
        exit_now(0)
    """, tmp_path)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "thread-finished").read_text() == "yes"


def test_exit_into_a_closed_pipe_is_quiet():
    # like `mindprobe runs | head -1`: the reader is gone before the buffered output is flushed
    code = ("import sys, time; from mindprobe.core.process import exit_now; "
            "sys.stdout.write('x' * 1000); print('ready', file=sys.stderr, flush=True); "
            "time.sleep(0.5); exit_now(0)")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}  # block-buffered
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)
    assert proc.stderr.readline().strip() == "ready"
    proc.stdout.close()
    err = proc.stderr.read()
    assert proc.wait(timeout=60) == 0
    assert err == ""  # no "Exception ignored ... BrokenPipeError"


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full (Linux)")
def test_output_lost_to_a_full_disk_is_not_a_success():
    code = ("import sys; from mindprobe.core.process import exit_now; "
            "sys.stdout.write('x' * 100); exit_now(0)")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    with open("/dev/full", "w") as full:
        done = subprocess.run([sys.executable, "-c", code], stdout=full, stderr=subprocess.PIPE,
                              text=True, env=env, timeout=60)
    assert done.returncode == 120
    assert "could not write the output" in done.stderr and "Traceback" not in done.stderr


def test_program_process_has_the_tuned_thresholds(tmp_path):
    # `mindprobe run` sets them; a library user's process keeps its own
    done = _program("""
        import gc, sys
        import mindprobe.cli as cli
        cli.main = lambda argv=None: print(gc.get_threshold()) or 0
        cli.run_program()
    """, tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(GC_THRESHOLD)
    import gc
    assert gc.get_threshold() != GC_THRESHOLD  # importing mindprobe changes nothing here


def test_console_script_is_the_tuned_program():
    scripts = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["mindprobe"] == "mindprobe.cli:run_program"


def test_cli_module_run_as_program_exits_with_the_commands_code(tmp_path):
    done = subprocess.run([sys.executable, "-m", "mindprobe.cli", "run", "worldsense",
                           "--model", "random", "--limit", "0"], capture_output=True, text=True,
                          timeout=60, env={**os.environ, "MINDPROBE_CACHE_DIR": str(tmp_path)})
    assert done.returncode == 2
    assert "--limit must be between 1 and" in done.stderr
    assert "Traceback" not in done.stderr


def test_run_leaves_the_collector_as_it_found_it(cli, tmp_path):
    # the plan is built with the collector paused and frozen for the run, then handed back
    import gc

    assert gc.isenabled() and gc.get_freeze_count() == 0
    code, _, err = cli("run", "worldsense:fresh", "--model", "random", "--limit", 20,
                       "--runs-dir", tmp_path / "runs")
    assert code == 0, err
    assert gc.isenabled() and gc.get_freeze_count() == 0
    keep = [object() for _ in range(10)]  # noqa: F841 - a caller's own frozen objects
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        code, _, err = cli("run", "worldsense:fresh", "--model", "random", "--limit", 20,
                           "--runs-dir", tmp_path / "runs2")
        assert code == 0, err
        assert gc.isenabled() and gc.get_freeze_count() > frozen // 2  # not unfrozen
    finally:
        gc.unfreeze()


def test_a_closed_stdout_pipe_ends_quietly(tmp_path):
    """`mindprobe published | head` closes the pipe early: no BrokenPipeError traceback."""
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before anything is written
    try:
        done = subprocess.run([sys.executable, "-m", "mindprobe.cli", "published", "sort"],
                              stdout=write_end,
                              stderr=subprocess.PIPE, text=True, timeout=60, cwd=tmp_path)
    finally:
        os.close(write_end)
    assert "Traceback" not in done.stderr and "BrokenPipe" not in done.stderr, done.stderr
    assert done.returncode == 1
