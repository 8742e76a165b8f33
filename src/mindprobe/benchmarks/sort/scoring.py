"""SORT answer scoring (spec §4.3): log-probabilities of the first answer token.

Upstream generates one greedy token after ``Answer: Segment`` and compares the top-20
log-probabilities of the two labels, so a model is scored even when its sampled token is
neither label. That is the faithful default here. Parsing the generated text is a separate,
explicit fallback (:func:`score_text`) for endpoints without logprobs; its results are flagged.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from mindprobe.benchmarks.sort.prompts import LABELS, ground_truth

TOP_K = 20
MISSING_LOGPROB = -1e12
NO_ANSWER = "X"

TopLogprobs = Mapping[str, float] | Sequence[Any]


@dataclass(frozen=True)
class ScoredAnswer:
    """One scored row: ``answer`` is A, B or X; ``method`` is ``logprobs`` or ``text`` (the
    reply itself is the record's ``reply``, as in every benchmark)."""

    answer: str
    ground_truth: str
    correct: bool
    prob_A: float | None
    prob_B: float | None
    method: str

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def label_candidates(space_appended: bool, labels: Sequence[str] = LABELS
                     ) -> dict[str, list[str]]:
    """Token strings that count as each label, in priority order.

    With a space already after ``Answer: Segment`` only the bare label; otherwise the bare
    label, then the space-prefixed one (how ``Segment A`` tokenizes; tiktoken's `` A``).
    """
    return {lab: [lab] if space_appended else [lab, f" {lab}"] for lab in labels}


def normalize_top_logprobs(top: TopLogprobs | None, k: int = TOP_K) -> dict[str, float]:
    """The first answer token's top-k alternatives as {token: logprob}.

    Accepts {token: logprob}; [(token, logprob), …]; OpenAI-style [{"token", "logprob"}, …];
    or a per-position list of such (the first position is used). Keeps the k most likely;
    a token listed twice keeps its higher log-probability.
    """
    if top is None:
        return {}
    pairs: Iterable[tuple[str, float]]
    if isinstance(top, Mapping):
        if "top_logprobs" in top:  # an OpenAI per-token entry
            return normalize_top_logprobs(top["top_logprobs"], k)
        pairs = ((str(t), float(lp)) for t, lp in top.items())
    else:
        items = list(top)
        if not items:
            return {}
        first = items[0]
        if isinstance(first, Mapping) and "top_logprobs" in first:
            return normalize_top_logprobs(first["top_logprobs"], k)
        if isinstance(first, Mapping) and "token" in first:
            pairs = ((str(d["token"]), float(d["logprob"])) for d in items)
        elif _is_pair(first):
            pairs = ((str(t), float(lp)) for t, lp in items)
        else:  # a per-position list: the first position is the answer token
            return normalize_top_logprobs(first, k)
    best: dict[str, float] = {}
    for token, logprob in pairs:
        if token not in best or logprob > best[token]:
            best[token] = float(logprob)
    ranked = sorted(best.items(), key=lambda kv: kv[1], reverse=True)[:k]
    return dict(ranked)


def _is_pair(item: Any) -> bool:
    return (isinstance(item, Sequence) and not isinstance(item, str) and len(item) == 2
            and isinstance(item[0], str) and isinstance(item[1], int | float))


def label_logprobs(top: TopLogprobs | None, space_appended: bool = False,
                   labels: Sequence[str] = LABELS, k: int = TOP_K) -> dict[str, float]:
    """Per label: log-prob of its first candidate found in the top-k, else −1e12."""
    table = normalize_top_logprobs(top, k)
    out: dict[str, float] = {}
    for label, cands in label_candidates(space_appended, labels).items():
        out[label] = next((table[c] for c in cands if c in table), MISSING_LOGPROB)
    return out


def answer_from_logprobs(values: Mapping[str, float], labels: Sequence[str] = LABELS) -> str:
    """Higher log-prob wins, ties go to the first label; both missing → ``X``."""
    a, b = values[labels[0]], values[labels[1]]
    if a == MISSING_LOGPROB and b == MISSING_LOGPROB:
        return NO_ANSWER
    return labels[0] if a >= b else labels[1]


def score_logprobs(top: TopLogprobs | None, present_seg1_first: int | bool, *,
                   task_type: str = "first", space_appended: bool = False,
                   labels: Sequence[str] = LABELS, k: int = TOP_K) -> ScoredAnswer:
    """Score one row from the first answer token's top-k log-probabilities (the default)."""
    values = label_logprobs(top, space_appended, labels, k)
    answer = answer_from_logprobs(values, labels)
    truth = ground_truth(present_seg1_first, task_type, labels)
    return ScoredAnswer(answer, truth, answer == truth, values[labels[0]], values[labels[1]],
                        "logprobs")


def parse_answer_text(text: str, labels: Sequence[str] = LABELS, lenient: bool = False) -> str:
    """Upstream's logging parse: A if the text has A and not B, B vice versa, else X.

    ``lenient`` adds upstream's chat-API extras: a lone lowercase label, or ``A:``/``B:``.
    """
    a, b = labels[0], labels[1]
    if lenient:
        stripped = text.strip()
        if stripped in (a.lower(), b.lower()):
            return a if stripped == a.lower() else b
        has_a, has_b = f"{a}:" in text, f"{b}:" in text
        if has_a != has_b:
            return a if has_a else b
    if a in text and b not in text:
        return a
    if b in text and a not in text:
        return b
    return NO_ANSWER


def score_text(text: str, present_seg1_first: int | bool, *, task_type: str = "first",
               labels: Sequence[str] = LABELS, lenient: bool = False) -> ScoredAnswer:
    """Fallback when an endpoint gives no logprobs: parse the text (``method='text'``)."""
    answer = parse_answer_text(text, labels, lenient)
    truth = ground_truth(present_seg1_first, task_type, labels)
    return ScoredAnswer(answer, truth, answer == truth, None, None, "text")
