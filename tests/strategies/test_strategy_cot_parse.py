"""The WorldSense CoT answer line on hostile replies: only the last `Answer:` line counts."""

from __future__ import annotations

import pytest

from mindprobe.benchmarks.worldsense import strategies as st

TF = ["TRUE", "FALSE"]
N123 = ["1", "2", "3"]


@pytest.mark.parametrize("reply, allowed, expected", [
    ("Linda is behind Grace, so Grace is ahead.\nAnswer: FALSE", TF, "FALSE"),
    ("reasoning\n**Answer:** TRUE", TF, "TRUE"),
    ("reasoning\nAnswer: 'true'.", TF, "TRUE"),
    ("reasoning\nFinal answer: (3)", N123, "3"),
    ("reasoning\n  answer:   2  ", N123, "2"),
    ("reasoning\nANSWER: IMPOSSIBLE\n", ["POSSIBLE", "IMPOSSIBLE"], "IMPOSSIBLE"),
    # several candidate lines: the last one is the model's final word
    ("Answer: TRUE\nWait, I misread the order.\nAnswer: FALSE", TF, "FALSE"),
    ("Answer: FALSE\nOn second thought...\nAnswer: TRUE\nThat is my answer.", TF, "TRUE"),
    # no final answer line at all
    ("Grace is ahead of Linda, so the sentence is FALSE.", TF, None),
    ("FALSE", TF, None),
    ("", TF, None),
    # the answer only inside the reasoning (no line of the fixed form)
    ("I think the answer: TRUE is tempting, but let me check more.", TF, None),
    ("The statement is TRUE because Frank is behind.\nSo my conclusion follows.", TF, None),
    # a last line that is not an allowed answer: invalid, earlier lines are not tried
    ("Answer: TRUE\nHmm.\nAnswer: maybe", TF, None),
    ("Answer: FALSE\nAnswer:", TF, None),
    ("reasoning\nAnswer: 1) Emily is older", N123, None),
    ("reasoning\nAnswer: TRUE or FALSE", TF, None),
])
def test_parse_cot(reply, allowed, expected):
    assert st.parse_cot(reply, allowed) == expected


def test_reask_accepts_a_bare_answer_only_after_a_reask():
    assert st.parse_reply("cot", "FALSE", TF) is None
    assert st.parse_reply("cot", "FALSE", TF, reasked=True) == "FALSE"
    assert st.parse_reply("cot", "blah\nAnswer: TRUE", TF, reasked=True) == "TRUE"
    assert "Answer: X" in st.reask_message("cot", TF)


def test_other_strategies_take_the_whole_reply():
    for name in ("basic", "direct", "clarified", "incontext-iid", "constrained"):
        assert st.parse_reply(name, " 'TRUE'. ", TF) == "TRUE"
        assert st.parse_reply(name, "Answer: TRUE", TF) is None
        assert st.parse_reply(name, "The answer is TRUE", TF) is None


def test_random_and_human_replies_fit_the_cot_form():
    assert st.reply_choices("cot", TF) == ["Answer: TRUE", "Answer: FALSE"]
    assert all(st.parse_cot(c, TF) for c in st.reply_choices("cot", TF))
    wrap = st.human_wrap("cot")
    assert st.parse_cot(wrap("false"), TF) == "FALSE"
    assert wrap("Answer: 1") == "Answer: 1"
    assert st.human_wrap("basic") is None
