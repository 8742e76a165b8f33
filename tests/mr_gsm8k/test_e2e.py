"""MR-GSM8K end to end through `mindprobe.cli.main`: scripted model and judges on a real HTTP
test server, every count of the JSON checked against a plan computed here independently."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from mindprobe.benchmarks.mr_gsm8k.task import baseline_choices
from mindprobe.cli import main
from mindprobe.testing import TestServer

JUDGE_MARK = "Ground Truth Error Reason:"

# Category -> (reply builder, expected outcome, T2 hit, judge-a verdict). `s` is the label step.
WRONG_PLAN = [
    ("parse_error", lambda s: "Final Judgement: wrong\nFirst Error Step: 1\n", "fp", False, None),
    ("says_correct", lambda s: _reply("**correct**", "N/A", "N/A"), "fp", False, None),
    ("incorrect_dot", lambda s: _reply("Incorrect.", str(s), "x"), "fp", False, None),
    ("bad_step", lambda s: _reply("wrong", str(s + 1), "JUDGE-YES"), "tn", False, None),
    ("hit_yes", lambda s: _reply("**wrong**", str(s), "JUDGE-YES it adds"), "tn", True, True),
    ("hit_no", lambda s: _reply("wrong", f"Step {s}", "JUDGE-NO it is fine"), "tn", True, False),
]
CORRECT_PLAN = [
    ("correct", lambda s: _reply("**correct**", "N/A", "N/A"), "tp", False, None),
    ("incorrect_quirk", lambda s: _reply("Incorrect.", "2", "x"), "tp", False, None),
    ("says_wrong", lambda s: _reply("wrong", "2", "x"), "fn", False, None),
    ("says_incorrect", lambda s: _reply("incorrect", "2", "x"), "fn", False, None),
]
TYPES = ("original", "POT", "reversed")


def _reply(judgement: str, step: str, analysis: str) -> str:
    return (
        "Step-by-step Evaluation: checked.\n"
        f"Final Judgement: {judgement}\nFirst Error Step: {step}\nError Analysis: {analysis}"
    )


def _judge_reply(decision: str) -> str:
    return (
        "Step-by-Step Reasoning: r\nStudent Error Reason Analysis: a\n"
        f"3. Final Decision: {decision}"
    )


def _records(shared: Path, make_item: Any) -> list[dict[str, Any]]:
    real = [json.loads(line) for line in (shared / "sample_records.jsonl").read_text().splitlines()]
    synthetic = [
        make_item(
            "correct", question_type=TYPES[i % 3],
            model_output_steps=[f"Step 1: Unique synthetic {i}: 3 + 2 = 5", "Step 2: #### 5"],
        )
        for i in range(8)
    ]
    return real + synthetic


class Script:
    """The scripted model plus two judges; remembers every request it answered."""

    def __init__(self, records: list[dict[str, Any]]) -> None:
        self.plan: dict[str, tuple] = {}
        self.by_solution: dict[str, str] = {}
        n_wrong = n_correct = 0
        for rec in records:
            if rec["model_output_solution_correctness"] == "wrong":
                self.plan[rec["uuid"]] = WRONG_PLAN[n_wrong % len(WRONG_PLAN)]
                n_wrong += 1
            else:
                self.plan[rec["uuid"]] = CORRECT_PLAN[n_correct % len(CORRECT_PLAN)]
                n_correct += 1
            self.by_solution["\n".join(rec["model_output_steps"])] = rec["uuid"]
        self.records = {r["uuid"]: r for r in records}
        self.model_calls: list[str] = []
        self.prompts: list[str] = []
        self.judge_calls: list[tuple[str, str]] = []
        self.fail: set[str] = set()
        self.fail_judge: set[str] = set()

    def __call__(self, body: dict[str, Any]) -> str:
        prompt = body["messages"][-1]["content"]
        if JUDGE_MARK in prompt:
            self.judge_calls.append((body["model"], prompt))
            if any(str(self.records[u]["model_output_steps"]) in prompt for u in self.fail_judge):
                raise RuntimeError("scripted judge failure")
            if body["model"] == "judge-b":
                return _judge_reply("[Correct]")
            return _judge_reply("Correct" if "JUDGE-YES" in prompt else "Wrong")
        hits = [u for sol, u in self.by_solution.items() if sol in prompt]
        assert len(hits) == 1, f"model prompt matches {len(hits)} items"
        uuid = hits[0]
        self.model_calls.append(uuid)
        self.prompts.append(prompt)
        if uuid in self.fail:
            raise RuntimeError("scripted failure")
        step = self.records[uuid]["model_output_solution_first_error_step"]
        return self.plan[uuid][1](step)

    def expected(self, uuids: list[str], judged: bool, judge_b: bool = False) -> dict[str, Any]:
        """Counts of `uuids` from the plan; failed calls are scored as an empty reply."""
        c = dict.fromkeys(("tp", "tn", "fp", "fn", "step_hits", "reason_hits"), 0)
        for u in uuids:
            label = self.records[u]["model_output_solution_correctness"]
            _, _, outcome, t2, verdict = self.plan[u]
            if u in self.fail:
                outcome, t2 = ("fp" if label == "wrong" else "fn"), False
            c[outcome] += 1
            c["step_hits"] += t2
            c["reason_hits"] += t2 and (True if judge_b else verdict)
        c["n_correct"], c["n_wrong"] = c["tp"] + c["fn"], c["tn"] + c["fp"]
        if not judged:
            c["reason_hits"] = None
        return c


def _mcc(c: dict[str, int]) -> float:
    den = (c["tp"] + c["fp"]) * (c["tp"] + c["fn"]) * (c["tn"] + c["fp"]) * (c["tn"] + c["fn"])
    return 0.0 if den == 0 else (c["tp"] * c["tn"] - c["fp"] * c["fn"]) / math.sqrt(den)


def _check_block(block: dict[str, Any], exp: dict[str, Any]) -> None:
    for key, value in exp.items():
        assert block[key] == value, key
    m, step = _mcc(exp), exp["step_hits"] / exp["n_wrong"]
    assert block["mcc"] == pytest.approx(m, abs=1e-12)
    assert block["acc_step"] == pytest.approx(step, abs=1e-12)
    if exp["reason_hits"] is None:
        assert block["mr_score"] is None and block["acc_reason"] is None
        assert block["mr_score_lower_bound"] == pytest.approx(0.2 * max(0, m) + 0.3 * step)
    else:
        reason = exp["reason_hits"] / exp["n_wrong"]
        assert block["mr_score"] == pytest.approx(0.2 * max(0, m) + 0.3 * step + 0.5 * reason)


def _check_doc(doc: dict[str, Any], script: Script, uuids: list[str], **kw: bool) -> None:
    _check_block(doc, script.expected(uuids, **kw))
    by_type = {t: [u for u in uuids if script.records[u]["question_type"] == t] for t in TYPES}
    assert set(doc["by_question_type"]) == {t for t, us in by_type.items() if us}
    for qtype, block in doc["by_question_type"].items():
        _check_block(block, script.expected(by_type[qtype], **kw))


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def setup(tmp_path, shared_data, make_item, monkeypatch):
    # Upstream's script (the prompts) is found in the shared data folder, as in a data cache.
    monkeypatch.setenv("MINDPROBE_DATA_DIR", str(shared_data("mr_gsm8k").parent))
    records = _records(shared_data("mr_gsm8k"), make_item)
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in records))
    script = Script(records)
    with TestServer(models=["test-model", "judge-a", "judge-b"], responder=script) as srv:
        yield script, data, srv.base_url, [r["uuid"] for r in records]


def test_run_with_judge_then_rejudge(setup, tmp_path, capsys):
    script, data, url, uuids = setup
    common = ["--runs-dir", str(tmp_path / "runs"), "--no-cache", "--max-attempts", "1"]
    code, out, _ = _cli(capsys, "run", "mr_gsm8k", "--model", f"openai:test-model@{url}",
                        "--judge", f"openai:judge-a@{url}", "--data-file", str(data),
                        "--json", *common)
    assert code == 0
    doc = json.loads(out)
    _check_doc(doc, script, uuids, judged=True)
    t2 = [u for u in uuids if script.plan[u][3]]
    assert doc["t3"] == "graded" and doc["headline"]["name"] == "MR-Score" \
        and doc["headline"]["value"] == doc["mr_score"]
    assert sorted(script.model_calls) == sorted(uuids)
    # Exactly the T2 hits went to the judge, each once.
    assert len(script.judge_calls) == len(t2) == doc["judge_usage"]["requests"]
    assert doc["usage"]["requests"] == len(uuids)
    run_dir = tmp_path / "runs" / "mr_gsm8k" / "full" / f"0shot___{doc['model']}"
    assert len((run_dir / "records.jsonl").read_text().splitlines()) == len(uuids)
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["summary"]["headline"]["value"] == doc["mr_score"]

    # Re-judge with judge-b: the model is not asked again, only the T2 hits are judged.
    script.model_calls.clear()
    script.judge_calls.clear()
    judge_b = ["judge", "mr_gsm8k", "--run", str(run_dir), "--judge", f"openai:judge-b@{url}",
               "--no-cache", "--max-attempts", "1", "--json"]
    code, out, _ = _cli(capsys, *judge_b)
    assert code == 0 and script.model_calls == []
    assert {m for m, _ in script.judge_calls} == {"judge-b"} and len(script.judge_calls) == len(t2)
    doc_b = json.loads(out)
    _check_doc(doc_b, script, uuids, judged=True, judge_b=True)
    label_a, label_b = doc["judge"], doc_b["judge"]
    assert doc_b["judges"][label_a]["reason_hits"] == doc["reason_hits"]
    assert doc_b["judges"][label_a]["source"] == "run"
    assert doc_b["judges"][label_b]["reason_hits"] == len(t2)
    n_yes = sum(1 for u in t2 if script.plan[u][4])
    assert doc_b["judge_agreement"][f"{label_a} | {label_b}"] == {
        "n": len(t2), "agree": n_yes, "rate": n_yes / len(t2)}

    # Resume: a torn last line is dropped, only the missing uuid is judged, no duplicates.
    verdicts = run_dir / "judgements" / f"{label_b}.jsonl"
    lines = verdicts.read_text().splitlines(keepends=True)
    verdicts.write_text("".join(lines[:-1]) + lines[-1][:20])
    script.judge_calls.clear()
    assert _cli(capsys, *judge_b)[0] == 0
    assert len(script.judge_calls) == 1 and script.model_calls == []
    ids = [json.loads(line)["id"] for line in verdicts.read_text().splitlines()]
    assert sorted(ids) == sorted(t2)

    # analyse compares both judges; --judge-label picks the top-level one.
    code, out, _ = _cli(capsys, "analyse", "mr_gsm8k", "--run", str(run_dir), "--json")
    assert code == 0 and json.loads(out)["reason_hits"] == doc["reason_hits"]
    code, out, text_err = _cli(capsys, "analyse", "mr_gsm8k", "--run", str(run_dir),
                               "--judge-label", label_b, "--json")
    assert json.loads(out)["reason_hits"] == len(t2) and set(json.loads(out)["judges"]) == {
        label_a, label_b}
    assert "T3 judges of this run" in text_err


def test_no_judge_is_not_graded_and_failures_score_empty(setup, tmp_path, capsys):
    script, data, url, uuids = setup
    pot = [u for u in uuids if script.records[u]["question_type"] == "POT"]
    script.fail = {pot[0]}
    code, out, _ = _cli(capsys, "run", "mr_gsm8k", "--model", f"openai:test-model@{url}",
                        "--data-file", str(data), "--question-type", "POT", "--shots", "3",
                        "--runs-dir", str(tmp_path / "runs"), "--no-cache",
                        "--max-attempts", "1")
    assert code == 1  # the failed call is an error record, scored as an empty reply
    assert sorted(script.model_calls) == sorted(pot) and script.judge_calls == []
    assert "not graded" in out and "lower bound" in out
    run_dir = tmp_path / "runs" / "mr_gsm8k" / "full"
    (run_dir,) = run_dir.iterdir()
    assert run_dir.name.startswith("3shot-POT___")
    code, out, _ = _cli(capsys, "analyse", "mr_gsm8k", "--run", str(run_dir), "--json")
    doc = json.loads(out)
    _check_doc(doc, script, pot, judged=False)
    assert doc["t3"] == "not graded" and doc["judge"] is None and doc["judges"] == {}
    assert doc["n_errors"] == 1 and doc["headline"]["name"] == "MR-Score (lower bound)"
    assert doc["headline"]["value"] == doc["mr_score_lower_bound"]


def test_failed_judge_call_is_pending_until_rejudged(setup, tmp_path, capsys):
    script, data, url, uuids = setup
    t2 = [u for u in uuids if script.plan[u][3]]
    script.fail_judge = {t2[0]}
    judge = ["--judge", f"openai:judge-a@{url}", "--no-cache", "--max-attempts", "1", "--json"]
    code, out, err = _cli(capsys, "run", "mr_gsm8k", "--model", f"openai:test-model@{url}",
                          "--data-file", str(data), "--runs-dir", str(tmp_path), *judge)
    doc = json.loads(out)
    assert code == 1 and doc["t3"] == "partially graded" and doc["t3_pending"] == 1
    assert doc["mr_score"] is None and doc["reason_hits"] is None and doc["n_errors"] == 1
    assert "partially graded" in err and "lower bound" in err
    # The same judge again fills in only the missing verdict, next to the run's own ones.
    script.fail_judge, script.judge_calls, script.model_calls = set(), [], []
    run_dir = next((tmp_path / "mr_gsm8k" / "full").iterdir())
    code, out, _ = _cli(capsys, "judge", "mr_gsm8k", "--run", str(run_dir), *judge)
    assert code == 0 and len(script.judge_calls) == 1 and script.model_calls == []
    doc = json.loads(out)
    _check_doc(doc, script, uuids, judged=True)
    assert doc["judges"][doc["judge"]]["source"] == "run+judge"
    # Nothing left to judge: no request at all.
    assert _cli(capsys, "judge", "mr_gsm8k", "--run", str(run_dir), *judge)[0] == 0
    assert len(script.judge_calls) == 1


def test_k_shot_prompt_puts_demos_before_the_question(setup, tmp_path, capsys):
    script, data, url, uuids = setup
    code, _, _ = _cli(capsys, "run", "mr_gsm8k", "--model", f"openai:test-model@{url}",
                      "--data-file", str(data), "--shots", "3", "--limit", "2",
                      "--runs-dir", str(tmp_path / "r"), "--no-cache", "--json")
    assert code == 0 and len(script.prompts) == 2
    prompt = script.prompts[0]
    assert prompt.count("\n\nQuestion:\n") == 3 and prompt.count("Question:\n") == 4
    assert prompt.index("Here is some demo examples: ") < prompt.rindex("Question:\n")
    assert prompt.endswith("\n".join(script.records[uuids[0]]["model_output_steps"]) + "\n")


def test_random_model_is_deterministic(tmp_path, capsys, shared_data):
    base = ["run", "mr_gsm8k:sample", "--model", "random", "--json", "--no-cache",
            "--data-dir", str(shared_data("mr_gsm8k"))]
    code, out, _ = _cli(capsys, *base, "--runs-dir", str(tmp_path / "a"))
    assert code == 0
    doc = json.loads(out)
    assert doc["n"] == 40 and doc["n_wrong"] == 40 and doc["tn"] + doc["fp"] == 40
    assert doc["t3"] == "not graded"
    run_dir = tmp_path / "a" / "mr_gsm8k" / "sample" / "0shot___random"
    records = [json.loads(x) for x in (run_dir / "records.jsonl").read_text().splitlines()]
    sample = shared_data("mr_gsm8k") / "sample_records.jsonl"
    n_steps = {r["uuid"]: len(r["model_output_steps"])
               for r in map(json.loads, sample.read_text().splitlines())}
    assert len(records) == 40
    for rec in records:
        assert rec["reply"] in baseline_choices(n_steps[rec["uuid"]])
    assert 0 < doc["tn"] < 40  # both kinds of reply occur
    code, out2, _ = _cli(capsys, *base, "--runs-dir", str(tmp_path / "b"))
    assert code == 0 and json.loads(out2)["tn"] == doc["tn"]


def test_missing_data_is_one_clear_error(tmp_path, capsys):
    empty = tmp_path / "empty"
    empty.mkdir()
    code, out, err = _cli(capsys, "run", "mr_gsm8k", "--model", "random", "--data-dir",
                          str(empty), "--runs-dir", str(tmp_path / "runs"))
    assert code == 2 and out == ""
    flat = " ".join(err.split())
    assert "MR-GSM8K.json" in flat and "mindprobe data fetch mr_gsm8k" in flat
    assert "--data-file" in flat
    code, _, err = _cli(capsys, "run", "mr_gsm8k:sample", "--model", "random", "--data-dir",
                        str(empty), "--runs-dir", str(tmp_path / "runs"))
    assert code == 2 and "sample_records.jsonl" in err
    assert not (tmp_path / "runs").exists()


def test_analyse_upstream_results(tmp_path, capsys, shared_data, make_item):
    records = _records(shared_data("mr_gsm8k"), make_item)
    script = Script(records)
    rows = []
    for rec in records:
        row = {**rec, "claude_eval_output": {"response": script(
            {"model": "test-model", "messages": [{"role": "user", "content": "\n".join(
                rec["model_output_steps"])}]})}}
        if script.plan[rec["uuid"]][3]:
            row["gpt4_reason_grading"] = _judge_reply(
                "Correct" if script.plan[rec["uuid"]][4] else "Wrong")
        rows.append(row)
    path = tmp_path / "claude_eval.json"
    path.write_text(json.dumps(rows))
    code, out, _ = _cli(capsys, "analyse", "mr_gsm8k", "--upstream-results", str(path), "--json")
    assert code == 0
    res = json.loads(out)
    assert res["judge_key"] == "gpt4_reason_grading" and res["manual"] is None
    _check_doc(res["auto"], script, [r["uuid"] for r in records], judged=True)


@pytest.mark.slow
def test_local_model_plumbing(tmp_path, capsys, shared_data):
    code, out, _ = _cli(capsys, "run", "mr_gsm8k:sample", "--model", "local", "--judge", "local",
                        "--limit", "3", "--max-tokens", "32", "--data-dir",
                        str(shared_data("mr_gsm8k")), "--runs-dir", str(tmp_path),
                        "--no-cache", "--json")
    assert code in (0, 1)
    doc = json.loads(out)
    assert doc["n_records"] == 3 and doc["n"] == 3 and doc["usage"]["requests"] == 3
    (records,) = tmp_path.glob("mr_gsm8k/sample/0shot___*/records.jsonl")
    assert len(records.read_text().splitlines()) == 3
    # Fresh items of the same data run on the embedded model too, MR-Score in the report.
    code, out, _ = _cli(capsys, "run", "mr_gsm8k:fresh", "--model", "local", "--limit", "2",
                        "--max-tokens", "32", "--data-file",
                        str(shared_data("mr_gsm8k") / "sample_records.jsonl"), "--data-dir",
                        str(shared_data("mr_gsm8k")), "--runs-dir", str(tmp_path), "--json")
    assert code in (0, 1)
    doc = json.loads(out)
    assert doc["n_records"] == 2 and doc["headline"]["name"].startswith("MR-Score")
    code, _, _ = _cli(capsys, "report", "--runs-dir", str(tmp_path), "--out",
                      str(tmp_path / "report.html"))
    assert code == 0 and "mr_gsm8k:fresh" in (tmp_path / "report.html").read_text()


def test_the_python_api_runs_and_judges_as_the_cli(setup, tmp_path, capsys):
    """`mindprobe.evaluate(..., roles=...)` and `mindprobe.judge()` give the CLI's numbers."""
    import mindprobe

    _, data, url, _ = setup
    model, judge_a, judge_b = (f"openai:{m}@{url}" for m in ("test-model", "judge-a", "judge-b"))
    res = mindprobe.evaluate("mr_gsm8k", model, roles={"judge": judge_a},
                             options={"data_file": str(data)}, runs_dir=tmp_path / "api",
                             cache=False, max_attempts=1, progress=False)
    code, out, _ = _cli(capsys, "run", "mr_gsm8k", "--model", model, "--role",
                        f"judge={judge_a}", "--data-file", str(data), "--json", "--runs-dir",
                        str(tmp_path / "cli"), "--no-cache", "--max-attempts", "1")
    assert code == 0
    doc = json.loads(out)
    assert {k: doc[k] for k in res.to_json()} == res.to_json() and doc["t3"] == "graded"
    judged = mindprobe.judge(res.run_dir, judge_b, cache=False, max_attempts=1, progress=False)
    code, out, _ = _cli(capsys, "judge", "mr_gsm8k", "--run", doc["run"], "--judge", judge_b,
                        "--no-cache", "--max-attempts", "1", "--json")
    assert code == 0 and judged.to_json() == json.loads(out)
    assert (res.run_dir / "judgements" / f"{judged.to_json()['judge']}.jsonl").is_file()
