"""Per-item scoring and metrics: spec section 8 worked examples (A-E) and section 9 quirks."""

from __future__ import annotations

import math

import pytest

from mindprobe.benchmarks.mr_gsm8k import (
    PARSE_ERROR,
    aggregate,
    load,
    mcc,
    metrics_from_counts,
    score_item,
)

BLOCK_KEYS = {
    "n",
    "n_correct",
    "n_wrong",
    "tp",
    "tn",
    "fp",
    "fn",
    "step_hits",
    "reason_hits",
    "reason_hits_known",
    "t3_pending",
    "t3_graded",
    "tpr",
    "tnr",
    "mcc",
    "acc_step",
    "acc_reason",
    "mr_score",
    "mr_score_lower_bound",
    "mr_score_upper_bound",
    "warnings",
}


@pytest.fixture
def run(make_item, reply):
    """run(n_correct, n_wrong, tp, tn, t2, t3) -> (scored items, verdicts) hitting those counts."""

    def build(n_correct, n_wrong, tp, tn, t2, t3):
        scored, verdicts = [], {}
        for i in range(n_correct):
            scored.append(score_item(make_item("correct"), reply("correct" if i < tp else "wrong")))
        for i in range(n_wrong):
            item = make_item("wrong", step=3)
            step = "3" if i < t2 else "1"
            text = reply("wrong", step, "reason") if i < tn else reply("correct")
            scored.append(score_item(item, text))
            if i < t2:
                verdicts[item["uuid"]] = i < t3
        return scored, verdicts

    return build


# ---- section 8 E: parsing / T1 / T2 vectors -------------------------------------------------


@pytest.mark.parametrize(
    ("label", "judgement", "step", "outcome", "t2"),
    [
        ("correct", "**correct**", "N/A", "tp", False),
        ("correct", "incorrect", "N/A", "fn", False),
        ("correct", "Incorrect.", "N/A", "tp", False),  # quirk: contains "correct"
        ("correct", "**incorrect**", "N/A", "tp", False),
        ("wrong", "Incorrect.", "3", "fp", False),
        ("wrong", "incorrect", "3", "tn", True),  # exact "incorrect" maps to "wrong"
        ("wrong", "wrong", "Step 3", "tn", True),
        ("wrong", "**wrong**", "3", "tn", True),
        ("wrong", "wrong.", "3", "tn", True),
        ("wrong", "wrong", "step 3.", "tn", False),
        ("wrong", "wrong", "**3**", "tn", False),
        ("wrong", "wrong", "03", "tn", False),
        ("wrong", "wrong", "N/A", "tn", False),
        ("wrong", "correct", "3", "fp", False),  # T2 only after a T1 hit
        ("correct", "correct", "3", "tp", False),  # T2 never scored on correct items
    ],
)
def test_vectors(make_item, reply, label, judgement, step, outcome, t2):
    scored = score_item(make_item(label, step=3), reply(judgement, step))
    assert scored["outcome"] == outcome
    assert scored["t1_hit"] is (outcome in ("tp", "tn"))
    assert scored["t2_hit"] is t2
    assert scored["needs_judging"] is t2


def test_first_vector_of_spec_literally(make_item):
    text = "Final Judgement: **correct**\nFirst Error Step: N/A\nError Analysis: N/A"
    assert score_item(make_item("correct"), text)["outcome"] == "tp"


def test_bold_header_reply_hits_t1_misses_t2(make_item):
    text = "**Final Judgement:** wrong\n**First Error Step:** 3\n**Error Analysis:** x"
    scored = score_item(make_item("wrong", step=3), text)
    assert scored["judgement"] == "** wrong\n**"
    assert scored["error_step"] == "** 3\n**"
    assert (scored["outcome"], scored["t2_hit"]) == ("tn", False)


@pytest.mark.parametrize("text", ["Final Judgement: wrong\nFirst Error Step: 3\n", "", None])
def test_parse_failures_count_against_the_label(make_item, text):
    scored = score_item(make_item("wrong", step=3), text)
    assert scored["outcome"] == "fp"
    assert scored["judgement"] == PARSE_ERROR
    assert scored["reply"] == (text or "")
    assert score_item(make_item("correct"), text)["outcome"] == "fn"


@pytest.mark.parametrize(("label_step", "pred", "hit"), [(31, "31", True), (31, "Step 31", False)])
def test_step_mapping_stops_at_29(make_item, reply, label_step, pred, hit):
    assert score_item(make_item("wrong", step=label_step), reply("wrong", pred))["t2_hit"] is hit


@pytest.mark.parametrize("label_step", ["N/A", "3"])
def test_non_int_step_label_never_matches(make_item, reply, label_step):
    for pred in ("N/A", "3", ""):
        scored = score_item(make_item("wrong", step=label_step), reply("wrong", pred))
        assert scored["outcome"] == "tn" and scored["t2_hit"] is False


def test_label_compared_case_insensitively(make_item, reply):
    assert score_item(make_item("Wrong", step=2), reply("wrong", "2"))["t2_hit"] is True


# ---- section 8 A-D: metrics ----------------------------------------------------------------


