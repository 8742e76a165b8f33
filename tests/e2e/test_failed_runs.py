"""A run whose every item failed has no score: `run`, `analyse`, `runs` and the report say it
failed and how many items errored, never `0 [0, 0.66]` as if the model had answered wrongly."""

from __future__ import annotations

from mindprobe.testing import TestServer


def test_every_item_failed_is_a_failed_run_everywhere(cli, tmp_path):
    with TestServer(fault_500=1.0) as srv:  # every request: HTTP 500
        code, doc, err = cli("run", "worldsense:fresh", "--model",
                             f"openai:test-model@{srv.base_url}", "--limit", 4,
                             "--max-attempts", 1, "--runs-dir", tmp_path / "runs", "--json")
    assert code == 1, err
    n = doc["failed"]["of"]  # --limit 4 rounds up to whole tuples
    assert doc["headline"] is None and doc["failed"] == {"errors": n, "of": n} and n >= 4
    assert any(f"failed: {n} of {n} items ended in errors" in w for w in doc["warnings"])
    assert doc["tables"]["errors"][0]["items"] == n
    assert "HTTP 500" in doc["tables"]["errors"][0]["error"]

    (run,) = (tmp_path / "runs" / "worldsense" / "fresh").iterdir()
    code, adoc, err = cli("analyse", "worldsense", "--run", run, "--json")
    assert code == 0 and adoc["headline"] is None and adoc["failed"]["errors"] == n, err

    code, rows, err = cli("runs", "--runs-dir", tmp_path / "runs", "--json")
    assert code == 0 and rows[0]["failed"] == {"errors": n, "of": n}
    code, text, err = cli("runs", "--runs-dir", tmp_path / "runs")
    assert f"failed ({n} errors)" in text + err

    out = tmp_path / "report.html"
    code, _, err = cli("report", "--runs-dir", tmp_path / "runs", "--out", out)
    assert code == 0, err
    html = out.read_text()
    assert f"all {n} items ended in errors" in html and "not scored" in html
