"""FanOutQA metrics, exact (spec §6): accuracy, ROUGE, optional BLEURT, and the result object.

Accuracy is upstream's string containment over normalised gold strings; all distinct strings
(gold and candidates) are normalised once, in one spaCy batch, before matching. The judge's
prompt and parser live in ``judge.py`` and are re-exported here.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Protocol

from mindprobe.core.stats import exact_sum
from mindprobe.errors import DataError, MindprobeError

from .data import Generation, Pairing, Question, pair_answers
from .flatten import gold_strings, primitive_text, str_answer
from .judge import judge_enabled, judge_metric, judge_prompt, parse_judge
from .normalize import Normalizer

__all__ = [
    "AccuracyResult",
    "BleurtBackend",
    "Evaluation",
    "answer_in_text",
    "evaluate",
    "judge_prompt",
    "leaderboard_result",
    "parse_and_score_judge",
    "parse_judge",
    "rouge_scores",
    "str_answer",
]

ROUGE_TYPES = ("rouge1", "rouge2", "rougeL")
Rouge = dict[str, dict[str, float]]


def zero_rouge() -> Rouge:
    return {t: {"precision": 0.0, "recall": 0.0, "fscore": 0.0} for t in ROUGE_TYPES}


# ------------------------------------------------------------------ accuracy (§6.3)


@dataclass(frozen=True)
class AccuracyResult:
    score: float  # loose: share of gold strings found
    found: bool  # strict: all found
    missing: list[str]  # normalised gold strings not found


@lru_cache(maxsize=16384)
def _bounded(r: str) -> re.Pattern[str]:
    """``\\b`` + the escaped gold string + ``\\b``, compiled once per string (re's own cache
    holds 512 and a dev evaluation needs ~2,300)."""
    return re.compile(r"\b" + re.escape(r) + r"\b")


def answer_in_text(
    reference: Any, candidate: str, normalize: Callable[[Any], str]
) -> AccuracyResult:
    """Upstream's recursive containment check. ``normalize`` is called on the candidate once per
    gold string, as upstream does; pass a caching ``Normalizer`` to make that free."""
    if isinstance(reference, dict):
        if not reference:
            raise DataError("empty gold answer dict (undefined accuracy: division by zero)")
        return answer_in_text([*reference.keys(), *reference.values()], candidate, normalize)
    if isinstance(reference, list):
        if not reference:
            raise DataError("empty gold answer list (undefined accuracy: division by zero)")
        missing: list[str] = []
        for ref in reference:
            missing.extend(answer_in_text(ref, candidate, normalize).missing)
        n = len(reference)
        return AccuracyResult((n - len(missing)) / n, not missing, missing)
    r = normalize(primitive_text(reference))
    c = normalize(candidate)
    found = _bounded(r).search(c) is not None
    return AccuracyResult(1.0 if found else 0.0, found, [] if found else [r])


# ------------------------------------------------------------------ ROUGE (§6.4)


@lru_cache(maxsize=1)
def _rouge_scorer() -> Any:
    try:
        from rouge_score.rouge_scorer import RougeScorer
    except ImportError as e:
        raise MindprobeError(
            "FanOutQA ROUGE needs rouge-score: pip install rouge-score==0.1.2"
        ) from e
    return RougeScorer(list(ROUGE_TYPES), use_stemmer=True)


def rouge_scores(gold: Any, generation: str) -> Rouge:
    """rouge1/2/L of ``generation`` against ``str_answer(gold)`` (P, R, F per type)."""
    s = _rouge_scorer().score(target=str_answer(gold), prediction=generation)
    return {
        t: {
            "precision": float(s[t].precision),
            "recall": float(s[t].recall),
            "fscore": float(s[t].fmeasure),
        }
        for t in ROUGE_TYPES
    }


def mean_rouge(rows: Sequence[Rouge]) -> Rouge:
    """Mean of P, of R and of F separately (the mean F is not the F of the means)."""
    n = len(rows)
    return {
        t: {k: exact_sum(r[t][k] for r in rows) / n for k in ("precision", "recall", "fscore")}
        for t in ROUGE_TYPES
    }


# ------------------------------------------------------------------ BLEURT (§6.5)


class BleurtBackend(Protocol):
    """Scores candidates against references in one batched call (BLEURT-20 upstream)."""

    name: str

    def score(self, references: Sequence[str], candidates: Sequence[str]) -> list[float]: ...


class GoogleBleurt:
    """google-research ``bleurt`` with a local checkpoint directory (e.g. BLEURT-20)."""

    def __init__(self, checkpoint: str):
        try:
            from bleurt.score import BleurtScorer  # type: ignore[import-not-found]
        except ImportError as e:
            raise MindprobeError(
                "BLEURT needs google-research bleurt (pip install "
                "git+https://github.com/google-research/bleurt.git) and the BLEURT-20 checkpoint"
            ) from e
        self._scorer = BleurtScorer(checkpoint)
        self.name = f"bleurt:{checkpoint.rstrip('/').rsplit('/', 1)[-1]}"

    def score(self, references: Sequence[str], candidates: Sequence[str]) -> list[float]:
        return list(self._scorer.score(references=list(references), candidates=list(candidates)))


BLEURT_UNAVAILABLE = (
    "BLEURT not computed: no backend configured (needs TensorFlow, google-research bleurt and the "
    "BLEURT-20 checkpoint, none installable offline)"
)


# ------------------------------------------------------------------ evaluation (§6.7)


@dataclass
class Evaluation:
    """The EvaluationScore of §6.7 plus per-question records and provenance."""

    n: int
    acc: dict[str, float]
    rouge: Rouge
    bleurt: float | None
    gpt: float | None
    records: list[dict[str, Any]]
    meta: dict[str, Any] = field(default_factory=dict)

    def to_dict(self, include_raw: bool = False, provenance: bool = True) -> dict[str, Any]:
        """Upstream's EvaluationScore shape (``raw`` only when asked), plus ``n`` and ``meta``
        unless ``provenance=False`` (the exact leaderboard object)."""
        out: dict[str, Any] = {
            "acc": dict(self.acc),
            "rouge": self.rouge,
            "bleurt": self.bleurt,
            "gpt": self.gpt,
        }
        if provenance:
            out.update(n=self.n, meta=self.meta)
        if include_raw:
            out["raw"] = [
                {k: r[k] for k in ("question_id", "acc", "rouge", "bleurt", "gpt")}
                for r in self.records
            ]
        return out


SYSTEM_TYPES = ("FOUNDATION", "FINETUNE", "PROMPT", "OTHER")
#: How each setting gave the model its knowledge, for a submission's `details`.
SETTING_WORDS = {"closedbook": "closed book (the question alone)",
                 "evidenceprovided": "evidence provided (the gold Wikipedia articles in the "
                                     "prompt)",
                 "openbook": "open book (Wikipedia search with the <search> text protocol)"}


def details_of(version: Any, model: Any, settings: Any) -> str:
    """The metadata's `details`: how mindprobe ran each exported setting, in its own words."""
    ran = "; ".join(SETTING_WORDS.get(s, s) for s in settings)
    return f"mindprobe {version}: {model}, the paper's prompts, greedy decoding; {ran}"


