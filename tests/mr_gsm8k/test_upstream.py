"""Import of upstream eval-results files (legacy schema), rescored from the raw replies."""

from __future__ import annotations

import json

import pytest

from mindprobe.benchmarks.mr_gsm8k import load_upstream_results, rescore_upstream
from mindprobe.errors import DataError


def _judge(decision):
    return (
        "1. Step-by-Step Reasoning: the solution subtracts 1.\n"
        "2. Student Error Reason Analysis: the student says the same.\n"
        f"3. Final Decision: {decision}"
    )


@pytest.fixture
def legacy(make_item, reply):
    """Five records in the legacy schema: dataset fields + claude_eval_output + judge reply."""
    c1, c2 = make_item("correct"), make_item("correct", question_type="POT")
    w1, w2, w3 = make_item(step=3), make_item(step=3), make_item(step=2, question_type="POT")
    records = [
        {**c1, "claude_eval_output": {"response": reply("correct"), "model": "claude-2"}},
        {**c2, "claude_eval_output": {"response": reply("Incorrect", "1", "x")}},
        {
            **w1,
            "claude_eval_output": {"response": reply("wrong", "Step 3", "minus one")},
            "gpt4_reason_grading": _judge("Correct"),
            "manual_reason_correct": False,
        },
        {
            **w2,
            "claude_eval_output": {"response": reply("**wrong**", "3", "no idea")},
            "gpt4_reason_grading": _judge("Wrong"),
            "manual_reason_correct": True,
        },
        {**w3, "claude_eval_output": {"response": None}, "gpt4_reason_grading": None},
    ]
    return records


def _write(path, records, array=True):
    if array:
        path.write_text(json.dumps(records, indent=2), encoding="utf-8")
    else:
        path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


@pytest.mark.parametrize("array", [True, False])
def test_load_detects_fields(tmp_path, legacy, array):
    path = _write(tmp_path / "claude_eval.json", legacy, array)
    res = load_upstream_results(path)
    assert res.response_key == "claude_eval_output"
    assert res.judge_key == "gpt4_reason_grading"
    assert len(res.items) == 5 and "claude_eval_output" not in res.items[0]
    uuids = [r["uuid"] for r in legacy]
    assert res.responses[uuids[4]] == ""  # a null reply is the failed-call empty string
    assert set(res.judge_replies) == set(uuids[2:4])
    assert res.manual_verdicts == {}


def test_rescore_auto_and_manual(tmp_path, legacy):
    path = _write(tmp_path / "claude_eval.json", legacy)
    out = rescore_upstream(path, manual_key="manual_reason_correct")[str(path)]
    auto, manual = out["auto"], out["manual"]
    assert out["n_records"] == 5 and out["judge_key"] == "gpt4_reason_grading"
    assert (auto["tp"], auto["fn"], auto["tn"], auto["fp"]) == (1, 1, 2, 1)
    assert (auto["step_hits"], auto["reason_hits"], auto["t3_graded"]) == (2, 1, True)
    assert manual["reason_hits"] == 1 and manual["t3_graded"] is True
    assert auto["acc_reason"] == pytest.approx(1 / 3, abs=1e-12)
    assert auto["by_question_type"]["POT"]["fp"] == 1


def test_missing_judge_reply_leaves_t3_pending(tmp_path, legacy):
    del legacy[3]["gpt4_reason_grading"]
    path = _write(tmp_path / "claude_eval.json", legacy)
    auto = rescore_upstream([path])[str(path)]["auto"]
    assert (auto["t3_graded"], auto["t3_pending"], auto["mr_score"]) == (False, 1, None)
    assert auto["mr_score_lower_bound"] < auto["mr_score_upper_bound"]


def test_no_judge_file_is_not_graded(tmp_path, legacy):
    for record in legacy:
        record.pop("gpt4_reason_grading", None)
    path = _write(tmp_path / "claude_eval.json", legacy)
    out = rescore_upstream(path)[str(path)]
    assert out["judge_key"] is None and out["manual"] is None
    assert out["auto"]["reason_hits"] is None and out["auto"]["mr_score"] is None


def test_judge_reply_nested_in_an_object(tmp_path, legacy):
    for record in legacy:
        reply = record.pop("gpt4_reason_grading", None)
        record["judge"] = {"response": reply, "model": "gpt-4-1106-preview"}
    res = load_upstream_results(_write(tmp_path / "r.json", legacy))
    assert res.judge_key == "judge" and len(res.judge_replies) == 2


def test_plain_text_reply_and_explicit_keys(tmp_path, legacy):
    for record in legacy:
        record["my_reply"] = record["claude_eval_output"]["response"]
        record["claude_eval_output"] = {"response": "garbage"}
    path = _write(tmp_path / "r.json", legacy)
    res = load_upstream_results(path, response_key="my_reply", judge_key="gpt4_reason_grading")
    out = rescore_upstream(path, response_key="my_reply")[str(path)]
    assert res.responses[legacy[0]["uuid"]].startswith("Step-by-step Evaluation")
    assert out["auto"]["tp"] == 1 and out["auto"]["step_hits"] == 2


def test_ambiguous_or_missing_response_field(tmp_path, legacy):
    legacy[0]["gpt35_eval_output"] = {"response": "x"}
    with pytest.raises(DataError, match="claude_eval_output, gpt35_eval_output.*response-key"):
        load_upstream_results(_write(tmp_path / "two.json", legacy))
    del legacy[0]["gpt35_eval_output"]
    del legacy[1]["claude_eval_output"]
    with pytest.raises(DataError, match=r"two\.jsonl:2: field 'claude_eval_output'.*missing"):
        load_upstream_results(_write(tmp_path / "two.jsonl", legacy, array=False))


def test_bad_reply_type_and_duplicates(tmp_path, legacy):
    legacy[0]["claude_eval_output"] = {"text": "x"}
    with pytest.raises(DataError, match="neither text nor an object"):
        load_upstream_results(_write(tmp_path / "a.jsonl", legacy, array=False))
    legacy[0] = dict(legacy[1])
    with pytest.raises(DataError, match=r":2: uuid .* appears twice"):
        load_upstream_results(_write(tmp_path / "b.jsonl", legacy, array=False))


def test_two_judge_like_fields_need_a_choice(tmp_path, legacy):
    legacy[2]["other_judge"] = _judge("Correct")
    with pytest.raises(DataError, match="judge_key"):
        load_upstream_results(_write(tmp_path / "r.json", legacy))
    res = load_upstream_results(tmp_path / "r.json", judge_key="other_judge")
    assert list(res.judge_replies) == [legacy[2]["uuid"]]


def test_dataset_errors_name_the_line(tmp_path, legacy):
    del legacy[2]["question"]
    with pytest.raises(DataError, match=r"r\.jsonl:3: field 'question' is missing"):
        load_upstream_results(_write(tmp_path / "r.jsonl", legacy, array=False))


def test_manual_verdicts_as_text_or_numbers(tmp_path, legacy):
    legacy[2]["manual_reason_correct"] = "Correct"
    legacy[3]["manual_reason_correct"] = 0
    res = load_upstream_results(
        _write(tmp_path / "r.json", legacy), manual_key="manual_reason_correct"
    )
    assert res.manual_verdicts == {legacy[2]["uuid"]: True, legacy[3]["uuid"]: False}
