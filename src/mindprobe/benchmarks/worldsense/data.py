"""WorldSense file formats: trial sets and training sets (spec §1–§2); upstream's model results
files are `upstream`.

Loading is on the hot path of every analysis, so instead of ``pandas.read_json`` (which guesses
dtypes: all-numeric answers became ints upstream) the bz2 stream is decompressed in pieces and
parsed line by line with the stdlib scanner; Keys stay exact int64, answers stay strings, and a
bad line is reported as ``file:line``.
"""

from __future__ import annotations

import bz2
import hashlib
import json
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import orjson

from mindprobe.core.data import decoded, is_bz2
from mindprobe.errors import DataError

if TYPE_CHECKING:  # imported where a table is made: the plan's modules import this one
    import pandas as pd

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


def deobfuscate(token: str) -> str:
    """Official de-obfuscation: whole-string replacement, anything else left unchanged (here,
    not in `generate.py`, so a run of a released test set imports no trial generator)."""
    return GOLD_DEOBFUSCATION.get(token, token)


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
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
_decode = json.JSONDecoder().raw_decode


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
            if type(key) is not int or not INT64_MIN <= key <= INT64_MAX:
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


def parse_jsonl(blocks: Iterable[bytes], path: Path) -> _Records:
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
    import pandas as pd

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
    parsed = parse_jsonl(_bz2_blocks(path), path)
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
    import pandas as pd

    path = Path(file)
    if not path.is_file():
        raise DataFileNotFound(f"{path}: training file not found; check the path")
    parsed = parse_jsonl(_bz2_blocks(path), path)
    return pd.DataFrame({
        "dialog_history": parsed.column("dialog_history"),
        "target_message": parsed.column("target_message"),
    })
