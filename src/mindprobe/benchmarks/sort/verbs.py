"""SORT verbs: `build` (Book-SORT from the nine books, or SORT from any text) and `sweep`
(every prompt config on the validation rows, then the test split with the best)."""

from __future__ import annotations

import dataclasses
import shlex
from pathlib import Path
from typing import Any

from mindprobe.benchmarks.sort import finetune as ft
from mindprobe.benchmarks.sort.options import PROMPT_NAMES
from mindprobe.core.inputs import read_input
from mindprobe.core.output import emit_json, tables_console
from mindprobe.core.verbs import Arg, Verb
from mindprobe.errors import DataError, UsageError


def _pairs(text: str | None, flag: str) -> list[tuple[int, int]] | None:
    if not text:
        return None
    try:
        return [(int(a), int(b)) for a, b in (c.split("-") for c in text.split(","))]
    except ValueError:
        raise UsageError(f"{flag} expects LE-LS pairs like 250-20,1000-50; got {text!r}") from None


def _ints(text: str | None, flag: str) -> list[int] | None:
    if not text:
        return None
    try:
        values = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise UsageError(f"{flag} expects integers like 250,1000; got {text!r}") from None
    if any(v < 1 for v in values):
        raise UsageError(f"{flag} values must be positive; got {text!r}")
    return values


def build(args: Any, err: Any) -> int:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

    from mindprobe.benchmarks.sort import build

    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {out} is a file; give a folder")
    if args.workers is not None and args.workers < 1:
        raise UsageError("--workers must be a positive number")
    overrides = dict(build.parse_seed_override(o) for o in args.seed_override or [])
    opts = {"csv": not args.no_csv, "parquet": not args.no_parquet}
    with Progress("[bold]{task.description}", BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), console=err, disable=not err.is_terminal) as bar:
        tasks: dict[tuple[int, int, int], Any] = {}

        def progress(tick: Any) -> None:
            key = (tick.book_idx, tick.excerpt_length, tick.segment_length)
            if key not in tasks:
                tasks[key] = bar.add_task(f"{key[0]} e{key[1]} s{key[2]}", total=None)
            total = tick.total or 1
            bar.update(tasks[key], completed=tick.done, total=total,
                       visible=tick.stage not in ("done", "failed"))

        if args.text:
            path = Path(args.text)
            try:
                text = read_input(path, "--text", "text", DataError).decode("utf-8-sig")
            except UnicodeDecodeError as exc:
                raise DataError(f"cannot read {path} as UTF-8 text ({exc})") from None
            summary = build.build_from_text(
                text, args.title or path.stem,
                _ints(args.excerpt_lengths, "--excerpt-lengths"),
                _ints(args.segment_lengths, "--segment-lengths"), args.seed, out_dir=out,
                progress=progress, **opts)
        else:
            summary = build.build_booksort(
                args.books, out, conditions=_pairs(args.conditions, "--conditions")
                or build.CONDITIONS, book_ids=_ints(args.book_ids, "--book-ids"),
                workers=args.workers, seed_overrides=overrides, progress=progress, **opts)
    err.print(f"built {summary.n_cells} cell(s), {summary.n_rows:,} rows in "
              f"{summary.seconds:.1f} s into {out} ({len(summary.files)} files)")
    for f in summary.failures:
        err.print(f"[yellow]failed[/yellow] {f.message}", highlight=False)
    if summary.failures:
        err.print(f"{len(summary.failures)} cell(s) failed their uniformity gate; the rest "
                  "was written")
    err.print(f"run it with: mindprobe run sort --data-dir {shlex.quote(str(out))} --model …",
              soft_wrap=True, highlight=False)
    return 1 if summary.failures else 0


