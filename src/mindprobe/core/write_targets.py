"""What the one writer (`core.files`) may write, decided before any work is done: never into a
run folder (a folder holding `manifest.json` with `records.jsonl` or `.lock`, its
`judgements/` included) nor over a profile's `profile.json`, never over a folder that holds
runs or more than an export makes, and an existing target only when the command says so."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from mindprobe.errors import UsageError

#: The files that make a folder a run folder (with `manifest.json`, one of these).
RUN_MARKERS = ("records.jsonl", ".lock")
MANIFEST = "manifest.json"
#: A profile's own file (`mindprobe profile`), beside its `runs/`.
PROFILE = "profile.json"


def _is_run(folder: Path) -> bool:
    return (folder / MANIFEST).is_file() and any(os.path.lexists(folder / m)
                                                 for m in RUN_MARKERS)


def run_folder_of(path: Path) -> Path | None:
    """The run folder `path` is, or would be written into (its folder or the one above, for a
    run's `judgements/`); None when it is none of these."""
    path = Path(os.path.abspath(path))
    parent = path.parent
    with contextlib.suppress(OSError):
        parent = parent.resolve()
    for folder in (path, parent, parent.parent):
        if not folder.is_symlink() and _is_run(folder):
            return folder
    return None


#: The most entries a folder may hold for an export to replace it (a dataset has a few).
REPLACEABLE_FOLDER_ENTRIES = 10_000


def _holds_runs(folder: Path) -> str | None:
    """Why `folder` is not one an export may replace: a run folder or profile (profile.json)
    inside it, or more entries than any export makes (`--force` on a home folder)."""
    seen = 0
    for root, dirs, names in os.walk(folder):
        if PROFILE in names or (MANIFEST in names and any(m in names or m in dirs
                                                           for m in RUN_MARKERS)):
            return f"it holds mindprobe runs ({root})"
        seen += len(dirs) + len(names)
        if seen > REPLACEABLE_FOLDER_ENTRIES:
            return f"it holds more than {REPLACEABLE_FOLDER_ENTRIES:,} files, more than an export"
    return None


def _label(path: Path, flag: str | None) -> str:
    return f"{flag} {path}" if flag else str(path)


def check_target(path: Path, *, replace: bool = False, flag: str | None = None,
                 run_file: bool = False, folder: bool = False) -> None:
    """Refuse, before any work is done, what `write_file` / `write_folder` would refuse: a
    target inside a run folder, an existing one without `replace`, a folder where a file goes
    (or a file where a folder goes)."""
    path = Path(path)
    if not run_file:
        run = run_folder_of(path)
        if run is not None:
            raise UsageError(f"{_label(path, flag)} is inside the run folder {run}, whose files "
                             "are the run's own (records, manifest, lock): choose a path "
                             "outside it")
        if path.name == PROFILE and os.path.lexists(path):
            raise UsageError(f"{_label(path, flag)} is a profile's own file: choose another "
                             "path")
    if not os.path.lexists(path):
        return
    real_folder = os.path.isdir(path) and not os.path.islink(path)
    if real_folder and not folder:
        raise UsageError(f"{_label(path, flag)} is a folder; give a file name")
    if real_folder and not run_file and (why := _holds_runs(path)) is not None:
        raise UsageError(f"{_label(path, flag)} is not replaced: {why}; choose a new folder")
    if not replace:
        raise UsageError(f"{_label(path, flag)} already exists; pass --force to replace it "
                         "(or choose another name)")
