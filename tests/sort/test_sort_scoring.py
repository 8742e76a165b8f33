"""Answer extraction (spec §4.3) on synthetic top-k lists, and the separate text fallback."""

from __future__ import annotations

from mindprobe.benchmarks.sort.scoring import (
    MISSING_LOGPROB,
    label_candidates,
    label_logprobs,
    normalize_top_logprobs,
    parse_answer_text,
    score_logprobs,
    score_text,
)


def test_candidates():
    assert label_candidates(False) == {"A": ["A", " A"], "B": ["B", " B"]}
    assert label_candidates(True) == {"A": ["A"], "B": ["B"]}


def test_bare_label_takes_priority_over_spaced():
    top = {" A": -0.1, "A": -3.0, " B": -1.0}
    assert label_logprobs(top) == {"A": -3.0, "B": -1.0}
    scored = score_logprobs(top, present_seg1_first=1)
    assert (scored.answer, scored.ground_truth, scored.correct) == ("B", "A", False)
    assert scored.method == "logprobs"


def test_spaced_label_when_no_space_was_appended():
    scored = score_logprobs([(" B", -0.2), (" A", -1.7), ("The", -3.0)], present_seg1_first=0)
    assert (scored.answer, scored.correct, scored.prob_A) == ("B", True, -1.7)
    # a space already after the prefix: only bare labels count
    assert score_logprobs({" B": -0.2}, 0, space_appended=True).answer == "X"


def test_missing_and_both_missing_and_tie():
    one = score_logprobs({"A": -5.0, "Hmm": -0.1}, present_seg1_first=1)
    assert (one.answer, one.prob_B) == ("A", MISSING_LOGPROB)
    none = score_logprobs({"Hmm": -0.1}, present_seg1_first=1)
    assert (none.answer, none.correct) == ("X", False)
    tie = score_logprobs({"A": -1.0, "B": -1.0}, present_seg1_first=0)
    assert tie.answer == "A" and not tie.correct


def test_only_top_20_count():
    top = {f"t{i}": -float(i) for i in range(25)}
    top["B"] = -30.0  # rank 26: outside the top 20
    top["A"] = -19.5  # rank 21: just outside too
    assert score_logprobs(top, 1).answer == "X"
    top["A"] = -0.5
    assert score_logprobs(top, 1).answer == "A"


def test_input_shapes():
    openai = [{"token": " A", "logprob": -0.3, "bytes": None}, {"token": " B", "logprob": -2}]
    assert normalize_top_logprobs(openai) == {" A": -0.3, " B": -2.0}
    entry = {"token": " A", "logprob": -0.3, "top_logprobs": openai}
    assert normalize_top_logprobs([entry]) == {" A": -0.3, " B": -2.0}
    per_position = [{"A": -0.1, "B": -2.0}, {"x": -0.2}]
    assert normalize_top_logprobs(per_position) == {"A": -0.1, "B": -2.0}
    assert normalize_top_logprobs([[("B", -0.5)], [("A", -0.1)]]) == {"B": -0.5}
    assert normalize_top_logprobs([("A", -1.0), ("A", -0.5)]) == {"A": -0.5}
    assert normalize_top_logprobs(None) == {} and normalize_top_logprobs([]) == {}


def test_text_fallback_is_separate_and_flagged():
    assert parse_answer_text(" A") == "A" and parse_answer_text("B.") == "B"
    assert parse_answer_text("A or B") == "X" and parse_answer_text("neither") == "X"
    assert parse_answer_text("b") == "X" and parse_answer_text("b", lenient=True) == "B"
    assert parse_answer_text("A: yes, not B", lenient=True) == "A"
    scored = score_text("Segment B", present_seg1_first=0)
    assert (scored.answer, scored.correct, scored.method, scored.prob_A) == ("B", True,
                                                                            "text", None)
    assert score_text("B", 0, task_type="last").correct is False
