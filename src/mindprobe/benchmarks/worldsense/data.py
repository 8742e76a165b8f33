"""WorldSense file formats: trial sets, training sets and model results files (spec §1–§3.1).

Loading is on the hot path of every analysis, so records are parsed with the stdlib JSON scanner
line by line (exact 64-bit Keys, no dtype guessing) instead of ``pandas.read_json``.
"""

from __future__ import annotations

import bz2
import json
import os
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from pandas.api.types import union_categoricals

from mindprobe.errors import DataError

# Gold answers ship obfuscated as author first names; whole-string replacement (spec §1).
GOLD_DEOBFUSCATION: dict[str, str] = {
    "Emmanuel": "TRUE",
    "Megi": "FALSE",
    "Dieuwke": "POSSIBLE",
    "Pascal": "IMPOSSIBLE",
    "Mark": "1",
    "Youssef": "2",
    "Yoda": "3",
}

TRIAL_FIELDS: tuple[str, ...] = (
    "Key", "problemname", "tuple_ID", "text", "expectedresp", "span", "descr", "query",
    "objects", "problemsize", "skin", "qskin", "complexity", "query_len", "goldresp_obfusc",
)

# Display orderings of spec §3.6; labels not listed sort after these, ascending.
PROBLEM_ORDER: tuple[str, ...] = (
    "Infer.trivial", "Infer.normal", "Consist.trivial", "Consist.normal",
    "Compl.trivial", "Compl.normal", "Infer.extrema", "Infer.parallel",
)
PROMPTING_ORDER: tuple[str, ...] = (
    "basic", "direct", "clarified", "COT", "incontext_IID", "incontext_DIFFERENTCAT",
)
MODEL_ORDER: tuple[str, ...] = ("GPT3.5", "GPT4", "Llama2-chat", "Llama2-FT+100k", "Llama2-FT+1M")

SCALAR_SKINS = frozenset(
    {"old/young", "tall/short", "faster/slower", "happier/sadder", "rich/poor", "stronger/weaker"}
)
TRAINING_DOMAIN_SKINS = frozenset(
    {"old/young", "tall/short", "faster/slower", "happier/sadder",
     "trips", "activities", "conversation", "race"}
)

TRIALS_FILENAME = "trials.jsonl.bz2"
RESULTS_SUFFIX = "___results.jsonl"
RESULTS_COLUMNS = ("Key", "resp", "prompting", "modelname")
_INT64 = np.iinfo(np.int64)
_decode = json.JSONDecoder().raw_decode


class DataFileNotFound(DataError, FileNotFoundError):
    """Missing input: a FileNotFoundError (spec §2) that the CLI also reports as a DataError."""


# --------------------------------------------------------------------------- JSON Lines parsing

def _read_bz2_text(path: Path) -> str:
    try:
        return bz2.decompress(path.read_bytes()).decode("utf-8")
    except FileNotFoundError:
        raise DataFileNotFound(f"{path}: file not found; check the path or re-fetch the data") from None
    except (OSError, ValueError, EOFError) as exc:
        raise DataError(f"{path}: not a valid bzip2-compressed UTF-8 file ({exc}); "
                        "re-fetch it and verify its sha256") from exc


def _parse_lines(text: str, path: Path) -> list[Any]:
    """Parse JSON Lines, skipping blank lines; a bad line raises DataError naming file:line."""
    lines = [line.strip() for line in text.split("\n")]
    lines = [line for line in lines if line]
    try:
        parsed = list(map(_decode, lines))
    except ValueError:
        parsed = None
    if parsed is not None and all(end == len(line) for (_, end), line in zip(parsed, lines, strict=True)):
        return [obj for obj, _ in parsed]
    for lineno, raw in enumerate(text.split("\n"), start=1):
        line = raw.strip()
        if not line:
            continue
        try:
            end = _decode(line)[1]
        except ValueError as exc:
            problem = str(exc)
        else:
            if end == len(line):
                continue
            problem = f"extra data after the JSON value at column {end + 1}"
        raise DataError(f"{path}:{lineno}: malformed JSON line ({problem}); "
                        "fix or delete that line")
    raise AssertionError("unreachable: the fast parse failed but no line is bad")


def _line_numbers(text: str) -> list[int]:
    """1-based file line number of each non-blank line, for error messages only."""
    return [i for i, line in enumerate(text.split("\n"), start=1) if line.strip()]


def _bad_record(path: Path, text: str, index: int, problem: str) -> DataError:
    return DataError(f"{path}:{_line_numbers(text)[index]}: {problem}; fix or delete that line")


def _int64_keys(keys: list[Any], path: Path, text: str) -> np.ndarray:
    for i, key in enumerate(keys):
        if type(key) is not int or not _INT64.min <= key <= _INT64.max:
            raise _bad_record(path, text, i, f"'Key' must be a signed 64-bit integer, got {key!r}")
    return np.array(keys, dtype=np.int64)


