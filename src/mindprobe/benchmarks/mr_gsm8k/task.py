"""MR-GSM8K as a mindprobe benchmark: one item per solution to grade, T3 by an optional judge.

Each item sends one user message (spec section 3), parses and scores T1/T2 (sections 4-5) and,
for a T2 hit, asks the `judge` role (section 6) when `--judge` is given. A model call that
still fails after its retries is scored as the empty reply, as upstream does, and the record
is marked with an error so `--retry-errors` can ask again.
"""

from __future__ import annotations

import argparse
import re
from typing import Any

from rich.console import Console

from mindprobe.core.benchmark import Item, Prepared, RunOptions
from mindprobe.core.session import Session
from mindprobe.errors import UsageError
from mindprobe.models import parse_model_spec
from mindprobe.models.base import Request, TransientError

from .commands import JudgeCommand, analyse_command
from .judging import judge_input, judge_one
from .metrics import score_item
from .prompts import MAX_TOKENS, TEMPERATURE, build_prompt
from .report import render_metrics
from .results import metrics_doc, runtime_verdicts
from .sources import OFFICIAL_FILE, describe_counts, load_items, packaged_demos, select_types

MAX_SHOTS = 5


def _canned(judgement: str, step: str, analysis: str) -> str:
    return (
        "Step-by-step Evaluation: (canned reply)\n"
        f"Final Judgement: {judgement}\nFirst Error Step: {step}\nError Analysis: {analysis}"
    )


def baseline_choices(n_steps: int) -> list[str]:
    """Replies `--model random` picks from: `correct` with probability 1/2, otherwise `wrong`
    with a first error step uniform over the solution's steps (the `correct` reply is listed
    once per step so a uniform pick over the list gives exactly that)."""
    n = max(1, n_steps)
    wrong = [_canned("wrong", str(i), f"Step {i} is wrong.") for i in range(1, n + 1)]
    return [_canned("correct", "N/A", "N/A")] * n + wrong


HUMAN_HINT = (
    "type c if the solution is correct, else the first wrong step's number and why "
    "(e.g. `3 adds instead of subtracting`); or type a full reply in the format above"
)
_HUMAN_STEP = re.compile(r"^\s*(\d+)\b[\s:.,-]*(.*)$", re.DOTALL)


def human_reply(typed: str) -> str:
    """A typed shorthand (`c`, or `3 reason`) as a reply in the format the parser reads."""
    if typed.strip().lower() in ("c", "correct"):
        return _canned("correct", "N/A", "N/A")
    m = _HUMAN_STEP.match(typed)
    if m:
        return _canned("wrong", m.group(1), m.group(2).strip() or "N/A")
    return typed


