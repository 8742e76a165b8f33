"""Parsing vectors of spec sections 4, 5 and 6, upstream quirks included."""

from __future__ import annotations

import pytest

from mindprobe.benchmarks.mr_gsm8k import (
    PARSE_ERROR,
    judge_verdict,
    normalise_judgement,
    normalise_step,
    parse_judge,
    parse_response,
    reason_hit,
)


def test_parse_well_formed_reply():
    text = (
        "Step-by-step Evaluation: fine\nFinal Judgement: **correct**\n"
        "First Error Step: N/A\nError Analysis: N/A"
    )
    assert parse_response(text) == ("**correct**", "N/A", "N/A")


def test_error_text_runs_to_end_across_lines():
    text = "Final Judgement: wrong\nFirst Error Step: 2\nError Analysis: line one\nline two\n"
    assert parse_response(text) == ("wrong", "2", "line one\nline two\n")


def test_first_match_wins():
    text = (
        "Final Judgement: wrong First Error Step: 1 Error Analysis: a\n"
        "Final Judgement: correct First Error Step: N/A Error Analysis: N/A"
    )
    judgement, step, analysis = parse_response(text)
    assert (judgement, step) == ("wrong", "1")
    assert analysis.startswith("a\nFinal Judgement: correct")


def test_bold_headers_keep_markup_in_fields():
    text = "**Final Judgement:** wrong\n**First Error Step:** 3\n**Error Analysis:** x"
    assert parse_response(text) == ("** wrong\n**", "** 3\n**", "** x")


@pytest.mark.parametrize(
    "text",
    [
        "Final Judgement: wrong\nFirst Error Step: 3\n",  # no Error Analysis
        "Final judgement: wrong\nFirst Error Step: 3\nError Analysis: x",  # lower-case j
        "Final Judgment: wrong\nFirst Error Step: 3\nError Analysis: x",  # other spelling
        "final judgement: wrong\nfirst error step: 3\nerror analysis: x",  # case-sensitive
        "First Error Step: 3\nError Analysis: x",
        "",
        None,
    ],
)
def test_any_missing_header_makes_all_three_parse_errors(text):
    assert parse_response(text) == (PARSE_ERROR, PARSE_ERROR, PARSE_ERROR)


@pytest.mark.parametrize(
    ("judgement", "pred"),
    [
        ("incorrect", "wrong"),
        ("  Incorrect ", "wrong"),
        ("Incorrect.", "incorrect."),  # only the exact word is mapped
        ("**incorrect**", "**incorrect**"),
        ("**Wrong**", "**wrong**"),
        (PARSE_ERROR, "parse_error"),
    ],
)
def test_normalise_judgement(judgement, pred):
    assert normalise_judgement(judgement) == pred


@pytest.mark.parametrize(
    ("text", "pred"),
    [
        ("3", "3"),
        (" 3 \n", "3"),
        ("Step 3", "3"),
        ("STEP 3", "3"),
        ("step 0", "0"),
        ("step 29", "29"),
        ("31", "31"),
        ("03", "03"),
        ("Step 31", ""),  # the step-word mapping stops at 29
        ("Step 30", ""),
        ("Step  3", ""),  # two spaces
        ("3.", ""),
        ("step 3.", ""),
        ("**3**", ""),
        ("Step 3: the error", ""),
        ("Steps 3-4", ""),
        ("N/A", ""),
        ("\u00b3", "\u00b3"),  # str.isdigit semantics: superscript three counts as digits
    ],
)
def test_normalise_step(text, pred):
    assert normalise_step(text) == pred


def test_parse_judge_with_numbering():
    text = (
        "1. Step-by-Step Reasoning: the error is X\n"
        "2. Student Error Reason Analysis: the student says X\n"
        "3. Final Decision: Correct"
    )
    assert parse_judge(text) == ("the error is X\n2.", "the student says X\n3.", "Correct")


@pytest.mark.parametrize(
    "text",
    [
        "Step-by-Step Reasoning: a\nFinal Decision: Correct",
        "step-by-step reasoning: a\nStudent Error Reason Analysis: b\nFinal Decision: Correct",
        "Step-by-Step Reasoning: a\nStudent Error Reason Analysis: b\n",
        "",
        None,
    ],
)
def test_parse_judge_errors(text):
    assert parse_judge(text) == (PARSE_ERROR, PARSE_ERROR, PARSE_ERROR)


@pytest.mark.parametrize(
    ("decision", "hit"),
    [
        ("Correct", True),
        ("- Correct", True),
        ("[Correct]", True),
        ("Incorrect", True),  # upstream substring quirk
        ("Wrong", False),
        (PARSE_ERROR, False),
    ],
)
def test_reason_hit(decision, hit):
    assert reason_hit(decision) is hit


def test_judge_verdict_from_raw_reply():
    good = "Step-by-Step Reasoning: r\nStudent Error Reason Analysis: a\nFinal Decision: Correct"
    assert judge_verdict(good) is True
    assert judge_verdict(good.replace("Correct", "Wrong")) is False
    assert judge_verdict("Final Decision: Correct") is False  # other headers missing
