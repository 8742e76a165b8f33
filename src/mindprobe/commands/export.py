"""`mindprobe export --format F --run DIR …` for any run, whatever its benchmark: an Inspect log
(inspect), one row per record (parquet, hf), or the run or profile logged to a tracker (mlflow,
wandb). The benchmark's own upstream format stays `mindprobe export BENCH`."""

from __future__ import annotations

import argparse
import textwrap
import time
from pathlib import Path
from typing import TYPE_CHECKING

from mindprobe.commands.run_options import add_verbose
from mindprobe.errors import UsageError

if TYPE_CHECKING:
    from rich.console import Console

#: `export --format F` for any run, whatever its benchmark: F -> what --out is.
GENERIC_FORMATS = {
    "inspect": "the .eval file to write",
    "parquet": "the .parquet file to write",
    "hf": "the folder to save the Hugging Face dataset in (save_to_disk)",
    "mlflow": None,
    "wandb": None,
}


def generic_format(argv: list[str]) -> str | None:
    """`export --format F` (or --format=F) where F exports any run (not the benchmark's own):
    read from the command line before parsing, since F decides which flags there are."""
    for i, a in enumerate(argv):
        value = a.split("=", 1)[1] if a.startswith("--format=") else (
            argv[i + 1] if a == "--format" and i + 1 < len(argv) else None)
        if value in GENERIC_FORMATS:
            return value
    return None


def add_generic_export(v: argparse.ArgumentParser, fmt: str) -> None:
    """The flags of `export --format F` for any run (F in GENERIC_FORMATS)."""
    tracker = GENERIC_FORMATS[fmt] is None
    v.add_argument("--run", required=True, help="the run directory to export" + (
        " (or a profile folder: one parent run, one nested run per benchmark)" if tracker
        else ""))
    if tracker:
        v.add_argument("--to", metavar="URI" if fmt == "mlflow" else "PROJECT",
                       help="the MLflow tracking URI (default: MLFLOW_TRACKING_URI, else "
                       "MLflow's default)" if fmt == "mlflow" else "the W&B project (default "
                       "mindprobe; WANDB_MODE=offline writes files for `wandb sync`)")
        add_verbose(v)
        return
    v.add_argument("--out", required=fmt != "hf", help=GENERIC_FORMATS[fmt])
    v.add_argument("--force", action="store_true", help="replace an existing --out (the "
                   "previous one stays whole until the new one is complete)")
    if fmt == "hf":
        v.add_argument("--push", metavar="REPO", help="also push the dataset to the Hugging "
                       "Face Hub as REPO (needs HF_TOKEN)")


def generic_export_epilog() -> str:
    """What `export --format F` takes for any run, format by format (read from the parsers
    `add_generic_export` builds): `export --help` lists what its errors point to."""
    lines = ["any run, by --format (`mindprobe export --format F --help` for each):"]
    for fmt in GENERIC_FORMATS:
        p = argparse.ArgumentParser(add_help=False)
        add_generic_export(p, fmt)
        flags = []
        for a in p._actions:
            flag = a.option_strings[0] + ("" if a.nargs == 0 else
                                          f" {a.metavar or a.dest.upper()}")
            flags.append(flag if a.required else f"[{flag}]")
        lines += textwrap.wrap(f"--format {fmt}: {' '.join(flags)}", 78,
                               initial_indent="  ", subsequent_indent="      ")
    return "\n".join(lines)



def cmd_export_any(args: argparse.Namespace, err: Console) -> int:
    from mindprobe.core.store import MANIFEST

    run = Path(args.run)
    if args.format in ("mlflow", "wandb"):
        return _export_tracker(args, run, err)
    if not (run / MANIFEST).is_file():
        raise UsageError(f"--run {run}: not a run directory (no {MANIFEST})")
    out = Path(args.out) if args.out else None
    if args.force and out is None:
        raise UsageError("--force replaces an existing --out: give --out too (a push to the "
                         "Hub replaces nothing here)")
    if out is not None:
        from mindprobe.core.files import check_target
        from mindprobe.core.paths import check_parent

        if args.format != "hf" and out.is_dir():
            raise UsageError(f"--out {out} is a directory; give a file name such as "
                             f"{out}/run.{'eval' if args.format == 'inspect' else 'parquet'}")
        check_parent(out, "--out")
        # refused before any work: an --out inside a run folder, or one there without --force
        check_target(out, replace=args.force, flag="--out", folder=args.format == "hf")
    if args.format == "inspect":
        from mindprobe.report.inspect_log import export_inspect

        n, path = export_inspect(run, out, replace=args.force)
        err.print(f"wrote {n} sample(s) to {path}; browse with: inspect view --log-dir "
                  f"{path.parent}", soft_wrap=True, highlight=False)
        return 0
    return _export_rows(args, run, out, err)


def _export_rows(args: argparse.Namespace, run: Path, out: Path | None, err: Console) -> int:
    from mindprobe.core.store import load_run
    from mindprobe.tracking.tables import write_hf, write_parquet

    if args.format == "hf" and out is None and not args.push:
        raise UsageError("--format hf needs --out FOLDER, --push REPO, or both")
    t0 = time.perf_counter()
    stored = load_run(run)
    meta = {k: stored.manifest.get(k) for k in ("benchmark", "variant", "prompting",
                                                "model_label", "mindprobe_version")}
    if args.format == "parquet":
        n = write_parquet(stored.records, meta, out, replace=args.force)
    else:
        n = write_hf(stored.records, meta, out, args.push, replace=args.force)
    where = " and ".join(str(x) for x in (out, args.format == "hf" and args.push) if x)
    err.print(f"wrote {n} record(s) to {where} in {time.perf_counter() - t0:.1f} s",
              soft_wrap=True, highlight=False)
    return 0


def _export_tracker(args: argparse.Namespace, run: Path, err: Console) -> int:
    from rich.markup import escape

    from mindprobe.tracking import check_target, log_profile, log_run, parse_target

    target = parse_target(args.format + (f":{args.to}" if args.to else ""))
    problems: list[str] = []

    def warn(message: str) -> None:
        problems.append(message)
        err.print(f"[yellow]warning[/yellow]: {escape(message)}", highlight=False, emoji=False)

    profile = (run / "profile.json").is_file()
    if not profile and not (run / "manifest.json").is_file():
        raise UsageError(f"--run {run}: neither a run directory (manifest.json) nor a profile "
                         "folder (profile.json)")
    check_target(target)
    verbose = getattr(args, "verbose", False)
    if profile:
        log_profile(run, [target], warn, verbose)
    else:
        log_run(run, [target], warn, verbose=verbose)
    if problems:
        return 2
    err.print(f"logged {run} to {target.key}", soft_wrap=True, highlight=False)
    return 0
