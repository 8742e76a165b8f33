"""Words a user is pointed to exist where they are pointed (issue #43): `export --help` lists
the flags its missing-argument error names, and a near miss of a benchmark, a flag or a
server's model names the near name."""

from __future__ import annotations

import subprocess
import sys


def _mindprobe(*args: object) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mindprobe.cli", *map(str, args)],
                          capture_output=True, text=True, timeout=120)


def test_export_help_lists_what_its_error_points_to():
    missing = _mindprobe("export", "--format", "parquet")
    assert missing.returncode == 2 and "--run, --out" in missing.stderr
    assert "see `mindprobe export --help`" in missing.stderr
    shown = _mindprobe("export", "--help").stdout
    assert "--format parquet: --run RUN, --out OUT" in shown
    assert "--format mlflow: --run RUN, --to URI (optional)" in shown
    assert max(map(len, shown.splitlines())) <= 80
