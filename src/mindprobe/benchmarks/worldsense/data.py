"""WorldSense file formats: trial sets, training sets and model results files (spec §1–§3.1).

Loading is on the hot path of every analysis, so instead of ``pandas.read_json`` (which guesses
dtypes: all-numeric answers became ints upstream) the bz2 stream is decompressed in pieces and
parsed line by line with the stdlib scanner; Keys stay exact int64, answers stay strings, and a
bad line is reported as ``file:line``. Results files in the canonical one-record-per-line form
take a regex fast path that accepts exactly the same lines.
"""

from __future__ import annotations

import bz2
import hashlib
import json
import os
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import pandas as pd
from pandas.api.types import union_categoricals

from mindprobe.core.data import decoded, is_bz2
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
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
_decode = json.JSONDecoder().raw_decode
# One whole results line as written by upstream and write_results_file (JSON number grammar for
# Key; a string with no escapes, quotes or control characters for resp).
_CANONICAL_RESULT = re.compile(
    r'^\{"Key":(-?(?:0|[1-9][0-9]*)),"resp":"([^"\\\x00-\x1f]*)"\}\r?$', re.MULTILINE)


class DataFileNotFound(DataError, FileNotFoundError):
    """Missing input: a FileNotFoundError (spec §2) that the CLI also reports as a DataError."""


# --------------------------------------------------------------------------- JSON Lines parsing

def _bz2_blocks(path: Path, read_size: int = 1 << 18) -> Iterator[bytes]:
    """Decompressed pieces of a (possibly multi-stream) bzip2 file, streamed to bound memory
    (a plain JSON Lines file, see `is_bz2`, is passed through as it is)."""
    try:
        plain = not is_bz2(path)
        with path.open("rb") as fh:
            while plain and (chunk := fh.read(read_size)):
                yield chunk
            if plain:
                return
            decompressor, fed = bz2.BZ2Decompressor(), False
            while chunk := fh.read(read_size):
                while chunk:
                    fed = True
                    yield decompressor.decompress(chunk)
                    chunk = b""
                    if decompressor.eof:
                        chunk = decompressor.unused_data
                        decompressor, fed = bz2.BZ2Decompressor(), False
            if fed:
                raise EOFError("compressed data ended before the end-of-stream marker")
    except FileNotFoundError:
        raise DataFileNotFound(f"{path}: file not found; check the path or re-fetch the data") from None
    except (OSError, EOFError) as exc:
        raise DataError(f"{path}: not a valid bzip2 file ({exc}); "
                        "re-fetch it and verify its sha256") from exc


@dataclass
class _Records:
    """Parsed JSON Lines with each record's 1-based line number, for precise error messages."""

    path: Path
    records: list[Any] = field(default_factory=list)
    linenos: list[int] = field(default_factory=list)

    def error(self, index: int, problem: str) -> DataError:
        return DataError(f"{self.path}:{self.linenos[index]}: {problem}; fix or delete that line")

    def column(self, name: str) -> list[Any]:
        try:
            return [rec[name] for rec in self.records]
        except (KeyError, TypeError):
            for i, rec in enumerate(self.records):
                if not isinstance(rec, dict) or name not in rec:
                    raise self.error(i, f"record is not an object with field {name!r}") from None
            raise

    def int64_keys(self) -> np.ndarray:
        keys = self.column("Key")
        if set(map(type, keys)) <= {int}:  # bool is a subclass of int: refused here
            try:
                return np.array(keys, dtype=np.int64)
            except OverflowError:
                pass
        for i, key in enumerate(keys):
            if type(key) is not int or not _INT64_MIN <= key <= _INT64_MAX:
                raise self.error(i, f"'Key' must be a signed 64-bit integer, got {key!r}")
        raise AssertionError("unreachable: some Key was rejected above")

    def add_lines(self, lines: list[str], first_lineno: int) -> None:
        """Parse one batch of lines (blank ones skipped); the first bad line raises DataError."""
        stripped = [line.strip() for line in lines]
        numbers: Iterable[int] = range(first_lineno, first_lineno + len(lines))
        if not all(stripped):
            numbers = [n for n, line in zip(numbers, stripped, strict=True) if line]
            stripped = [line for line in stripped if line]
        try:  # fast path: orjson parses the 87k-trial test set ~3x faster than json
            fast = list(map(orjson.loads, stripped))
        except orjson.JSONDecodeError:
            fast = None  # bad line, or an int beyond 64 bits: the stdlib path diagnoses it
        if fast is not None:
            self.records.extend(fast)
            self.linenos.extend(numbers)
            return
        try:
            parsed = list(map(_decode, stripped))
        except ValueError:
            parsed = []
        if len(parsed) == len(stripped) and all(
                end == len(line) for (_, end), line in zip(parsed, stripped, strict=True)):
            self.records.extend(obj for obj, _ in parsed)
            self.linenos.extend(numbers)
            return
        for lineno, line in zip(numbers, stripped, strict=True):
            try:
                end = _decode(line)[1]
            except ValueError as exc:
                problem = str(exc)
            else:
                if end == len(line):
                    continue
                problem = f"extra data after the JSON value at column {end + 1}"
            raise DataError(f"{self.path}:{lineno}: malformed JSON line ({problem}); "
                            "fix or delete that line")