def _column(records: list[dict[str, Any]], field: str, path: Path, text: str) -> list[Any]:
    try:
        return [rec[field] for rec in records]
    except (KeyError, TypeError):
        for i, rec in enumerate(records):
            if not isinstance(rec, dict) or field not in rec:
                raise _bad_record(path, text, i,
                                  f"record is not an object with field {field!r}") from None
        raise


# --------------------------------------------------------------------------- trial sets

def load_testset(dir: str | Path = "data/worldsense/test_set",
                 add_extra_fields: bool = False) -> pd.DataFrame:
    """Load ``dir/trials.jsonl.bz2`` as the spec §2 table (15 fields + EXPNAME + EXP_i)."""
    directory = Path(dir)
    if not directory.is_dir():
        raise DataFileNotFound(f"{directory}: test-set directory not found; pass the folder that "
                               f"holds {TRIALS_FILENAME}")
    path = directory / TRIALS_FILENAME
    text = _read_bz2_text(path)
    records = _parse_lines(text, path)
    columns: dict[str, Any] = {}
    for field in TRIAL_FIELDS:
        values = _column(records, field, path, text)
        if field == "Key":
            columns[field] = _int64_keys(values, path, text)
        elif field == "goldresp_obfusc":
            columns["goldresp"] = [GOLD_DEOBFUSCATION.get(v, v) for v in values]
        else:
            columns[field] = values
    df = pd.DataFrame(columns)
    df["EXPNAME"] = os.path.basename(os.path.abspath(directory))
    df["EXP_i"] = np.arange(len(df), dtype=np.int64)
    if add_extra_fields:
        add_trial_extra_fields(df)
    return df


def add_trial_extra_fields(df: pd.DataFrame) -> pd.DataFrame:
    """Add bintern, globcomplex, domain and intraining in place (spec §2); returns ``df``."""
    query_len = df["query_len"].to_numpy()
    df["bintern"] = np.where(query_len == 2, "bin", "tern")
    digit = df["complexity"].str.rsplit("_", n=1).str[-1].astype(np.int64).to_numpy()
    df["globcomplex"] = np.minimum(2, digit + query_len - 2)
    skin = df["skin"]
    spatial = skin.str.startswith("obj_") | skin.str.startswith("people_")
    df["domain"] = np.where(skin.isin(SCALAR_SKINS), "scalar",
                            np.where(spatial, "spatial", "temporal"))
    df["intraining"] = np.where(skin.isin(TRAINING_DOMAIN_SKINS), "ind", "ood")
    return df


def load_trainset(file: str | Path = "data/worldsense/training_set/trials_100k.jsonl.bz2"
                  ) -> pd.DataFrame:
    """Load a chat-format training file: columns ``dialog_history`` and ``target_message``."""
    path = Path(file)
    if not path.is_file():
        raise DataFileNotFound(f"{path}: training file not found; check the path")
    text = _read_bz2_text(path)
    records = _parse_lines(text, path)
    return pd.DataFrame({
        "dialog_history": _column(records, "dialog_history", path, text),
        "target_message": _column(records, "target_message", path, text),
    })


# --------------------------------------------------------------------------- results files

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


def read_results_file(path: str | Path) -> pd.DataFrame:
    """Read one results file; ``resp`` stays the JSON string (never numeric-coerced, §3.1)."""
    path = Path(path)
    prompting, modelname = parse_results_filename(path.name)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise DataFileNotFound(f"{path}: results file not found") from None
    except UnicodeDecodeError as exc:
        raise DataError(f"{path}: not UTF-8 text ({exc}); fix or regenerate the file") from exc
    records = _parse_lines(text, path)
    keys = _int64_keys(_column(records, "Key", path, text), path, text)
    resps = _column(records, "resp", path, text)
    for i, resp in enumerate(resps):
        if type(resp) is not str:
            raise _bad_record(path, text, i, f"'resp' must be a JSON string, got {resp!r}")
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
                       append: bool = False) -> None:
    """Write (Key, resp) rows as ``{"Key":…,"resp":…}`` JSON Lines (upstream's compact form)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a" if append else "w", encoding="utf-8") as fh:
        fh.writelines(_result_lines(rows))


def _result_lines(rows: Iterable[tuple[int, str]]) -> Iterator[str]:
    for key, resp in rows:
        key = int(key)
        if not _INT64.min <= key <= _INT64.max or not isinstance(resp, str):
            raise ValueError(f"bad result row {(key, resp)!r}: need (int64 Key, str resp)")
        yield json.dumps({"Key": key, "resp": resp}, separators=(",", ":"),
                         ensure_ascii=False) + "\n"