def leaderboard_result(
    metadata: Mapping[str, Any],
    closedbook: Evaluation | None = None,
    openbook: Evaluation | None = None,
    evidenceprovided: Evaluation | None = None,
) -> dict[str, Any]:
    """A leaderboard result file: one score object per setting (null when not submitted) and
    ``metadata`` {name, authors, url, citation, type, context, is_trained_for_function_calling,
    details}."""
    kind = metadata.get("type")
    if kind not in SYSTEM_TYPES:
        raise DataError(f"metadata type must be one of {', '.join(SYSTEM_TYPES)}, got {kind!r}")
    settings = {
        "closedbook": closedbook,
        "openbook": openbook,
        "evidenceprovided": evidenceprovided,
    }
    out: dict[str, Any] = {
        k: None if v is None else v.to_dict(provenance=False) for k, v in settings.items()
    }
    out["metadata"] = dict(metadata)
    return out


def _verdicts_in_order(
    judge_verdicts: Sequence[bool | None] | Mapping[str, bool | None], pairing: Pairing
) -> list[bool | None]:
    if isinstance(judge_verdicts, Mapping):
        if pairing.only_score_answered and pairing.duplicate_ids:
            raise DataError(
                "judge verdicts keyed by id are ambiguous with duplicate answers; "
                "pass them as a list in answer order"
            )
        return [judge_verdicts.get(q.id) for q, _ in pairing.pairs]
    verdicts = list(judge_verdicts)
    if len(verdicts) != len(pairing.pairs):
        raise DataError(f"{len(verdicts)} judge verdicts for {len(pairing.pairs)} scored answers")
    return verdicts


def dataset_version(questions: Iterable[Question]) -> str:
    """The release the scored questions come from ("mixed" should two ever meet)."""
    versions = {q.version for q in questions}
    return versions.pop() if len(versions) == 1 else "mixed" if versions else ""


