"""The small verbs: list, models, runs, data fetch and data prompts. `list` and `models` import
no benchmark."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.text import Text

from mindprobe.core.output import emit_json, tables_console
from mindprobe.core.terminal import print_table
from mindprobe.errors import DataError, UsageError
from mindprobe.registry import BENCHMARKS, get_benchmark, info


def cmd_list(args: argparse.Namespace, err: Console) -> int:
    if args.json:
        emit_json(True, {n: {"title": b.title, "variants": b.variants,
                             "default_variant": b.default_variant,
                             "variant_groups": b.variant_groups, "verbs": b.verbs}
                         for n, b in BENCHMARKS.items()})
        return 0
    rows = []
    for name, b in BENCHMARKS.items():
        names = [f"{v}{' (default)' if v == b.default_variant else ''}" for v in b.variants]
        names += [f"{g} ({', '.join(vs)})" for g, vs in b.variant_groups.items()]
        verbs = f"\nits verbs: {', '.join(b.verbs)}" if b.verbs else ""
        rows.append([name, "\n".join(names), b.title + verbs])
    print_table(tables_console(), "benchmarks", ["benchmark", "variants", "what it probes"],
                rows)
    return 0


def cmd_models(args: argparse.Namespace, err: Console) -> int:
    from mindprobe.models import MODEL_SPECS
    from mindprobe.models.embedded import EMBEDDED, find

    files = {e.spec: {"name": e.name, "file": e.file.relpath, "sha256": e.file.sha256,
                      "source": e.file.source, "licence": e.file.licence,
                      "protocol": "chat" if e.chat_template else "base",
                      "path": str(p) if (p := find(e)) else None,
                      "fetch": f"mindprobe data fetch {e.name}"}
             for e in EMBEDDED.values()}
    if args.json:
        emit_json(True, [{"spec": s, "backend": w, **({"embedded": files[s]} if s in files
                                                        else {})} for s, w in MODEL_SPECS])
        return 0
    out = tables_console()
    print_table(out, "model specs (--model)", ["spec", "backend"],
                [[spec, what] for spec, what in MODEL_SPECS])
    print_table(out, "embedded model files (pinned by sha256, kept in the data cache)",
                ["spec", "file", "source", "licence", "here"],
                [[spec, f["file"], f["source"], f["licence"],
                  f["path"] or f"not yet: fetched on first use, or `{f['fetch']}`"]
                 for spec, f in files.items()])
    return 0


def cmd_runs(args: argparse.Namespace, err: Console) -> int:
    from mindprobe.core.store import iter_runs, load_run

    root = Path(args.runs_dir)
    if not root.is_dir():
        raise UsageError(f"--runs-dir {root} " + ("is a file; give the folder runs are stored in"
                                                   if root.exists() else "does not exist"))
    rows: list[dict[str, Any]] = []
    for run_dir in iter_runs(root):
        try:
            run = load_run(run_dir)
        except DataError as exc:  # listed as unreadable, so `--json` does not hide it either
            err.print(f"[yellow]unreadable run[/yellow] {run_dir}: {exc}", highlight=False)
            rows.append({"run": str(run_dir.relative_to(root)), "benchmark": None,
                         "status": "unreadable", "items": None, "n_items": None,
                         "errors": None, "headline": None, "invalid": None,
                         "problem": str(exc)})
            continue
        summary = run.manifest.get("summary") or {}
        state = run.state  # `core.run_state`: what analyse, the report and profiles say
        label = run.manifest.get("model_label") or run.model_label
        rows.append({
            "run": str(run_dir.relative_to(root)), "benchmark": run.benchmark,
            "model": label, "name": run_name(run_dir, str(label)),
            "status": state.state, "items": state.done, "n_items": state.planned,
            "errors": state.failed, "torn": state.torn, "complete": state.complete,
            "headline": summary.get("headline"), "invalid": summary.get("invalid"),
            "failed": _all_failed(run.records),
        })
    if args.json:
        emit_json(True, rows)
        return 0
    if not rows:
        err.print(f"no runs under {root}")
        return 0
    named = any(r.get("name") for r in rows)  # `--name`: two named runs are two rows
    cells: list[list[Any]] = []
    for r in rows:
        if r["status"] == "unreadable":
            cells.append([r["run"], "–", *(["–"] if named else []), r["status"], "–", "–", "–",
                          "–"])
            continue
        bad = r.get("invalid") or {}
        score = (Text(f"failed ({r['failed']['errors']} errors)", style="red")
                 if r.get("failed") else _fmt_headline(r["headline"]))
        kinds = ", ".join(f"{k} {v}" for k, v in (bad.get("kinds") or {}).items())
        status = r["status"] + (f" ({r['torn']} torn line)" if r["torn"] else "")
        cells.append([r["run"].rsplit("___", 1)[0], str(r["model"]),
                      *([r["name"] or "–"] if named else []), status,
                      f"{r['items']}/{r['n_items'] or '?'}", str(r["errors"]),
                      (f"{bad['count']}/{bad['of']}" + (f" ({kinds})" if kinds else "")) if bad
                      else "–", score])
    print_table(tables_console(), f"runs in {root}",
                ["run", "model", *(["name"] if named else []), "status", "items", "errors",
                 "invalid", "headline"], cells)
    return 0


def run_name(run_dir: Path, label: str) -> str | None:
    """The `--name` a run was given: its folder is <prompting>___<model>__<name>."""
    tail = run_dir.name.partition("___")[2]
    return tail[len(label) + 2:] or None if tail.startswith(f"{label}__") else None


def _all_failed(records: list[dict[str, Any]]) -> dict[str, int] | None:
    """A run whose every item errored (also one recorded before summaries said so)."""
    if records and all("error" in r for r in records):
        return {"errors": len(records), "of": len(records)}
    return None


def _fmt_headline(head: Any) -> str:
    if not head:
        return "–"
    if isinstance(head, dict) and "name" in head and "value" in head:
        from mindprobe.core.results import Headline

        return Headline(**head).text()
    if isinstance(head, dict):  # runs made before headlines had a shape
        return ", ".join(f"{k} {v:.4g}" if isinstance(v, float) else f"{k} {v}"
                         for k, v in head.items())
    return str(head)


def cmd_data(args: argparse.Namespace, err: Console) -> int:
    from mindprobe.core.data import benchmark_folder, fetch

    if args.data_command == "prompts":
        return _print_prompts(info(args.benchmark).name, args)
    from mindprobe.models.embedded import EMBEDDED, ensure

    models = [b for b in args.benchmark if b in EMBEDDED]  # embedded models' files
    if models and args.data_dir:
        raise UsageError(f"--data-dir places benchmarks' data; {', '.join(models)} goes to the "
                         "data cache's models folder (MINDPROBE_DATA_DIR/models), and a copy "
                         "kept elsewhere is found through MINDPROBE_MODEL_PATH")
    for name in models:
        path = ensure(EMBEDDED[name], err)
        e = EMBEDDED[name].file
        err.print(f"[green]ready[/green] {path} ({e.source}; licence {e.licence})",
                  highlight=False)
    names = [info(b).name for b in args.benchmark if b not in EMBEDDED]
    several = len(names) > 1
    for name in names:
        files = get_benchmark(name).data_files
        if not files:
            err.print(f"{name} needs no downloaded data (its items are generated or packaged)")
            continue
        # Several benchmarks: --data-dir is a root with one folder each (as shared/data);
        # one: its folder or that root (`benchmark_folder`)
        data_dir = (Path(args.data_dir) / name if several else
                    benchmark_folder(name, args.data_dir, files)) if args.data_dir else None
        paths = fetch(name, files, data_dir, err, include_optional=args.all)
        err.print(f"[green]{len(paths)} file(s) ready[/green] for {name}")
    return 0


def _print_prompts(name: str, args: argparse.Namespace) -> int:
    """The benchmark's templates (upstream's wording) as a prompt file, on stdout."""
    from mindprobe.core.data import benchmark_folder
    from mindprobe.core.prompt_file import template_file

    bench = get_benchmark(name)
    templates = bench.prompt_templates(benchmark_folder(name, args.data_dir, bench.data_files))
    if not templates:
        raise UsageError(f"{name} has no prompt templates (--prompt-file does not apply to it)")
    sys.stdout.write(template_file(templates))
    return 0
