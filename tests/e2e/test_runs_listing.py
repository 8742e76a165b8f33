"""Issue 22, observation 8: `mindprobe runs` shows the full model label (the table wraps, the
name does not) and counts the items of the plan last run."""

from __future__ import annotations

from mindprobe.testing import TestServer
from mindprobe.testing.responders import worldsense_answer

LONG = "a-rather-long-served-checkpoint-name-qwen2.5-7b-instruct-awq"


def test_runs_shows_full_label_and_items_of_the_current_plan(cli, tmp_path):
    """A smaller --limit than the run's is refused (issue 32: it would mix two plans); the
    listing counts the run's own items."""
    runs = tmp_path / "runs"
    with TestServer(responder=worldsense_answer, models=[LONG]) as srv:
        for limit in (50, 300):  # a larger --limit extends the run
            code, _, err = cli("run", "worldsense:fresh", "--model",
                               f"openai:{LONG}@{srv.base_url}", "--runs-dir", runs,
                               "--limit", limit)
            assert code == 0, err
        code, _, err = cli("run", "worldsense:fresh", "--model", f"openai:{LONG}@{srv.base_url}",
                           "--runs-dir", runs, "--limit", 50)
        assert code == 2 and "leaves out" in err and "larger one" in err, err
    code, rows, _ = cli("runs", "--runs-dir", runs, "--json")
    assert code == 0
    (row,) = rows
    assert row["model"] == LONG and row["items"] == row["n_items"] <= 302
    assert row["status"] == "finished" and row["complete"]
    code, text, _ = cli("runs", "--runs-dir", runs)
    assert code == 0
    assert LONG in text  # one piece, not cut to "direct___r…"
    assert f"{row['items']}/{row['n_items']}" in text


def test_runs_shows_each_runs_name(cli, tmp_path):
    """Two runs told apart only by `--name` are two rows that say which is which."""
    runs = tmp_path / "runs"
    for name in ("alpha", "beta"):
        code, _, err = cli("run", "worldsense:fresh", "--model", "random", "--limit", 8,
                           "--name", name, "--runs-dir", runs)
        assert code == 0, err
    code, text, _ = cli("runs", "--runs-dir", runs)
    assert code == 0
    lines = [ln for ln in text.splitlines() if "worldsense/fresh/basic" in ln]
    assert len(lines) == 2 and "alpha" in lines[0] and "beta" in lines[1], text
    assert any(" name " in ln and " model " in ln for ln in text.splitlines())
    code, rows, _ = cli("runs", "--runs-dir", runs, "--json")
    assert [r["name"] for r in rows] == ["alpha", "beta"]
