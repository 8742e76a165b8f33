"""MR-GSM8K data: tolerant loading of the official file (JSON array) or JSONL copies.

The loader validates only what scoring relies on, so a bad record fails at load time with its
file and line instead of as a silent miss later (spec section 2).
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from mindprobe.errors import DataError

log = logging.getLogger(__name__)

# Provenance of the official file (shared/data/mr_gsm8k/SOURCE.md).
UPSTREAM_COMMIT = "3f666d60dd5f2fe31d619c528076bac54f4a13b7"
OFFICIAL_FILENAME = "MR-GSM8K.json"
OFFICIAL_URL = (
    "https://raw.githubusercontent.com/dvlab-research/MR-GSM8K/"
    f"{UPSTREAM_COMMIT}/dataset/{OFFICIAL_FILENAME}"
)
OFFICIAL_URL_LATEST = (
    f"https://raw.githubusercontent.com/dvlab-research/MR-GSM8K/main/dataset/{OFFICIAL_FILENAME}"
)
# Git blob id of dataset/MR-GSM8K.json; its sha256 is unknown, so this is the only pin we have.
OFFICIAL_GIT_BLOB = "c373b203c9cf66081ce2b782bfdec22aecb51226"
DEMOS_FILENAME = "k-shot-demos.json"
DEMOS_GIT_BLOB = "75114add55f14ec8275b1641c9740f7decb25b2f"
DEMOS_SHA256 = "c2553911aa2210463e132dae0474395d1aef286d368373ab335ac033092d3381"

# Label counts of the full file; upstream hard-codes them as metric denominators.
FULL_N_CORRECT = 1427
FULL_N_WRONG = 1573

LABELS = ("correct", "wrong")
STEP_FIELD = "model_output_solution_first_error_step"
LABEL_FIELD = "model_output_solution_correctness"

# Fields scoring and prompting need; each must be present with an accepted type.
REQUIRED_FIELDS = (
    "uuid",
    "question",
    "model_output_steps",
    LABEL_FIELD,
    STEP_FIELD,
    "model_output_solution_first_error_reason",
    "question_type",
)
# Dataset fields kept when present but never used by the metrics.
OPTIONAL_FIELDS = (
    "ground_truth_solution",
    "ground_truth_answer",
    "model_output_answer_correctness",
)
DATASET_FIELDS = REQUIRED_FIELDS + OPTIONAL_FIELDS

_FETCH_HINT = f"download {OFFICIAL_URL} and pass its local path (verify it with `git hash-object`)"
_WS = re.compile(r"[ \t\n\r]*")


def git_blob_sha1(data: bytes) -> str:
    """Git's blob id of `data`: the only pin SOURCE.md can give for the official file."""
    header = f"blob {len(data)}\0".encode()
    return hashlib.sha1(header + data, usedforsecurity=False).hexdigest()


def verify_git_blob(path: str | Path, expected: str = OFFICIAL_GIT_BLOB) -> None:
    """Raise DataError unless the file's git blob id is `expected` (a corrupt or other version)."""
    path = Path(path)
    got = git_blob_sha1(_read_bytes(path))
    if got != expected:
        raise DataError(
            f"{path}: git blob id {got} does not match the pinned {expected}; "
            f"the file is corrupt or a different version. Fix: {_FETCH_HINT}"
        )


def _read_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise DataError(f"{path}: file not found. Fix: {_FETCH_HINT}") from None
    except OSError as exc:
        raise DataError(f"{path}: cannot read ({exc.strerror}). Fix: {_FETCH_HINT}") from None


def _read_text(path: Path) -> str:
    try:
        return _read_bytes(path).decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DataError(f"{path}: not UTF-8 text (byte {exc.start}). Fix: {_FETCH_HINT}") from None


def _iter_array(text: str, path: Path) -> Iterator[tuple[int, Any]]:
    """Yield (line, element) of a top-level JSON array, so errors can name the element's line."""
    decoder = json.JSONDecoder()
    idx = _WS.match(text, 0).end() + 1  # skip "["
    idx = _WS.match(text, idx).end()
    line, last = 1, 0
    if text.startswith("]", idx):
        idx = _WS.match(text, idx + 1).end()
    else:
        while True:
            line += text.count("\n", last, idx)
            last = idx
            try:
                obj, end = decoder.raw_decode(text, idx)
            except json.JSONDecodeError as exc:
                raise DataError(
                    f"{path}:{exc.lineno}: invalid JSON ({exc.msg}). Fix: repair the file or "
                    "download it again"
                ) from None
            yield line, obj
            idx = _WS.match(text, end).end()
            if text.startswith(",", idx):
                idx = _WS.match(text, idx + 1).end()
                continue
            if text.startswith("]", idx):
                idx = _WS.match(text, idx + 1).end()
                break
            line += text.count("\n", last, idx)
            raise DataError(
                f"{path}:{line}: expected ',' or ']' in the JSON array. Fix: the file is "
                "truncated or corrupt; download it again"
            )
    if idx != len(text):
        line += text.count("\n", last, idx)
        raise DataError(f"{path}:{line}: extra data after the JSON array. Fix: remove it")