def sweep(args: Any, err: Any) -> int:
    """Prompt selection (spec §4.5): validation rows per prompt, then test with the best; each
    run is what `mindprobe run` does with the command's flags."""
    from mindprobe.benchmarks.sort.sweep import RULE, choose
    from mindprobe.core.results import render_results
    from mindprobe.core.store import load_run

    options = args.bench_options
    if "prompt" in options or "split" in options:
        raise UsageError("sweep chooses --prompt and --split itself; leave them out")
    names = [n.strip() for n in args.prompts.split(",")] if args.prompts else PROMPT_NAMES
    bad = [n for n in names if n not in PROMPT_NAMES]
    if bad:
        raise UsageError(f"unknown prompt config {bad[0]!r}; known: {', '.join(PROMPT_NAMES)}")
    dry = getattr(args, "dry_run", False)

    def run(prompt: str, split: str) -> tuple[int, dict[str, Any]]:
        """One run of the sweep (its tables; the sweep prints one JSON document); a dry run
        prints each prompt's plan."""
        return args.run_benchmark({**options, "prompt": prompt, "split": split})

    rows, worst, records = [], 0, {}
    for name in names:
        code, docs = run(name, "validation")
        worst = max(worst, code)
        if dry:
            continue  # each prompt's dry run is printed; nothing ran, nothing to choose
        doc = next(iter(docs.values()))
        head = doc.get("headline") or {}
        rows.append({"prompt": name, "accuracy": head.get("value"), "n": head.get("n"),
                     "run": doc.get("run")})
        records[name] = load_run(doc["run"]).records
    if dry:
        err.print(f"then the test split with the best of {len(names)} prompt(s) ({RULE})",
                  highlight=False)
        emit_json(args.json, {"benchmark": "sort", "dry_run": True, "prompts": names,
                              "rule": RULE})
        return worst
    best, chosen = choose(rows, records)
    render_results(chosen, tables_console(args.json))
    code, docs = run(best, "test")
    emit_json(args.json, {"benchmark": "sort", "sweep": chosen.to_json()["tables"]["sweep"],
                          "best_prompt": best, "rule": RULE, "tied": chosen.detail["tied"],
                          "margin": chosen.detail.get("margin"),
                          "warnings": chosen.warnings,
                          "test": next(iter(docs.values()), None)})
    return max(worst, code)


def analyse_runs(args: Any, err: Any) -> int | None:
    """Several runs analysed together: the memory conditions side by side (in-context,
    retrieval, no-context, long-term), one table per breakdown over all of them; two runs of
    the same rows are also compared row by row (paired difference, bootstrap CI, McNemar)."""
    n = len(args.run or [])
    if getattr(args, "held_out", None) and n != 2:
        raise UsageError("--held-out applies to the paired comparison of exactly two runs "
                         "(--run BASE --run FINETUNED)")
    if n < 2:
        return None  # one run: the generic analysis
    from mindprobe.benchmarks.sort.paired import labelled_records, order_runs, paired_results
    from mindprobe.benchmarks.sort.report import results_of_records
    from mindprobe.core.results import render_results
    from mindprobe.core.store import load_run

    runs = [load_run(r, "sort") for r in args.run]
    records = [rec for run in runs for rec in labelled_records(run)]
    plan = runs[0].plan()
    plan.options = dataclasses.replace(plan.options, condition="+".join(
        sorted({str(r.plan().options.condition) for r in runs})))
    res = results_of_records(records, plan)
    doc: dict[str, Any] = {"runs": list(args.run)}
    if n == 2:
        paired = paired_results(*order_runs(runs), _ints(args.held_out, "--held-out"))
        render_results(paired, tables_console(args.json))
        doc["paired"] = paired.to_json()
    render_results(res, tables_console(args.json))
    emit_json(args.json, {**doc, **res.to_json()})
    return 0


def export(args: Any, err: Any) -> int:
    """`export sort --finetune-corpus`: the long-term-memory training texts (spec §6)."""
    from mindprobe.core.files import check_target
    from mindprobe.core.paths import check_parent
    from mindprobe.core.results import Results, render_results

    out = Path(args.out)
    if out.is_dir():
        raise UsageError(f"--out {out} is a folder; give a .jsonl file")
    check_parent(out, "--out")
    check_target(out, replace=args.force, flag="--out")
    check_target(ft.sidecar_path(out), replace=args.force, flag="--out")
    if args.chunk_words < 1:
        raise UsageError("--chunk-words must be a positive number")
    titles = {}
    for t in args.title or []:
        key, sep, text = t.partition("=")
        if not sep or not key.strip().isdigit() or not text.strip():
            raise UsageError(f"--title expects ID=TITLE like 69087='The Murder of Roger "
                             f"Ackroyd'; got {t!r}")
        titles[int(key)] = text.strip()
    opts = ft.CorpusOptions(size=args.chunk_words, rule=args.chunk_rule, tail=args.tail,
                            held_out=tuple(_ints(args.held_out, "--held-out") or ()),
                            titles=titles)
    from mindprobe.benchmarks.sort.sources import DATA_FILES
    from mindprobe.core.data import benchmark_folder

    done = ft.export_corpus(benchmark_folder("sort", args.books, DATA_FILES), out, opts,
                            args.prompt, args.chat_template, replace=args.force)
    res = Results("sort")
    import pandas as pd

    res.add_table("chunks", pd.DataFrame(done.counts), "chunks per book, ours vs the "
                  "paper's (spec §6)", index=False)
    render_results(res, tables_console(args.json))
    err.print(f"wrote {done.n_records} records to {done.path} (provenance: "
              f"{done.source_path})", soft_wrap=True, highlight=False)
    emit_json(args.json, {"out": str(done.path), "source": str(done.source_path),
                          "n_records": done.n_records, "chunks": done.counts})
    return 0


