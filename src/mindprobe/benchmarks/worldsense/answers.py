"""WorldSense's answer classes, response bias and gold weights (spec §3.3): what scoring one
trial needs, apart from the tables of `metrics.py` (pandas), so a plan or a run's items never
import pandas."""

from __future__ import annotations

# Spec §3.3: answer classes (1 and 2 both mean "decidable"), response bias and gold weights.
_CLASS = {"TRUE": 0, "FALSE": 1, "POSSIBLE": 2, "IMPOSSIBLE": 3, "1": 4, "2": 4, "3": 5}


def is_correct(resp: str, gold: str) -> bool:
    """Per-trial correctness (spec §3.3): same answer class; for Compl only known vs unknown."""
    cls = _CLASS.get(resp)
    return cls is not None and cls == _CLASS.get(gold)


_BIAS = {"TRUE": 1.0, "POSSIBLE": 1.0, "1": 1.0, "2": 1.0, "FALSE": -1.0, "IMPOSSIBLE": -1.0,
         "3": -1.0}
_WEIGHT = {"TRUE": 0.5, "FALSE": 0.5, "POSSIBLE": 0.5, "IMPOSSIBLE": 0.5, "3": 0.5,
           "1": 0.25, "2": 0.25}
