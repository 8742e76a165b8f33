"""WorldSense as a mindprobe benchmark: one item per trial, scored with the exact analysis.

Harness rules (spec §4): the trial text is sent verbatim; only a member of `expectedresp` is
accepted, otherwise the model is re-asked insisting on those options; still invalid -> "".
With `--prompting constrained` a grammar-capable backend can only produce an allowed answer;
with `--scoring logprob` the allowed answer with the highest log-probability is the answer.
"""

from __future__ import annotations

import bz2
import json
import random
from collections import defaultdict
from pathlib import Path
from typing import Any

from mindprobe.benchmarks.worldsense import sets
from mindprobe.benchmarks.worldsense.generate import deobfuscate
from mindprobe.benchmarks.worldsense.metrics import is_correct
from mindprobe.benchmarks.worldsense.options import WorldSenseOptions
from mindprobe.core.benchmark import Benchmark, Item, PlanContext, RunPlan
from mindprobe.core.data import DataFile, decoded, resolve
from mindprobe.core.results import Results
from mindprobe.core.session import Session
from mindprobe.errors import DataError, UsageError

#: Record fields copied from the trial so metrics can be recomputed from records alone.
META = ("Key", "problemname", "tuple_ID", "expectedresp", "problemsize", "skin", "qskin",
        "complexity", "query_len", "goldresp")
_STRIP = " \t\n\r\"'`*.()[]:"


def normalise_answer(text: str, allowed: list[str]) -> str | None:
    """The allowed answer a reply states, tolerating case, quotes, brackets and a final period
    (e.g. `(1)`, `'TRUE'.`, `**False**`), or None. Nothing looser: no search inside prose."""
    t = text.strip().strip(_STRIP).strip()
    for a in allowed:
        if t == a or t.upper() == a.upper():
            return a
    return None


def reask_message(allowed: list[str]) -> str:
    """The insistence suggested by the WorldSense README for invalid answers."""
    return "Only respond with one of these options: " + ", ".join(allowed)


def read_trials(path: Path) -> list[dict[str, Any]]:
    """Trials of a test set with gold de-obfuscated; a malformed line names file:line."""
    out = []
    try:
        with bz2.open(path, "rt", encoding="utf-8") as f:
            for lineno, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    t = json.loads(line)
                    t["goldresp"] = deobfuscate(t.pop("goldresp_obfusc"))
                    t["Key"] = int(t["Key"])
                    t["expectedresp"] = list(t["expectedresp"])
                    _ = t["tuple_ID"], t["text"], t["problemname"]
                except (ValueError, KeyError, TypeError) as exc:
                    raise DataError(f"{path}:{lineno}: malformed trial ({exc})") from None
                out.append(t)
    except (OSError, EOFError) as exc:
        raise DataError(f"{path}: cannot read bz2 trials file ({exc})") from None
    return out


def order_by_tuple(trials: list[dict[str, Any]], seed: int) -> list[dict[str, Any]]:
    """Shuffle tuples (seeded) keeping each tuple's trials together, so `--limit N` is a random
    sample of whole tuples (incomplete tuples would be dropped by the analysis)."""
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for t in trials:
        groups[t["tuple_ID"]].append(t)
    ids = sorted(groups)
    random.Random(seed).shuffle(ids)
    return [t for tid in ids for t in groups[tid]]


def limit_whole_tuples(trials: list[dict[str, Any]], limit: int | None) -> list[dict[str, Any]]:
    if limit is None or limit >= len(trials):
        return trials
    end = limit
    while end < len(trials) and trials[end]["tuple_ID"] == trials[end - 1]["tuple_ID"]:
        end += 1
    return trials[:end]


