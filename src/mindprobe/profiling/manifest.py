"""A profile folder's `profile.json` as outside input: read through core's one reader (a regular
file, size-capped, finite numbers), its shape checked, and every run path it lists resolved
inside the folder, so the leaderboard, B − A and a resume all read the same runs: the
profile's own, never one a hand-edited `../` points at."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mindprobe.core.inputs import InputError, inside, read_json
from mindprobe.errors import UsageError

MANIFEST = "profile.json"


@dataclass(frozen=True)
class ProfileFile:
    """A profile's manifest as read: the document, and per benchmark the run folders it lists
    that hold a run (resolved inside the profile folder)."""

    folder: Path
    doc: dict[str, Any]
    runs: dict[str, list[Path]]

    def run_dirs(self) -> list[Path]:
        return [d for dirs in self.runs.values() for d in dirs]


def read_profile(folder: Path) -> ProfileFile:
    """The profile of `folder`; one message naming the file and key for anything a profile
    cannot hold (a JSON list, a benchmark entry that is not an object, a run path outside the
    folder, NaN)."""
    folder = Path(folder).expanduser()
    path = folder / MANIFEST
    if not path.exists() and not path.is_symlink():
        raise UsageError(f"{folder} is not a profile folder (no {MANIFEST}); give the folder "
                         "`mindprobe profile` printed")
    doc = read_json(path, "the profile", "profile")
    damaged = "the file was edited or damaged; run `mindprobe profile` again to rewrite it"
    if not isinstance(doc, dict):
        raise InputError(f"{path}: not a profile (a JSON object as `mindprobe profile` writes "
                         f"it, not a {type(doc).__name__}); {damaged}")
    benches = doc.get("benchmarks", {})
    if not isinstance(benches, dict):
        raise InputError(f"{path}: 'benchmarks' is not an object; {damaged}")
    runs: dict[str, list[Path]] = {}
    for bench, entry in benches.items():
        if not isinstance(entry, dict):
            raise InputError(f"{path}: benchmarks.{bench} is not an object; {damaged}")
        listed = entry.get("runs", [])
        if not isinstance(listed, list):
            raise InputError(f"{path}: benchmarks.{bench}.runs is not a list; {damaged}")
        dirs = [inside(folder, rel, f"{path}: benchmarks.{bench}.runs") for rel in listed]
        runs[str(bench)] = [d for d in dirs if (d / "manifest.json").is_file()]
    return ProfileFile(folder, doc, runs)
