"""Fresh MR-GSM8K items: graded solutions no model has seen, built from GSM8K reference solutions.

A reference solution's calculator annotations (`<<70-55=15>>15`) say exactly what each step
computes, so a solution with one planted first error can be written whose label is known: the
error is put into one annotation (a slipped result, a swapped operation, or another quantity of
the question), and every later annotation is recomputed from the wrong value, so the solution stays
coherent after its first error, as a model's own mistake does, and ends at another answer.

Each candidate goes through `fresh_check.check_item` (its own evaluator); only items it confirms
are emitted, and the rest are counted by reason. Everything is seeded: one seed, one item list.
"""

from __future__ import annotations

import hashlib
import random
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from mindprobe.errors import UsageError

from .dataset_file import FULL_N_CORRECT, FULL_N_WRONG, LABEL_FIELD, STEP_FIELD
from .fresh_check import check_item
from .fresh_numbers import NUMBER, evaluate, fmt, numbers, swap_numbers, tokens, value

#: Bumped whenever the same seed and data could give other items (recorded in the manifest).
GENERATOR_VERSION = 1
ERROR_KINDS = ("calculation", "operation", "quantity")
#: The official file's share of correct solutions (1427 of 3000): the default mix.
OFFICIAL_SHARE_CORRECT = FULL_N_CORRECT / (FULL_N_CORRECT + FULL_N_WRONG)
#: The question types whose reference solution is the question's own.
SOURCE_TYPES = ("original", "reversed")

ANNOTATION = re.compile(r"<<([^<>=]*)=([^<>]*)>>")
_EXPR_OK = re.compile(r"^[\d.+\-*/() ]+$")
_FINAL = re.compile(r"^####\s*(.+?)\s*$")
_SHOWN_TAIL = re.compile(r"[\d.,$%()+\-*/x×÷ ]*=\s*\$?\s*$")
_OPS = {"+": "-", "-": "+", "*": "/", "/": "*"}
_SHOWN_OP = {"+": "+", "-": "-", "*": "*", "x": "*", "×": "*", "/": "/", "÷": "/"}


@dataclass
class Source:
    """One question with its reference solution, split into annotated lines and the answer."""

    uuid: str
    question: str
    question_type: str
    lines: list[str]
    answer: str


@dataclass
class Generated:
    """The emitted items and, per reason, how many candidates were not emitted."""

    items: list[dict[str, Any]]
    skipped: Counter = field(default_factory=Counter)
    sources: int = 0

    def summary(self) -> str:
        kinds = Counter(it["fresh"]["kind"] for it in self.items)
        text = (f"{len(self.items)} fresh items from {self.sources} reference solutions "
                f"({sum(1 for it in self.items if it[LABEL_FIELD] == 'correct')} correct; "
                + ", ".join(f"{kinds[k]} {k}" for k in ERROR_KINDS if kinds[k]) + ")")
        if self.skipped:
            text += "; not used: " + ", ".join(f"{n} {why}" for why, n in
                                                sorted(self.skipped.items()))
        return text


# -- reading reference solutions ------------------------------------------------------------

def sources_of(records: Sequence[dict[str, Any]], skipped: Counter) -> list[Source]:
    """One source per distinct question of the `original` and `reversed` records that carry a
    reference solution with calculator annotations, in the data's order."""
    seen: set[str] = set()
    out = []
    for rec in records:
        if rec.get("question_type") not in SOURCE_TYPES:
            continue
        key = " ".join(str(rec["question"]).split())
        if key in seen:
            continue
        seen.add(key)
        solution = str(rec.get("ground_truth_solution") or "")
        if not solution.strip():
            skipped["no reference solution"] += 1
            continue
        lines = [ln.strip() for ln in solution.splitlines() if ln.strip()]
        finals = [i for i, ln in enumerate(lines) if _FINAL.match(ln)]
        if not finals:
            skipped["no '#### answer' line"] += 1
            continue
        answer = _FINAL.match(lines[finals[0]]).group(1).replace(",", "").lstrip("$")
        lines = lines[:finals[0]]
        annotations = [m for ln in lines for m in ANNOTATION.finditer(ln)]
        if not annotations:
            skipped["no calculator annotations"] += 1
            continue
        if any(not _EXPR_OK.match(m.group(1)) or evaluate(m.group(1)) is None
               for m in annotations):
            skipped["an annotation that is not plain arithmetic"] += 1
            continue
        if NUMBER.fullmatch(answer) is None:
            skipped["a non-numeric answer"] += 1
            continue
        out.append(Source(str(rec["uuid"]), str(rec["question"]), rec["question_type"],
                          lines, answer))
    return out


