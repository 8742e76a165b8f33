"""An independent check of a fresh MR-GSM8K item's label, from the item alone.

It shares no code with the generator (`fresh.py`): its own reading of steps and annotations and
its own arithmetic (Python's `ast` over exact decimals), so a generator bug cannot confirm
itself. A correct item must be the reference solution in step form with every calculation
right; a wrong item must equal the reference before its labelled step, be wrong exactly there
(its result differs from the reference's), be coherent after it (every annotated calculation and
every written-out `a op b = c` that held in the reference still holds) and end at another
answer than GSM8K's.
"""

from __future__ import annotations

import ast
import re
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from typing import Any

_STEP = re.compile(r"^Step (\d+): (.*)$", re.DOTALL)
_MARK = re.compile(r"<<(?P<expr>[^<>=]*)=(?P<res>[^<>]*)>>(?P<shown>\$?\s*[\d.,]+)?")
_WRITTEN = re.compile(
    r"(?P<lhs>(?:\d[\d,]*(?:\.\d+)?\s*[-+*/x×÷]\s*)+\d[\d,]*(?:\.\d+)?)\s*=\s*\$?"
    r"(?P<rhs>\d[\d,]*(?:\.\d+)?)")
_FINAL_STEP = re.compile(r"^The answer is: (.+)$")


def _num(text: str) -> Fraction:
    return Fraction(Decimal(text.replace(",", "").replace("$", "").strip()))


def _eval(expr: str) -> Fraction:
    """Exact value of + - * / arithmetic through Python's own parser."""
    def walk(node: ast.AST) -> Fraction:
        if isinstance(node, ast.Expression):
            return walk(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
            return Fraction(Decimal(str(node.value)))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return -walk(node.operand)
        if isinstance(node, ast.BinOp):
            a, b = walk(node.left), walk(node.right)
            ops = {ast.Add: a + b, ast.Sub: a - b, ast.Mult: a * b}
            if isinstance(node.op, ast.Div):
                return a / b
            if type(node.op) in ops:
                return ops[type(node.op)]
        raise ValueError(f"not arithmetic: {ast.dump(node)}")
    return walk(ast.parse(expr.strip(), mode="eval"))


def _agrees(exact: Fraction, written: str) -> bool:
    """`written` is `exact` to the places it is written with (GSM8K rounds some results)."""
    text = written.replace(",", "").replace("$", "").strip()
    places = len(text.split(".")[1]) if "." in text else 0
    return abs(exact - _num(text)) <= Fraction(1, 2 * 10**places) if places else \
        exact == _num(text)


def _marks_ok(line: str) -> bool:
    """Every annotation is right and its shown result is the annotation's."""
    for m in _MARK.finditer(line):
        if not _agrees(_eval(m.group("expr")), m.group("res")):
            return False
        if m.group("shown") is not None and _num(m.group("shown")) != _num(m.group("res")):
            return False
    return True


def _written_ok(line: str) -> list[bool]:
    plain = _MARK.sub(lambda m: m.group("shown") or "", line)
    out = []
    for m in _WRITTEN.finditer(plain):
        lhs = re.sub(r"[x×]", "*", m.group("lhs")).replace("÷", "/").replace(",", "")
        try:
            out.append(_agrees(_eval(lhs), m.group("rhs")))
        except (ValueError, SyntaxError, ZeroDivisionError):
            out.append(False)
    return out


def _results(line: str) -> list[Fraction]:
    return [_num(m.group("res")) for m in _MARK.finditer(line)]


def _reference(item: dict[str, Any]) -> tuple[list[str], str]:
    lines = [ln.strip() for ln in str(item["ground_truth_solution"]).splitlines() if ln.strip()]
    if not lines or not lines[-1].startswith("####"):
        raise ValueError("reference without a '#### answer' line")
    return lines[:-1], lines[-1][4:].strip()


def check_item(item: dict[str, Any]) -> str | None:
    """None when the item's label is confirmed, else why not."""
    try:
        return _check(item)
    except (ValueError, SyntaxError, ZeroDivisionError, InvalidOperation, KeyError) as exc:
        return f"unreadable: {exc}"


def _check(item: dict[str, Any]) -> str | None:
    ref, answer = _reference(item)
    steps = []
    for i, raw in enumerate(item["model_output_steps"], start=1):
        m = _STEP.match(raw)
        if m is None or int(m.group(1)) != i:
            return f"step {i} is not written 'Step {i}: …'"
        steps.append(m.group(2))
    final = _FINAL_STEP.match(steps[-1]) if steps else None
    if final is None:
        return "no final answer step"
    body, given = steps[:-1], final.group(1).strip()
    if len(body) != len(ref):
        return "a different number of steps than the reference"
    label = item["model_output_solution_correctness"]
    if label == "correct":
        if body != ref:
            return "a correct item differs from the reference"
        if not all(_marks_ok(ln) for ln in body):
            return "a wrong calculation in the reference"
        if _num(given) != _num(answer):
            return "a correct item does not end at GSM8K's answer"
        return None
    k = item["model_output_solution_first_error_step"]
    if not isinstance(k, int) or not 1 <= k <= len(body):
        return "a wrong item without a first error step in its solution"
    if body[:k - 1] != ref[:k - 1]:
        return "a wrong item differs from the reference before its first error"
    if not all(_marks_ok(ln) for ln in ref):
        return "a wrong calculation in the reference"
    if _results(body[k - 1]) == _results(ref[k - 1]) and _marks_ok(body[k - 1]):
        return f"step {k} is not wrong"
    for i in range(k, len(body)):
        if not _marks_ok(body[i]):
            return f"step {i + 1} does not follow from the earlier steps"
        held = _written_ok(ref[i])
        now = _written_ok(body[i])
        if len(held) != len(now) or any(h and not n for h, n in zip(held, now, strict=True)):
            return f"a written calculation of step {i + 1} no longer holds"
    if _num(given) == _num(answer):
        return "a wrong item ends at GSM8K's answer"
    return None