def _parse_jsonl(blocks: Iterable[bytes], path: Path) -> _Records:
    """Parse UTF-8 JSON Lines arriving in arbitrary byte blocks (split lines are re-joined)."""
    out = _Records(path)
    pending, lineno = b"", 1
    try:
        for block in blocks:
            data = pending + block
            cut = data.rfind(b"\n")
            if cut < 0:
                pending = data
                continue
            pending = data[cut + 1:]
            lines = data[:cut].decode("utf-8").split("\n")
            out.add_lines(lines, lineno)
            lineno += len(lines)
        out.add_lines([pending.decode("utf-8")], lineno)
    except UnicodeDecodeError as exc:
        raise DataError(f"{path}: not UTF-8 text near line {lineno} ({exc}); "
                        "re-fetch or regenerate the file") from exc
    return out


# --------------------------------------------------------------------------- trial sets

#: The long text fields, which scoring never reads (`load_testset(..., texts=False)`).
TEXT_FIELDS = ("text", "span", "descr", "query", "objects")


def load_testset(dir: str | Path = "data/worldsense/test_set",
                 add_extra_fields: bool = False, texts: bool = True) -> pd.DataFrame:
    """Load ``dir/trials.jsonl.bz2`` as the spec §2 table (15 fields + EXPNAME + EXP_i)."""
    directory = Path(dir)
    if not directory.is_dir():
        raise DataFileNotFound(f"{directory}: test-set directory not found; pass the folder that "
                               f"holds {TRIALS_FILENAME}")
    path = directory / TRIALS_FILENAME
    if not path.is_file():
        raise DataFileNotFound(f"{path}: trials file not found")
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    parsed: dict[str, Any] = {}

    def part(wanted: bool) -> Any:
        def decode(p: Path) -> dict[str, list[Any]]:
            if not parsed:
                parsed.update(_trial_columns(p))
            return {k: v for k, v in parsed.items() if (k in TEXT_FIELDS) == wanted}
        return decode

    columns = decoded(path, digest, "worldsense-testset-scoring", part(False))
    if texts:
        columns.update(decoded(path, digest, "worldsense-testset-texts", part(True)))
    columns["Key"] = np.asarray(columns["Key"], dtype=np.int64)
    order = [c for c in ("Key", *TRIAL_FIELDS, "goldresp") if c in columns]
    df = pd.DataFrame({c: columns[c] for c in dict.fromkeys(order)})
    df["EXPNAME"] = os.path.basename(os.path.abspath(directory))
    df["EXP_i"] = np.arange(len(df), dtype=np.int64)
    if add_extra_fields:
        add_trial_extra_fields(df)
    return df


def _trial_columns(path: Path) -> dict[str, list[Any]]:
    """The trials file as plain columns (cached decoded by the file's sha256: see
    `mindprobe.core.data.decoded`), gold answers de-obfuscated."""
    parsed = _parse_jsonl(_bz2_blocks(path), path)
    columns: dict[str, Any] = {}
    for name in TRIAL_FIELDS:
        if name == "Key":
            columns[name] = [int(k) for k in parsed.int64_keys()]
        elif name == "goldresp_obfusc":
            columns["goldresp"] = [GOLD_DEOBFUSCATION.get(v, v) for v in parsed.column(name)]
        else:
            columns[name] = list(parsed.column(name))
    return columns


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
    parsed = _parse_jsonl(_bz2_blocks(path), path)
    return pd.DataFrame({
        "dialog_history": parsed.column("dialog_history"),
        "target_message": parsed.column("target_message"),
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
    parsed = _parse_jsonl([raw], path)
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
                       append: bool = False) -> None:
    """Write (Key, resp) rows as ``{"Key":…,"resp":…}`` JSON Lines (upstream's compact form)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a" if append else "w", encoding="utf-8") as fh:
        fh.writelines(_result_lines(rows))


def _result_lines(rows: Iterable[tuple[int, str]]) -> Iterator[str]:
    for key, resp in rows:
        key = int(key)
        if not _INT64_MIN <= key <= _INT64_MAX or not isinstance(resp, str):
            raise ValueError(f"bad result row {(key, resp)!r}: need (int64 Key, str resp)")
        yield json.dumps({"Key": key, "resp": resp}, separators=(",", ":"),
                         ensure_ascii=False) + "\n"