def steps_of(lines: Sequence[str], answer: str) -> list[str]:
    """MR-GSM8K's step format: `Step N: ` before each line, the final answer as the last step."""
    body = [f"Step {i}: {ln}" for i, ln in enumerate(lines, start=1)]
    return [*body, f"Step {len(body) + 1}: The answer is: {answer}"]


# -- planting one first error ---------------------------------------------------------------

@dataclass
class Plant:
    step: int          # 1-based line the error is in
    kind: str
    lines: list[str]
    answer: str
    reason: str


def _rewrite_shown(before: str, old_expr: str, new_expr: str) -> str | None:
    """The text shown before an annotation (`45 - 24 = `) rewritten to show `new_expr`, keeping
    its spacing and operator signs; None when it does not show the old expression."""
    tail = _SHOWN_TAIL.search(before)
    if tail is None:
        return None
    shown = tail.group()
    shown_nums = [value(m.group()) for m in NUMBER.finditer(shown.replace(",", ""))]
    old_t, new_t = tokens(old_expr), tokens(new_expr)
    if shown_nums != [value(t) for t in old_t if t[0].isdigit() or t[0] == "."]:
        return None
    shown_ops = [c for c in shown.split("=")[0] if c in _SHOWN_OP]
    old_ops = [t for t in old_t if t in _OPS]
    if [_SHOWN_OP[c] for c in shown_ops] != old_ops:
        return None
    new_nums = iter(t for t in new_t if t[0].isdigit() or t[0] == ".")
    new_ops = iter(t for t in new_t if t in _OPS)
    text = NUMBER.sub(lambda m: next(new_nums), shown.replace(",", ""))
    head = text.split("=")[0]
    out = [_op_text(c, next(new_ops)) if c in _SHOWN_OP else c for c in head]
    return before[:tail.start()] + "".join(out) + text[len(head):]


def _op_text(shown: str, new: str) -> str:
    """An operator written as the solution wrote the one it replaces (`x` stays a letter)."""
    if _SHOWN_OP[shown] == new:
        return shown
    if shown in "×÷":
        return {"*": "×", "/": "÷"}.get(new, new)
    return new


def _slip(v: Fraction, rng: random.Random) -> Fraction:
    """A plausible wrong result: a neighbouring value, a digit off, or a factor of ten."""
    options = [v + 1, v - 1, v + 10, v - 10, v * 10, v / 10, v + 2]
    if v.denominator == 1 and abs(v) >= 10:
        digits = str(abs(v.numerator))
        swapped = digits[:-2] + digits[-1] + digits[-2]
        if swapped != digits:
            options.append(Fraction(int(swapped)) * (1 if v > 0 else -1))
    options = [o for o in options if o > 0 and o != v and fmt(o) is not None]
    return rng.choice(options) if options else v + 1


def _planted_expr(kind: str, expr: str, source: Source, rng: random.Random) -> str | None:
    toks = tokens(expr)
    if kind == "operation":
        where = [i for i, t in enumerate(toks) if t in _OPS and i > 0 and toks[i - 1] != "("]
        if not where:
            return None
        i = rng.choice(where)
        return "".join(toks[:i] + [_OPS[toks[i]]] + toks[i + 1:])
    # quantity: one number of the question replaced by another number of the question
    asked = sorted(numbers(source.question))
    where = [i for i, t in enumerate(toks) if t[0].isdigit() and value(t) in asked]
    if not where or len(asked) < 2:
        return None
    i = rng.choice(where)
    others = [q for q in asked if q != value(toks[i]) and fmt(q) is not None]
    if not others:
        return None
    return "".join(toks[:i] + [fmt(rng.choice(others))] + toks[i + 1:])


