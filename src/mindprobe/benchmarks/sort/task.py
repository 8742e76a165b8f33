"""SORT / Book-SORT as a mindprobe benchmark: which of two segments of a text came first.

One item per dataset row, sent as upstream's `evaluation.py` sends it (`prompts.py`): with a
backend that exposes its chat template (llama.cpp), the rendered prompt ending in upstream's
answer prefix; with a chat API, upstream's messages. The answer is the label whose first token
has the higher log-probability among the top 20 (spec §4.3). Rows sharing an excerpt are
consecutive, so a prefix-caching backend keeps the excerpt's KV cache from one question to the
next.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from mindprobe.benchmarks.sort import sources, upstream
from mindprobe.benchmarks.sort.options import NO_EXCERPT, SortOptions
from mindprobe.core.benchmark import Benchmark, ProfileSettings
from mindprobe.core.model import Model, Request
from mindprobe.core.plan import Estimated, Item, PlanContext, RunPlan
from mindprobe.core.prompt_file import DEVIATIONS, wording_notes
from mindprobe.core.results import Results
from mindprobe.core.session import Session
from mindprobe.core.stats import Precision
from mindprobe.core.upstream_source import Template
from mindprobe.errors import UsageError

SEGMENT_FIELDS = ("segment_1", "segment_2", "excerpt_text")
#: Upstream's sampling (`sample_n_tokens` 1 and `n_logprobs` 20 of its hydra config, greedy as
#: `evaluation_utils.load_model_tokenizer` fixes it); the text fallback leaves room for a word.
MAX_TOKENS, TOP_LOGPROBS, TEXT_MAX_TOKENS = 1, 20, 8
#: Rough tokens per word of English prose plus the prompt's own text, for the fit check.
TOKENS_PER_WORD, PROMPT_OVERHEAD = 1.45, 200


def parse_condition(variant: str) -> tuple[int, int] | None:
    """`250-20` -> (250, 20); `all` -> None."""
    if variant == "all":
        return None
    le, _, ls = variant.partition("-")
    return int(le), int(ls)


def estimated_tokens(excerpt_length: int, in_context: bool) -> int:
    return int(PROMPT_OVERHEAD + (TOKENS_PER_WORD * excerpt_length if in_context else 80))


class SortBenchmark(Benchmark):
    name = "sort"
    title = "episodic memory: which of two segments of a book came first (Book-SORT)"
    variants = {
        "all": "every condition that fits the model's context window (default)",
        "250-20": "excerpt 250 words, segments 20 words",
        "250-50": "excerpt 250 words, segments 50 words",
        "1000-20": "excerpt 1000 words, segments 20 words",
        "1000-50": "excerpt 1000 words, segments 50 words",
        "2500-20": "excerpt 2500 words, segments 20 words",
        "2500-50": "excerpt 2500 words, segments 50 words",
        "10000-20": "excerpt 10000 words, segments 20 words",
        "10000-50": "excerpt 10000 words, segments 50 words",
        "20000-20": "excerpt 20000 words, segments 20 words",
        "20000-50": "excerpt 20000 words, segments 50 words",
    }
    default_variant = "all"
    verbs = {"build": "build a benchmark's dataset from its sources",
             "sweep": "run every prompt config, pick the best, run the test split with it",
             "export": "export data made from the benchmark (the fine-tuning corpus)"}
    limit = "the first N test rows (segment pairs) in total, over all conditions run"
    Options = SortOptions
    data_files = sources.DATA_FILES
    published_note = ("Upstream (bridge-ai-neuro/SORT) publishes no machine-readable results: "
                      "the paper's numbers are in its figures and text only, so no published "
                      "row stands beside a SORT run.")

    def profile_settings(self, size: str) -> ProfileSettings:
        """Every condition that fits the model's window, in-context, logprob scoring (the
        paper's setting); quick and standard: the first 1 and 8 excerpts of every condition and
        book (all four distance bins each), about 330 and 2,660 segment pairs on Book-SORT."""
        return ProfileSettings(
            "all", options={"excerpts": {"quick": 1, "standard": 8}[size]}
            if size in ("quick", "standard") else {},
            rationale="accuracy is a proportion: 95% half-width <= 98/sqrt(pairs) points; "
            "stratified by condition, book and distance bin (--excerpts K per condition and "
            "book)")

    def precision(self, plan: RunPlan) -> Precision:
        """The macro accuracy's stratified interval: the mean of each condition's share."""
        from collections import Counter

        from mindprobe.core.stats import strata_precision

        sizes = Counter((it.payload["excerpt_length"], it.payload["segment_length"])
                        for it in plan.items)
        return strata_precision([sizes[c] for c in sorted(sizes)], "segment pairs")

    def plan(self, ctx: PlanContext, opts: SortOptions) -> RunPlan:
        from mindprobe.benchmarks.sort.cell import CONDITIONS
        from mindprobe.benchmarks.sort.estimated import (
            ESTIMATED_NOTE,
            ESTIMATED_NUMBERS,
            estimated_groups,
            pinned,
        )
        from mindprobe.benchmarks.sort.planned import (
            conditions_of,
            planned_rows,
            row_groups,
            split_of,
        )
        from mindprobe.benchmarks.sort.prompts import get_prompt_config
        from mindprobe.core.prompt_file import apply_prompt_file

        prompt = get_prompt_config(opts.prompt, ctx.data_dir)
        if ctx.prompt_file is not None:
            wording = apply_prompt_file(upstream.templates_of(prompt), ctx.prompt_file)
            prompt = upstream.with_texts(prompt, {n: wording[n] for n in wording.replaced})
        self._wording = (prompt, upstream.evaluation_code(ctx.data_dir))
        book_ids = _ids(opts.books, "--books")
        wanted = parse_condition(ctx.variant)
        in_context = opts.condition not in NO_EXCERPT
        root = sources.books_root(ctx.data_dir)
        if sources.has_booksort_files(root):
            folder, origin = root, f"Book-SORT files in {root}"
            candidates = [wanted] if wanted else conditions_of(row_groups(folder, opts.split))
        else:
            folder, origin = None, f"built from the Gutenberg books in {root}"
            candidates = [wanted] if wanted else list(CONDITIONS)
        fits, skipped = self._fitting(candidates, in_context, opts.condition, ctx)
        if not fits:
            raise UsageError(f"no SORT condition fits {ctx.model.spec}'s context window of "
                             f"{ctx.model.context_window} tokens: {'; '.join(skipped)}")
        for s in skipped:
            ctx.info(f"sort: skipped {s}")
        estimated = False
        if folder is not None:
            groups = row_groups(folder, opts.split)
        else:
            books = sources.load_source_books(root, book_ids)
            if ctx.dry_run and not sources.is_built(books, fits) and pinned(books):
                # a dry run counts and estimates from the books; the run builds
                groups, estimated = estimated_groups(books, fits, opts.split), True
                origin = f"estimated from the Gutenberg books in {root} (built at the first run)"
                ctx.info(f"sort: {ESTIMATED_NOTE}")
            else:
                groups = split_of(sources.built_rows(root, fits, books), opts.split)
        present = [c for c in conditions_of(groups) if c in fits]
        if wanted and wanted not in present:
            raise UsageError(f"condition {ctx.variant} is not in {origin}")
        # the rows to ask, decoded from the memo alone (--excerpts K: each condition and
        # book's first K excerpts)
        picked = planned_rows(groups, fits, wanted, limit=ctx.limit, book_ids=book_ids,
                              excerpts=opts.excerpts, root=folder or root)
        # Questions about one excerpt run back to back: a prefix-caching backend then keeps
        # the excerpt's KV cache from one question to the next.
        picked.sort(key=lambda r: (r["excerpt_length"], r["segment_length"], r["book_idx"],
                                   r["excerpt_idx"], r["segment_idx"]))
        passages = self._retrieval(picked, root, opts) if opts.condition == "retrieval" else {}
        # In context, the questions on one excerpt share it as their prompt's long prefix.
        items = [Item(r["row_id"], {**r, "retrieved": passages.get(r["row_id"])},
                      prefix_group=f"excerpt {r['book_idx']}/{r['excerpt_idx']}"
                      if opts.condition == "in-context" else None)
                 for r in picked]
        config = {"prompt": opts.prompt, "condition": opts.condition, "task": opts.task,
                  "split": opts.split, "scoring": opts.scoring, "books": book_ids,
                  "retrieval_k": opts.retrieval_k if opts.condition == "retrieval" else None,
                  "excerpts": opts.excerpts, "space": opts.space,
                  **({"base_model": opts.base_model,
                      "held_out": _ids(opts.held_out, "--held-out")}
                     if opts.condition == "long-term" else {}),
                  "conditions": [f"{a}-{b}" for a, b in present if (a, b) in fits],
                  "skipped": skipped}
        requires = {"logprobs": "--scoring logprob (SORT's faithful default) needs "
                    "log-probabilities; pass --scoring text to parse replies instead"} \
            if opts.scoring == "logprob" else {}
        prompting = f"{opts.prompt}-{opts.condition}-{opts.task}"
        if opts.split != "test":
            prompting += f"-{opts.split}"
        # --excerpts K keeps the first K excerpts: a larger K extends a run (`RunPlan.sizes`)
        return RunPlan(items=items, prompting=prompting, config=config, limit_applied=True,
                       sizes=("excerpts",),
                       provenance={"source": origin, "dataset": "Book-SORT", "prompt": {
                           "file": upstream.PROMPTS_DIR + prompt.name + ".yaml",
                           "sha256": prompt.sha256, "repository": upstream.REPO,
                           "commit": upstream.COMMIT}},
                       requires=requires,
                       estimated=Estimated(ESTIMATED_NOTE, ESTIMATED_NUMBERS) if estimated
                       else None)

    @staticmethod
    def _fitting(conditions: list[tuple[int, int]], in_context: bool, condition: str,
                 ctx: PlanContext) -> tuple[list[tuple[int, int]], list[str]]:
        window = ctx.model.context_window
        if window is None or condition == "retrieval":
            return conditions, []
        fits, skipped = [], []
        for le, ls in conditions:
            need = estimated_tokens(le, in_context)
            if need <= window:
                fits.append((le, ls))
            else:
                skipped.append(f"{le}-{ls} (about {need:,} prompt tokens > context window "
                               f"{window:,})")
        return fits, skipped

    @staticmethod
    def _retrieval(rows: list[dict[str, Any]], root: Path, opts: SortOptions) -> dict[str, str]:
        """Top-k BM25 passages for each row's two segments, computed once at planning."""
        from mindprobe.benchmarks.sort.retrieval import PassageIndex, passages_text

        books = {b.book_idx: b for b in sources.load_source_books(
            root, sorted({r["book_idx"] for r in rows}))}
        indexes = {i: PassageIndex(b.words) for i, b in books.items()}
        return {r["row_id"]: passages_text(indexes[r["book_idx"]].for_pair(
            _bare(r["segment_1"]), _bare(r["segment_2"]), k=opts.retrieval_k)) for r in rows}

    async def prepare(self, plan: RunPlan, model: Model) -> None:
        """Upstream's space after the answer prefix, decided once per run from the model's
        tokenizer (its test sentence: does every space become the token `" "` encodes to?),
        recorded in the manifest with how it was decided."""
        from mindprobe.benchmarks.sort.prompts import PATHS, needs_space, request_path

        cfg, opts = plan.config, plan.options
        if plan.estimated is not None:  # only a dry run makes one, and runs nothing
            raise UsageError("a SORT plan estimated for a dry run cannot run: plan again "
                             "without --dry-run (Book-SORT is then built from the books)")
        rule = None
        if model.can("tokenize"):
            rule = await needs_space(model.tokenize, self._wording[1].whitespace_probe)
        if opts.space != "auto":
            add, how = opts.space == "yes", f"--space {opts.space}"
            if rule is not None and rule != add:
                how += f" (upstream's rule on this model's tokenizer: {'yes' if rule else 'no'})"
        elif rule is not None:
            add = rule
            how = ("the model's tokenizer encodes spaces as separate tokens" if add else
                   "the model's tokenizer merges spaces into the next token")
        else:
            add, how = False, ("the backend exposes no tokenizer: no space (what upstream "
                               "decides for OpenAI's tiktoken and for tokenizers that merge "
                               "spaces into words); override with --space yes")
        cfg["extra_space"], cfg["extra_space_decided_by"] = add, how
        cfg["request_path"] = path = request_path(model, opts.scoring)
        notes = [PATHS[path]] if path != "prompt" else []
        if rule is None or rule != add:
            notes.append(f"the space after the answer prefix: {how}")
        if opts.scoring == "text":
            notes.append("answers parsed from the reply text (upstream scores log-probs)")
        if opts.task != "first":
            notes.append(f"--task {opts.task} (upstream asks for the first segment)")
        if opts.condition == "retrieval":
            notes.append("retrieved passages replace the excerpt (mindprobe's condition)")
        if notes:
            cfg[DEVIATIONS] = notes

    async def run_item(self, item: Item, session: Session) -> dict[str, Any]:
        from mindprobe.benchmarks.sort.prompts import (
            published_excerpt,
            render_prompt,
            request_path,
        )
        from mindprobe.benchmarks.sort.scoring import score_logprobs, score_text

        row, cfg = item.payload, session.config
        opts: SortOptions = session.options
        config, code = self._wording
        in_context = opts.condition not in NO_EXCERPT
        prompt = render_prompt(config, row, in_context=in_context, task_type=opts.task,
                               excerpt=row.get("retrieved"), code=code)
        if in_context:  # the excerpt is quoted by several questions
            session.share_text(published_excerpt(str(row.get("retrieved")
                                                      or row["excerpt_text"])))
        space = bool(cfg.get("extra_space"))
        model = session.model()
        logprob = opts.scoring == "logprob"
        path = cfg.get("request_path") or request_path(model, opts.scoring)
        sampling: dict[str, Any] = {"max_tokens": MAX_TOKENS, "temperature": 0.0,
                                    "logprobs": TOP_LOGPROBS, "choices": ["A", "B"]}
        if not logprob:
            sampling.update(max_tokens=TEXT_MAX_TOKENS, logprobs=None)
        if path == "prompt":  # upstream's local path, byte for byte
            head = await model.apply_template(prompt.template_messages())
            req = Request(prompt=prompt.completion(head, space), **sampling)
        elif path == "prefix":  # the server applies its template itself
            req = Request(messages=prompt.prefix_messages(space), continue_final=True,
                          **sampling)
        else:  # chat APIs: upstream's openai path, no answer prefix
            req = Request(messages=prompt.chat(space), **sampling)
        comp = await session.generate(req)
        if logprob:
            top = comp.logprobs[0]["top"] if comp.logprobs else None
            scored = score_logprobs(top, row["present_seg1_first"], task_type=opts.task,
                                    space_appended=space)
        else:
            scored = score_text(comp.text, row["present_seg1_first"], task_type=opts.task)
        rec = {k: v for k, v in row.items() if k not in (*SEGMENT_FIELDS, "retrieved")}
        rec.update(scored.as_dict(), context=opts.condition, prompt=opts.prompt,
                   logprobs_missing=logprob and not comp.logprobs)
        return rec

    def prompt_templates(self, data_dir: Path | None) -> dict[str, Template]:
        """Upstream's default configuration's fields; a prompt file replaces those of the
        configuration chosen with --prompt."""
        from mindprobe.benchmarks.sort.prompts import DEFAULT_PROMPT

        return upstream.templates_of(upstream.load_config(DEFAULT_PROMPT, data_dir))

    def estimate(self, plan: RunPlan, opts: SortOptions) -> Results:
        """One request per segment pair; questions about one excerpt run back to back, so a
        prefix-reusing backend prefills each excerpt about once."""
        from mindprobe.benchmarks.sort.prompts import render_prompt
        from mindprobe.core.estimate import estimate_results, single_request_estimate

        config, code = self._wording
        prompts = (render_prompt(config, it.payload,
                                 in_context=opts.condition not in NO_EXCERPT,
                                 task_type=opts.task, excerpt=it.payload.get("retrieved"),
                                 code=code).template_messages() for it in plan.items)
        cap = 1 if opts.scoring == "logprob" else 8
        note = "the answer letter: 1 token expected"
        if plan.estimated is not None:  # a dry run's plan from the books, not built
            note += f"; {plan.estimated.why}"
        return estimate_results(self.name, single_request_estimate(
            prompts, completion_expected=1, completion_max=cap, note=note))

    def results(self, records: list[dict[str, Any]], plan: RunPlan) -> Results:
        from mindprobe.benchmarks.sort.report import results_of_records

        res = results_of_records(records, plan)
        res.notes += wording_notes(plan.config)
        return res

    # -- the report -------------------------------------------------------------------------
    setting_rule = ("test split, in-context (the paper's headline condition), then the other "
                    "conditions; validation runs of a prompt sweep are listed, never a headline")

    def setting_rank(self, variant: str, setting: dict[str, str]) -> int | None:
        prompting = setting.get("prompting", "")
        if prompting.endswith("-validation"):
            return None
        return 0 if "-in-context-" in prompting else 1

    def item_outcome(self, record: dict[str, Any]) -> str:
        if "error" in record:
            return "error"
        if record.get("answer") not in ("A", "B"):
            return "invalid"
        return "correct" if record.get("correct") else "wrong"

    def item_scores(self, record: dict[str, Any]) -> dict[str, Any]:
        keys = ("correct", "answer", "ground_truth", "prob_A", "prob_B")
        out = {k: record[k] for k in keys if k in record}
        if "ground_truth" in out:
            out["gold"] = out.pop("ground_truth")
        return out

    plotted_tables = ("by_condition", "distance_bin")

    def plots(self, runs: Sequence[Any], results: Sequence[Results | None]) -> list[str]:
        from mindprobe.benchmarks.sort.report import plots

        return plots(runs, results)

    def metric_definitions(self) -> dict[str, str]:
        return {
            "accuracy (macro over conditions)": "Share of segment pairs whose order the model "
            "gets right, averaged over the excerpt × segment-length conditions: accuracy = "
            "mean over conditions of (right answers / questions).",
            "chance": "Two orders are possible, so guessing scores 50%.",
        }

    def compare_runs(self, runs: list[Any]) -> Results | None:
        """The memory conditions side by side (in-context, retrieval, no-context, long-term)."""
        from mindprobe.benchmarks.sort.report import memory_results

        return memory_results(runs)


def _ids(text: str | None, flag: str) -> list[int] | None:
    if not text:
        return None
    try:
        return [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise UsageError(f"{flag} expects Gutenberg ids like 69087,73017; got {text!r}") from None


def _bare(segment: str) -> str:
    return segment.strip().strip("*")
