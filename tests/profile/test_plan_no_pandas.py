"""A plan imports no pandas (~0.4 s of a warm profile plan's 2 s): the modules a plan imports
leave it out, and an estimate's table, given as rows, becomes a DataFrame only when read."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

SCRIPT = textwrap.dedent("""
    import sys
    from pathlib import Path

    import mindprobe.cli
    from mindprobe.benchmarks.sort import data, export, planned  # a warm plan reads the memo
    from mindprobe.benchmarks.worldsense import data, precision, sampling  # noqa: F811
    from mindprobe.engine.settings import Reporter, RunSettings
    from mindprobe.profiling.plan import profiled
    from mindprobe.profiling.request import ProfileRequest
    from mindprobe.profiling.run import plan

    mindprobe.cli.build_parser()
    root = Path(sys.argv[1])
    prof = plan(ProfileRequest(run=RunSettings(model="random", runs_dir=sys.argv[2]),
                               size="quick", data_root=root), Reporter(progress=False))
    ast = next(e for e in prof.entries if e.name == "already_said_that")
    assert [e.name for e in prof.entries] == [n for n, _ in profiled("quick")]
    assert ast.status == "runs" and ast.estimate["requests"] > 0, ast.status
    estimate = ast.task.bench.estimate(ast.plans[0][1], ast.task.opts)
    print("BEFORE", "pandas" in sys.modules)
    frame = estimate.tables["estimate"].frame
    print("AFTER", "pandas" in sys.modules, type(frame).__name__, len(frame))
""")


@pytest.mark.slow
def test_a_plan_imports_no_pandas(shared_data, tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    (data / "already_said_that").symlink_to(shared_data("already_said_that"))
    out = subprocess.run([sys.executable, "-c", SCRIPT, str(data), str(tmp_path / "runs")],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "BEFORE False" in out.stdout
    assert "AFTER True DataFrame 2" in out.stdout
