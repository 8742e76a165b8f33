"""Issue 32 (observations 2, 6, 8, 9) and issue 33 (observation 5): one run state, derived in
one place (`core.run_state`), shown alike by `runs`, `analyse`, the report and the library; a
larger sample extends a run, a smaller one is refused; a finished re-run loads no model;
the library's names are visible and its errors carry the plan."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import mindprobe
from mindprobe.core.resume import check_planned
from mindprobe.core.run_state import derive
from mindprobe.errors import UsageError


def test_state_is_derived_from_records_and_manifest():
    ok = [{"id": str(i)} for i in range(3)]
    bad = [*ok[:2], {"id": "2", "error": "boom"}]
    # the records are the truth: every planned item recorded is finished, whatever the
    # manifest says (a process that died after its last record, a scoring that failed)
    for status in ("finished", "running", "interrupted", "failed"):
        assert derive({"status": status, "n_items": 3}, ok).state == "finished"
    assert derive({"status": "running", "n_items": 3}, ok, held_elsewhere=True).state \
        == "running"
    s = derive({"status": "finished_with_errors", "n_items": 3}, bad)
    assert (s.state, s.failed, s.complete, s.subset()) == ("partial", 1, False, "2 of 3 items")
    assert s.text() == "partial 3/3 (1 failed)"
    s = derive({"status": "finished", "n_items": 3}, ok[:2], torn=1)
    assert (s.state, s.torn, s.text()) == ("partial", 1, "partial 2/3 (1 torn line)")
    assert derive({"status": "interrupted", "n_items": 3}, ok[:1]).state == "interrupted"
    assert derive({"status": "failed", "n_items": 3}, ok[:1]).state == "failed"
    assert derive({"status": "finished", "n_items": 1}, [{"id": "0", "error": "x"}]).state \
        == "failed"


def test_a_plan_that_puts_another_item_under_a_recorded_id_is_refused(tmp_path):
    recorded = {"0": {"id": "0", "item_key": "sample 41"}, "1": {"id": "1"}}
    check_planned(tmp_path, recorded, {"0": "sample 41", "1": "sample 3", "2": None}, "hint")
    with pytest.raises(UsageError, match="item 0 was sample 41 and would now be sample 7"):
        check_planned(tmp_path, recorded, {"0": "sample 7", "1": None}, "hint")
    with pytest.raises(UsageError, match="1 of which this plan leaves out"):
        check_planned(tmp_path, recorded, {"0": "sample 41"}, "hint")


def _ast(cli, data, runs, n, *extra):
    return cli("run", "already_said_that:which-is-heavier", "--model", "random", "--data-dir",
               data, "--runs-dir", runs, "--n-samples", n, "--json", *extra)


def test_a_larger_sample_extends_the_run_a_smaller_one_is_refused(cli, shared_data, tmp_path):
    data = shared_data("already_said_that")
    runs = tmp_path / "runs"
    code, doc, err = _ast(cli, data, runs, 2)
    assert code == 0, err
    records = Path(doc["run"]) / "records.jsonl"
    first = records.read_text().splitlines()
    code, doc, err = _ast(cli, data, runs, 3)  # issue 32.6: resumes, keeping the 2 chats
    assert code == 0, err
    lines = records.read_text().splitlines()
    assert lines[:2] == first and len(lines) == 3
    assert [json.loads(x)["item_key"] for x in lines][:2] == \
        [json.loads(x)["item_key"] for x in first]
    assert doc["state"] == "finished" and doc["items"]["done"] == 3
    code, _, err = _ast(cli, data, runs, 2)
    assert code == 2 and "leaves out" in err and "Traceback" not in err
    code, _, err = _ast(cli, data, runs, 3, "--max-turns", 50)  # another experiment
    assert code == 2 and "different config" in err and "max_turns" in err


def test_errors_and_torn_lines_say_so_in_every_view(cli, shared_data, tmp_path):
    """Issue 33.5: analyse --json of a run with errored items says `failed` and `complete:
    false`; the headline over the chats that finished is labelled as a subset (terminal,
    JSON, report, runs, library); a torn last line is counted, not dropped as finished."""
    data = shared_data("already_said_that")
    runs = tmp_path / "runs"
    code, doc, err = _ast(cli, data, runs, 4)
    assert code == 0, err
    run = Path(doc["run"])
    records = run / "records.jsonl"
    lines = records.read_text().splitlines()
    lines[0] = json.dumps({"id": json.loads(lines[0])["id"], "error": "connection dropped"})
    records.write_text("\n".join(lines) + "\n")
    code, doc, err = cli("analyse", "already_said_that", "--run", run, "--json")
    assert code == 0, err
    assert doc["failed"] == {"errors": 1, "of": 4} and doc["complete"] is False
    assert doc["state"] == "partial" and doc["items"]["scored"] == 3
    assert doc["headline"]["subset"] == "3 of 4 items"
    assert any("over 3 of 4 items" in w for w in doc["warnings"])
    code, text, err = cli("analyse", "already_said_that", "--run", run)
    assert "partial 4/4 (1 failed)" in text and "over 3 of 4 items" in text
    code, rows, _ = cli("runs", "--runs-dir", runs, "--json")
    assert [(r["status"], r["items"], r["errors"], r["complete"]) for r in rows] == \
        [("partial", 4, 1, False)]
    assert mindprobe.load_run(run).status == "partial"
    assert mindprobe.load_run(run).results().headline.subset == "3 of 4 items"
    code, _, err = cli("report", run, "--out", tmp_path / "r.md")
    assert code == 0, err
    assert "(over 3 of 4 items)" in (tmp_path / "r.md").read_text()
    # a torn last line: one item fewer, reported, never "finished"
    records.write_text("\n".join(lines[1:]) + "\n" + lines[0][:10])
    code, doc, err = cli("analyse", "already_said_that", "--run", run, "--json")
    assert code == 0, err
    assert doc["items"]["torn"] == 1 and doc["state"] == "partial" and not doc["complete"]
    assert doc["headline"]["subset"] == "3 of 4 items"
    code, rows, _ = cli("runs", "--runs-dir", runs, "--json")
    assert rows[0]["torn"] == 1 and rows[0]["status"] == "partial"


def test_a_run_whose_scoring_failed_reads_finished_once_scored(cli, shared_data, tmp_path):
    """Issue 32.2: every item recorded, but the process ended before closing the run (its
    scoring failed): `runs`, the report, the library and a re-run all say finished."""
    data = shared_data("already_said_that")
    runs = tmp_path / "runs"
    code, doc, err = _ast(cli, data, runs, 2)
    assert code == 0, err
    run = Path(doc["run"])
    manifest = json.loads((run / "manifest.json").read_text())
    manifest["status"] = "running"
    manifest.pop("summary")
    (run / "manifest.json").write_text(json.dumps(manifest))
    code, rows, _ = cli("runs", "--runs-dir", runs, "--json")
    assert rows[0]["status"] == "finished" and rows[0]["complete"]
    assert mindprobe.load_run(run).status == "finished"
    code, _, err = cli("report", run, "--out", tmp_path / "r.md")
    assert code == 0, err
    assert "partial" not in (tmp_path / "r.md").read_text()
    code, doc, err = _ast(cli, data, runs, 2)  # the re-run scores it and closes it
    assert code == 0, err
    assert doc["state"] == "finished"
    assert json.loads((run / "manifest.json").read_text())["status"] == "finished"


def test_library_names_are_visible_and_errors_carry_the_plan(tmp_path):
    names = dir(mindprobe)
    for name in ("evaluate", "profile", "load_run", "Benchmark", "Results", "RunPlan"):
        assert name in names
    with pytest.raises(UsageError) as exc:
        mindprobe.profile("random", data_dir=tmp_path, runs_dir=tmp_path / "runs",
                          progress=False, strict=True)
    message = str(exc.value)
    assert "see the plan above" not in message
    assert "worldsense: missing data" in message and "mr_gsm8k: missing data" in message


def test_a_larger_mr_gsm8k_sample_extends_the_run(cli, shared_data, tmp_path):
    """--sample N is drawn in an order that does not depend on N (`core.sampling`): 6 then
    12 keeps the 6 recorded solutions; 4 after that is refused."""
    data = shared_data("mr_gsm8k")

    def run(n):
        return cli("run", "mr_gsm8k", "--model", "random", "--data-dir", data.parent,
                   "--data-file", data / "sample_records.jsonl", "--sample", n,
                   "--runs-dir", tmp_path, "--json")

    code, doc, err = run(6)
    assert code == 0, err
    records = Path(doc["run"]) / "records.jsonl"
    first = records.read_text().splitlines()
    code, doc, err = run(12)
    assert code == 0, err
    assert records.read_text().splitlines()[:6] == first and doc["items"]["done"] == 12
    code, _, err = run(4)
    assert code == 2 and "leaves out" in err