class WorldSenseBenchmark(Benchmark):
    name = "worldsense"
    Options = WorldSenseOptions
    data_files: list[DataFile] = sets.DATA_FILES

    def plan(self, ctx: PlanContext, opts: WorldSenseOptions) -> RunPlan:
        prompting = opts.prompting
        scoring = opts.scoring
        if scoring is None:
            local_base = ctx.model.spec.startswith("local") and prompting == "basic"
            scoring = "logprob" if local_base else "text"
            if scoring == "logprob":
                ctx.info("worldsense: answering by log-probability of the allowed options "
                         "(--scoring logprob, the default for the embedded base model; "
                         "--scoring text to parse its replies instead)")
        if scoring == "logprob" and "logprobs" not in ctx.model.capabilities:
            raise UsageError(f"--scoring logprob needs log-probabilities, which {ctx.model.spec} "
                             "does not return; use --scoring text")
        if scoring == "logprob" and prompting != "basic":
            raise UsageError("--scoring logprob already restricts answers to the allowed "
                             "options; use it with --prompting basic")
        if prompting == "constrained" and "grammar" not in ctx.model.capabilities:
            raise UsageError(
                "--prompting constrained needs a backend with grammars (local, openai:MODEL@URL "
                "served by llama.cpp or vLLM); use --prompting basic for this model"
            )
        seed = ctx.seed if ctx.seed is not None else sets.FRESH_SEED
        if opts.data_file:
            path = Path(opts.data_file).expanduser()
            if not path.is_file():
                raise UsageError(f"--data-file {path}: no such file")
            sha = _sha256(path)
            trials = decoded(path, sha, "worldsense-trials", read_trials)
            provenance = {"file": str(path.resolve()), "sha256": sha}
        elif ctx.variant == "fresh":
            trials, provenance = sets.fresh_trials(seed)
        else:
            rel = sets.TRIALS_PATH[ctx.variant]
            path = resolve(self.name, self.data_files, rel, ctx.data_dir)  # sha256-verified
            trials = decoded(path, sets.sha256_of(rel), "worldsense-trials", read_trials)
            provenance = {"file": rel, "sha256": sets.sha256_of(rel)}
        if not trials:
            raise DataError(f"{provenance.get('file')} holds no trials")
        trials = limit_whole_tuples(order_by_tuple(trials, seed), ctx.limit)
        items = [Item(str(t["Key"]), t) for t in trials]
        config = {"seed": seed, "reasks": opts.reasks, "max_tokens": ctx.max_tokens or 16,
                  "scoring": scoring}
        label = "logprob" if scoring == "logprob" else prompting
        requires = {}
        if prompting == "constrained":
            requires["grammar"] = ("--prompting constrained needs a constrained-answer mechanism "
                                   "(llama.cpp grammar, vLLM guided choice, OpenAI structured "
                                   "outputs)")
        if scoring == "logprob":
            requires["logprobs"] = "--scoring logprob needs log-probabilities"
        return RunPlan(items=items, prompting=label, config=config, provenance=provenance,
                       limit_applied=True, requires=requires)

    async def run_item(self, item: Item, session: Session) -> dict[str, Any]:
        t = item.payload
        cfg = session.config
        allowed = t["expectedresp"]
        rec = {k: t.get(k) for k in META}
        if cfg.get("scoring") == "logprob":
            from mindprobe.models.base import Request

            req = Request(messages=[{"role": "user", "content": t["text"]}], max_tokens=1)
            scores = await session.score_choices(req, allowed)
            resp = scores.best() or ""
            rec.update(resp=resp, logprobs=dict(zip(allowed, scores.full, strict=True)),
                       scoring=scores.method, correct=is_correct(resp, t["goldresp"]))
            return rec
        constrained = session.prompting == "constrained"
        chat = session.chat()
        raws: list[str] = []
        resp = ""
        text: str | None = t["text"]
        for _ in range(1 + cfg.get("reasks", 1)):
            comp = await chat.ask(text, max_tokens=cfg.get("max_tokens", 16), temperature=0.0,
                                  choices=allowed, constrain=constrained)
            raws.append(comp.text)
            found = normalise_answer(comp.text, allowed)
            if found is not None:
                resp = found
                break
            text = reask_message(allowed)
        rec.update(resp=resp, raw=raws, correct=is_correct(resp, t["goldresp"]))
        return rec

    def results(self, records: list[dict[str, Any]], plan: RunPlan) -> Results:
        from mindprobe.benchmarks.worldsense.runs import results_of_run

        return results_of_run(records, plan.prompting, plan.model_label)


def _sha256(path: Path) -> str:
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()
