"""Already Said That as a mindprobe benchmark: one item per sample, one 100-turn chat each.

Every turn sends the whole chat, as upstream's eval does: upstream's task description as the
system message, then the user turns and the model's raw replies. On the `local` backend the
session keeps one llama.cpp slot for the chat, so only the new tokens of a turn are prefilled.

Solvers (`--solver`, the run's prompting label) are upstream's (see `prompt`): `direct` makes
one call per turn; `cot` makes two (upstream's `CoTSolver` with `persistent_memory: False`):
the chat plus upstream's reasoning system message, then the same plus the reasoning as an
assistant message and upstream's answer system message; the second reply is scored and is what
enters the history of later turns, the reasoning never does. Sampling is the published runs'
(temperature 1, max_tokens 512 per call, from upstream's solver registry); `--temperature` and
`--max-tokens` change it, recorded as deviations. A reasoning model's thinking
(reasoning_content / `<think>` block) is never scored nor put into the history; the reply cap
follows core's thinking policy (`core.thinking`): a model known to think gets more room, and a
turn cut off while still thinking is asked once more with that room (else it has no answer: a
violation on a main-task turn, marked `truncated_in_reasoning` in the transcript).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from mindprobe.benchmarks.already_said_that import data as ast_data
from mindprobe.benchmarks.already_said_that import upstream as ast_prompt
from mindprobe.benchmarks.already_said_that.episode import (
    ANSWER_RE,
    Reply,
    human_answer,
    run_episode,
)
from mindprobe.benchmarks.already_said_that.estimate import estimate_results, estimate_tokens
from mindprobe.benchmarks.already_said_that.options import AlreadySaidThatOptions, parse_price
from mindprobe.benchmarks.already_said_that.precision import WORST_SD
from mindprobe.core.benchmark import Benchmark, PairedScore, ProfileSettings
from mindprobe.core.data import data_dir_for
from mindprobe.core.model import Completion, Request
from mindprobe.core.plan import Item, PlanContext, RunPlan
from mindprobe.core.prompt_file import DEVIATIONS, apply_prompt_file
from mindprobe.core.results import Results
from mindprobe.core.session import Session
from mindprobe.core.stats import Precision
from mindprobe.core.thinking import ROOM_REASON, ReplyBudget, generate_with_room
from mindprobe.core.upstream_source import Template

DEFAULT_SEED = 20220722
ANSWERS = ["[answer: yes]", "[answer: no]"]
#: Where a direct reply is complete: the `]` that closes its first `[answer: ...]` tag, found
#: by the parser's own pattern (a `]` before that goes on: the tag may come later, on any
#: line, and only the first tag is scored). Base models on the completion path stop there;
#: chat models are sent upstream's request unchanged.
ANSWER_END = (("]",),)
ANSWER_PATTERN = ANSWER_RE.pattern
#: Turns a chat is assumed to last for the expected token count (the bound: all of them).
EXPECTED_TURNS = 20
HUMAN_HINT = "type y / n (or the answer to an unrelated question); no brackets needed"


def call_settings(solver: ast_prompt.Solver, opts: AlreadySaidThatOptions, ctx: PlanContext
                  ) -> tuple[dict[str, dict[str, Any]], list[str]]:
    """Each call kind's temperature and max_tokens (upstream's unless overridden), and the
    deviations from upstream that the overrides make."""
    thinks = "reasoning" in ctx.model.capabilities
    calls, deviations = {}, []
    for kind, up in solver.calls.items():
        temperature = up.temperature if opts.temperature is None else opts.temperature
        budget = ReplyBudget.plan(up.max_tokens, ctx.max_tokens, thinks)
        calls[kind] = {"temperature": temperature, **budget.config()}
        if temperature != up.temperature:
            deviations.append(f"{kind} calls at temperature {temperature:g} (upstream's "
                              f"published runs: {up.temperature:g})")
        if calls[kind]["max_tokens"] != up.max_tokens:
            why = "" if ctx.max_tokens else f", {ROOM_REASON}"
            deviations.append(f"{kind} calls with max_tokens {calls[kind]['max_tokens']} "
                              f"(upstream: {up.max_tokens}{why})")
    return calls, deviations


class AlreadySaidThatBenchmark(Benchmark):
    name = "already_said_that"
    title = "working memory under distractors: turns survived in a 100-turn chat"
    variants = {
        "which-is-heavier": "distractors: which-is-heavier",
        "first-letters": "distractors: first-letters",
        "ambiguous-sentences": "distractors: ambiguous-sentences",
        "reverse-sort-words-eng": "distractors: reverse-sort-words-eng",
        "distractorless": "no distractor questions",
    }
    default_variant = "reverse-sort-words-eng"
    variant_groups = {"all": ["which-is-heavier", "first-letters", "ambiguous-sentences",
                              "reverse-sort-words-eng", "distractorless"]}
    limit = "the first N of the --n-samples chats, per variant (so `:all` runs N per task)"
    Options = AlreadySaidThatOptions
    data_files = list(ast_data.DATA_FILES)
    published_note = ("Upstream (openai/evals, the already_said_that eval) publishes no "
                      "machine-readable results: its numbers are in the paper's text and "
                      "figures only, so no published row stands beside a run.")

    def prompt_templates(self, data_dir: Path | None) -> dict[str, Template]:
        return ast_prompt.templates(data_dir)

    def profile_settings(self, size: str) -> ProfileSettings:
        """All five tasks (the paper's table), direct solver, 100 turns; quick and standard:
        20 and 60 seeded chats per task instead of 250.

        Turns survived is a mean over chats, each ending at its first error: with a constant
        error rate per main-task turn its spread is largest (36 turns, simulated) when chats
        end anywhere in 0-100 (about 2% errors per turn, mean ~55); a weak model's chats end
        early (mean 15: spread ~14). ±5 turns in that worst case needs (1.96·36/5)² ≈ 200
        chats per task, nearly the paper's 250, at up to 100 requests each: more than every
        other benchmark of the profile together. So quick and standard keep 20 and 60 chats
        and state their wider worst-case half-widths; `--size paper` gives ±4.5."""
        n = {"quick": 20, "standard": 60}.get(size)
        return ProfileSettings(
            "all", options={"n_samples": n} if n else {}, items=5 * (n or 250),
            rationale=f"turns survived is a mean over chats; its spread is at most "
            f"~{WORST_SD:.0f} turns per chat (a constant error rate per turn, chats ending "
            f"anywhere in 0-100), so the 95% half-width is <= 1.96*{WORST_SD:.0f}/sqrt(chats) "
            "per task; ±5 needs ~200 chats per task (nearly the paper's 250, up to 100 "
            "requests each), so quick and standard trade precision for cost: ±16 and ±9 at "
            "worst (about ±6 and ±3.5 for a model whose chats end by turn ~15); --size paper "
            "gives ±4.5",
            note="±5 turns at the widest spread (36 turns) needs ~200 chats per task, about "
            "the paper set (--size paper: ±4.5)" if n else "")

    def precision(self, plan: RunPlan) -> Precision:
        """The widest spread of turns survived, or the spread at chance for the chance
        baseline (`precision.py`)."""
        from mindprobe.benchmarks.already_said_that.precision import stated_precision

        return stated_precision(plan)

    def plan(self, ctx: PlanContext, opts: AlreadySaidThatOptions) -> RunPlan:
        variant = ast_data.resolve_variant(ctx.variant)
        seed = DEFAULT_SEED if ctx.seed is None else ctx.seed
        n = opts.n_samples if ctx.limit is None else min(opts.n_samples, ctx.limit)
        root = data_dir_for(self.name, ctx.data_dir)
        samples = ast_data.load_samples(root)
        pool, example = ast_data.load_distractors(root, variant)
        # ids are positions in the seeded draw: each names the sample it drew (`Item.key`), so
        # a larger --n-samples extends a run only where the draw keeps its first chats
        chosen = ast_data.select_indices(len(samples), min(n, len(samples)), seed)
        wording = apply_prompt_file(self.prompt_templates(ctx.data_dir), ctx.prompt_file)
        base = "base" in ctx.model.capabilities
        solver = ast_prompt.solver(opts.solver, ctx.data_dir, base=base)
        text_format = ast_prompt.text_format(ctx.data_dir) if base else None
        system = ast_prompt.task_description(wording["task_description"], example)
        # The pool and the system prompt ride along with each item (same objects): episodes
        # need them, the manifest does not (the files' sha256 identify them). Every chat opens
        # with the same task description: one prefix group (each chat still keeps its own
        # slot for all its turns).
        items = [Item(str(i), {"idx": i, "words": samples[at], "pool": pool, "system": system,
                               "text_format": text_format},
                      prefix_group=f"{variant} task", key=f"sample {at}")
                 for i, at in enumerate(chosen)]
        calls, deviations = call_settings(solver, opts, ctx)
        config: dict[str, Any] = {
            "seed": seed, "n_samples": opts.n_samples, "max_turns": opts.max_turns,
            "variant": variant, "solver": opts.solver, "upstream_solver": solver.describe(),
            "calls": calls, DEVIATIONS: deviations}
        if text_format is not None:  # + stops the answer calls (not CoT's reasoning)
            config["base_model"] = text_format.describe()
            config["answer_end"] = [list(stage) for stage in ANSWER_END]
            config["answer_pattern"] = ANSWER_PATTERN
        if opts.solver == "cot":
            config["cot_messages"] = {"reason": wording["cot"].text,
                                      "answer": wording["extract_answer"].text}
        files = [ast_data.SAMPLES_FILE, *ast_data.UPSTREAM_FILES,
                 *(ast_data.BASE_MODEL_FILES if base else ())]
        if variant in ast_data.DISTRACTOR_FILES:
            files.append(ast_data.DISTRACTOR_FILES[variant])
        provenance = {f.relpath: f.sha256 for f in files}
        temperatures = {c["temperature"] for c in calls.values()}
        prompting = opts.solver
        if temperatures != {up.temperature for up in solver.calls.values()}:
            prompting += "-temp" + "-".join(f"{t:g}" for t in sorted(temperatures))
        return RunPlan(items=items, prompting=prompting, config=config,
                       provenance=provenance, limit_applied=True, sizes=("n_samples",))

    async def run_item(self, item: Item, session: Session) -> dict[str, Any]:
        opts: AlreadySaidThatOptions = session.options
        cfg = session.config
        calls = cfg["calls"]
        cot = cfg.get("cot_messages")
        used = {kind: {"requests": 0, "prompt_tokens": 0, "completion_tokens": 0}
                for kind in calls}

        text_format: ast_prompt.TextFormat | None = item.payload["text_format"]
        if text_format is not None:  # every chat's prompt starts so: stored once per run
            session.share_text(text_format.head(item.payload["system"]))

        async def ask(messages: list[dict[str, str]], kind: str) -> Completion:
            budget = ReplyBudget.of(calls[kind])
            req = Request(messages=messages, max_tokens=budget.max_tokens,
                          temperature=calls[kind]["temperature"], choices=ANSWERS,
                          human_wrap=human_answer, human_hint=HUMAN_HINT,
                          answer_end=ANSWER_END if kind == "answer" else None,
                          answer_pattern=ANSWER_PATTERN if kind == "answer" else None)
            if text_format is not None:  # a base model: upstream's text prompt and stops
                req = replace(req, messages=None, stop=text_format.stops,
                              prompt=text_format.render(text_format.messages(messages)))
            comp = await generate_with_room(session, req, budget.room)
            if text_format is not None:
                comp = replace(comp, text=text_format.parse(comp.text))
            u = used[kind]
            u["requests"] += 1
            u["prompt_tokens"] += comp.prompt_tokens
            u["completion_tokens"] += comp.completion_tokens
            return comp

        async def reply(messages: list[dict[str, str]]) -> Reply:
            reasoning = None
            if cot:  # upstream's CoTSolver: reason privately, then answer in the format
                messages = [*messages, {"role": "system", "content": cot["reason"]}]
                reasoning = (await ask(messages, "reason")).text
                messages = [*messages, {"role": "assistant", "content": reasoning},
                            {"role": "system", "content": cot["answer"]}]
            comp = await ask(messages, "answer")
            return Reply(comp.text, cot_reasoning=reasoning, reasoning=comp.reasoning,
                         truncated_in_reasoning=comp.truncated_in_reasoning,
                         completion_tokens=comp.completion_tokens,
                         request=session.take_request()[0])

        p = item.payload
        record = await run_episode(
            variant=cfg["variant"], idx=p["idx"], seed=cfg["seed"], words=p["words"],
            pool=p["pool"], system=p["system"], reply=reply, max_turns=opts.max_turns,
        )
        record["usage_by_call"] = used
        return record

    def results(self, records: list[dict[str, Any]], plan: RunPlan) -> Results:
        from mindprobe.benchmarks.already_said_that.report import results_of_records

        opts: AlreadySaidThatOptions = plan.options
        return results_of_records(records, plan.config.get("variant", "?"), opts.solver,
                                  opts.max_turns, plan.config)

    def combine(self, by_variant: dict[str, Results]) -> Results | None:
        from mindprobe.benchmarks.already_said_that.report import side_by_side

        return side_by_side(by_variant)

    # -- the report -------------------------------------------------------------------------
    setting_rule = "the direct solver (the eval's default), then chain of thought"

    def setting_rank(self, variant: str, setting: dict[str, str]) -> int | None:
        return 0 if setting.get("prompting") == "direct" else 1

    paired_score = PairedScore("num_turns", False, "turns survived", describe=("variant",),
                               answer=("answer", "end"))
    plotted_tables = ("metrics", "all_variants", "tokens")  # tokens: unlike rows

    def plots(self, runs: Sequence[Any], results: Sequence[Results | None]) -> list[str]:
        from mindprobe.benchmarks.already_said_that.report import plots

        return plots(runs, results)

    def metric_definitions(self) -> dict[str, str]:
        return {
            "avg_num_turns": "How long a chat lasts before the first mistake on the main "
            "task (saying whether a word was already shown): avg_num_turns = mean over chats "
            "of the turns played before the first wrong or invalid answer (at most "
            "--max-turns).",
            "chance": "Guessing yes/no at random ends a chat after about 2 turns; the `random` "
            "model's run measures it.",
        }

    def item_outcome(self, record: dict[str, Any]) -> str:
        if "error" in record:
            return "error"
        return str(record.get("end") or "unscored")

    def item_scores(self, record: dict[str, Any]) -> dict[str, Any]:
        return {k: record[k] for k in ("num_turns", "end") if k in record}

    def estimate(self, plan: RunPlan, opts: AlreadySaidThatOptions) -> Results:
        cfg = plan.config
        first = plan.items[0].payload
        system, fmt = first["system"], first.get("text_format")
        if fmt is not None:  # a base model: the HHH dialogues come first, all as text
            system = fmt.head(system)
        # The expected value: chats that end after EXPECTED_TURNS turns (an assumption: how
        # long a chat lasts is the model's score, unknown before the run), from the same pass.
        est = estimate_tokens(
            cfg["variant"], [it.payload["words"] for it in plan.items],
            first["pool"], system, cfg["seed"], max_turns=opts.max_turns,
            cot_messages=cfg.get("cot_messages"),
            also_turns=min(EXPECTED_TURNS, opts.max_turns),
        )
        expected = est.pop("within")
        est.update(bound="upper bound: every chat lasts all its turns",
                   expected_turns=expected["turns"],
                   expected_prompt_tokens=expected["prompt_tokens"],
                   expected_prefill_tokens=expected["prefill_tokens"],
                   expected_completion_tokens=expected["completion_tokens"],
                   expected_assumes=f"chats end after {EXPECTED_TURNS} turns")
        res = estimate_results(cfg["variant"], est, parse_price(opts.price))
        if opts.price and "," not in opts.price:
            res.notes.append("output tokens priced as input (--price IN); give IN,OUT for "
                             "the output price")
        return res

