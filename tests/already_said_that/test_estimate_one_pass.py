"""The plan's expected and worst-case token counts come from one pass over the oracle's
chats: the totals within the first E turns equal a pass cut at E turns."""

from __future__ import annotations

import pytest

from mindprobe.benchmarks.already_said_that import load_distractors, load_samples
from mindprobe.benchmarks.already_said_that.estimate import estimate_tokens

KEYS = ("turns", "requests", "prompt_tokens", "prefill_tokens", "completion_tokens")


@pytest.mark.parametrize("cot", [None, {"reason": "Think it over.", "answer": "Now answer."}])
def test_within_equals_a_shorter_pass(shared_data, cot):
    root = shared_data("already_said_that")
    pool, _ = load_distractors(root, "which-is-heavier")
    samples = load_samples(root)[:6]
    both = estimate_tokens("which-is-heavier", samples, pool, "S", 1, max_turns=40,
                           cot_messages=cot, also_turns=12)
    short = estimate_tokens("which-is-heavier", samples, pool, "S", 1, max_turns=12,
                            cot_messages=cot)
    full = estimate_tokens("which-is-heavier", samples, pool, "S", 1, max_turns=40,
                           cot_messages=cot)
    assert both["within"] == {k: short[k] for k in KEYS}
    assert {k: both[k] for k in full} == full
