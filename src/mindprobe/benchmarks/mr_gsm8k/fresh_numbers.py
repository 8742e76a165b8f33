"""Numbers as fresh solutions read and write them: exact values, short decimals, the
arithmetic of a calculator annotation (the generator's own; the checker has another)."""

from __future__ import annotations

import re
from fractions import Fraction

NUMBER = re.compile(r"(?<![\d.])\d+(?:\.\d+)?(?!\d)")


def value(text: str) -> Fraction:
    return Fraction(text.replace(",", ""))


def fmt(v: Fraction) -> str | None:
    """A value as a solution writes it (an integer, or a short terminating decimal); None if
    it has no such form (such a plant is not made: its text could not be exact)."""
    if v.denominator == 1:
        return str(v.numerator)
    for places in range(1, 5):
        scaled = v * 10**places
        if scaled.denominator == 1:
            sign = "-" if scaled < 0 else ""
            digits = str(abs(scaled.numerator)).rjust(places + 1, "0")
            return f"{sign}{digits[:-places]}.{digits[-places:]}"
    return None


def tokens(expr: str) -> list[str]:
    return re.findall(r"\d+(?:\.\d+)?|\.\d+|[-+*/()]", expr)


def evaluate(expr: str) -> Fraction | None:
    """Exact value of an annotation's arithmetic (+ - * / and brackets), or None."""
    toks = tokens(expr.replace(" ", ""))
    if not toks or "".join(toks) != expr.replace(" ", ""):
        return None
    pos = 0

    def atom() -> Fraction:
        nonlocal pos
        tok = toks[pos]
        pos += 1
        if tok == "(":
            v = sum_()
            if pos >= len(toks) or toks[pos] != ")":
                raise ValueError
            pos += 1
            return v
        if tok == "-":
            return -atom()
        return value(tok)

    def product() -> Fraction:
        nonlocal pos
        v = atom()
        while pos < len(toks) and toks[pos] in "*/":
            op = toks[pos]
            pos += 1
            rhs = atom()
            v = v * rhs if op == "*" else v / rhs
        return v

    def sum_() -> Fraction:
        nonlocal pos
        v = product()
        while pos < len(toks) and toks[pos] in "+-":
            op = toks[pos]
            pos += 1
            v = v + product() if op == "+" else v - product()
        return v

    try:
        v = sum_()
    except (ValueError, ZeroDivisionError, IndexError):
        return None
    return v if pos == len(toks) else None


def numbers(text: str) -> set[Fraction]:
    return {value(m.group()) for m in NUMBER.finditer(text.replace(",", ""))}


def swap_numbers(text: str, mapping: dict[Fraction, str]) -> str:
    """Every number token whose value is a key of `mapping`, written as its new value."""
    def repl(m: re.Match[str]) -> str:
        return mapping.get(value(m.group()), m.group())
    return NUMBER.sub(repl, text)
