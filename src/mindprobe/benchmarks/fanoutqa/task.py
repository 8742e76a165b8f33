"""FanOutQA as a mindprobe benchmark: one item per question, in one of the paper's settings.

- ``closedbook``: the question alone.
- ``evidenceprovided``: the question's evidence pages (dated Wikipedia, from the ``wikipedia``
  resource and its ``{pageid}-dated.md`` cache), chunked, ranked by BM25+ and greedily filled
  into ``max_context - 520`` tokens counted with the model's tokenizer (or the documented
  estimate when it has none; each record names which).
- ``openbook``: the ``<search>…</search>`` loop of :mod:`.openbook`, capped at ``time_limit``
  seconds per question.

Each record holds the answer and its scores (loose/strict accuracy with the missing gold
strings, ROUGE), what went into the prompt (chunk ids, token counts) or the search trail, and
the judge's verdict when ``--judge`` ran; results re-score the answers from the records, so
``mindprobe analyse fanoutqa --run DIR [--lemmatizer …]`` never asks the model again.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from mindprobe.core.benchmark import Benchmark, ProfileSettings
from mindprobe.core.judges import primary_judge
from mindprobe.core.model import FREE_TEXT, Request, TransientError
from mindprobe.core.plan import Item, PlanContext, RunPlan
from mindprobe.core.published import PublishedRow
from mindprobe.core.results import Results
from mindprobe.core.session import Session
from mindprobe.errors import DataError, UsageError
from mindprobe.models import model_label

from .data import DATA_FILES, LEGACY_VERSION, Question, load_questions, version_of
from .judge import collect_judges
from .judging import judge_answer
from .lemma import load_lemmatizer, resolve_backend
from .metrics import score_answer
from .normalize import Normalizer
from .options import FanOutQAOptions
from .prompts import GENERATION_RESERVE, closed_book_messages, resolve_max_context, user
from .published import DATA_FILES as LEADERBOARD_FILES
from .upstream import data_provenance

SETTINGS = ("closedbook", "evidenceprovided", "openbook")
#: Seconds an open-book item may run past its time limit (the judge call, a last request).
GRACE_S = 300.0
SEARCH_PROTOCOL = "text (<search>…</search> replies; tool results as user messages)"


def questions_by_id(split: str, version: str, data_dir: Path | None = None
                    ) -> dict[str, Question]:
    return {q.id: q for q in load_questions(split, version, data_dir)}  # type: ignore[arg-type]


def run_questions(plan: RunPlan, version: str | None = None, data_dir: Path | None = None
                  ) -> dict[str, Question]:
    """The questions a run is scored against: its own release unless ``version`` says another
    (a run's own: `version_of` its config, which knows runs from before releases were told
    apart); from ``data_dir``, else the folder the run read (`plan.data_dir`), else the data
    folder (or, for nov23, the wheel)."""
    return questions_by_id(plan.options.split, version or version_of(plan.config),
                           data_dir or plan.data_dir)


#: Where an answer is complete (base models on the completion path): the end of its lines
#: (the prompt asks for a list one item a line), i.e. the first blank line.
ANSWER_END = (("\n\n",),)


class FanOutQABenchmark(Benchmark):
    name = "fanoutqa"
    title = ("fan-out multi-hop QA over Wikipedia (FanOutQA jul26 or nov23): loose accuracy, "
             "ROUGE, judge")
    variants = {
        "closedbook": "the question alone (default)",
        "evidenceprovided": "the question's evidence pages, BM25+-ranked chunks filling the "
                            "context (dated Wikipedia)",
        "openbook": "the model searches Wikipedia (<search>…</search>), 600 s per question",
    }
    default_variant = "closedbook"
    verbs = {"export": "export a run as the leaderboard's JSONL submission, with its metadata",
             "judge": "(re-)judge a finished run with a judge model"}
    limit = "the first N questions of the split"
    roles = ("judge",)
    Options = FanOutQAOptions
    data_files = [*DATA_FILES, *LEADERBOARD_FILES]

    def __init__(self) -> None:
        self._normalizers: dict[str, Normalizer] = {}

    def normalizer(self, backend: str = "auto") -> Normalizer:
        """One caching normaliser per lemmatiser backend (loaded once per process; its gold-string
        normalisations persist across processes)."""
        if backend not in self._normalizers:
            self._normalizers[backend] = Normalizer.persistent(load_lemmatizer(backend))
        return self._normalizers[backend]

    def profile_settings(self, size: str) -> ProfileSettings:
        """Closed-book on the 310 dev questions at every size (one short request each, so
        there is nothing to save by sampling); evidence-provided and open-book need a
        Wikipedia source, which a profile does not assume."""
        return ProfileSettings(
            "closedbook",
            rationale="loose accuracy lies in [0, 1]: 95% half-width <= 98/sqrt(questions) "
            "points; all dev questions (every fan-out width) at every size",
            note="closed-book: no Wikipedia source is configured for a profile (evidence-"
            "provided and open-book: `mindprobe run fanoutqa:evidenceprovided --wiki-cache "
            "DIR`)")

    # -- planning ------------------------------------------------------------------------------
    def plan(self, ctx: PlanContext, opts: FanOutQAOptions) -> RunPlan:
        setting = ctx.variant
        if setting not in SETTINGS:
            raise UsageError(f"unknown FanOutQA setting {setting!r}; known: {', '.join(SETTINGS)}")
        if setting == "closedbook":
            from .wiki import refuse_wiki_options

            refuse_wiki_options(opts, setting)
        if opts.offline and setting == "openbook":
            raise UsageError("--offline cannot run openbook: title lookup and search need "
                             "Wikipedia itself (only page text is cached); use it with "
                             "fanoutqa:evidenceprovided")
        version = opts.dataset_version
        questions = load_questions(opts.split, version, ctx.data_dir)  # type: ignore[arg-type]
        # named, not loaded: spaCy and its pipeline take seconds, and only scoring needs them
        lem_name, lem_exact = resolve_backend(opts.lemmatizer)
        ctx.info(f"fanoutqa:{setting}: {len(questions)} {opts.split} questions "
                 f"({version}); lemmatiser {lem_name}"
                 + ("" if lem_exact else " (approximate)"))
        judge = opts.judge or ctx.roles.get("judge")
        if judge and opts.split == "test":
            ctx.warn("the test split has no gold answers: the judge is not run")
            judge = None
        reply_tokens = ctx.max_tokens or GENERATION_RESERVE
        config: dict[str, Any] = {
            "setting": setting,
            "split": opts.split,
            "dataset_version": version,
            "reply_tokens": reply_tokens,
            "lemmatizer": opts.lemmatizer,
            "judge": judge,
            "judge_label": model_label(judge) if judge else None,
        }
        resources: dict[str, Any] = {}
        provenance = data_provenance(version, opts.split)
        if setting != "closedbook":
            from mindprobe.resources.wikipedia import EPOCH

            config.update(max_context=opts.max_context or "auto", chunk_size=opts.chunk_size)
            from .wiki import wiki_client

            wiki = wiki_client(opts, ctx.warn)
            resources["wikipedia"] = wiki
            # Not part of the run's identity: a run may be resumed from another source (the
            # API rate-limits, a Kiwix mirror is set up); each record names its pages' sources.
            provenance["wikipedia_epoch"] = EPOCH
            ctx.info(f"fanoutqa:{setting}: Wikipedia pages from {wiki.source_label}"
                     + (" (offline: the page cache only)" if opts.offline else "")
                     + f"; page cache {wiki.cache_dir}")
        if setting == "openbook":
            config.update(search_results=opts.search_results, time_limit=opts.time_limit,
                          search_protocol="text")
        if setting != "openbook" and "base" in ctx.model.capabilities:
            config["answer_end"] = [list(stage) for stage in ANSWER_END]
        # jul26 runs get their own folder (paper-jul26): a run never mixes releases, and a run
        # from before releases were told apart ("paper", nov23) resumes with --dataset-version
        # nov23 exactly where it was.
        prompting = ("paper" if opts.split == "dev" else "paper-test") + (
            f"-{version}" if version != LEGACY_VERSION else "")
        # Closed and open book prompts open with the same instructions (then the question): one
        # prefix group; evidence-provided prompts open with each question's own documents.
        group = None if setting == "evidenceprovided" else f"{setting} instructions"
        return RunPlan(
            items=[Item(q.id, q, prefix_group=group) for q in questions],
            prompting=prompting,
            config=config,
            provenance=provenance,
            roles={**ctx.roles, **({"judge": judge} if judge else {})},
            resources=resources,
            item_time_limit=opts.time_limit + GRACE_S if setting == "openbook" else None,
            requires={FREE_TEXT: "FanOutQA needs answers in free text (its questions have no "
                      "closed answer set to pick from)"},
        )

    def estimate(self, plan: RunPlan, opts: FanOutQAOptions) -> Results:
        """Closed-book: one request per question (the other settings' prompts depend on what
        Wikipedia returns, so they have no estimate)."""
        from mindprobe.core.estimate import estimate_results, single_request_estimate

        if plan.config["setting"] != "closedbook":
            raise UsageError(f"fanoutqa:{plan.config['setting']} has no token estimate")
        prompts = (closed_book_messages(it.payload.question) for it in plan.items)
        return estimate_results(self.name, single_request_estimate(
            prompts, completion_expected=40, completion_max=plan.config["reply_tokens"],
            note="a short answer: ~40 tokens expected, the reply cap as bound"))

    # -- one question --------------------------------------------------------------------------
    async def run_item(self, item: Item, session: Session) -> dict[str, Any]:
        q: Question = item.payload
        opts: FanOutQAOptions = session.options
        cfg = session.config
        setting = cfg["setting"]
        rec: dict[str, Any] = {"question_id": q.id, "setting": setting, "split": q.split,
                               "categories": list(q.categories), "n_evidence": q.n_evidence}
        if setting == "closedbook":
            comp = await session.generate(Request(messages=closed_book_messages(q.question),
                                                  max_tokens=cfg["reply_tokens"],
                                                  temperature=0.0, answer_end=ANSWER_END))
            answer, finish = comp.text, comp.finish_reason
            rec["prompt_tokens"] = comp.prompt_tokens
        elif setting == "evidenceprovided":
            answer, finish = await self._evidence_provided(q, session, rec)
        else:
            answer, finish = await self._open_book(q, session, rec)
        rec.update(answer=answer, finish_reason=finish)
        if q.has_answer:
            norm = self.normalizer(opts.lemmatizer)
            rec["scores"] = score_answer(q, answer, norm)
            rec["lemmatizer"] = norm.lemmatizer.name
            if cfg.get("judge"):
                try:
                    rec["judge"] = await judge_answer(session, q, answer)
                except TransientError as exc:
                    rec["error"] = f"judge call failed (the answer is kept): {exc}"
        return rec

    def _context_settings(self, session: Session, rec: dict[str, Any]) -> tuple[int, Any]:
        from .openbook import TokenCounter

        model = session.model()
        max_context, source = resolve_max_context(session.options.max_context,
                                                  model.context_window,
                                                  session.config["reply_tokens"])
        counter = TokenCounter(model)
        rec.update(max_context=max_context, max_context_source=source,
                   token_count_method=counter.method, token_count_exact=counter.exact)
        return max_context, counter

    async def _evidence_provided(self, q: Question, session: Session,
                                 rec: dict[str, Any]) -> tuple[str, str | None]:
        from mindprobe.resources.wikipedia import Evidence

        from .openbook import evidence_provided_context

        opts: FanOutQAOptions = session.options
        wiki = session.resource("wikipedia")
        evidence = q.necessary_evidence
        pages = await asyncio.gather(*(
            wiki.page(Evidence(e.pageid, e.revid, e.title, e.url)) for e in evidence))
        rec["page_sources"] = [p.source for p in pages]
        max_context, counter = self._context_settings(session, rec)
        context = await evidence_provided_context(
            q.question, [(e.pageid if e.pageid is not None else e.title, e.title, p.text)
                         for e, p in zip(evidence, pages, strict=True)],
            max_context, counter, Normalizer(self.normalizer(opts.lemmatizer).lemmatizer),
            opts.chunk_size)
        rec["context"] = context.record()
        comp = await session.generate(Request(messages=[user(context.text)],
                                              max_tokens=session.config["reply_tokens"],
                                              temperature=0.0,
                                              answer_end=ANSWER_END))
        rec["prompt_tokens"] = comp.prompt_tokens
        return comp.text, comp.finish_reason

    async def _open_book(self, q: Question, session: Session,
                         rec: dict[str, Any]) -> tuple[str, str | None]:
        from .openbook import OpenBookSettings, open_book_round

        opts: FanOutQAOptions = session.options
        max_context, counter = self._context_settings(session, rec)
        settings = OpenBookSettings(max_context=max_context,
                                    reply_tokens=session.config["reply_tokens"],
                                    chunk_size=opts.chunk_size,
                                    search_results=opts.search_results,
                                    time_limit=float(opts.time_limit))
        normalizer = Normalizer(self.normalizer(opts.lemmatizer).lemmatizer)
        rnd = await open_book_round(session, q.question, settings, counter, normalizer)
        rec.update(search_trail=rnd.trail, replies=rnd.replies, n_searches=len(rnd.trail),
                   stopped=rnd.stopped, trimmed_turns=rnd.trimmed_turns,
                   elapsed_s=rnd.elapsed_s)
        return rnd.answer, rnd.finish_reason

    # -- results -------------------------------------------------------------------------------
    def results(self, records: list[dict[str, Any]], plan: RunPlan) -> Results:
        from .report import run_results

        cfg, opts = plan.config, plan.options
        own = collect_judges(cfg, records, {})
        questions = run_questions(plan) if opts.split == "dev" and records else None
        return run_results(records, plan, self.normalizer(opts.lemmatizer), own,
                           cfg.get("judge_label") if own else None, questions=questions)

    # -- the report -------------------------------------------------------------------------
    setting_rule = "the paper's prompts on the dev split (label `paper`), then the test split"

    def published(self, data_dirs: list[Path], warn: Callable[[str], None]
                  ) -> list[PublishedRow]:
        from mindprobe.benchmarks.fanoutqa.published import published

        return published(data_dirs)

    def published_coords(self, variant: str, plan: RunPlan) -> dict[str, str]:
        """The setting (the variant), the split and the release of the run's questions."""
        return {"setting": variant, "split": plan.options.split,
                "release": version_of(plan.config)}

    def setting_rank(self, variant: str, setting: dict[str, str]) -> int | None:
        return 0 if setting.get("prompting") == "paper" else 1

    plotted_tables = ("by_fanout",)

    def plots(self, runs: Sequence[Any], results: Sequence[Results | None]) -> list[str]:
        from mindprobe.benchmarks.fanoutqa.report import plots

        return plots(runs, results)

    def metric_definitions(self) -> dict[str, str]:
        return {
            "loose accuracy": "Share of the reference answer's parts found in the model's "
            "answer after normalising both (the paper's primary metric): loose = mean over "
            "questions of (reference parts found / reference parts).",
            "chance": "No chance level: answers are free text.",
        }

    # -- judge passes (`mindprobe judge fanoutqa --run DIR --judge SPEC`) ----------------------
    def judge_items(self, records: list[dict[str, Any]], plan: RunPlan) -> list[Item]:
        """One item per answered dev question: the judge reads the record and the gold answer,
        never the model under test."""
        split = plan.options.split
        if split != "dev":
            raise UsageError("the judge needs gold answers: only dev runs can be judged "
                             "(test answers are graded by the FanOutQA maintainers)")
        by_id = run_questions(plan)
        items = []
        for rec in records:
            if not isinstance(rec.get("answer"), str):
                continue  # errored before answering: nothing to judge
            q = by_id.get(rec["id"])
            if q is None:
                raise DataError(f"record {rec['id']!r} is not a FanOutQA {split} question")
            items.append(Item(rec["id"], {"question": q, "answer": rec["answer"]}))
        return items

    async def judge_item(self, item: Item, session: Session) -> dict[str, Any]:
        return await judge_answer(session, item.payload["question"], item.payload["answer"])

    def results_with_judgements(
        self, records: list[dict[str, Any]], plan: RunPlan,
        judgements: dict[str, Any], primary: str | None,
    ) -> Results:
        return self.rescore(records, plan, judgements, primary)

    def rescore(self, records: list[dict[str, Any]], plan: RunPlan,
                judgements: dict[str, Any] | None = None, primary: str | None = None,
                lemmatizer: str | None = None, include_raw: bool = False,
                dataset_version: str | None = None, data_dir: Path | None = None) -> Results:
        """Results from the records alone, with every judge's verdicts (the run's own and later
        judge passes'), optionally with another lemmatiser backend or against another release's
        gold answers (``dataset_version``; the judges' verdicts, given against the run's own
        gold, are then left out and the tables say which release scored which run)."""
        from .report import run_results

        cfg = plan.config
        own_version = version_of(cfg)
        other = dataset_version is not None and dataset_version != own_version
        judges = {} if other else collect_judges(cfg, records, judgements or {})
        primary = None if other else primary_judge(judges, primary, cfg.get("judge_label"))
        backend = lemmatizer or plan.options.lemmatizer
        questions = (run_questions(plan, dataset_version, data_dir)
                     if plan.options.split == "dev" and records else None)
        res = run_results(records, plan, self.normalizer(backend), judges, primary,
                          include_raw=include_raw, questions=questions)
        if other:
            res.warnings.append(
                f"this {own_version} run is re-scored against the {dataset_version} gold "
                "answers: its model answered the {own_version} question texts (some differ) "
                "and its judge verdicts are left out; compare it only with runs scored the "
                "same way".replace("{own_version}", own_version))
            res.detail["run_dataset_version"] = own_version
        return res

