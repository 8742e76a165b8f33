"""WorldSense as a mindprobe benchmark: one item per trial, scored with the exact analysis.

Harness rules (spec §4): the trial text is sent verbatim; only a member of `expectedresp` is
accepted, otherwise the model is re-asked insisting on those options; still invalid -> "".
`--prompting` picks what is sent and how the reply is read (strategies.py: basic, direct,
clarified, cot, incontext-iid, incontext-diffcat, constrained; the run's prompting label is
the analysis's: basic, direct, clarified, COT, incontext_IID, incontext_DIFFERENTCAT).
With `--prompting constrained` a grammar-capable backend can only produce an allowed answer;
with `--scoring logprob` the allowed answer with the highest log-probability is the answer.

Reasoning models: only the answer part of a reply (never its `<think>` block or the backend's
reasoning_content) is parsed; the thinking is kept in the record. A reply cut off while still
thinking is recorded as `truncated_in_reasoning` (counted on its own, not as an invalid
answer) and not re-asked. The reply cap follows core's thinking policy (`core.thinking`): without
--max-tokens a model known to think (`--reasoning`, or once one of its replies showed thinking)
gets more room, and a reply cut off in its thinking is asked again once with that room.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from mindprobe.benchmarks.worldsense import sets
from mindprobe.benchmarks.worldsense import strategies as st
from mindprobe.benchmarks.worldsense.answers import is_correct
from mindprobe.benchmarks.worldsense.data import deobfuscate
from mindprobe.benchmarks.worldsense.options import WorldSenseOptions
from mindprobe.benchmarks.worldsense.sampling import read_trials, sample_tuples, tuple_of
from mindprobe.core.benchmark import Benchmark, ItemFields, PairedScore, ProfileSettings
from mindprobe.core.data import (
    DataFile,
    Grouped,
    data_dir_for,
    decoded,
    decoded_groups,
    file_sha256,
    resolve,
)
from mindprobe.core.inputs import check_regular
from mindprobe.core.model import Request
from mindprobe.core.plan import Item, PlanContext, RunPlan
from mindprobe.core.published import PublishedRow
from mindprobe.core.results import Results
from mindprobe.core.session import Session
from mindprobe.core.stats import Precision
from mindprobe.core.thinking import ReplyBudget, generate_with_room
from mindprobe.errors import DataError, UsageError

#: Record fields copied from the trial so metrics can be recomputed from records alone.
META = ("Key", "problemname", "tuple_ID", "expectedresp", "problemsize", "skin", "qskin",
        "complexity", "query_len", "goldresp")
normalise_answer = st.normalise_answer


def reask_message(allowed: list[str]) -> str:
    """The insistence suggested by the WorldSense README for invalid answers."""
    return st.reask_message("basic", allowed)


class WorldSenseBenchmark(Benchmark):
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
    verbs = {"export": "export a run in the benchmark's upstream result format",
             "generate": "generate a fresh dataset"}
    limit = ("a seeded random sample of whole tuples, as many from each problem family and "
             "size, about N trials (rounded up to the tuple that reaches N: the analysis drops "
             "incomplete tuples)")
    Options = WorldSenseOptions
    data_files: list[DataFile] = sets.DATA_FILES
    #: The analysis weighs every (problem, size) cell equally: a size no problem can have
    #: would be a cell of its own.
    record_ranges = {"problemsize": (1, 1000)}

    def profile_settings(self, size: str) -> ProfileSettings:
        """The official test set with basic prompting (the paper's main table); quick and
        standard: a seeded sample of whole tuples, as many from each of the 18 cells (problem
        family × size), 420 and 2,520 trials: 10 and 60 tuples a cell, N = 180 and 1,080 for
        the paper's interval over tuples, ±4.9 and ±2.0 points (`precision.py`)."""
        return ProfileSettings(
            "test_set", limit={"quick": 420, "standard": 2520}.get(size),
            rationale="the paper's 95% interval is over tuples, with equally weighted cells "
            "(problem family x size) each counted as often as the smallest: 1.96*sqrt(V/N) "
            "with V <= 0.111 (the largest measured: a uniform guess; the released results "
            "0.04-0.11), so ±5 points needs 10 tuples per cell (420 trials) and ±2 needs 60 "
            "(2,520); seeded sample of whole tuples, as many from each cell")

    def precision(self, plan: RunPlan) -> Precision:
        """The paper's interval over the planned tuples (`precision.py`)."""
        from mindprobe.benchmarks.worldsense.precision import stated_precision

        return stated_precision(it.payload for it in plan.items)

    def plan(self, ctx: PlanContext, opts: WorldSenseOptions) -> RunPlan:
        strategy = opts.prompting
        if strategy not in st.LABELS:
            raise UsageError(f"--prompting must be one of {', '.join(st.NAMES)}")
        scoring = opts.scoring
        if scoring is None:
            # By what the model is, never by its spec: a base model (no chat template) is
            # answered by log-probability, an instruct model by the paper's chat protocol.
            base = "base" in ctx.model.capabilities and "logprobs" in ctx.model.capabilities
            scoring = "logprob" if base and strategy in st.LOGPROB_OK else "text"
            why = ctx.model.protocol["why"]
            if scoring == "logprob":
                ctx.info(f"worldsense: answering by log-probability of the allowed options "
                         f"({why}; --scoring text to parse its replies instead)")
            elif base:
                ctx.info(f"worldsense: parsing text replies ({why}, but --prompting "
                         f"{strategy} needs them)")
            elif "chat" in ctx.model.capabilities:
                ctx.info(f"worldsense: the paper's chat protocol, text answers parsed ({why})")
        if scoring == "logprob" and strategy == "constrained":
            raise UsageError("--scoring logprob already restricts answers to the allowed "
                             "options; use it with --prompting basic")
        if scoring == "logprob" and strategy == "cot":
            raise UsageError("--prompting cot needs the model to write its reasoning, which "
                             "--scoring logprob skips; use --scoring text")
        seed = ctx.seed if ctx.seed is not None else sets.FRESH_SEED
        train: Path | None = None
        if strategy in st.INCONTEXT:  # before loading the trials: a missing file fails fast
            train = self._training_file(ctx, bool(opts.data_file) or ctx.variant == "fresh")
        if opts.data_file:
            path = check_regular(opts.data_file, "--data-file")
            sha = file_sha256(path)
            trials = decoded_groups(path, sha, "worldsense-trials-by-cell", read_trials,
                                     tuple_of)
            provenance = {"file": str(path.resolve()), "sha256": sha}
        elif ctx.variant == "fresh":
            generated, provenance = sets.fresh_trials(seed)
            trials = Grouped.of(generated, tuple_of)
        else:
            rel = sets.TRIALS_PATH[ctx.variant]
            path = resolve(self.name, self.data_files, rel, ctx.data_dir)  # sha256-verified
            trials = decoded_groups(path, sets.sha256_of(rel), "worldsense-trials-by-cell",
                                    read_trials, tuple_of)
            # `path` lets `export` find the same file again without --data-dir.
            provenance = {"file": rel, "sha256": sets.sha256_of(rel), "path": str(path.resolve())}
        if not trials.keys:
            raise DataError(f"{provenance.get('file')} holds no trials")
        chosen = sample_tuples(trials, seed, ctx.limit)
        examples_info: dict[str, Any] | None = None
        if strategy in st.INCONTEXT:
            pool, examples_info = self._example_pool(ctx, train, trials.all(), seed)
            items = []
            for t in chosen:
                shots = pool.draw(strategy, t, opts.shots, seed)
                # the shots open the prompt: questions drawing the same ones share a prefix
                items.append(Item(str(t["Key"]), {**t, "_examples": shots},
                                  prefix_group="shots " + ",".join(str(ex.id) for ex in shots)))
        else:
            items = [Item(str(t["Key"]), t) for t in chosen]
        default = st.COT_MAX_TOKENS if strategy == "cot" else st.ANSWER_MAX_TOKENS
        budget = ReplyBudget.plan(default, ctx.max_tokens, "reasoning" in ctx.model.capabilities)
        config = {"seed": seed, "reasks": opts.reasks, **budget.config(), "scoring": scoring,
                  "prompt": st.describe(strategy, opts.shots, examples_info)}
        label = st.label_of(strategy)
        if scoring == "logprob":
            label = "logprob" if strategy == "basic" else f"{label}_logprob"
        # What the model must offer, checked once it has started (`engine.run`): a server's
        # real abilities are only known then.
        requires = {}
        if strategy == "constrained":
            requires["grammar"] = ("--prompting constrained needs a constrained-answer mechanism "
                                   "(llama.cpp grammar, vLLM guided choice, OpenAI structured "
                                   "outputs; use --prompting basic otherwise)")
        if scoring == "logprob":
            requires["logprobs"] = ("--scoring logprob needs log-probabilities (use --scoring "
                                    "text otherwise)")
        variant_label = None
        if opts.data_file:
            variant_label = f"file-{Path(opts.data_file).stem.split('.')[0]}-{provenance['sha256'][:8]}"
        return RunPlan(items=items, prompting=label, config=config, provenance=provenance,
                       limit_applied=True, requires=requires, variant_label=variant_label)

    def _training_file(self, ctx: PlanContext, generated_ok: bool) -> Path | None:
        """The official training set (sha256-verified) when present; required for the official
        test sets, else None: generated examples (worldsense:fresh, --data-file)."""
        rel = st.TRAINING_FILE
        if generated_ok and not (data_dir_for(self.name, ctx.data_dir) / rel).is_file():
            return None
        return resolve(self.name, self.data_files, rel, ctx.data_dir)

    def _example_pool(self, ctx: PlanContext, train: Path | None,
                      questions: list[dict[str, Any]], seed: int
                      ) -> tuple[st.ExamplePool, dict[str, Any]]:
        """Worked examples: the official training set when present, else generated
        training-like trials (another seed than the questions)."""
        rel = st.TRAINING_FILE
        if train is not None:
            records = decoded(train, sets.sha256_of(rel), "worldsense-train", st.read_training)
            pool = st.ExamplePool.from_training(records, questions)
            info: dict[str, Any] = {"source": rel, "sha256": sets.sha256_of(rel),
                                    "records": len(records)}
        else:
            from mindprobe.benchmarks.worldsense.generate import STANDARD_PROBLEMS, generate_trials

            pool_seed = seed + st.POOL_SEED_OFFSET
            raw = generate_trials(pool_seed, st.POOL_TUPLES_PER_CELL, sizes=(3, 4, 5),
                                  problems=STANDARD_PROBLEMS)
            trials = [{**t, "goldresp": deobfuscate(t["goldresp_obfusc"])} for t in raw]
            pool = st.ExamplePool.from_generated(trials, questions)
            info = {"source": "generated (mindprobe.worldsense; no official training set found)",
                    "seed": pool_seed, "tuples_per_cell": st.POOL_TUPLES_PER_CELL,
                    "records": len(trials)}
            ctx.info(f"worldsense: in-context examples from generated trials (seed {pool_seed}); "
                     f"put {rel} in the data dir to use the official training set")
        info["excluded_as_in_question_set"] = pool.excluded
        info["draw"] = "random.Random(f'worldsense-shots|{seed}|{Key}') per question"
        return pool, info

    async def run_item(self, item: Item, session: Session) -> dict[str, Any]:
        t = item.payload
        opts: WorldSenseOptions = session.options
        cfg = session.config
        allowed = t["expectedresp"]
        strategy = opts.prompting
        examples = t.get("_examples") or []
        messages = st.render(strategy, t, examples)
        rec = {k: t.get(k) for k in META}
        if examples:
            rec["shots"] = [ex.id for ex in examples]
        if cfg.get("scoring") == "logprob":
            req = Request(messages=messages, max_tokens=1)
            scores = await session.score_choices(req, allowed)
            resp = scores.best() or ""
            rec.update(resp=resp, logprobs=dict(zip(allowed, scores.full, strict=True)),
                       scoring=scores.method, correct=is_correct(resp, t["goldresp"]))
            return rec
        budget = ReplyBudget.of(cfg, st.ANSWER_MAX_TOKENS)
        thoughts: list[str | None] = []
        resp, truncated = "", False
        attempts = 1 + opts.reasks
        for attempt in range(attempts):
            req = Request(messages=list(messages), max_tokens=budget.max_tokens,
                          temperature=0.0, choices=st.reply_choices(strategy, allowed),
                          constrain=strategy == "constrained",
                          human_wrap=st.human_wrap(strategy))
            comp = await generate_with_room(session, req, budget.room)
            thoughts.append(comp.reasoning)
            if comp.truncated_in_reasoning:
                truncated = True  # no answer at all; re-asking would be cut off again
                break
            found = st.parse_reply(strategy, comp.text, allowed, reasked=attempt > 0)
            if found is not None:
                resp = found
                break
            if attempt + 1 < attempts:
                messages += [{"role": "assistant", "content": comp.text},
                             {"role": "user", "content": st.reask_message(strategy, allowed)}]
        # The replies themselves are the record's `reply` / `request` (core.requests).
        rec.update(resp=resp, correct=is_correct(resp, t["goldresp"]))
        if any(x is not None for x in thoughts):
            rec["reasoning"] = thoughts
        if truncated:
            rec["truncated_in_reasoning"] = True
        return rec

    def estimate(self, plan: RunPlan, opts: WorldSenseOptions) -> Results:
        """A text answer: one request per trial, a word or two, re-asked at most `reasks`
        times (bound). A log-prob score: as the model's `score_choices` asks (one request, or
        one per candidate token on llama.cpp), no reply."""
        from mindprobe.core.estimate import (
            estimate_results,
            scoring_estimate,
            single_request_estimate,
        )

        strategy = opts.prompting

        def prompts() -> Any:
            for it in plan.items:
                yield st.render(strategy, it.payload, it.payload.get("_examples") or [])

        if plan.config.get("scoring") == "logprob":
            facts = plan.model_facts
            how = facts.score_requests if facts else "one"
            note = ("log-probability scoring: one request per candidate answer token (llama.cpp "
                    "forced tokens), each re-reading the cached prompt" if how == "per-token"
                    else "log-probability scoring: one one-token request per trial")
            est = scoring_estimate(((m, it.payload["expectedresp"]) for m, it in
                                    zip(prompts(), plan.items, strict=True)), how, note)
            return estimate_results(self.name, est)
        cot = strategy == "cot"
        est = single_request_estimate(
            prompts(), completion_expected=300 if cot else 3,
            completion_max=plan.config["max_tokens"], requests_per_item=1 + opts.reasks,
            note="a text answer: ~3 tokens expected (CoT ~300), answered at once; the bound: "
            "every answer re-asked, every reply at its cap")
        return estimate_results(self.name, est)

    def results(self, records: list[dict[str, Any]], plan: RunPlan) -> Results:
        from mindprobe.benchmarks.worldsense.runs import results_of_run

        return results_of_run(records, plan.prompting, plan.model_label)

    # -- the report -------------------------------------------------------------------------
    setting_rule = ("the paper's prompting: basic (the trial text verbatim, reply parsed as "
                    "text); then log-probability scoring of the same prompt; then the others")

    def setting_rank(self, variant: str, setting: dict[str, str]) -> int | None:
        prompting = setting.get("prompting")
        return 0 if prompting == "basic" else 1 if prompting == "logprob" else 2

    paired_score = PairedScore("correct", True, "correct", describe=("problemname", "goldresp"),
                               answer=("resp",))
    item_fields = ItemFields(group=("problemname",), answer=("resp",), gold=("goldresp",))
    plotted_tables = ("accuracy/",)

    def plots(self, runs: Sequence[Any], results: Sequence[Results | None]) -> list[str]:
        from mindprobe.benchmarks.worldsense.report import plots

        return plots(runs, results)

    def metric_definitions(self) -> dict[str, str]:
        from mindprobe.benchmarks.worldsense.report import DEFINITIONS

        return dict(DEFINITIONS)

    def published(self, data_dirs: list[Path], warn: Callable[[str], None]
                  ) -> list[PublishedRow]:
        from mindprobe.benchmarks.worldsense.report import published_rows

        return published_rows(data_dirs, warn)

    def published_coords(self, variant: str, plan: RunPlan) -> dict[str, str]:
        """The prompting; the official test set (by its trials' sha256) or another set."""
        from mindprobe.benchmarks.worldsense.sets import TRIALS_PATH, sha256_of

        sha = sha256_of(TRIALS_PATH.get(variant, ""))
        return {"prompting": plan.prompting, "split": variant,
                "release": f"trials sha256 {sha[:12]}" if sha else "upstream's"}

    def published_tables(self, data_dirs: list[Path], warn: Callable[[str], None]
                         ) -> dict[str, Results]:
        from mindprobe.benchmarks.worldsense.report import published_tables

        return published_tables(data_dirs, warn)

    def item_outcome(self, record: dict[str, Any]) -> str:
        if "error" in record:
            return "error"
        if not record.get("resp"):
            return "invalid"
        return "correct" if record.get("correct") else "wrong"

    def item_scores(self, record: dict[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {"correct": bool(record.get("correct")),
                               "answer": record.get("resp"), "gold": record.get("goldresp")}
        if isinstance(record.get("logprobs"), dict):
            out["logprobs"] = record["logprobs"]
        return out

