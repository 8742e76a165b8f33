"""Prompt layout (spec section 3) and judge prompt contents (section 6), from upstream's script.

Byte-for-byte equality with what the script sends is in test_mr_upstream_requests.py."""

from __future__ import annotations

import pytest

from mindprobe.benchmarks.mr_gsm8k import Prompts, load_demos, parse_response, templates
from mindprobe.benchmarks.mr_gsm8k.prompts import braced
from mindprobe.errors import UsageError

HEADERS = ("Step-by-step Evaluation:", "Final Judgement:", "First Error Step:", "Error Analysis:")
TITLES = tuple(f"**{h}**" for h in HEADERS)  # upstream: the colon inside the bold


@pytest.fixture
def prompts(shared_data):
    return Prompts(braced(templates(shared_data("mr_gsm8k"))))


@pytest.fixture
def build_prompt(prompts):
    return prompts.prompt


@pytest.fixture
def build_judge_prompt(prompts):
    return prompts.judge


@pytest.fixture
def demos(shared_data):
    return load_demos(shared_data("mr_gsm8k") / "k-shot-demos.json")


def _body(item):
    return (
        f"Question:\n{item['question']}\n\nStudent Solution:\n"
        + "\n".join(item["model_output_steps"])
        + "\n"
    )


def _template_lines(prompt):
    return [line for line in prompt.splitlines() if line.startswith(HEADERS) and "[" in line]


def test_zero_shot_layout(make_item, build_prompt, build_judge_prompt):
    item = make_item()
    prompt = build_prompt(item)
    lines = prompt.split("\n")
    assert "teacher" in lines[0] and lines[1] == ""
    assert prompt.endswith("\n")
    assert f"\n\n{_body(item)}\n" in prompt  # blank line before the question and after solution
    assert "three parts" in prompt
    positions = [prompt.index(title) for title in TITLES]
    assert positions == sorted(positions) and prompt.index(_body(item)) < positions[0]
    template = _template_lines(prompt)
    assert [line.split(":")[0] + ":" for line in template] == list(HEADERS)
    assert "**correct**" in template[1] and "**wrong**" in template[1]
    assert "demo" not in prompt


def test_k_shot_layout(make_item, demos, build_prompt, build_judge_prompt):
    item = make_item()
    prompt = build_prompt(item, demos, k=3)
    block = "Here is some demo examples: " + "".join(
        "\n\nQuestion:\n"
        + d["question"]
        + "\n\nStudent Solution:\n"
        + "\n".join(d["output_steps"])
        + "\nStep-by-step Evaluation:\n"
        + d["evaluation"]
        for d in demos[:3]
    )
    assert block in prompt
    lines = prompt.split("\n")
    assert lines[1].strip() == "" and lines[1] != ""  # a line holding only whitespace
    assert prompt.endswith("\n" + _body(item))  # the question comes last, after the demos
    assert prompt.index(block) < prompt.index(_body(item))
    assert prompt.index(TITLES[-1]) < prompt.index(block)
    assert demos[3]["question"] not in prompt
    assert [line.split(":")[0] + ":" for line in _template_lines(prompt)] == list(HEADERS)
    assert prompt.count("Question:\n") == 4


def test_k_shot_order_follows_the_demo_file(make_item, demos, build_prompt, build_judge_prompt):
    prompt = build_prompt(make_item(), demos, k=5)
    positions = [prompt.index(d["question"]) for d in demos]
    assert positions == sorted(positions)


@pytest.mark.parametrize(("k", "use_demos"), [(1, False), (6, True), (-1, True)])
def test_bad_shot_requests(make_item, demos, k, use_demos, build_prompt, build_judge_prompt):
    with pytest.raises(UsageError):
        build_prompt(make_item(), demos if use_demos else None, k=k)


def test_filled_template_parses(make_item, build_prompt, build_judge_prompt):
    prompt = build_prompt(make_item())
    filled = "\n".join(
        line.split("[")[0] + value
        for line, value in zip(
            _template_lines(prompt), ["ok", "**wrong**", "3", "bad subtraction"], strict=True
        )
    )
    assert parse_response(filled) == ("**wrong**", "3", "bad subtraction")


def test_judge_prompt_contents(make_item, build_prompt, build_judge_prompt):
    item = make_item("wrong", step=3)
    prompt = build_judge_prompt(item, "The student subtracted 1.\nSecond line.")
    assert "GPT-4" in prompt.split("\n")[0]
    assert f"- Math Question: {item['question']}\n" in prompt
    assert f"- Incorrect Solution Provided: {item['model_output_steps']!s}\n" in prompt
    assert "['Step 1: He has 3 apples.', 'Step 2: 3 + 2 = 5'" in prompt  # Python list repr
    assert "\n".join(item["model_output_steps"]) not in prompt
    assert "- First Incorrect Step in the Solution: 3\n" in prompt
    assert "- Ground Truth Error Reason: Subtracts 1 for no reason.\n" in prompt
    assert "- Student's Explanation of the Error: The student subtracted 1.\nSecond line." in prompt
    heads = ["Step-by-Step Reasoning:", "Student Error Reason Analysis:", "Final Decision:"]
    positions = [prompt.index(h) for h in heads]
    assert positions == sorted(positions)
    assert positions[0] > prompt.index("- Student's Explanation of the Error:")
    assert "'Correct' or 'Wrong'" in prompt