def evaluate(
    questions: Sequence[Question],
    generations: Sequence[Generation],
    *,
    only_score_answered: bool = False,
    normalizer: Normalizer | None = None,
    bleurt: BleurtBackend | None = None,
    judge_verdicts: Sequence[bool | None] | Mapping[str, bool | None] | None = None,
    judge_model: str | None = None,
) -> Evaluation:
    """Score generations on dev questions (spec §6.7).

    Default: N = all questions; a question without an answer scores loose 0, strict false,
    ROUGE 0, gpt 0 (BLEURT scores it against ""); unknown ids are ignored (counted in meta).
    ``only_score_answered``: N = answers in file order; an unknown id raises DataError.
    ``judge_verdicts``: ``parse_judge`` results in evaluation order (or keyed by question id);
    None leaves ``gpt`` null with the reason in ``meta``.
    """
    for q in questions:
        if not q.has_answer:
            raise DataError(
                f"question {q.id!r} has no gold answer (test-set scores come only from "
                "the FanOutQA maintainers)"
            )
    pairing = pair_answers(questions, generations, only_score_answered)
    if not pairing.pairs:
        raise DataError(
            "nothing to score: no questions"
            if not only_score_answered
            else "nothing to score: the generations file has no answers"
        )
    norm = normalizer if normalizer is not None else Normalizer()
    # every distinct string once, one batch: gold primitives, then candidates
    gold = [s for q, ans in pairing.pairs if ans is not None for s in gold_strings(q.answer)]
    norm.prime(gold + [ans for _, ans in pairing.pairs if ans is not None])
    norm.flush(gold)

    records: list[dict[str, Any]] = []
    for q, ans in pairing.pairs:
        answered = ans is not None
        if answered:
            accr = answer_in_text(q.answer, ans, norm)
            rouge = rouge_scores(q.answer, ans)
        else:
            accr = AccuracyResult(0.0, False, [])
            rouge = zero_rouge()
        records.append(
            {
                "question_id": q.id,
                "answered": answered,
                "acc": accr.score,
                "strict": accr.found,
                "missing": accr.missing,
                "rouge": rouge,
                "bleurt": None,
                "gpt": None,
                "categories": list(q.categories),
                "n_evidence": q.n_evidence,
                "answer_chars": len(ans) if answered else 0,
            }
        )
    n = len(records)
    meta: dict[str, Any] = {
        "dataset_version": dataset_version(q for q, _ in pairing.pairs),
        "lemmatizer": norm.backend,
        "only_score_answered": only_score_answered,
        "n_unanswered": sum(1 for r in records if not r["answered"]),
        "n_empty": sum(1 for _, ans in pairing.pairs if ans is not None and not ans.strip()),
        "n_truncated": sum(1 for _, ans in pairing.pairs if ans is not None
                           and norm.truncated(ans)),
        "lemmatized_chars": norm.max_chars,
        "n_unknown_ids_ignored": len(pairing.unknown_ids),
        "duplicate_ids": pairing.duplicate_ids,
    }

    bleurt_value = None
    if bleurt is None:
        meta["bleurt_reason"] = BLEURT_UNAVAILABLE
    else:
        raw = bleurt.score(
            [str_answer(q.answer) for q, _ in pairing.pairs],
            [ans if ans is not None else "" for _, ans in pairing.pairs],
        )
        for r, v in zip(records, raw, strict=True):
            r["bleurt"] = float(v)
        bleurt_value = exact_sum(raw) / n
        meta["bleurt_backend"] = bleurt.name

    gpt_value = None
    if judge_verdicts is None:
        meta["gpt_reason"] = judge_enabled()[1] or "GPT judge not run"
    else:
        jm = judge_metric(
            _verdicts_in_order(judge_verdicts, pairing), [r["answered"] for r in records]
        )
        for r, v in zip(records, jm.raw, strict=True):
            r["gpt"] = v
        gpt_value = jm.value
        meta.update(judge_model=judge_model, judge_no_verdict=jm.n_no_verdict)

    acc = {
        "loose": exact_sum(r["acc"] for r in records) / n,
        "strict": sum(1 for r in records if r["strict"]) / n,
    }
    return Evaluation(
        n, acc, mean_rouge([r["rouge"] for r in records]), bleurt_value, gpt_value, records, meta
    )


def parse_and_score_judge(replies: Sequence[str | None]) -> list[bool | None]:
    """Convenience: raw judge replies (evaluation order, None for no call) to verdicts."""
    return [parse_judge(r) for r in replies]


def score_answer(q: Question, answer: str, normalizer: Normalizer) -> dict[str, Any]:
    """One answer's accuracy (loose, strict, missing gold strings) and ROUGE (spec §6.3-6.4)."""
    acc = answer_in_text(q.answer, answer, normalizer)
    return {"loose": acc.score, "strict": acc.found, "missing": acc.missing,
            "rouge": rouge_scores(q.answer, answer)}