VERBS = [
    Verb("build", build, (
        Arg("--books", one_of="source", help="folder with pg/full_text/{id}-0.txt (e.g. "
            "../shared/data/sort, or after `mindprobe data fetch sort` the data cache): "
            "rebuilds Book-SORT"),
        Arg("--text", one_of="source", help="a plain-text file (book, transcript, notes): SORT "
            "from your own text"),
        Arg("--out", required=True, help="output folder (created)"),
        Arg("--title", help="with --text: the title used in prompts"),
        Arg("--conditions", help="with --books: only these LE-LS pairs, e.g. 250-20,1000-50 "
            "(default: all 10)"),
        Arg("--book-ids", help="with --books: only these Gutenberg ids"),
        Arg("--seed-override", action="append", metavar="BOOK:LE:LS=SEED",
            help="a seed for a cell whose uniformity gate fails (repeatable); the published "
            "ones (72600:250:50=8382, 72869:250:50=2605) are built in"),
        Arg("--excerpt-lengths", help="with --text: excerpt lengths in words (default: the "
            "standard ones the text can hold)"),
        Arg("--segment-lengths", help="with --text: segment lengths in words"),
        Arg("--seed", type=int, default=0, range=(0, 2**32 - 1),
            help="with --text: seed (cell seed = seed + LE + LS)"),
        Arg("--workers", type=int, range=(1, 256), help="processes (default: CPUs, at most 4)"),
        Arg("--no-csv", action="store_true", help="skip the CSV trio per condition"),
        Arg("--no-parquet", action="store_true", help="skip the Parquet splits"),
    ), required_one_of=("source",)),
    Verb("sweep", sweep, (
        Arg("--prompts", help="only these prompt configs (default: all 13)"),
    ), run_options=True),
    Verb("analyse", analyse_runs, (
        Arg("--held-out", metavar="IDS", help="with two runs: the books kept out of "
            "fine-tuning, tabulated apart as the control (default: what the long-term run "
            "recorded)"),
    )),
    Verb("export", export, (
        Arg("--finetune-corpus", action="store_true", required=True,
            help="write the fine-tuning corpus: the books in chunks, each as a chat (system + "
            "user with upstream's pre-excerpt wording)"),
        Arg("--out", required=True, help="the JSONL file to write (its provenance goes to "
            "FILE.source.json beside it)"),
        Arg("--force", action="store_true", help="replace an existing --out file (and its "
            "provenance file)"),
        Arg("--books", "--data-dir", dest="books", help="the SORT data folder: pg/full_text/ "
            "and upstream/ (default: the data cache, filled by `mindprobe data fetch sort`; or "
            "../shared/data/sort)"),
        Arg("--held-out", default=",".join(map(str, ft.DEFAULT_HELD_OUT)), metavar="IDS",
            help="Gutenberg ids kept out of the corpus, the control (default: %(default)s, as "
            "the paper)"),
        Arg("--chunk-words", type=int, default=ft.DEFAULT_SIZE, metavar="N", range=(1, 100_000),
            help="a chunk closes at the first sentence end at or after N words (default: "
            "%(default)s)"),
        Arg("--chunk-rule", choices=ft.RULES, default="sentence",
            help="sentence: chunks end at a sentence end, nothing skipped (default); upstream: "
            "the paper's notebook exactly (stops one word short of the sentence end and skips "
            "the next sentence)"),
        Arg("--tail", choices=ft.TAILS, default="keep", help="a book's last, shorter chunk: "
            "keep it (the paper), merge it into the previous one, or drop it"),
        Arg("--prompt", choices=PROMPT_NAMES, default=ft.DEFAULT_PROMPT, metavar="NAME",
            help="the upstream config (prompt_0 … prompt_12) whose system prompt and "
            "pre-excerpt wrap each chunk (default %(default)s, a 'Pb' config, as the paper)"),
        Arg("--title", action="append", metavar="ID=TITLE", help="the title used for a book "
            "(repeatable; default: its Book-SORT title, as the SORT prompts name it)"),
        Arg("--chat-template", metavar="FILE", help="also write `text`, each chat rendered "
            "with this Jinja template or a model's tokenizer_config.json"),
        Arg("--json", action="store_true", help="print JSON on stdout"),
    )),
]
