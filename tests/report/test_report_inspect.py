"""`mindprobe export --format inspect`: a run as an Inspect evaluation log, written through
inspect_ai's own API and read back by it with every item, its messages, scores and metadata,
and the run's headline as the log's results."""

from __future__ import annotations

import json

import pytest

log = pytest.importorskip("inspect_ai.log", reason="needs inspect_ai (pip install "
                          "'mindprobe[inspect]')")


def _records(run_dir):
    return [json.loads(x) for x in (run_dir / "records.jsonl").read_text().splitlines()]


@pytest.mark.slow


def test_export_reads_back_with_every_item(cli, report_runs, tmp_path):
    for run_dir in report_runs.dirs.values():
        out = tmp_path / f"{run_dir.parent.name}-{run_dir.name}.eval"
        code, _, err = cli("export", "--format", "inspect", "--run", run_dir, "--out", out)
        assert code == 0, err
        got = log.read_eval_log(str(out))
        records = _records(run_dir)
        assert got.status == "success"
        by_id = {s.id: s for s in got.samples}
        assert len(got.samples) == len(records)
        assert set(by_id) == {str(r["id"]) for r in records}  # every item
        code, doc, _ = cli("analyse", json.loads((run_dir / "manifest.json").read_text())
                           ["benchmark"], "--run", run_dir, "--json")
        head = doc["headline"]
        if head and head["value"] is not None:
            score = got.results.scores[0]
            assert score.name == head["name"]
            assert score.metrics["value"].value == pytest.approx(head["value"])
        for rec in records:
            s = by_id[str(rec["id"])]
            assert isinstance(s.scores["outcome"].value, str)
            assert "usage" not in s.metadata
        if "worldsense" in str(run_dir):
            rec = records[0]
            s = by_id[str(rec["id"])]
            assert s.scores["correct"].value == rec["correct"]
            assert s.target == rec["goldresp"] and s.metadata["problemname"] == rec["problemname"]
            assert s.output.completion == rec["reply"]


def test_export_uses_stored_requests(cli, report_runs, tmp_path):
    """A record with `request` (messages as sent) and `reply` becomes the sample's messages."""
    src = report_runs.of("worldsense")[0]
    run = tmp_path / "run"
    run.mkdir()
    (run / "manifest.json").write_text((src / "manifest.json").read_text())
    recs = _records(src)[:3]
    for r in recs:
        r["request"] = {"messages": [{"role": "system", "content": "be brief"},
                                     {"role": "user", "content": f"question {r['id']}"}],
                        "params": {"temperature": 0.0, "max_tokens": 16}}
        r["reply"] = "TRUE"
    (run / "records.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))
    out = tmp_path / "x.eval"
    code, _, err = cli("export", "--format", "inspect", "--run", run, "--out", out)
    assert code == 0, err
    got = log.read_eval_log(str(out))
    assert len(got.samples) == 3
    s = next(x for x in got.samples if x.id == str(recs[0]["id"]))
    assert [(m.role, m.text) for m in s.messages] == [
        ("system", "be brief"), ("user", f"question {recs[0]['id']}"), ("assistant", "TRUE")]
    assert [m.role for m in s.input] == ["system", "user"]
    assert s.output.completion == "TRUE"


def test_export_chained_calls_and_shared_texts(cli, report_runs, tmp_path):
    """Several calls of one item (a re-ask continuing the chat holds only its new messages,
    `history` counting the ones it repeats) and a long text stored once per run."""
    src = report_runs.of("worldsense")[0]
    run = tmp_path / "run"
    run.mkdir()
    (run / "manifest.json").write_text((src / "manifest.json").read_text())
    rec = _records(src)[0]
    rec["request"] = [
        {"messages": [{"role": "system", "content": {"sha256": "ab" * 32}},
                      {"role": "user", "content": ["Is it ", {"sha256": "ab" * 32}, "?"]}],
         "params": {"max_tokens": 16}, "reply": "maybe"},
        {"history": 3, "messages": [{"role": "user", "content": "Only TRUE or FALSE."}],
         "params": {"max_tokens": 16}, "reply": "FALSE"}]
    rec["reply"] = "FALSE"
    (run / "records.jsonl").write_text(json.dumps(rec) + "\n")
    (run / "texts.jsonl").write_text(json.dumps({"sha256": "ab" * 32, "text": "LONG"}) + "\n")
    out = tmp_path / "c.eval"
    code, _, err = cli("export", "--format", "inspect", "--run", run, "--out", out)
    assert code == 0, err
    (s,) = log.read_eval_log(str(out)).samples
    assert [(m.role, m.text) for m in s.messages] == [
        ("system", "LONG"), ("user", "Is it LONG?"), ("assistant", "maybe"),
        ("user", "Only TRUE or FALSE."), ("assistant", "FALSE")]
    assert s.output.completion == "FALSE"


@pytest.mark.parametrize("args, message", [
    (["--run", "{tmp}/nope", "--out", "{tmp}/x.eval"], "not a run directory"),
    (["--run", "{ws}", "--out", "{tmp}/x.txt"], "named .eval"),
    (["--run", "{ws}", "--out", "{tmp}/missing/x.eval"], "does not exist"),
    (["--run", "{ws}"], "required"),
])
def test_export_mistakes(cli, report_runs, tmp_path, args, message):
    ws = str(report_runs.of("worldsense")[0])
    argv = [a.format(tmp=tmp_path, ws=ws) for a in args]
    code, _, err = cli("export", "--format", "inspect", *argv)
    assert code == 2 and message in err, err
    assert "Traceback" not in err