def test_example_a(run):
    scored, verdicts = run(10, 10, tp=7, tn=6, t2=4, t3=3)
    result = aggregate(scored, verdicts)
    assert (result["tp"], result["tn"], result["fn"], result["fp"]) == (7, 6, 3, 4)
    assert (result["step_hits"], result["reason_hits"]) == (4, 3)
    assert result["tpr"] == pytest.approx(0.7, abs=1e-9)
    assert result["tnr"] == pytest.approx(0.6, abs=1e-9)
    assert result["mcc"] == pytest.approx(30 / math.sqrt(9900), abs=1e-9)
    assert result["mcc"] == pytest.approx(0.30151134457776363, abs=1e-9)
    assert result["acc_step"] == pytest.approx(0.4, abs=1e-9)
    assert result["acc_reason"] == pytest.approx(0.3, abs=1e-9)
    assert result["mr_score"] == pytest.approx(0.3303022689155527, abs=1e-9)
    assert result["t3_graded"] is True
    assert result["mr_score_lower_bound"] == result["mr_score"] == result["mr_score_upper_bound"]


def test_example_b_negative_mcc_unclipped_but_clipped_in_mr(run):
    result = aggregate(*run(10, 10, tp=2, tn=3, t2=1, t3=0))
    assert result["mcc"] == pytest.approx(-50 / math.sqrt(9900), abs=1e-9)
    assert result["mcc"] == pytest.approx(-0.502518907629606, abs=1e-9)
    assert result["mr_score"] == pytest.approx(0.03, abs=1e-9)


def test_example_c_all_correct_answers_zero_mcc(run):
    result = aggregate(*run(10, 10, tp=10, tn=0, t2=0, t3=0))
    assert result["mcc"] == 0.0
    assert result["mr_score"] == 0.0
    assert any("MCC undefined" in w for w in result["warnings"])


def test_example_d_claude2(run):
    scored, auto = run(1427, 1573, tp=962, tn=1056, t2=331, t3=224)
    result = aggregate(scored, auto)
    assert result["tpr"] == pytest.approx(0.674142, abs=5e-7)
    assert result["tnr"] == pytest.approx(0.671329, abs=5e-7)
    assert result["mcc"] == pytest.approx(0.345095, abs=5e-7)
    assert result["acc_step"] == pytest.approx(0.210426, abs=5e-7)
    assert result["mr_score"] == pytest.approx(0.203348, abs=5e-7)
    expected = 0.2 * result["mcc"] + 0.3 * 331 / 1573 + 0.5 * 224 / 1573
    assert result["mr_score"] == pytest.approx(expected, abs=1e-9)
    manual = metrics_from_counts(1427, 1573, 962, 1056, 331, reason_hits=185)
    assert manual["mr_score"] == pytest.approx(0.190952, abs=5e-7)
    assert round(result["mr_score"], 3) == 0.203 and round(manual["mr_score"], 3) == 0.191


# Older README table (spec section 10): counts -> every published cell.
LEGACY = [
    # tp, tn, t2, t3 manual, t3 auto, TPR%, TNR%, MCC, Step%, S+R/M%, MR/M, MR/A
    (962, 1056, 331, 185, 224, 67.41, 67.13, 0.345, 21.04, 11.76, 0.191, 0.203),
    (1125, 621, 179, 73, 73, 78.84, 39.48, 0.198, 11.38, 4.64, 0.097, 0.097),
    (985, 1425, 823, 677, 732, 69.03, 90.59, 0.614, 52.32, 43.04, 0.495, 0.512),
    (1176, 43, 6, 1, 1, 82.41, 2.73, -0.250, 0.38, 0.06, 0.001, 0.001),
    (1410, 43, 4, 1, 2, 98.81, 2.73, 0.055, 0.25, 0.06, 0.012, 0.012),
    (1305, 166, 22, 6, 7, 91.45, 10.55, 0.034, 1.40, 0.38, 0.013, 0.013),
    (453, 1156, 327, 99, 139, 31.74, 73.49, 0.058, 20.79, 6.29, 0.105, 0.118),
]


@pytest.mark.parametrize("row", LEGACY)
def test_legacy_table_cells(row):
    tp, tn, t2, t3m, t3a, tpr, tnr, m, step, srm, mrm, mra = row
    manual = metrics_from_counts(1427, 1573, tp, tn, t2, reason_hits=t3m)
    auto = metrics_from_counts(1427, 1573, tp, tn, t2, reason_hits=t3a)
    assert manual["tpr"] * 100 == pytest.approx(tpr, abs=0.005)
    assert manual["tnr"] * 100 == pytest.approx(tnr, abs=0.005)
    assert manual["mcc"] == pytest.approx(m, abs=0.0005)  # unclipped, -0.250 included
    assert manual["acc_step"] * 100 == pytest.approx(step, abs=0.005)
    assert manual["acc_reason"] * 100 == pytest.approx(srm, abs=0.005)
    assert manual["mr_score"] == pytest.approx(mrm, abs=0.0005)
    assert auto["mr_score"] == pytest.approx(mra, abs=0.0005)