def plant(source: Source, step: int, kind: str, rng: random.Random) -> Plant | None:
    """The solution with a first error of `kind` in line `step` and every later line
    recomputed; None where no such error can be planted unambiguously there."""
    line = source.lines[step - 1]
    m = ANNOTATION.search(line)
    if m is None:
        return None
    expr, shown = m.group(1), m.group(2).strip().lstrip("$")
    old = value(shown)
    if kind == "calculation":
        new_expr, new = expr, _slip(old, rng)
    else:
        new_expr = _planted_expr(kind, expr, source, rng)
        new = evaluate(new_expr) if new_expr else None
        if new is None or new == old or new <= 0:
            return None
    text = fmt(new)
    if text is None:
        return None
    before = line[:m.start()]
    if new_expr != expr:
        before = _rewrite_shown(before, expr, new_expr)
        if before is None:
            return None
    after = line[m.end():]
    after = after.replace(m.group(2).strip(), text, 1) if after.lstrip("$ ").startswith(
        m.group(2).strip()) else None
    if after is None:
        return None
    guard = _Guard(source)
    if not guard.fresh_value(old, new, step - 1):
        return None
    lines = list(source.lines)
    lines[step - 1] = f"{before}<<{new_expr}={text}>>{after}"
    mapping: dict[Fraction, str] = {old: text}
    for i in range(step, len(lines)):
        lines[i] = _recompute(lines[i], mapping, guard, i)
        if lines[i] is None:
            return None
    answer = mapping.get(value(source.answer))
    if answer is None:
        return None
    shown_old = fmt(old) or shown
    if kind == "calculation":
        reason = f"Step {step} computes {expr} as {text}; it is {shown_old}."
    elif kind == "operation":
        reason = (f"Step {step} uses the wrong operation: it computes {new_expr} = {text} "
                  f"where the solution needs {expr} = {shown_old}.")
    else:
        reason = (f"Step {step} uses the wrong quantity from the question: it computes "
                  f"{new_expr} = {text} where the solution needs {expr} = {shown_old}.")
    return Plant(step, kind, lines, answer, reason)


class _Guard:
    """Values may be replaced by value only where that cannot touch another quantity: a changed
    value must not occur in the question or in the lines before the one computing it, and its
    new value must occur nowhere in the question or the reference solution."""

    def __init__(self, source: Source) -> None:
        self.question = numbers(source.question)
        self.everywhere = self.question | numbers("\n".join(source.lines))
        self.lines = source.lines

    def fresh_value(self, old: Fraction, new: Fraction, line: int) -> bool:
        before = numbers("\n".join(self.lines[:line]))
        return old not in self.question and old not in before and new not in self.everywhere


def _recompute(line: str, mapping: dict[Fraction, str], guard: _Guard, index: int
               ) -> str | None:
    """A later line with every changed value replaced and each annotation recomputed."""
    out, last = [], 0
    for m in ANNOTATION.finditer(line):
        expr = swap_numbers(m.group(1), mapping)
        v = evaluate(expr)
        text = fmt(v) if v is not None else None
        if text is None or v <= 0:
            return None
        old = value(m.group(2).strip().lstrip("$"))
        if v != old:
            if old in mapping or not guard.fresh_value(old, v, index):
                return None
            mapping[old] = text
        out.append(swap_numbers(line[last:m.start()], mapping))
        out.append(f"<<{expr}={text}>>")
        last = m.end()
    out.append(swap_numbers(line[last:], mapping))
    return "".join(out)


# -- the item list --------------------------------------------------------------------------

