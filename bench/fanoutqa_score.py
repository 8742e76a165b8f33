"""FanOutQA accuracy: upstream-style per-gold-string normalisation vs mindprobe's batched cache.

Upstream normalises (spaCy en_core_web_sm, full pipeline) the candidate once per gold string and
every gold string on every call. mindprobe normalises each distinct string once, in one
``nlp.pipe`` batch. Same 310 dev questions, same deterministic candidates (each gold answer
flattened, perturbed - items dropped, digits changed, numbers comma-formatted - and,
with ``--wrap``, two sentences of prose), one run each; prints both times and the ratio, and
asserts identical per-question scores, missing lists and aggregates. Also times a *later*
evaluation where the gold normalisations were persisted by an earlier one (``Normalizer.persistent``,
what ``run``/``analyse`` use): only the new candidates go through spaCy. Target: >= 50x.

    python bench/fanoutqa_score.py [--limit N] [--wrap]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from mindprobe.benchmarks.fanoutqa.data import Question, load_dev
from mindprobe.benchmarks.fanoutqa.flatten import gold_strings, str_answer
from mindprobe.benchmarks.fanoutqa.lemma import load_lemmatizer
from mindprobe.benchmarks.fanoutqa.metrics import _bounded, answer_in_text
from mindprobe.benchmarks.fanoutqa.normalize import Normalizer, normalize


def _commas(token: str) -> str:
    return f"{int(token):,}" if token.isdigit() and len(token) > 3 else token


def candidate(i: int, q: Question, wrap: bool = False) -> str:
    """Deterministic answer derived from the gold one; ``wrap`` adds generation-like prose."""
    lines = str_answer(q.answer).split("\n")
    out = []
    for j, line in enumerate(lines):
        k = i + j
        if k % 5 == 3:
            continue  # drop an item
        if k % 7 == 2:
            line = line.replace("1", "7")  # wrong number / name
        if k % 3 == 0:
            line = " ".join(_commas(t) for t in line.split(" "))
        out.append(line.replace(" - ", ": "))
    if not wrap:
        return "\n".join(out)
    intro = (
        "Based on the documents I found, here is what I can say about the question. "
        "After checking each of the relevant pages, the answer is:\n"
    )
    outro = "\nThese figures were current as of November 2023, to the best of my knowledge."
    return intro + "\n".join(out) + outro


def cpu() -> float:
    """This process's CPU time plus its finished children's (the forked lemmatiser workers)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--limit", type=int, default=0, help="only the first N questions (0 = all)")
    ap.add_argument(
        "--wrap",
        action="store_true",
        help="wrap each answer in two sentences of prose (longer, chattier candidates)",
    )
    args = ap.parse_args()
    questions = load_dev()
    if args.limit:
        questions = questions[: args.limit]
    cands = [candidate(i, q, args.wrap) for i, q in enumerate(questions)]
    lem = load_lemmatizer()
    print(f"lemmatizer: {lem.describe()}")
    lem.lemmatize_many(["warm up"])  # model load / first-call costs out of both timings

    t0, c0 = time.perf_counter(), cpu()
    upstream = [
        answer_in_text(q.answer, c, lambda s: normalize(s, lem))
        for q, c in zip(questions, cands, strict=True)
    ]
    t_up, c_up = time.perf_counter() - t0, cpu() - c0

    gold = [s for q in questions for s in gold_strings(q.answer)]

    def mindprobe_eval(answers: list[str]) -> list:
        """The production path: a persistent Normalizer, one batch, then the same loop."""
        _bounded.cache_clear()  # no patterns compiled by an earlier pass
        norm = Normalizer.persistent(lem)
        norm.prime(gold + answers)
        norm.flush(gold)
        return [answer_in_text(q.answer, c, norm) for q, c in zip(questions, answers, strict=True)]

    with tempfile.TemporaryDirectory() as tmp:
        # a first evaluation on this machine: nothing persisted yet
        os.environ["MINDPROBE_CACHE_DIR"] = str(Path(tmp) / "first")
        t0, c0 = time.perf_counter(), cpu()
        fast = mindprobe_eval(cands)
        t_fast, c_fast = time.perf_counter() - t0, cpu() - c0
        n_distinct = len(Normalizer.persistent(lem))
        # a later evaluation: another model's answers were scored before (so the gold
        # normalisations are on disk, not these answers')
        os.environ["MINDPROBE_CACHE_DIR"] = str(Path(tmp) / "later")
        mindprobe_eval([f"I believe the answer is: {c}" for c in cands])
        t0, c0 = time.perf_counter(), cpu()
        again = mindprobe_eval(cands)
        t_warm, c_warm = time.perf_counter() - t0, cpu() - c0
    assert again == upstream, "per-question accuracy differs with the persisted gold cache"

    assert fast == upstream, "per-question accuracy differs between the two paths"
    n = len(questions)
    loose = sum(r.score for r in fast) / n
    strict = sum(r.found for r in fast) / n
    assert loose == sum(r.score for r in upstream) / n
    assert strict == sum(r.found for r in upstream) / n
    print(f"questions: {n}  distinct strings normalised: {n_distinct}")
    print(f"acc.loose = {loose:.6f}  acc.strict = {strict:.6f}  (identical on both paths)")
    print(f"upstream-style per-gold-string: {t_up:8.2f} s wall {c_up:8.2f} s CPU")
    print(f"mindprobe batched + cached:     {t_fast:8.2f} s wall {c_fast:8.2f} s CPU")
    print(f"  ... gold cache persisted:     {t_warm:8.2f} s wall {c_warm:8.2f} s CPU")
    print(f"speed-up, cold: {t_up / t_fast:.1f}x wall, {c_up / c_fast:.1f}x CPU")
    print(f"speed-up, gold cache persisted: {t_up / t_warm:.1f}x wall, {c_up / c_warm:.1f}x CPU")


if __name__ == "__main__":
    main()