class MRGSM8KBenchmark:
    name = "mr_gsm8k"
    title = "meta-reasoning: is a math solution right, where is its first error, why (MR-Score)"
    variants = {
        "full": "the official MR-GSM8K.json, 3000 solutions (`mindprobe data fetch mr_gsm8k` "
        "or --data-file)",
        "sample": "the 40 sample records of shared/data/mr_gsm8k (offline; all `wrong`)",
    }
    default_variant = "full"
    variant_groups: dict[str, list[str]] = {}
    data_files = [OFFICIAL_FILE]
    commands: dict[str, Any] = {"judge": JudgeCommand()}

    # -- CLI -------------------------------------------------------------------------------
    def add_arguments(self, group: argparse._ArgumentGroup) -> None:
        # Defaults are None: these land in every benchmark's options, so defaults apply here.
        group.add_argument("--shots", type=int, help=f"mr_gsm8k: demos before the question, "
                           f"0-{MAX_SHOTS} (default 0; published runs use 0 and 3)")
        group.add_argument("--judge", help="mr_gsm8k: model spec that grades the error reasons "
                           "(T3); without it T3 is not graded and MR-Score is a lower bound")
        group.add_argument("--question-type", help="mr_gsm8k: only these types, comma-separated "
                           "(original, POT, reversed)")
        group.add_argument("--data-file", help="mr_gsm8k: records to use instead of the official "
                           "file (JSON array or JSONL with the MR-GSM8K fields)")

    def add_analyse_arguments(self, group: argparse._ArgumentGroup) -> None:
        group.add_argument("--upstream-results", nargs="+", metavar="FILE",
                           help="mr_gsm8k: upstream eval-results files to rescore")
        group.add_argument("--upstream-manual-key", metavar="FIELD",
                           help="mr_gsm8k: field of the human reason verdicts in those files")
        group.add_argument("--judge-label", help="mr_gsm8k: with --run, the judge whose "
                           "verdicts fill the top-level metrics (default: the run's own judge)")

    def analyse(self, args: argparse.Namespace, err: Console) -> int | None:
        return analyse_command(args, err)

    # -- running ---------------------------------------------------------------------------
    def prepare(self, opts: RunOptions) -> Prepared:
        extra = opts.extra
        shots = int(extra.get("shots") or 0)
        if not 0 <= shots <= MAX_SHOTS:
            raise UsageError(f"--shots must be between 0 and {MAX_SHOTS} (the shipped demos)")
        # The core's --max-tokens caps the model's and the judge's replies (default: upstream's).
        max_tokens = extra.get("max_tokens") or MAX_TOKENS
        if max_tokens < 1:
            raise UsageError("--max-tokens must be a positive number")
        console = Console(stderr=True, highlight=False)

        def warn(message: str) -> None:
            console.print(f"[yellow]warning[/yellow]: {message}")

        loaded = load_items(opts.variant, opts.data_dir, extra.get("data_file"), warn)
        console.print(f"mr_gsm8k: {loaded.source}: {describe_counts(loaded.items)}")
        records, types = select_types(loaded.items, extra.get("question_type"))
        if types:
            console.print(f"mr_gsm8k: evaluating {', '.join(types)}: {describe_counts(records)}")
        demos = packaged_demos() if shots else None
        # Prompts are built per item when played; the demos list is shared by all items.
        items = [Item(r["uuid"], {"item": r, "demos": demos}) for r in records]
        judge = extra.get("judge") or None
        config = {
            "shots": shots,
            "max_tokens": max_tokens,
            "question_types": types,
            "judge": judge,
            "judge_label": parse_model_spec(judge).label if judge else None,
        }
        prompting = f"{shots}shot" + (f"-{'+'.join(types)}" if types else "")
        return Prepared(
            items=items, prompting=prompting, config=config, data=loaded.data,
            extra_models={"judge": judge} if judge else {},
        )

    async def run_item(self, item: Item, session: Session) -> dict[str, Any]:
        cfg = session.config
        rec = item.data["item"]
        req = Request(
            messages=[{"role": "user", "content": build_prompt(rec, item.data["demos"],
                                                                cfg["shots"])}],
            max_tokens=cfg["max_tokens"],
            temperature=TEMPERATURE,
            choices=baseline_choices(len(rec["model_output_steps"])),
            human_hint=HUMAN_HINT,
            human_wrap=human_reply,
        )
        error, finish = None, None
        try:
            comp = await session.generate(req)
            text, finish = comp.text, comp.finish_reason
        except TransientError as exc:
            text, error = "", f"model call failed, scored as an empty reply: {exc}"
        out: dict[str, Any] = {**score_item(rec, text), "finish_reason": finish}
        if out["t2_hit"]:
            out["judge_input"] = judge_input(rec)
            if cfg.get("judge"):
                try:
                    out["judge"] = await judge_one(
                        session, rec, out["error_text"], cfg["max_tokens"]
                    )
                except TransientError as exc:
                    error = f"judge call failed: {exc}"
        if error is not None:
            out["error"] = error
        return out

    # -- results ---------------------------------------------------------------------------
    def metrics(self, records: list[dict[str, Any]], prepared: Prepared) -> dict[str, Any]:
        cfg = prepared.config
        label = cfg.get("judge_label")
        verdicts = runtime_verdicts(records) if label else None
        return metrics_doc(records, cfg, prepared.model_label, label, verdicts)

    def render(self, metrics: dict[str, Any], console: Console) -> None:
        render_metrics(metrics, console)