def _item(source: Source, seed: int, steps: list[str], label: str, step: Any, reason: str,
          answer: str, kind: str) -> dict[str, Any]:
    digest = hashlib.sha256(f"{GENERATOR_VERSION}|{seed}|{source.uuid}|{kind}".encode())
    return {
        "uuid": f"fresh-{digest.hexdigest()[:16]}",
        "question": source.question,
        "ground_truth_solution": "\n".join([*source.lines, f"#### {source.answer}"]),
        "ground_truth_answer": source.answer,
        "model_output_steps": steps,
        "model_output_answer_correctness": "correct" if answer == source.answer else "wrong",
        LABEL_FIELD: label,
        STEP_FIELD: step,
        "model_output_solution_first_error_reason": reason,
        "question_type": source.question_type,
        "fresh": {"generator": GENERATOR_VERSION, "seed": seed, "kind": kind,
                  "source_uuid": source.uuid},
    }


def parse_kinds(spec: str | None) -> tuple[str, ...]:
    """`--error-kinds a,b` as a tuple of known kinds (all when not given)."""
    if not spec:
        return ERROR_KINDS
    kinds = tuple(dict.fromkeys(k.strip() for k in spec.split(",") if k.strip()))
    bad = [k for k in kinds if k not in ERROR_KINDS]
    if bad or not kinds:
        raise UsageError(f"--error-kinds: unknown {', '.join(bad) or 'empty list'}; "
                         f"choose from {', '.join(ERROR_KINDS)}")
    return kinds


def generate(records: Sequence[dict[str, Any]], seed: int, share_correct: float | None = None,
             kinds: Sequence[str] = ERROR_KINDS) -> Generated:
    """Fresh graded items, one per usable question: a share of them correct (the reference in
    step format), the rest with one planted first error of `kinds` (in turn), its step spread
    evenly over the solutions' lengths; each confirmed by the checker before it is emitted."""
    share = OFFICIAL_SHARE_CORRECT if share_correct is None else share_correct
    if not 0.0 <= share <= 1.0:
        raise UsageError(f"--share-correct {share} is not a share between 0 and 1")
    skipped: Counter = Counter()
    sources = sources_of(records, skipped)
    rng = random.Random(seed)
    order = list(range(len(sources)))
    rng.shuffle(order)
    n_correct = round(share * len(sources))
    wrong_slots = len(sources) - n_correct
    # Evenly spread targets for the first error's relative position, in a seeded order.
    targets = [(i + 0.5) / max(1, wrong_slots) for i in range(wrong_slots)]
    rng.shuffle(targets)
    items: list[dict[str, Any]] = []
    for rank, idx in enumerate(order):
        src = sources[idx]
        if rank < n_correct:
            cand = _item(src, seed, steps_of(src.lines, src.answer), "correct", "N/A", "N/A",
                         src.answer, "none")
        else:
            j = rank - n_correct
            cand = _wrong(src, seed, kinds[j % len(kinds)], kinds, targets[j], rng)
            if cand is None:
                skipped["no step where an error could be planted unambiguously"] += 1
                continue
        problem = check_item(cand)
        if problem is not None:
            skipped[f"not confirmed by the checker ({problem})"] += 1
            continue
        items.append(cand)
    items.sort(key=lambda it: it["uuid"])
    return Generated(items, skipped, len(sources))


def _wrong(src: Source, seed: int, kind: str, kinds: Sequence[str], target: float,
           rng: random.Random) -> dict[str, Any] | None:
    """The wrong item of `src`: `kind` first, then the other kinds; steps nearest the target
    position first."""
    annotated = [i + 1 for i, ln in enumerate(src.lines) if ANNOTATION.search(ln)]
    want = target * len(src.lines)
    by_distance = sorted(annotated, key=lambda s: (abs(s - 0.5 - want), s))
    for k in (kind, *[k for k in kinds if k != kind]):
        for step in by_distance:
            p = plant(src, step, k, rng)
            if p is None:
                continue
            return _item(src, seed, steps_of(p.lines, p.answer), "wrong", step, p.reason,
                         p.answer, k)
    return None
