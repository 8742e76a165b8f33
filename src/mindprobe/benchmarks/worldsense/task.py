"""WorldSense as a mindprobe benchmark: one item per trial, scored with the exact analysis.

Harness rules (spec §4): the trial text is sent verbatim; only a member of `expectedresp` is
accepted, otherwise the model is re-asked insisting on those options; still invalid -> "".
With `--prompting constrained` a grammar-capable backend can only produce an allowed answer.
"""

from __future__ import annotations

import argparse
import bz2
import json
import random
from collections import defaultdict
from pathlib import Path
from typing import Any

from rich.console import Console

from mindprobe.benchmarks.worldsense import sets
from mindprobe.benchmarks.worldsense.generate import deobfuscate
from mindprobe.benchmarks.worldsense.metrics import is_correct
from mindprobe.core.benchmark import Item, Prepared, RunOptions
from mindprobe.core.data import DataFile, resolve
from mindprobe.core.session import Session
from mindprobe.errors import DataError, UsageError
from mindprobe.models.base import Request

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


class WorldSenseBenchmark:
    name = "worldsense"
    title = "grounded reasoning over orderings: accuracy and bias with 95% CIs"
    variants = {
        "test_set": "the official test set (87,048 trials)",
        "memorisation": "texts from the training set (11,232)",
        "ood-size": "standard problems with 6 entities (9,360)",
        "ood-query": "Infer.extrema: first/last questions (6,480)",
        "ood-problem": "Infer.parallel: 2-D reasoning (5,400)",
        "fresh": "freshly generated problems (seeded; offline)",
    }
    default_variant = "test_set"
    variant_groups: dict[str, list[str]] = {}
    data_files: list[DataFile] = sets.DATA_FILES

    @property
    def commands(self) -> dict[str, Any]:
        from mindprobe.benchmarks.worldsense.commands import COMMANDS

        return COMMANDS

    # -- CLI -------------------------------------------------------------------------------
    def add_arguments(self, group: argparse._ArgumentGroup) -> None:
        group.add_argument(
            "--prompting", choices=["basic", "constrained"],
            help="worldsense: basic = free answer, re-asked if invalid (default); "
            "constrained = answer set enforced by grammar (llama.cpp backends)",
        )
        group.add_argument("--reasks", type=int, default=1,
                           help="worldsense: re-asks after an invalid answer (default 1)")

    def add_analyse_arguments(self, group: argparse._ArgumentGroup) -> None:
        group.add_argument("-t", "--testset", help="worldsense: a test-set folder with "
                           "trials.jsonl.bz2 and results/*___results.jsonl")

    def analyse(self, args: argparse.Namespace, err: Console) -> int | None:
        from mindprobe.benchmarks.worldsense.commands import analyse_command

        return analyse_command(args, err)

    # -- running ---------------------------------------------------------------------------
    def prepare(self, opts: RunOptions) -> Prepared:
        prompting = opts.extra.get("prompting") or "basic"
        if prompting == "constrained" and not opts.supports_grammar:
            raise UsageError(
                "--prompting constrained needs a backend with grammars (local, openai:MODEL@URL "
                "served by llama.cpp or vLLM); use --prompting basic for this model"
            )
        seed = opts.seed if opts.seed is not None else sets.FRESH_SEED
        if opts.variant == "fresh":
            trials, data = sets.fresh_trials(seed)
        else:
            rel = sets.TRIALS_PATH[opts.variant]
            path = resolve(self.name, self.data_files, rel, opts.data_dir)
            trials = read_trials(path)
            data = {"file": rel, "sha256": sets.sha256_of(rel)}
            if not trials:
                raise DataError(f"{path} holds no trials")
        trials = limit_whole_tuples(order_by_tuple(trials, seed), opts.limit)
        items = [Item(str(t["Key"]), t) for t in trials]
        config = {"seed": seed, "reasks": max(0, int(opts.extra.get("reasks", 1) or 0)),
                  "max_tokens": opts.extra.get("max_tokens") or 16}
        return Prepared(items=items, prompting=prompting, config=config, data=data,
                        limit_applied=True)

    async def run_item(self, item: Item, session: Session) -> dict[str, Any]:
        t = item.data
        cfg = session.config
        allowed = t["expectedresp"]
        constrained = session.prompting == "constrained"
        messages = [{"role": "user", "content": t["text"]}]
        raws: list[str] = []
        resp = ""
        for _ in range(1 + cfg.get("reasks", 1)):
            req = Request(messages=list(messages), max_tokens=cfg.get("max_tokens", 16),
                          temperature=0.0, choices=allowed, constrain=constrained)
            comp = await session.generate(req)
            raws.append(comp.text)
            found = normalise_answer(comp.text, allowed)
            if found is not None:
                resp = found
                break
            messages += [{"role": "assistant", "content": comp.text},
                         {"role": "user", "content": reask_message(allowed)}]
        rec = {k: t.get(k) for k in META}
        rec.update(resp=resp, raw=raws, correct=is_correct(resp, t["goldresp"]))
        return rec

    # -- results ---------------------------------------------------------------------------
    def metrics(self, records: list[dict[str, Any]], prepared: Prepared) -> dict[str, Any]:
        from mindprobe.benchmarks.worldsense.commands import metrics_from_records

        return metrics_from_records(records, prepared.prompting, prepared.model_label)

    def render(self, metrics: dict[str, Any], console: Console) -> None:
        from mindprobe.benchmarks.worldsense.commands import render_metrics

        render_metrics(metrics, console)

