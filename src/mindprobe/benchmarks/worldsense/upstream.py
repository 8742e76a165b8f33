"""Upstream's model results files (spec §3.1): ``<prompting>___<modelname>___results.jsonl``
under a test set's ``results/`` folder, read (the paper's released results, or a run exported
by ``mindprobe export worldsense``) and written in upstream's compact form.

Files in the canonical one-record-per-line form take a regex fast path that accepts exactly the
lines the general JSON Lines parser (`data.parse_jsonl`) accepts.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

import numpy as np
import pandas as pd
from pandas.api.types import union_categoricals

from mindprobe.benchmarks.worldsense.data import (
    INT64_MAX,
    INT64_MIN,
    DataFileNotFound,
    parse_jsonl,
)
from mindprobe.core.data import decoded
from mindprobe.core.files import open_append, write_file
from mindprobe.core.records import append_whole
from mindprobe.errors import DataError

RESULTS_SUFFIX = "___results.jsonl"
RESULTS_COLUMNS = ("Key", "resp", "prompting", "modelname")
# One whole results line as written by upstream and write_results_file (JSON number grammar for
# Key; a string with no escapes, quotes or control characters for resp).
_CANONICAL_RESULT = re.compile(
    r'^\{"Key":(-?(?:0|[1-9][0-9]*)),"resp":"([^"\\\x00-\x1f]*)"\}\r?$', re.MULTILINE)


def results_filename(prompting: str, modelname: str) -> str:
    """``<prompting>___<modelname>___results.jsonl``, refusing labels that would not parse back."""
    for label in (prompting, modelname):
        if not label or "___" in label or "/" in label or label.endswith("_"):
            raise ValueError(f"invalid results label {label!r}: must be non-empty, without '/' "
                             "or '___' and not ending in '_'")
    return f"{prompting}___{modelname}{RESULTS_SUFFIX}"


def parse_results_filename(name: str) -> tuple[str, str]:
    """Split a results file name into (prompting, modelname); exactly 3 ``___`` parts required."""
    parts = name.split("___")
    if len(parts) != 3 or parts[2] != "results.jsonl":
        raise DataError(f"{name}: results file names must be "
                        "'<prompting>___<modelname>___results.jsonl' (exactly 3 '___' parts); "
                        "rename the file")
    return parts[0], parts[1]


def results_from_pairs(pairs: Iterable[tuple[int, str]], prompting: str, modelname: str
                       ) -> pd.DataFrame:
    """Results table from in-memory (Key, resp) pairs, e.g. a run's own responses."""
    pairs = list(pairs)
    keys = np.array([k for k, _ in pairs], dtype=np.int64)
    return _results_frame(keys, [r for _, r in pairs], prompting, modelname)


def _results_frame(keys: np.ndarray, resps: list[str], prompting: str, modelname: str
                   ) -> pd.DataFrame:
    codes = np.zeros(len(keys), dtype=np.int8)
    return pd.DataFrame({
        "Key": keys,
        "resp": pd.Series(resps, dtype="str"),
        "prompting": pd.Categorical.from_codes(codes, [prompting]),
        "modelname": pd.Categorical.from_codes(codes, [modelname]),
    }, columns=list(RESULTS_COLUMNS))


def concat_results(frames: Sequence[pd.DataFrame]) -> pd.DataFrame:
    """Stack results tables, keeping prompting/modelname categorical (cheap to group by)."""
    out = pd.concat(frames, ignore_index=True)
    for name in ("prompting", "modelname"):
        parts = [f[name].astype("category").array for f in frames]
        out[name] = union_categoricals(parts) if parts else out[name]
    return out


def _canonical_results(raw: bytes) -> tuple[np.ndarray, list[str]] | None:
    """Fast path (3x) for files whose every line is exactly ``{"Key":<int>,"resp":"<plain>"}``.

    The pattern only accepts valid JSON whose string has no escapes, so the captured text is the
    value; any other file (spacing, escapes, errors) returns None and takes the general parser.
    """
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    found = _CANONICAL_RESULT.findall(text)
    if len(found) != sum(1 for line in text.split("\n") if line.strip()):
        return None
    try:
        keys = np.array([int(key) for key, _ in found], dtype=np.int64)
    except OverflowError:
        return None
    return keys, [resp for _, resp in found]


def _canonical_plain(raw: bytes) -> tuple[list[int], list[str]] | None:
    found = _canonical_results(raw)
    return None if found is None else ([int(k) for k in found[0]], found[1])


def read_results_file(path: str | Path) -> pd.DataFrame:
    """Read one results file; ``resp`` stays the JSON string (never numeric-coerced, §3.1)."""
    path = Path(path)
    prompting, modelname = parse_results_filename(path.name)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise DataFileNotFound(f"{path}: results file not found") from None
    canonical = decoded(path, hashlib.sha256(raw).hexdigest(), "worldsense-results",
                        lambda _p: _canonical_plain(raw))
    if canonical is not None:
        keys, resps = canonical
        return _results_frame(np.asarray(keys, dtype=np.int64), resps, prompting, modelname)
    parsed = parse_jsonl([raw], path)
    keys = parsed.int64_keys()
    resps = parsed.column("resp")
    if not set(map(type, resps)) <= {str}:
        i = next(i for i, resp in enumerate(resps) if type(resp) is not str)
        raise parsed.error(i, f"'resp' must be a JSON string, got {resps[i]!r}")
    return _results_frame(keys, resps, prompting, modelname)


def find_results_files(testset_dir: str | Path) -> list[Path]:
    """All ``results/**/*___results.jsonl`` under a test-set directory, sorted by path."""
    return sorted((Path(testset_dir) / "results").rglob(f"*{RESULTS_SUFFIX}"))


def load_results(testset_dir: str | Path) -> pd.DataFrame:
    """Concatenate every results file of a test set (columns Key, resp, prompting, modelname).

    No results folder or no results file gives an empty table; two files with the same
    prompting and modelname (in different sub-folders) are refused, as they would merge.
    """
    files = find_results_files(testset_dir)
    if not files:
        return _results_frame(np.zeros(0, dtype=np.int64), [], "", "")
    seen: dict[tuple[str, str], Path] = {}
    for file in files:
        labels = parse_results_filename(file.name)
        if labels in seen:
            raise DataError(f"{file} and {seen[labels]} both hold prompting/model {labels}; "
                            "rename or remove one of them")
        seen[labels] = file
    return concat_results([read_results_file(f) for f in files])


def write_results_file(path: str | Path, rows: Iterable[tuple[int, str]],
                       append: bool = False, replace: bool = True,
                       flag: str | None = None) -> None:
    """Write (Key, resp) rows as ``{"Key":…,"resp":…}`` JSON Lines (upstream's compact form):
    whole or not at all, an existing file replaced only with `replace` (`core.files`), or
    appended to."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if not append:
        write_file(path, _result_lines(rows), replace=replace, flag=flag)
        return
    data = "".join(_result_lines(rows)).encode("utf-8")
    fd = open_append(path)
    try:
        append_whole(fd, data)
    finally:
        os.close(fd)


def _result_lines(rows: Iterable[tuple[int, str]]) -> Iterator[str]:
    for key, resp in rows:
        key = int(key)
        if not INT64_MIN <= key <= INT64_MAX or not isinstance(resp, str):
            raise ValueError(f"bad result row {(key, resp)!r}: need (int64 Key, str resp)")
        yield json.dumps({"Key": key, "resp": resp}, separators=(",", ":"),
                         ensure_ascii=False) + "\n"
