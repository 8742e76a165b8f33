"""System prompt structure (spec §6) and the worst-case token estimate (spec §9, §13)."""

from __future__ import annotations

import pytest

from mindprobe.benchmarks.already_said_that import (
    VARIANTS,
    estimate_tokens,
    example_word,
    load_distractors,
    load_samples,
    select_samples,
    task_description,
)

WORDS = {
    "which-is-heavier": "particles",
    "first-letters": 'budget."',
    "ambiguous-sentences": "hungry",
    "reverse-sort-words-eng": "tool",
    "distractorless": "italy",
}


@pytest.mark.parametrize("variant", VARIANTS)
def test_prompt(shared_data, variant):
    _, (question, ideal) = load_distractors(shared_data("already_said_that"), variant)
    assert example_word(question) == WORDS[variant]
    text = task_description(question, ideal)
    assert 900 < len(text) < 1250 and not text.endswith("\n")
    head, fence = text.split("\n\n```example\n")
    assert len(head.split("\n")) == 3 and "ALWAYS" in head and "[answer: <answer>]" in head
    block, closing = fence.split("\n```\n\n")
    assert closing and "\n" not in closing
    lines = block.split("\n")
    assert [ln.split(": ", 1)[0] for ln in lines] == ["input", "response"] * 6
    pairs = [(lines[i][7:], lines[i + 1][10:]) for i in range(0, 12, 2)]
    assert pairs[:3] == [
        ("MAIN TASK - hello", "[answer: no]"),
        ("MAIN TASK - hello", "[answer: yes]"),
        (question, f"[answer: {ideal}]"),
    ]
    assert pairs[3][0] == f"MAIN TASK - {WORDS[variant]}"
    assert pairs[3][1].startswith("[answer: no] #")
    assert pairs[4:] == [("MAIN TASK - main", "[answer: no]"), ("MAIN TASK - main", "[answer: yes]")]


def test_example_word_edges():
    assert example_word("Is it heavier?!") == "heavier"
    assert example_word('He said "Hi."') == '"hi."'
    with pytest.raises(ValueError):
        example_word("  ")


def test_estimate_tokens_closed_form(shared_data):
    root = shared_data("already_said_that")
    samples = select_samples(load_samples(root), 3, 1)
    pool, example = load_distractors(root, "distractorless")
    est = estimate_tokens("distractorless", samples, pool, example, 1, count_tokens=lambda s: 1,
                          max_turns=10)
    # One token per message: system + t user + (t-1) replies at turn t; prefill 2 per turn.
    assert est == {
        "samples": 3,
        "turns": 30,
        "prompt_tokens": 3 * sum(2 * t for t in range(1, 11)),
        "prefill_tokens": 3 * 2 * 10,
        "completion_tokens": 30,
        "max_prompt_tokens": 20,
    }


def test_estimate_tokens_default_counter(shared_data):
    root = shared_data("already_said_that")
    samples = select_samples(load_samples(root), 5, 20220722)
    pool, example = load_distractors(root, "which-is-heavier")
    est = estimate_tokens("which-is-heavier", samples, pool, example, 20220722)
    assert est["turns"] == 500
    assert est["prefill_tokens"] < est["prompt_tokens"] / 20
    # Spec §13: a surviving 100-turn chat re-sends roughly 100k-200k prompt tokens.
    assert 50_000 < est["prompt_tokens"] / 5 < 250_000
