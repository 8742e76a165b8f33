"""Reply parsing and scoring (spec §7), alpha_words (§5) and the custom solvers (§11)."""

from __future__ import annotations

import random

import pytest

from mindprobe.benchmarks.already_said_that import (
    alpha_words,
    human_answer,
    judge_distractor,
    judge_main,
    parse_reply,
    random_baseline_reply,
)

VALID = ["[answer: Yes]", "[answer:   no  ]", "blah [answer: no] blah"]
NO_MATCH = ["[Answer: yes]", "[answer:yes]", "[answer: ]", "yes", "answer: yes"]
NOT_YES_NO = ["[answer: yes.]", "[answer: maybe]", "[answer:  ]"]


@pytest.mark.parametrize("reply", VALID)
def test_valid_main_replies(reply):
    answer = parse_reply(reply)
    assert answer in ("yes", "no")
    verdict = judge_main(reply, already_shown=answer == "yes")
    assert verdict.correct and not verdict.violation


@pytest.mark.parametrize("reply", NO_MATCH)
def test_unmatched_replies_are_violations(reply):
    assert parse_reply(reply) is None
    for shown in (True, False):
        v = judge_main(reply, shown)
        assert v.violation and not v.correct and not v.false_pos and not v.false_neg
    d = judge_distractor(reply, "yes")
    assert d.violation and not d.correct


@pytest.mark.parametrize("reply", NOT_YES_NO)
def test_matched_non_yes_no_is_violation(reply):
    assert parse_reply(reply) is not None
    v = judge_main(reply, False)
    assert v.violation and not v.correct


def test_first_answer_wins_and_multiline():
    assert parse_reply("[answer: no] then [answer: yes]") == "no"
    assert judge_main("[answer: no] ... [answer: yes]", already_shown=True).false_neg
    assert parse_reply("[answer: zest,\n yucca]") == "zest,\n yucca"


def test_false_positive_and_negative():
    fp = judge_main("[answer: yes]", already_shown=False)
    fn = judge_main("[answer: NO]", already_shown=True)
    assert (fp.false_pos, fp.false_neg, fp.correct, fp.violation) == (True, False, False, False)
    assert (fn.false_pos, fn.false_neg, fn.correct, fn.violation) == (False, True, False, False)


def test_distractor_comparison_is_exact():
    assert judge_distractor("[answer:  NO ]", "no").correct
    assert judge_distractor("[answer: Jane]", "jane").correct
    assert not judge_distractor("[answer: jane.]", "jane").correct
    assert not judge_distractor("[answer: zest,yucca]", "zest, yucca").correct
    assert not judge_distractor("[answer: maybe]", "yes").violation


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("Is 2 kilograms of eggshells heavier?", ["is", "kilograms", "of", "eggshells", "heavier"]),
        ("Jane wasn't hungry, Fred's too", ["jane", "hungry", "too"]),
        ("it`s great-grandfather", ["great", "grandfather"]),
        ("a1b c_d e-f", ["a", "b", "c", "d", "e", "f"]),
        ("rock'n'roll o' 'quoted'", ["o", "quoted"]),
        ("café naïve", ["caf", "na", "ve"]),
        ("Yes yes YES", ["yes", "yes", "yes"]),
        ("", []),
    ],
)
def test_alpha_words(text, words):
    assert alpha_words(text) == words


@pytest.mark.parametrize(
    ("typed", "wrapped"),
    [
        ("y", "[answer: yes]"),
        ("YES", "[answer: yes]"),
        ("1", "[answer: yes]"),
        ("N", "[answer: no]"),
        ("no", "[answer: no]"),
        ("0", "[answer: no]"),
        (" yes", "[answer:  yes]"),
        ("Rome", "[answer: rome]"),
    ],
)
def test_human_answer(typed, wrapped):
    assert human_answer(typed) == wrapped


def test_random_baseline_reply():
    rng = random.Random(7)
    replies = [random_baseline_reply(rng) for _ in range(4000)]
    assert set(replies) == {"[answer: yes]", "[answer: no]"}
    assert abs(replies.count("[answer: yes]") / 4000 - 0.5) < 0.03
    assert replies == [random_baseline_reply(r) for r in [random.Random(7)] for _ in range(4000)]
