"""FanOutQA verbs: `analyse` (a submission file in the official format, or runs re-scored with
another lemmatiser / judge), `export` (a run as the leaderboard's JSONL, plus its metadata
object) and `judge` (the common judge pass: GPT-as-judge over a finished dev run)."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

from mindprobe.core.files import check_target, write_file
from mindprobe.core.inputs import read_input
from mindprobe.core.output import emit_json, tables_console
from mindprobe.core.verbs import Arg, Verb
from mindprobe.engine.judge_verb import judge_verb
from mindprobe.errors import DataError, UsageError

SYSTEM_TYPES = ["FOUNDATION", "FINETUNE", "PROMPT", "OTHER"]
VERSIONS = ["jul26", "nov23"]


def _data_arguments(what: str, data_dir: bool = True) -> tuple[Arg, ...]:
    """--dataset-version (and --data-dir, unless the run's own data folder is used)."""
    version = Arg("--dataset-version", choices=VERSIONS, help=f"questions and gold answers "
                  f"{what}: jul26 (upstream's July 2026 corrections) or nov23 (the original "
                  "release)")
    if not data_dir:  # the run's own data folder (as recorded), or analyse's --data-dir
        return (version,)
    return (version, Arg("--data-dir", metavar="DIR", help="folder with the FanOutQA files, "
                         "or the data root holding fanoutqa/ (default: the folder the run "
                         "read, else the mindprobe data cache; `mindprobe data fetch fanoutqa` "
                         "fills it)"))


def _data_dir(args: Any, run: Any = None) -> Path | None:
    """--data-dir (FanOutQA's folder or the data root), else the folder `run` recorded."""
    from mindprobe.benchmarks.fanoutqa.upstream import DATA_FILES
    from mindprobe.core.data import benchmark_folder

    if args.data_dir:
        return benchmark_folder("fanoutqa", args.data_dir, DATA_FILES)
    return run.data_dir if run is not None else None


def _same_version(args: Any, run: Any, verb: str) -> str:
    """The run's release; a different --dataset-version is refused (the run's answers are to
    its own release's questions)."""
    from mindprobe.benchmarks.fanoutqa.data import version_of

    own = version_of(run.manifest.get("config") or {})
    if args.dataset_version and args.dataset_version != own:
        raise UsageError(f"{run.dir} is a {own} run: {verb} it with --dataset-version {own} "
                         f"(or leave the flag out); a {args.dataset_version} {verb} needs a "
                         f"{args.dataset_version} run (`mindprobe run fanoutqa "
                         f"--dataset-version {args.dataset_version} …`)")
    return own


def _ids(text: str) -> list[str]:
    """`a,b,c` or `@FILE` (one id per line) -> ids."""
    if text.startswith("@"):
        path = Path(text[1:])
        try:
            text = read_input(path, "--questions", "id list").decode("utf-8")
        except UnicodeDecodeError:
            raise UsageError(f"--questions {path}: not UTF-8 text") from None
        parts = text.split()
    else:
        parts = text.split(",")
    ids = [p.strip() for p in parts if p.strip()]
    if not ids:
        raise UsageError("--questions needs at least one question id")
    return ids


def analyse(args: Any, err: Any) -> int | None:
    if args.generations:
        if args.run:
            raise UsageError("give --generations FILE or --run DIR, not both")
        if args.judge_label:
            raise UsageError("--judge-label goes with --run DIR (a submission file has no "
                             "judge verdicts)")
        return _generations(args, err)
    for flag in ("split", "questions"):
        if getattr(args, flag):
            raise UsageError(f"--{flag} goes with --generations FILE")
    if args.only_score_answered:
        raise UsageError("--only-score-answered goes with --generations FILE")
    if not args.run:
        return None
    extra = (args.lemmatizer or args.judge_label or args.raw or args.dataset_version
             or args.data_dir)
    judged = any((Path(r) / "judgements").is_dir() for r in args.run)
    if not extra and not judged:
        return None  # the generic analysis: bench.results of the records
    return _runs(args, err)

def _generations(args: Any, err: Any) -> int:
    from mindprobe.benchmarks.fanoutqa.data import (
        DEFAULT_VERSION,
        load_generations,
        load_questions,
    )
    from mindprobe.benchmarks.fanoutqa.lemma import load_lemmatizer
    from mindprobe.benchmarks.fanoutqa.normalize import Normalizer
    from mindprobe.benchmarks.fanoutqa.report import submission_results
    from mindprobe.core.results import render_results

    split = args.split or "dev"
    if split != "dev":
        raise UsageError("test-set answers are hidden: only the FanOutQA maintainers can "
                         "score a test submission (`mindprobe export fanoutqa` writes it)")
    generations = load_generations(args.generations)
    questions = load_questions(split, args.dataset_version or DEFAULT_VERSION,
                               _data_dir(args))
    if args.questions:
        wanted = _ids(args.questions)
        by_id = {q.id: q for q in questions}
        unknown = [i for i in wanted if i not in by_id]
        if unknown:
            raise DataError(f"--questions: {', '.join(unknown[:5])} "
                            f"{'is not a' if len(unknown) == 1 else 'are not'} {split} "
                            "question id(s)")
        questions = [by_id[i] for i in dict.fromkeys(wanted)]
    normalizer = Normalizer.persistent(load_lemmatizer(args.lemmatizer or "auto"))
    res = submission_results(questions, generations, normalizer=normalizer,
                             only_score_answered=args.only_score_answered,
                             source=str(args.generations), include_raw=args.raw)
    meta = res.detail.get("meta", {})
    if meta.get("n_unknown_ids_ignored"):
        res.notes.append(f"{meta['n_unknown_ids_ignored']} answer id(s) are not questions "
                         "scored here and were ignored")
    if meta.get("duplicate_ids"):
        res.notes.append(f"{len(meta['duplicate_ids'])} question(s) answered more than "
                         "once: " + ("each answer counts" if args.only_score_answered
                                     else "the later answer counts"))
    render_results(res, tables_console(args.json))
    emit_json(args.json, res.to_json())
    return 0

def _runs(args: Any, err: Any) -> int:
    from mindprobe.core.fit import score_fitting
    from mindprobe.core.output import show_run
    from mindprobe.core.results import failed_results
    from mindprobe.core.run_state import label_subset
    from mindprobe.core.store import load_run, read_judgements
    from mindprobe.registry import get_benchmark

    bench = get_benchmark("fanoutqa")
    out = tables_console(args.json)
    docs: dict[str, Any] = {}
    for path in args.run:
        run = load_run(path, "fanoutqa")
        plan, judgements, data_dir = run.plan(), read_judgements(run.dir), _data_dir(args, run)

        def rescore(rs: list[dict[str, Any]], plan: Any = plan, judgements: Any = judgements,
                    data_dir: Any = data_dir) -> Any:
            return failed_results(bench.name, rs) or bench.rescore(
                rs, plan, judgements, args.judge_label, lemmatizer=args.lemmatizer,
                include_raw=args.raw, dataset_version=args.dataset_version, data_dir=data_dir)

        res = score_fitting(bench.name, run.records, rescore)
        docs[path] = show_run(out, path, run, label_subset(res, run.state))
    emit_json(args.json, next(iter(docs.values())) if len(docs) == 1 else docs)
    return 0


def export(args: Any, err: Any) -> int:
    """A run's answers as the leaderboard's submission JSONL (+ the metadata object)."""
    from mindprobe.benchmarks.fanoutqa.data import load_questions, write_generations
    from mindprobe.core.store import load_run

    run = load_run(args.run, "fanoutqa")
    version = _same_version(args, run, "export")
    cfg = run.manifest.get("config") or {}
    split, setting = cfg.get("split", "dev"), cfg.get("setting", run.variant)
    out = Path(args.out)
    if out.is_dir():
        raise UsageError(f"--out {out} is a folder; give a file name (e.g. {setting}.jsonl)")
    check_target(out, replace=args.force, flag="--out")
    if args.metadata:  # updated in place by design (one file gathers the three settings)
        check_target(Path(args.metadata), replace=True, flag="--metadata")
    order = {q.id: i for i, q in enumerate(load_questions(split, version,
                                                          _data_dir(args, run)))}
    answered = sorted((r for r in run.records if isinstance(r.get("answer"), str)),
                      key=lambda r: order.get(r["id"], len(order)))
    unknown = [r["id"] for r in answered if r["id"] not in order]
    if unknown:
        raise DataError(f"{args.run}: record {unknown[0]!r} is not a {split} question")
    if not answered:
        raise DataError(f"{args.run} has no answered questions to export")
    out.parent.mkdir(parents=True, exist_ok=True)
    write_generations(out, ({"id": r["id"], "answer": r["answer"]} for r in answered),
                      replace=args.force, flag="--out")
    missing = len(order) - len(answered)
    doc: dict[str, Any] = {"out": str(out), "setting": setting, "split": split,
                           "dataset_version": version,
                           "n_answers": len(answered), "n_missing": missing}
    err.print(f"wrote {len(answered)} {split} answers ({setting}, {version} questions) to "
              f"{out}", highlight=False)
    if missing:
        err.print(f"[yellow]warning[/yellow]: {missing} of {len(order)} {split} questions "
                  "have no answer in this run (unfinished, limited or errored); graders "
                  "score them 0", highlight=False)
    if split == "test" and version != "jul26":
        err.print(f"note: this is a {version} run; the current leaderboard grades the 724 "
                  "jul26 test questions (upstream dropped 36146d2306ce9ca3 and reworded 48 "
                  "in 2026): answers to reworded questions may be graded against the new "
                  "wording", highlight=False)
    if args.metadata:
        doc["metadata"] = _metadata(args, run, cfg, setting, out, version)
        err.print(f"wrote the metadata object to {args.metadata}", highlight=False)
    if split == "dev":
        err.print("score it with: mindprobe analyse fanoutqa --generations "
                  f"{shlex.quote(str(out))} --dataset-version {version}", highlight=False,
                  soft_wrap=True)
    emit_json(args.json, doc)
    return 0

def _metadata(args: Any, run: Any, cfg: dict[str, Any], setting: str,
              out: Path, version: str) -> dict[str, Any]:
    from mindprobe.benchmarks.fanoutqa.metrics import SETTING_WORDS, details_of

    path = Path(args.metadata)
    meta: dict[str, Any] = {}
    if path.exists():
        try:
            meta = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise DataError(f"--metadata {path}: not a JSON object ({exc})") from None
        if not isinstance(meta, dict):
            raise DataError(f"--metadata {path}: not a JSON object")
    contexts = sorted({int(r["max_context"]) for r in run.records if r.get("max_context")})
    window = ((run.manifest.get("models") or {}).get("model") or {}).get("context_window")
    given = {"name": args.system_name, "authors": args.authors, "url": args.url,
             "citation": args.citation, "type": args.type, "details": args.details}
    defaults = {
        "name": run.model_label, "authors": "", "url": None, "citation": "",
        "type": "FOUNDATION",
        "context": contexts[-1] if contexts else window,
        "is_trained_for_function_calling": False,
    }
    for key, value in defaults.items():
        meta.setdefault(key, value)
    meta[f"{setting}_generations"] = out.name
    settings = [s for s in SETTING_WORDS if f"{s}_generations" in meta]
    ours = meta.get("details") is None or str(meta["details"]).startswith("mindprobe ")
    if ours:  # ours to keep true as settings are added; never one the user wrote
        meta["details"] = details_of(run.manifest.get("mindprobe_version"),
                                     (run.manifest.get("model") or {}).get("model"),
                                     settings)
    meta.update({k: v for k, v in given.items() if v is not None})
    if args.function_calling:
        meta["is_trained_for_function_calling"] = True
    if setting != "closedbook" and contexts:
        meta["context"] = contexts[-1]
    versions = dict(meta.get("dataset_versions") or {})
    versions[setting] = version
    meta["dataset_versions"] = versions
    if len(set(versions.values())) > 1:
        raise UsageError(f"--metadata {path} already describes {versions} generations: "
                         "one submission holds one release; write another metadata file")
    meta["dataset_version"] = version
    path.parent.mkdir(parents=True, exist_ok=True)
    write_file(path, json.dumps(meta, indent=2, ensure_ascii=False) + "\n", replace=True,
               flag="--metadata")
    return meta


def _judge_check(args: Any) -> None:
    """The common judge pass, checked against the run's own release."""
    from mindprobe.core.store import load_run

    _same_version(args, load_run(args.run, "fanoutqa"), "judge")


VERBS = [
    Verb("analyse", analyse, (
        Arg("--generations", metavar="FILE", help="score a submission file in the official "
            "format: JSONL (or a JSON list) of {\"id\", \"answer\"} objects"),
        Arg("--split", choices=["dev", "test"], help="with --generations: the questions "
            "answered (default dev; test answers are hidden)"),
        Arg("--only-score-answered", action="store_true", help="with --generations: score "
            "only the answers in the file (N = answers), not every question"),
        Arg("--questions", metavar="IDS", help="with --generations: only these question ids "
            "(comma-separated, or @FILE with one per line)"),
        Arg("--lemmatizer", metavar="BACKEND", help="auto, lookup (approximate) or a spaCy "
            "pipeline package (with --run: re-score with it)"),
        Arg("--judge-label", help="with --run: the judge whose verdicts give the GPT score "
            "(default: the run's own judge)"),
        Arg("--raw", action="store_true", help="include per-question scores in the JSON "
            "(upstream's `raw`)"),
        *_data_arguments("to score against (default: jul26 for --generations; with --run, the "
                         "run's own release)", data_dir=False),
    )),
    Verb("export", export, (
        Arg("--run", required=True, help="the run directory to export"),
        Arg("--out", required=True, metavar="FILE.jsonl",
            help="the submission file to write: one {\"id\", \"answer\"} per line"),
        Arg("--force", action="store_true", help="replace an existing --out file (the "
            "--metadata file is always updated in place)"),
        Arg("--metadata", metavar="FILE.json", help="also write (or update) the leaderboard's "
            "metadata object; exporting the three settings into one file fills each "
            "{setting}_generations entry"),
        Arg("--system-name", help="metadata name (default: the run's model label)"),
        Arg("--authors", help="metadata authors"),
        Arg("--url", help="metadata url (paper or model card)"),
        Arg("--citation", help="metadata short citation"),
        Arg("--type", choices=SYSTEM_TYPES, help="metadata type (default FOUNDATION)"),
        Arg("--details", help="metadata details (default: how mindprobe ran it)"),
        Arg("--function-calling", action="store_true", help="metadata: the model is trained "
            "for function calling"),
        Arg("--json", action="store_true", help="print only JSON on stdout"),
        *_data_arguments("of the run (must be the run's own; default: the run's)"),
    )),
    judge_verb(_data_arguments("of the run (must be the run's own; default: the run's)",
                               data_dir=False), _judge_check),
]
