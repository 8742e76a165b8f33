"""Prompts for the graded model (spec section 3) and for the reason judge (section 6).

The wording is our own paraphrase following the spec's structure; only the headers matter for
parsing and are kept verbatim, as is the demo-block literal (both from the spec, which follows
upstream dvlab-research/MR-GSM8K, MIT). Upstream oddities are kept on purpose: the task list
says "three parts" and then lists four.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mindprobe.errors import UsageError

# Request settings upstream uses for both the graded model and the judge (spec sections 3, 6).
TEMPERATURE = 0.0
MAX_TOKENS = 1024
ATTEMPTS = 6  # one call plus 5 retries; after that the response is ""
RETRY_PAUSE_S = 3.0
DEFAULT_JUDGE_MODEL = "gpt-4-turbo"
PUBLISHED_SHOTS = (0, 3)

_ROLE = (
    "As a grade-school math teacher, your task is to score a student's solution to a math "
    "question by carefully checking its reasoning."
)

_TASKS = "\n".join(
    [
        "Your evaluation should consist of three parts:",
        "1. **Step-by-step Evaluation**: Go through the student's solution step by step and "
        "point out any errors or misunderstandings you find.",
        "2. **Final Judgement**: Give an overall judgement on whether the solution is correct.",
        "3. **First Error Step**: If the solution is incorrect, give the step number where the "
        "first error occurs; otherwise write N/A.",
        "4. **Error Analysis**: If the solution is incorrect, analyse the cause of that first "
        "error; otherwise write N/A.",
    ]
)

_FORMAT = "\n".join(
    [
        "Please answer in the following format:",
        "Step-by-step Evaluation: [Your step-by-step evaluation of the student's solution]",
        "Final Judgement: [Insert only **correct** or **wrong** here]",
        "First Error Step: [N/A, or the number of the first incorrect step]",
        "Error Analysis: [N/A, or your analysis of the cause of the first error]",
    ]
)

_CLOSING_ZERO_SHOT = (
    "Follow this format exactly, without any introductory or concluding statements."
)
_CLOSING_K_SHOT = (
    "Now here is the question and solution for you to solve. Follow the format above exactly, "
    "without any introductory or concluding statements."
)

# Literal from spec section 3 (upstream wording, grammar included).
_DEMO_HEADER = "Here is some demo examples: "


def solution_text(steps: Sequence[str]) -> str:
    """The solution as the model sees it: steps already carry their "Step N: " prefixes."""
    return "\n".join(steps)


def _question_and_solution(question: str, steps: Sequence[str]) -> str:
    return f"Question:\n{question}\n\nStudent Solution:\n{solution_text(steps)}\n"


def demo_block(demos: Sequence[dict[str, Any]], k: int) -> str:
    """The first k demos in upstream's layout (spec section 3), literal separators included."""
    parts = [_DEMO_HEADER]
    for demo in demos[:k]:
        parts.append(
            "\n\nQuestion:\n"
            + demo["question"]
            + "\n\nStudent Solution:\n"
            + solution_text(demo["output_steps"])
            + "\nStep-by-step Evaluation:\n"
            + demo["evaluation"]
        )
    return "".join(parts)


def build_prompt(
    item: dict[str, Any], demos: Sequence[dict[str, Any]] | None = None, k: int = 0
) -> str:
    """The single user message for one item: zero-shot, or k-shot with the question last."""
    if k < 0:
        raise UsageError(f"MR-GSM8K shots must be >= 0, got {k}")
    body = _question_and_solution(item["question"], item["model_output_steps"])
    if k == 0:
        return f"{_ROLE}\n\n{body}\n{_TASKS}\n\n{_FORMAT}\n\n{_CLOSING_ZERO_SHOT}\n"
    if demos is None:
        raise UsageError(
            f"MR-GSM8K {k}-shot prompting needs the demo file: pass k-shot-demos.json or use k=0"
        )
    if k > len(demos):
        raise UsageError(f"MR-GSM8K {k}-shot prompting asked, but only {len(demos)} demos exist")
    return (
        f"{_ROLE}\n \n{_TASKS}\n\n{_FORMAT}\n\n{demo_block(demos, k)}\n\n{_CLOSING_K_SHOT}\n{body}"
    )


def build_judge_prompt(item: dict[str, Any], error_text: str) -> str:
    """The judge's user message: the item's labels plus the graded model's parsed error_text.

    The solution is embedded as a Python list repr, as upstream does (spec section 9.5).
    """
    return "\n".join(
        [
            "Hi GPT-4,",
            "",
            "You are an experienced grade-school math teacher. A student was asked to find the "
            "error in a solution to a math question and to explain it. Evaluate the student's "
            "explanation of the error, focusing on whether it matches the actual error in the "
            "solution.",
            "",
            "Here are the details:",
            f"- Math Question: {item['question']}",
            f"- Incorrect Solution Provided: {list(item['model_output_steps'])!s}",
            "- First Incorrect Step in the Solution: "
            f"{item['model_output_solution_first_error_step']}",
            f"- Ground Truth Error Reason: {item['model_output_solution_first_error_reason']}",
            f"- Student's Explanation of the Error: {error_text}",
            "",
            "Please provide the following:",
            "1. Step-by-Step Reasoning: [A succinct interpretation of the ground truth error "
            "reason]",
            "2. Student Error Reason Analysis: [A step-by-step check of whether the student's "
            "explanation matches the ground truth error reason]",
            '3. Final Decision: [Only "Correct" or "Wrong"]',
            "",
            "Follow this format, without any introduction or conclusion.",
        ]
    )
