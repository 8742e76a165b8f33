"""Prompt rendering (spec §4.1, §4.2, §8): order of substitutions, no separator, labels last."""

from __future__ import annotations

import pytest

from mindprobe.benchmarks.sort.prompts import (
    ANSWER_PREFIX,
    PROMPT_CONFIGS,
    get_prompt_config,
    ground_truth,
    render_prompt,
    render_segments,
)
from mindprobe.errors import UsageError

ROW = {"book_title": "Rain Day", "excerpt_text": "*Tom woke early. Outside, rain fell!*\n\n",
       "segment_1": "*Outside, rain fell!*", "segment_2": "*Mr. Bell knocked*",
       "present_seg1_first": 0}


def test_thirteen_configs_with_the_family_table():
    assert list(PROMPT_CONFIGS) == [f"prompt_{i}" for i in range(13)]
    pre = ["Pa", "Pb", "Pb", "Pb", "Pb", "Pb", "Pc", "Pc", "Pc", "Pc", "Pc", "Pc", "Pb"]
    post = ["Q0", "Q1", "Q2", "Q3", "Q4", "Q5", "Q0", "Q1", "Q2", "Q3", "Q4", "Q5", "Q2"]
    for i, cfg in enumerate(PROMPT_CONFIGS.values()):
        assert (cfg.pre_family, cfg.post_family) == (pre[i], post[i])
        assert cfg.model_answer_prefix == ANSWER_PREFIX == "Answer: Segment"
        assert cfg.pre_excerpt.endswith("<excerpt>")
        assert "<segments>" in cfg.post_excerpt and "<tasktype>" in cfg.post_excerpt
    assert "10" in PROMPT_CONFIGS["prompt_0"].post_excerpt  # Q0's "10 pairs" quirk
    assert PROMPT_CONFIGS["prompt_12"].system_prompt != PROMPT_CONFIGS["prompt_2"].system_prompt
    assert PROMPT_CONFIGS["prompt_12"].post_excerpt == PROMPT_CONFIGS["prompt_2"].post_excerpt


def test_unknown_prompt_lists_known_names():
    with pytest.raises(UsageError, match="prompt_0, prompt_1, .*prompt_12"):
        get_prompt_config("prompt_99")
    assert get_prompt_config("prompt_3.yaml").name == "prompt_3"


def test_worked_example_segments_and_answer():
    seg = render_segments(ROW["segment_1"], ROW["segment_2"], 0)
    assert seg == ("Segment <label_list[0]>: *Mr. Bell knocked* "
                   "Segment <label_list[1]>: *Outside, rain fell!*\n")
    prompt = render_prompt("prompt_1", ROW)
    assert "Segment A: *Mr. Bell knocked* Segment B: *Outside, rain fell!*\n" in prompt.user
    assert ground_truth(0) == "B" and ground_truth(1) == "A"
    assert ground_truth(0, "last") == "A" and ground_truth(1, "last") == "B"
    assert prompt.answer_prefix == "Answer: Segment"


def test_in_context_is_pre_plus_post_without_separator():
    cfg = get_prompt_config("prompt_7")
    prompt = render_prompt(cfg, ROW)
    pre = cfg.pre_excerpt.replace("<excerpt>", ROW["excerpt_text"])
    assert prompt.user.startswith(pre)
    rest = prompt.user[len(pre):]
    assert rest.startswith(cfg.post_excerpt.split("<")[0].replace("<booktitle>", "Rain Day"))
    assert "*\n\n" + rest[:10] in prompt.user  # the excerpt's blank line is the only gap
    no_ctx = render_prompt(cfg, ROW, in_context=False)
    assert ROW["excerpt_text"] not in no_ctx.user and no_ctx.user == rest
    assert "<" not in prompt.user and "first" in prompt.user


def test_substitution_order_and_labels_last():
    row = dict(ROW, excerpt_text="*mentions <booktitle> and <label_list[1]>*\n\n")
    prompt = render_prompt("prompt_0", row, task_type="last", labels=("X1", "Y2"))
    assert "<booktitle>" in prompt.user  # excerpt inserted after the title was replaced
    assert "mentions <booktitle> and Y2" in prompt.user  # labels replaced everywhere, last
    assert "Segment X1: " in prompt.user and "last" in prompt.user


def test_wrapping_and_message_forms():
    raw_row = dict(ROW, excerpt_text="plain text.", segment_1="a b", segment_2="c d")
    wrapped = render_prompt("prompt_2", raw_row)
    assert "*plain text.*\n\n" in wrapped.user and "*a b*" in wrapped.user
    bare = render_prompt("prompt_2", raw_row, wrap=False)
    assert "*a b*" not in bare.user
    msgs = wrapped.messages()
    assert [m["role"] for m in msgs] == ["system", "user"]
    merged = wrapped.messages(system_role=False)
    assert merged == [{"role": "user", "content": wrapped.system + "\n\n" + wrapped.user}]
    assert wrapped.raw().endswith("\nAnswer: Segment")
    assert wrapped.raw(add_space=True).endswith("Answer: Segment ")
    off = render_prompt("prompt_2", raw_row, use_system_prompt=False)
    assert off.messages() == [{"role": "user", "content": off.user}]
    strict = render_prompt("prompt_12", ROW)
    assert "A or B" in strict.system
    with pytest.raises(UsageError):
        render_prompt("prompt_2", ROW, task_type="middle")