def test_never_parsing_model(run, make_item):
    scored = [score_item(make_item("correct"), "") for _ in range(5)]
    scored += [score_item(make_item("wrong"), "no headers") for _ in range(7)]
    result = aggregate(scored, {})
    assert (result["tp"], result["tn"], result["fp"], result["fn"]) == (0, 0, 7, 5)
    assert result["mcc"] == pytest.approx(-1.0, abs=1e-12)
    assert result["mr_score"] == 0.0


def test_mcc_zero_denominator_each_way():
    assert mcc(tp=5, tn=0, fp=0, fn=5) == 0.0
    assert mcc(tp=0, tn=4, fp=0, fn=0) == 0.0
    assert mcc(tp=1, tn=1, fp=0, fn=0) == 1.0


# ---- T3 not graded / partially graded ------------------------------------------------------


def test_without_verdicts_t3_is_not_graded(run):
    scored, _ = run(10, 10, tp=7, tn=6, t2=4, t3=3)
    result = aggregate(scored)
    assert result["t3_graded"] is False
    assert result["reason_hits"] is None and result["acc_reason"] is None
    assert result["mr_score"] is None
    assert result["t3_pending"] == 4
    low = 0.2 * result["mcc"] + 0.3 * 0.4
    assert result["mr_score_lower_bound"] == pytest.approx(low, abs=1e-9)
    assert result["mr_score_upper_bound"] == pytest.approx(low + 0.5 * 0.4, abs=1e-9)


def test_partial_verdicts_are_bounds_not_scores(run):
    scored, verdicts = run(10, 10, tp=7, tn=6, t2=4, t3=3)
    missing = next(uuid for uuid, ok in verdicts.items() if ok)
    del verdicts[missing]
    result = aggregate(scored, verdicts)
    assert result["t3_graded"] is False and result["mr_score"] is None
    assert (result["reason_hits_known"], result["t3_pending"]) == (2, 1)
    full = 0.3303022689155527  # example A with the missing verdict known to be a hit
    assert result["mr_score_lower_bound"] == pytest.approx(full - 0.5 * 0.1, abs=1e-9)
    assert result["mr_score_upper_bound"] == pytest.approx(full, abs=1e-9)


def test_verdicts_for_non_t2_hits_are_ignored(run):
    scored, verdicts = run(10, 10, tp=7, tn=6, t2=4, t3=3)
    verdicts.update({row["uuid"]: True for row in scored if not row["t2_hit"]})
    assert aggregate(scored, verdicts)["reason_hits"] == 3


# ---- structure, groups, denominators -------------------------------------------------------


def test_output_structure_and_groups(make_item, reply):
    scored = [
        score_item(make_item("correct", question_type="POT"), reply("correct")),
        score_item(make_item("wrong", step=2, question_type="POT"), reply("wrong", "2")),
        score_item(make_item("wrong", step=2, question_type="reversed"), reply("wrong", "1")),
    ]
    result = aggregate(scored, {scored[1]["uuid"]: True})
    assert set(result) == BLOCK_KEYS | {"by_question_type", "n_unparsed", "n_invalid",
                                        "invalid_kinds", "answers"}
    assert list(result["by_question_type"]) == ["POT", "reversed"]
    pot, rev = result["by_question_type"]["POT"], result["by_question_type"]["reversed"]
    assert set(pot) == BLOCK_KEYS | {"n_unparsed", "n_invalid"}
    assert (pot["n_correct"], pot["n_wrong"], pot["mcc"], pot["acc_reason"]) == (1, 1, 1.0, 1.0)
    assert (rev["tn"], rev["step_hits"], rev["reason_hits"], rev["mcc"]) == (1, 0, 0, 0.0)
    assert rev["tpr"] == 0.0 and any("no 'correct'" in w for w in rev["warnings"])


def test_empty_class_reports_zero_with_warning(make_item, reply):
    warned = []
    scored = [score_item(make_item("correct"), reply("correct"))]
    result = aggregate(scored, {}, warn=warned.append)
    assert (result["tnr"], result["acc_step"], result["acc_reason"]) == (0.0, 0.0, 0.0)
    assert any("no 'wrong'" in w for w in warned)


def test_real_records_with_a_perfect_fake_model(shared_data):
    items = load(shared_data("mr_gsm8k") / "sample_records.jsonl")
    scored = [
        score_item(
            item,
            "Final Judgement: wrong\nFirst Error Step: "
            f"{item['model_output_solution_first_error_step']}\nError Analysis: because",
        )
        for item in items
    ]
    warned = []
    result = aggregate(scored, {row["uuid"]: True for row in scored}, warn=warned.append)
    assert (result["n_wrong"], result["tn"], result["step_hits"], result["reason_hits"]) == (
        40,
        40,
        40,
        40,
    )
    assert result["tnr"] == 1.0 and result["mcc"] == 0.0  # no correct items: MCC undefined
    assert result["mr_score"] == pytest.approx(0.8, abs=1e-12)
    assert {k: v["n"] for k, v in result["by_question_type"].items()} == {
        "POT": 12,
        "original": 16,
        "reversed": 12,
    }
    assert warned  # the missing class is reported, not hidden
