"""MR-GSM8K as a mindprobe benchmark: one item per solution to grade, T3 by an optional judge.

Each item sends one user message, upstream's evaluation prompt (`prompts`: read from upstream's
script, which is the authority where the spec paraphrases it), parses and scores T1/T2 (spec
sections 4-5) and, for a T2 hit, asks the `judge` role with upstream's grading prompt (section 6)
when `--judge` is given. Temperature and max_tokens are upstream's (0 and 1024). A model call that
still fails after its retries is scored as the empty reply, as upstream does, and the record
is marked with an error so `--retry-errors` can ask again.

Reasoning models: only the answer part of a reply is parsed and judged (a `<think>` block or
the backend's reasoning_content is split off by the model backend and kept in the record as
`reasoning`). The reply cap follows core's thinking policy (`core.thinking`): without
--max-tokens a model known to think gets more room, and a reply cut off while still thinking is
asked once more with that room; if it is cut off again the record says `truncated_in_reasoning`
(its reply has no answer: PARSE_ERROR, as upstream).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from mindprobe.core.benchmark import Benchmark, ItemFields, PairedScore, ProfileSettings
from mindprobe.core.judges import primary_judge
from mindprobe.core.model import Request, TransientError
from mindprobe.core.plan import Item, PlanContext, RunPlan
from mindprobe.core.prompt_file import DEVIATIONS, apply_prompt_file, wording_notes
from mindprobe.core.published import PublishedRow
from mindprobe.core.results import Results
from mindprobe.core.sampling import stratified_sample
from mindprobe.core.session import Session
from mindprobe.core.stats import Precision
from mindprobe.core.thinking import ROOM_REASON, ReplyBudget, generate_with_room
from mindprobe.core.upstream_source import Template
from mindprobe.errors import DataError, UsageError
from mindprobe.models import model_label

from .chance import baseline_choices, canned_reply, stated_precision
from .data import (
    OFFICIAL_FILE,
    SAMPLE_FILE,
    SAMPLE_SEED,
    describe_counts,
    load_items,
    packaged_demos,
    sample_stratum,
    select_types,
)
from .fresh import GENERATOR_VERSION, generate, parse_kinds
from .fresh_pairing import question_key
from .judged_metrics import judges_doc, metrics_doc, runtime_verdicts, scored_rows
from .judging import judge_input, judge_one
from .metrics import score_item
from .options import MRGSM8KOptions
from .prompts import UPSTREAM_SCRIPT, braced, prompts_of, sampling, templates
from .published import README

#: Expected length of a reply (a step-by-step evaluation and the verdict), for estimates.
EXPECTED_REPLY_TOKENS = 250


HUMAN_HINT = (
    "type c if the solution is correct, else the first wrong step's number and why "
    "(e.g. `3 adds instead of subtracting`); or type a full reply in the format above"
)
_HUMAN_STEP = re.compile(r"^\s*(\d+)\b[\s:.,-]*(.*)$", re.DOTALL)


def human_reply(typed: str) -> str:
    """A typed shorthand (`c`, or `3 reason`) as a reply in the format the parser reads."""
    if typed.strip().lower() in ("c", "correct"):
        return canned_reply("correct", "N/A", "N/A")
    m = _HUMAN_STEP.match(typed)
    if m:
        return canned_reply("wrong", m.group(1), m.group(2).strip() or "N/A")
    return typed


#: Where a reply is complete (base models on the completion path): the end of the line of its
#: last required section, `Error Analysis:`.
ANSWER_END = (("Error Analysis:",), ("\n",))


class MRGSM8KBenchmark(Benchmark):
    name = "mr_gsm8k"
    title = ("meta-reasoning: is a math solution right, where is its first error, why "
             "(MR-Score)")
    variants = {
        "full": "the official MR-GSM8K.json, 3000 solutions (`mindprobe data fetch mr_gsm8k` "
                "or --data-file)",
        "sample": "the 40 sample records of shared/data/mr_gsm8k (offline; all `wrong`)",
        "fresh": "new graded solutions of the data's questions, a first error planted and "
                 "checked (--seed, --share-correct, --error-kinds; base data as for full)",
    }
    default_variant = "full"
    verbs = {"judge": "(re-)judge a finished run with a judge model",
             "export": "write fresh graded solutions in the MR-GSM8K schema (--fresh)"}
    limit = "the first N solutions of the data file"
    roles = ("judge",)
    Options = MRGSM8KOptions
    data_files = [OFFICIAL_FILE, UPSTREAM_SCRIPT, README]

    def prompt_templates(self, data_dir: Path | None) -> dict[str, Template]:
        return templates(data_dir)

    def profile_settings(self, size: str) -> ProfileSettings:
        """The official 3,000 solutions, zero-shot (the paper's main setting), graded by the
        judge when one is given; quick and standard: a seeded sample of 400 and 2,400
        stratified by question type and by the solution's correct/wrong label."""
        n = {"quick": 400, "standard": 2400}.get(size)
        return ProfileSettings(
            "full", options={"sample": n} if n else {}, items=n or 3000,
            rationale="MR-Score combines proportions (MCC, first-error-step and reason "
            "accuracy); its 95% half-width is taken as that of a proportion, <= "
            "98/sqrt(solutions) points; stratified by question type x label",
            offline=("data_file", SAMPLE_FILE.relpath, "the 40 sample records"))

    def plan(self, ctx: PlanContext, opts: MRGSM8KOptions) -> RunPlan:
        loaded = load_items(ctx.variant, ctx.data_dir, opts.data_file, ctx.warn)
        ctx.info(f"mr_gsm8k: {loaded.source}: {describe_counts(loaded.items)}")
        fresh = None
        if ctx.variant == "fresh":
            seed = SAMPLE_SEED if ctx.seed is None else ctx.seed
            kinds = parse_kinds(opts.error_kinds)
            made = generate(loaded.items, seed, opts.share_correct, kinds)
            ctx.info(f"mr_gsm8k: {made.summary()}")
            if not made.items:
                raise DataError(f"{loaded.source}: no reference solution could be turned into "
                                "a fresh item (" + made.summary() + ")")
            loaded.items = made.items
            fresh = {"generator": GENERATOR_VERSION, "seed": seed, "error_kinds": list(kinds),
                     "share_correct": opts.share_correct, "emitted": len(made.items),
                     "not_used": dict(sorted(made.skipped.items()))}
        elif opts.share_correct is not None or opts.error_kinds:
            raise UsageError("--share-correct and --error-kinds shape fresh items: use them "
                             "with mr_gsm8k:fresh")
        records, types = select_types(loaded.items, opts.question_type)
        if opts.sample is not None and opts.sample < len(records):
            records = stratified_sample(records, sample_stratum, opts.sample,
                                        SAMPLE_SEED if ctx.seed is None else ctx.seed)
            ctx.info(f"mr_gsm8k: a seeded sample stratified by question type and label: "
                     f"{describe_counts(records)}")
        if types:
            ctx.info(f"mr_gsm8k: evaluating {', '.join(types)}: {describe_counts(records)}")
        demos = packaged_demos() if opts.shots else None
        # Prompts are built per item when played; the demos list is shared by all items.
        # k-shot: every prompt opens with the same instructions and demo block.
        group = f"{opts.shots}-shot demos" if opts.shots else None
        items = [Item(r["uuid"], {"item": r, "demos": demos}, prefix_group=group)
                 for r in records]
        judge = opts.judge or ctx.roles.get("judge")
        wording = apply_prompt_file(self.prompt_templates(ctx.data_dir), ctx.prompt_file)
        upstream = sampling(ctx.data_dir)
        budget = ReplyBudget.plan(upstream["max_tokens"], ctx.max_tokens,
                                  "reasoning" in ctx.model.capabilities)
        config = {
            "shots": opts.shots,
            "temperature": upstream["temperature"],
            **budget.config(),
            "question_types": types,
            "judge": judge,
            "judge_label": model_label(judge) if judge else None,
            "templates": braced(wording.templates),
            **({"fresh": fresh} if fresh else {}),
        }
        if config["max_tokens"] != upstream["max_tokens"]:
            config[DEVIATIONS] = [f"max_tokens {config['max_tokens']} (upstream: "
                                  f"{upstream['max_tokens']}"
                                  + ("" if ctx.max_tokens else f", {ROOM_REASON}") + ")"]
        if "base" in ctx.model.capabilities:
            config["answer_end"] = [list(stage) for stage in ANSWER_END]
        prompting = f"{opts.shots}shot" + (f"-{'+'.join(types)}" if types else "")
        provenance = {**loaded.data, UPSTREAM_SCRIPT.relpath: UPSTREAM_SCRIPT.sha256}
        # a data file holding the 40 sample records is labelled as what it is, never "full"
        relabel = "sample" if ctx.variant == "full" and loaded.data["source"] == "sample" else None
        return RunPlan(
            items=items, prompting=prompting, config=config, provenance=provenance,
            roles={**ctx.roles, **({"judge": judge} if judge else {})}, variant_label=relabel,
        )

    async def run_item(self, item: Item, session: Session) -> dict[str, Any]:
        opts: MRGSM8KOptions = session.options
        cfg = session.config
        rec = item.payload["item"]
        prompt = prompts_of(cfg).prompt(rec, item.payload["demos"], opts.shots)
        budget = ReplyBudget.of(cfg)
        req = Request(
            messages=[{"role": "user", "content": prompt}],
            max_tokens=budget.max_tokens,
            temperature=cfg["temperature"],
            answer_end=ANSWER_END,
            choices=baseline_choices(len(rec["model_output_steps"])),
            human_hint=HUMAN_HINT,
            human_wrap=human_reply,
        )
        error, finish, comp = None, None, None
        try:
            comp = await generate_with_room(session, req, budget.room)
            text, finish = comp.text, comp.finish_reason
        except TransientError as exc:
            text, error = "", f"model call failed, scored as an empty reply: {exc}"
        out: dict[str, Any] = {**score_item(rec, text), "finish_reason": finish,
                               "question_key": question_key(rec["question"])}
        if "fresh" in rec:
            out["fresh_kind"] = rec["fresh"]["kind"]
        if comp is not None and comp.reasoning is not None:
            out["reasoning"] = comp.reasoning
        if comp is not None and comp.truncated_in_reasoning:
            out["truncated_in_reasoning"] = True
        if out["t2_hit"]:
            out["judge_input"] = judge_input(rec)
            if cfg.get("judge"):
                try:
                    out["judge"] = await judge_one(
                        session, rec, out["error_text"], budget.max_tokens
                    )
                except TransientError as exc:
                    error = f"judge call failed: {exc}"
        if error is not None:
            out["error"] = error
        return out

    def estimate(self, plan: RunPlan, opts: MRGSM8KOptions) -> Results:
        """One request per solution (the judge's, for T2 hits, is the judge's cost); a base
        model's reply (`answer_end` in the config) is generated stage by stage, each call
        re-sending the prompt and the reply so far."""
        from mindprobe.core.estimate import estimate_results, single_request_estimate

        cfg = plan.config
        prompt = prompts_of(cfg).prompt
        prompts = ([{"role": "user", "content": prompt(it.payload["item"], it.payload["demos"],
                                                       opts.shots)}]
                   for it in plan.items)
        stages = len(cfg.get("answer_end") or ())
        note = (f"an evaluation of the steps: ~{EXPECTED_REPLY_TOKENS} tokens expected, the "
                "reply cap as bound")
        if stages > 1:
            note += (f"; a base model's reply in {stages} stages (to "
                     + " then ".join(repr(s[0]) for s in cfg["answer_end"])
                     + "): expected one call per stage, the reply re-sent; bound: each stage "
                     "once stopped blank (the number of calls depends on the model's replies)")
        return estimate_results(self.name, single_request_estimate(
            prompts, completion_expected=EXPECTED_REPLY_TOKENS,
            completion_max=cfg["max_tokens"], note=note, stages=max(1, stages)))

    def precision(self, plan: RunPlan) -> Precision:
        """MR-Score's stratified interval for the planned solutions (`chance.py`)."""
        return stated_precision(plan)

    def results(self, records: list[dict[str, Any]], plan: RunPlan) -> Results:
        cfg = plan.config
        label = cfg.get("judge_label")
        verdicts = runtime_verdicts(records) if label else None
        from .report import results_of_doc  # pandas: not for a plan

        res = results_of_doc(metrics_doc(records, cfg, plan.model_label, label, verdicts))
        res.notes += wording_notes(cfg)
        return res

    # -- the report -------------------------------------------------------------------------
    setting_rule = "the paper's 0-shot prompt first, then k-shot"

    def setting_rank(self, variant: str, setting: dict[str, str]) -> int | None:
        return 0 if setting.get("prompting", "").startswith("0shot") else 1

    paired_score = PairedScore("t1_hit", True, "T1 hit (right correct/wrong judgement)",
                               describe=("question_type", "label", "label_step"),
                               answer=("pred", "judgement"))
    item_fields = ItemFields(group=("question_type",), answer=("pred",), gold=("label",))
    plotted_tables = ("metrics",)

    def plots(self, runs: Sequence[Any], results: Sequence[Results | None]) -> list[str]:
        from mindprobe.benchmarks.mr_gsm8k.report import plots

        return plots(runs, results)

    def metric_definitions(self) -> dict[str, str]:
        return {
            "MR-Score": "The paper's weighted score of judging a solution right or wrong, "
            "finding its first wrong step and explaining why: MR-Score = 0.2 × max(MCC, 0) + "
            "0.3 × Accuracy(step) + 0.5 × Accuracy(reason).",
            "MR-Score (lower bound)": "MR-Score with every unjudged error reason counted "
            "wrong: 0.2 × max(MCC, 0) + 0.3 × Accuracy(step) + 0.5 × Accuracy(reason, judged).",
            "chance": "A random verdict has MCC 0 and almost never names the first wrong "
            "step, so MR-Score ≈ 0; the `random` model's run measures it.",
        }

    def published(self, data_dirs: list[Path], warn: Callable[[str], None]
                  ) -> list[PublishedRow]:
        from mindprobe.benchmarks.mr_gsm8k.published import published

        return published(data_dirs)

    def published_coords(self, variant: str, plan: RunPlan) -> dict[str, str]:
        """k-shot as the README's columns name it; the official 3,000 solutions or not."""
        from mindprobe.benchmarks.mr_gsm8k.published import RELEASE

        official = (plan.provenance or {}).get("git_blob") == OFFICIAL_FILE.git_blob
        return {"shots": str(plan.options.shots), "split": "full" if official else variant,
                "release": RELEASE if official else "other data"}

    def item_outcome(self, record: dict[str, Any]) -> str:
        """T1: the verdict on the solution (right or wrong) against the label."""
        if "error" in record:
            return "error"
        if record.get("pred") not in ("correct", "wrong"):
            return "invalid"
        return "correct" if record.get("t1_hit") else "wrong"

    def item_scores(self, record: dict[str, Any]) -> dict[str, Any]:
        keys = ("t1_hit", "t2_hit", "pred", "label", "pred_step", "label_step", "outcome")
        return {k: record[k] for k in keys if record.get(k) is not None}

    # -- judge passes (`mindprobe judge`) ----------------------------------------------------
    def judge_items(self, records: list[dict[str, Any]], plan: RunPlan) -> list[Item]:
        """One item per T2 hit: the judge reads the record, never the model under test."""
        items = []
        for rec in scored_rows(records):
            if not rec["t2_hit"]:
                continue
            if "judge_input" not in rec:
                raise DataError(f"record {rec['uuid']} lacks 'judge_input' (made by an older "
                                "mindprobe?); re-run the model to judge it")
            items.append(Item(rec["uuid"], {"input": rec["judge_input"],
                                            "error_text": rec["error_text"]}))
        return items

    async def judge_item(self, item: Item, session: Session) -> dict[str, Any]:
        max_tokens = session.config["max_tokens"]
        return await judge_one(session, item.payload["input"], item.payload["error_text"],
                               max_tokens)

    def results_with_judgements(
        self, records: list[dict[str, Any]], plan: RunPlan,
        judgements: dict[str, Any], primary: str | None,
    ) -> Results:
        from .judging import collect_judges
        from .report import results_of_doc

        judges = collect_judges(plan.config, records, judgements)
        config = plan.config
        primary = primary_judge(judges, primary, config.get("judge_label"))
        res = results_of_doc(judges_doc(records, config, plan.model_label, judges, primary))
        res.notes += wording_notes(config)
        return res

