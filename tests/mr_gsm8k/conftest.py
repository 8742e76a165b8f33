"""Factories for synthetic MR-GSM8K records and replies (no real `correct` record exists offline)."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import pytest

_ids = itertools.count()


def _make_item(
    label: str = "wrong", step: Any = 3, question_type: str = "original", **extra: Any
) -> dict[str, Any]:
    correct = label.lower() == "correct"
    item = {
        "uuid": f"synthetic-{next(_ids)}",
        "question": "Tom has 3 apples and buys 2 more. How many apples does he have?",
        "ground_truth_solution": "3+2=<<3+2=5>>5\n#### 5",
        "ground_truth_answer": "5",
        "model_output_steps": [
            "Step 1: He has 3 apples.",
            "Step 2: 3 + 2 = 5",
            "Step 3: 5 - 1 = 4",
        ],
        "model_output_answer_correctness": "correct" if correct else "wrong",
        "model_output_solution_correctness": label,
        "model_output_solution_first_error_step": "N/A" if correct else step,
        "model_output_solution_first_error_reason": "N/A"
        if correct
        else "Subtracts 1 for no reason.",
        "question_type": question_type,
    }
    item.update(extra)
    return item


def _reply(judgement: str, step: str = "N/A", analysis: str = "N/A") -> str:
    return (
        "Step-by-step Evaluation: I checked each step.\n"
        f"Final Judgement: {judgement}\nFirst Error Step: {step}\nError Analysis: {analysis}"
    )


@pytest.fixture
def make_item() -> Callable[..., dict[str, Any]]:
    """make_item(label="wrong", step=3, question_type="original", **overrides) -> record."""
    return _make_item


@pytest.fixture
def reply() -> Callable[..., str]:
    """reply(judgement, step="N/A", analysis="N/A") -> a well-formed model response."""
    return _reply