def _iter_jsonl(text: str, path: Path) -> Iterator[tuple[int, Any]]:
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            yield number, json.loads(raw)
        except json.JSONDecodeError as exc:
            raise DataError(
                f"{path}:{number}: invalid JSON line ({exc.msg}). Fix: one JSON object per line, "
                "or the official JSON array"
            ) from None


def read_objects(path: str | Path) -> list[tuple[int, dict[str, Any]]]:
    """(line, object) pairs of a JSON array or JSONL file; shared with the upstream importer."""
    path = Path(path)
    text = _read_text(path)
    start = _WS.match(text, 0).end()
    if start == len(text):
        raise DataError(f"{path}: file is empty. Fix: {_FETCH_HINT}")
    rows = list(_iter_array(text, path) if text[start] == "[" else _iter_jsonl(text, path))
    for line, obj in rows:
        if not isinstance(obj, dict):
            raise DataError(
                f"{path}:{line}: expected a JSON object, got {type(obj).__name__}. Fix: each "
                "record must be an object with the MR-GSM8K fields"
            )
    if not rows:
        raise DataError(f"{path}: no records found. Fix: {_FETCH_HINT}")
    return rows


def _bad(where: str, field: str, problem: str) -> DataError:
    return DataError(
        f"{where}: field '{field}' {problem}. Fix: repair this record or use the official "
        f"{OFFICIAL_FILENAME}"
    )


def validate_record(obj: dict[str, Any], where: str) -> dict[str, Any]:
    """Return the record's dataset fields (unknown fields dropped) or raise naming `where`."""
    for field in REQUIRED_FIELDS:
        if field not in obj:
            raise _bad(where, field, "is missing")
    for field in ("uuid", "question", "question_type", "model_output_solution_first_error_reason"):
        if not isinstance(obj[field], str):
            raise _bad(where, field, f"must be a string, got {type(obj[field]).__name__}")
    steps = obj["model_output_steps"]
    if not isinstance(steps, list) or not all(isinstance(s, str) for s in steps):
        raise _bad(where, "model_output_steps", "must be a list of strings")
    label = obj[LABEL_FIELD]
    if not isinstance(label, str) or label.lower() not in LABELS:
        raise _bad(where, LABEL_FIELD, f"must be 'correct' or 'wrong', got {label!r}")
    step = obj[STEP_FIELD]
    if isinstance(step, bool) or not isinstance(step, int | str):
        raise _bad(where, STEP_FIELD, f"must be an int or a string such as 'N/A', got {step!r}")
    return {field: obj[field] for field in DATASET_FIELDS if field in obj}


def load(path: str | Path) -> list[dict[str, Any]]:
    """Load MR-GSM8K records from the official JSON array or a JSONL copy, validated."""
    path = Path(path)
    items: list[dict[str, Any]] = []
    first_line: dict[str, int] = {}
    for line, obj in read_objects(path):
        item = validate_record(obj, f"{path}:{line}")
        uuid = item["uuid"]
        if uuid in first_line:
            raise DataError(
                f"{path}:{line}: uuid {uuid} already appears at line {first_line[uuid]}. "
                "Fix: remove the duplicate record"
            )
        first_line[uuid] = line
        items.append(item)
    log.info("loaded %d MR-GSM8K records from %s: %s", len(items), path, counts(items))
    return items


def load_demos(path: str | Path) -> list[dict[str, Any]]:
    """Load k-shot-demos.json (an array of demos with question, output_steps, evaluation)."""
    path = Path(path)
    demos = []
    for line, obj in read_objects(path):
        for field in ("question", "evaluation"):
            if not isinstance(obj.get(field), str):
                raise DataError(
                    f"{path}:{line}: demo field '{field}' is missing or not a string. "
                    f"Fix: use the official {DEMOS_FILENAME}"
                )
        steps = obj.get("output_steps")
        if not isinstance(steps, list) or not all(isinstance(s, str) for s in steps):
            raise DataError(
                f"{path}:{line}: demo field 'output_steps' must be a list of strings. "
                f"Fix: use the official {DEMOS_FILENAME}"
            )
        demos.append(obj)
    return demos


def counts(items: list[dict[str, Any]]) -> dict[str, Any]:
    """Label counts overall and per question_type (the per-type split is not published)."""
    by_label = Counter(item[LABEL_FIELD].lower() for item in items)
    by_type: dict[str, Counter[str]] = {}
    for item in items:
        by_type.setdefault(item["question_type"], Counter())[item[LABEL_FIELD].lower()] += 1
    return {
        "n": len(items),
        "by_label": {label: by_label[label] for label in LABELS},
        "by_question_type": {
            qtype: {"n": sum(c.values()), **{label: c[label] for label in LABELS}}
            for qtype, c in sorted(by_type.items())
        },
    }


def check_full_counts(items: list[dict[str, Any]], warn: Callable[[str], None]) -> bool:
    """For the full file: warn (and return False) unless it holds 1427 correct + 1573 wrong."""
    got = counts(items)["by_label"]
    if got["correct"] == FULL_N_CORRECT and got["wrong"] == FULL_N_WRONG:
        return True
    warn(
        f"MR-GSM8K full file has {got['correct']} correct + {got['wrong']} wrong solutions, "
        f"not the {FULL_N_CORRECT} + {FULL_N_WRONG} upstream hard-codes; metrics use the counts "
        "found, so they are not directly comparable with published numbers"
    )
    return False
