"""Where a run's MR-GSM8K items and demos come from, verified before any model is started.

Three sources: the official `MR-GSM8K.json` in the data folder (fetched with `mindprobe data
fetch mr_gsm8k`, pinned by its git blob id), a user file given with `--data-file`, and the 40
sample records of the project's shared data folder (variant `sample`). The k-shot demos ship
inside the package so few-shot runs work offline.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from mindprobe.core.data import DataFile, data_dir_for, verify
from mindprobe.core.inputs import check_regular
from mindprobe.errors import DataError, UsageError

from .dataset_file import (
    DEMOS_FILENAME,
    DEMOS_SHA256,
    LABEL_FIELD,
    OFFICIAL_FILENAME,
    OFFICIAL_GIT_BLOB,
    OFFICIAL_URL,
    check_full_counts,
    counts,
    git_blob_sha1,
    load,
    load_demos,
)

BENCH = "mr_gsm8k"
OFFICIAL_FILE = DataFile(OFFICIAL_FILENAME, url=OFFICIAL_URL, git_blob=OFFICIAL_GIT_BLOB)
# Derived fixture (shared/data/mr_gsm8k/SOURCE.md); no URL, so not part of `data fetch`.
SAMPLE_FILE = DataFile(
    "sample_records.jsonl",
    sha256="d048f155163c7d8170d8896c123c82fef05510534db7969a0ce69d267733972c",
)
QUESTION_TYPES = ("original", "POT", "reversed")


@dataclass
class Loaded:
    """Items of one run plus what identifies their source in the manifest."""

    items: list[dict[str, Any]]
    data: dict[str, Any]
    source: str


def _missing_official(path: Path) -> DataError:
    """Names what `run` and `profile` both accept: a profile takes options as -O BENCH.KEY."""
    sample = path.parent / SAMPLE_FILE.relpath
    offline = (f"the 40 sample records are such a file: {sample}" if sample.is_file() else
               f"the 40 sample records of the project's shared/data/{BENCH}/"
               f"{SAMPLE_FILE.relpath} are such a file")
    return DataError(
        f"missing data file {path}: the official MR-GSM8K.json is not shipped with mindprobe. "
        f"Get it with `mindprobe data fetch {BENCH}` (add --data-dir DIR to choose where), or "
        "give a file with the MR-GSM8K fields (a JSON array or JSONL): `--data-file PATH` "
        f"with `mindprobe run {BENCH}`, `-O {BENCH}.data_file=PATH` with `mindprobe profile`. "
        f"Offline, {offline} (or `mindprobe run {BENCH}:sample --data-dir DIR`)"
    )


def load_items(
    variant: str, data_dir: Path | None, data_file: str | None, warn: Callable[[str], None]
) -> Loaded:
    """The variant's records, hash-checked where a pin exists; counts are reported via `warn`."""
    if data_file:
        if variant not in ("full", "fresh"):
            raise UsageError(f"--data-file replaces the full file; drop ':{variant}' to use it")
        path = check_regular(data_file, "--data-file")
        items = load(path)
        raw = path.read_bytes()
        if hashlib.sha256(raw).hexdigest() == SAMPLE_FILE.sha256:
            # the 40 sample records under another name: the `sample` variant's data, said so
            return Loaded(items, {"source": "sample", "name": SAMPLE_FILE.relpath,
                                  "sha256": SAMPLE_FILE.sha256}, str(path))
        blob = git_blob_sha1(raw)
        official = blob == OFFICIAL_GIT_BLOB
        if official:
            check_full_counts(items, warn)
        data = {"source": "data-file", "name": path.name, "git_blob": blob, "official": official}
        return Loaded(items, data, str(path))
    root = data_dir_for(BENCH, data_dir)
    spec = SAMPLE_FILE if variant == "sample" else OFFICIAL_FILE
    path = root / spec.relpath
    if not path.is_file():
        if variant == "sample":
            raise DataError(
                f"missing data file {path}: the 40 sample records live in the project's "
                f"shared/data/{BENCH}/ folder; pass --data-dir pointing there"
            )
        raise _missing_official(path)
    verify(path, spec, BENCH)
    items = load(path)
    if variant in ("full", "fresh"):
        check_full_counts(items, warn)
    pin = {"sha256": spec.sha256} if spec.sha256 else {"git_blob": spec.git_blob}
    return Loaded(items, {"source": variant, "name": spec.relpath, **pin}, str(path))


#: Seed of `--sample N` when --seed is not given.
SAMPLE_SEED = 20231117


def sample_stratum(item: dict[str, Any]) -> tuple[str, str]:
    """What `--sample N` keeps the shares of: question type and the solution's label."""
    return item["question_type"], str(item[LABEL_FIELD]).lower()


def describe_counts(items: list[dict[str, Any]]) -> str:
    """One line with the label split overall and per question type (logged at every load)."""
    c = counts(items)
    per_type = "; ".join(
        f"{qt} {v['n']} ({v['correct']} correct, {v['wrong']} wrong)"
        for qt, v in c["by_question_type"].items()
    )
    lab = c["by_label"]
    return f"{c['n']} records: {lab['correct']} correct, {lab['wrong']} wrong — {per_type}"


def select_types(items: list[dict[str, Any]], spec: str | None) -> tuple[list[dict], list[str]]:
    """Keep the question types named in `--question-type a,b` (all when not given)."""
    if not spec:
        return items, []
    present = sorted({it["question_type"] for it in items})
    by_lower = {t.lower(): t for t in (*QUESTION_TYPES, *present)}
    wanted = []
    for name in (s.strip() for s in spec.split(",") if s.strip()):
        canon = by_lower.get(name.lower())
        if canon is None:
            raise UsageError(
                f"unknown --question-type {name!r}; known: {', '.join(by_lower.values())}"
            )
        wanted.append(canon)
    if not wanted:
        raise UsageError("--question-type needs at least one of original, POT, reversed")
    kept = [it for it in items if it["question_type"] in wanted]
    if not kept:
        raise UsageError(f"no records of question type {', '.join(wanted)} in the data")
    return kept, sorted(set(wanted))


def packaged_demos() -> list[dict[str, Any]]:
    """The 5 shipped k-shot demos, checked against the upstream file's sha256."""
    ref = resources.files(__package__).joinpath(DEMOS_FILENAME)
    with resources.as_file(ref) as path:
        if not path.is_file():
            raise DataError(
                f"{path}: the packaged {DEMOS_FILENAME} is missing; reinstall mindprobe"
            )
        got = hashlib.sha256(path.read_bytes()).hexdigest()
        if got != DEMOS_SHA256:
            raise DataError(
                f"{path}: sha256 {got[:12]}… is not the pinned {DEMOS_SHA256[:12]}…; the "
                "packaged demos were modified, reinstall mindprobe"
            )
        return load_demos(path)
