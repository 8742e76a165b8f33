"""System prompt structure (spec §6) and the worst-case token estimate (spec §9, §13)."""

from __future__ import annotations

import ast

import pytest

from mindprobe.benchmarks.already_said_that import (
    VARIANTS,
    estimate_tokens,
    example_word,
    load_distractors,
    load_samples,
    select_samples,
    task_description,
    templates,
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
    root = shared_data("already_said_that")
    _, (question, ideal) = load_distractors(root, variant)
    assert example_word(question) == WORDS[variant]
    text = task_description(templates(root)["task_description"], (question, ideal))
    # Upstream's eval: prompts.TASK_DESCRIPTION.format(...) with the example item.
    source = (root / "upstream/evals/elsuite/already_said_that/prompts.py").read_text()
    node = next(n for n in ast.parse(source).body if isinstance(n, ast.Assign)
                and n.targets[0].id == "TASK_DESCRIPTION")
    assert text == ast.literal_eval(node.value).format(
        distractor_question=question, distractor_answer=ideal, distractor_word=WORDS[variant])
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
    pool, _ = load_distractors(root, "distractorless")
    est = estimate_tokens("distractorless", samples, pool, "S", 1, count_tokens=lambda s: 1,
                          per_message=0,
                          max_turns=10)
    # One token per message: system + t user + (t-1) replies at turn t; prefill 2 per turn.
    assert est == {
        "samples": 3,
        "turns": 30,
        "requests": 30,
        "prompt_tokens": 3 * sum(2 * t for t in range(1, 11)),
        "prefill_tokens": 3 * 2 * 10,
        "completion_tokens": 30,
        "max_prompt_tokens": 20,
    }
    # CoT: two calls per turn, the second re-sending the first plus reasoning (5 tokens) and
    # the answer message; the history keeps only the answers.
    cot = estimate_tokens("distractorless", samples, pool, "S", 1, count_tokens=lambda s: 1,
                          per_message=0,
                          max_turns=10, cot_messages={"reason": "r", "answer": "a"},
                          cot_reasoning_tokens=5)
    first = [2 * t + 1 for t in range(1, 11)]
    assert cot == {
        "samples": 3,
        "turns": 30,
        "requests": 60,
        "prompt_tokens": 3 * sum(f + f + 6 for f in first),
        "prefill_tokens": 3 * (10 * (2 + 1 + 6)),
        "completion_tokens": 3 * 10 * 6,
        "max_prompt_tokens": 27,
        "solver": "cot",
        "reasoning_tokens": 150,
    }


def test_estimate_tokens_default_counter(shared_data):
    root = shared_data("already_said_that")
    samples = select_samples(load_samples(root), 5, 20220722)
    pool, example = load_distractors(root, "which-is-heavier")
    system = task_description(templates(root)["task_description"], example)
    est = estimate_tokens("which-is-heavier", samples, pool, system, 20220722)
    assert est["turns"] == 500
    assert est["prefill_tokens"] < est["prompt_tokens"] / 20
    # Spec §13: a surviving 100-turn chat re-sends roughly 100k-200k prompt tokens.
    assert 50_000 < est["prompt_tokens"] / 5 < 250_000
