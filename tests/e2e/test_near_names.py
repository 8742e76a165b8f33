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
    assert "--format parquet: --run RUN --out OUT [--force]" in shown
    assert "--format mlflow: --run RUN [--to URI]" in shown
    assert max(map(len, shown.splitlines())) <= 80


def test_a_near_benchmark_name_is_suggested(cli):
    code, _, err = cli("run", "mr-gsm8k", "--model", "random")
    assert code == 2 and "unknown benchmark 'mr-gsm8k'; did you mean 'mr_gsm8k'?" in err
    code, _, err = cli("run", "nosuchbench", "--model", "random")
    assert code == 2 and "did you mean" not in err  # nothing near: no guess


def test_a_near_flag_is_suggested(cli):
    code, _, err = cli("run", "worldsense:fresh", "--model", "random", "--limt", 5)
    assert code == 2 and "did you mean '--limit'?" in err, err
    code, _, err = cli("list", "--jsn")
    assert code == 2 and "did you mean '--json'?" in err, err


def test_a_near_model_of_the_servers_list_is_suggested(cli, tmp_path):
    from mindprobe.testing import TestServer

    with TestServer(models=["gpt-4o-mini-2024-07-18", "qwen2.5-7b"]) as srv:
        code, _, err = cli("run", "worldsense:fresh", "--model",
                           f"openai:gpt-4o-mini@{srv.base_url}", "--limit", 2,
                           "--runs-dir", tmp_path / "runs", "--no-cache")
    assert code == 2, err
    assert "unknown model 'gpt-4o-mini'" in err
    assert "did you mean 'gpt-4o-mini-2024-07-18'?" in err, err
