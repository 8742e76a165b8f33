"""Gold answers as strings (spec §6.2, §6.3): the flattening ROUGE/BLEURT/judge see, and the
primitive strings accuracy looks for."""

from __future__ import annotations

from typing import Any


def str_answer(ans: Any) -> str:
    """list: elements, one per line; dict: ``"{key} - {value}"`` lines in insertion order;
    bool: yes/no; None: ""; else ``str(x)``. A generation (a string) passes through unchanged."""
    if isinstance(ans, list):
        return "\n".join(str_answer(x) for x in ans)
    if isinstance(ans, dict):
        return "\n".join(f"{k} - {str_answer(v)}" for k, v in ans.items())
    if isinstance(ans, bool):
        return "yes" if ans else "no"
    if ans is None:
        return ""
    return str(ans)


def primitive_text(x: Any) -> str:
    """How accuracy stringifies one gold primitive before normalising: bools become yes/no."""
    if isinstance(x, bool):
        return "yes" if x else "no"
    return str(x)


def gold_strings(ans: Any) -> list[str]:
    """Every primitive accuracy will look for, in match order (dict: keys, then values)."""
    if isinstance(ans, list):
        return [s for x in ans for s in gold_strings(x)]
    if isinstance(ans, dict):
        return [s for x in [*ans.keys(), *ans.values()] for s in gold_strings(x)]
    return [primitive_text(ans)]
