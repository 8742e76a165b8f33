"""Pinned data files of "Already Said That" and the exact sample/distractor preparation.

Spec: shared/specs/already_said_that.md §2-§4. The files are upstream's (openai/evals,
MIT); their sha256 is pinned so that a run is always over the bytes the spec was checked on.
Upstream's prompt and solver files are official data too (`UPSTREAM_FILES`).
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from mindprobe.core.data import DataFile, resolve
from mindprobe.errors import DataError

VARIANTS: tuple[str, ...] = (
    "which-is-heavier",
    "first-letters",
    "ambiguous-sentences",
    "reverse-sort-words-eng",
    "distractorless",
)
ALIASES: dict[str, str] = {"already_said_that": "reverse-sort-words-eng"}

# Upstream commit whose Git-LFS objects equal the pinned files (SOURCE.md).
UPSTREAM_COMMIT = "4bfc1f58a821685acb40bb28ba54131740535046"
_MEDIA_BASE = (
    f"https://media.githubusercontent.com/media/openai/evals/{UPSTREAM_COMMIT}/evals/registry/data/"
)


def _pinned(path: str, sha256: str) -> DataFile:
    """A file of the pinned upstream commit (Git-LFS media URL serves the real bytes)."""
    return DataFile(path, url=_MEDIA_BASE + path, sha256=sha256)


SAMPLES_FILE = _pinned(
    "already_said_that/500_100.jsonl",
    "ce6eeadef5aa33a57abcd0b42bbdb02d1a4eb3c61a35bcc1da9b1b29766f3469",
)
DISTRACTOR_FILES: dict[str, DataFile] = {
    "which-is-heavier": _pinned("which_is_heavier/which_is_heavier.jsonl", "b3389fe67d5a06dee7d902edd2c1d2b55400759de8e7797742a0f93776be91d7"),
    "first-letters": _pinned("first-letters/samples.jsonl", "a4f75f8baa0dbc514951a40b0d227a575d582db2b3ee0a4fc383974747bde3ae"),
    "ambiguous-sentences": _pinned("ambiguous-sentences/samples.jsonl", "73b415da88ac7043f6a9fc1373d0bcf7171344bb79888903f8abe41b32635bc5"),
    "reverse-sort-words-eng": _pinned("reverse-sort-words-eng/samples.jsonl", "29fcbcf00c0ef4c7d8ec704e89549d05a55f32822b07066658425102ec38533f"),
}
_RAW_BASE = f"https://raw.githubusercontent.com/openai/evals/{UPSTREAM_COMMIT}/"


def _upstream(path: str, sha256: str) -> DataFile:
    """One of upstream's prompt/solver files (plain git, not LFS), kept under `upstream/`."""
    return DataFile(f"upstream/{path}", url=_RAW_BASE + path, sha256=sha256)


# The benchmark's wording and the published runs' solvers (SOURCE.md, "Upstream prompt and
# solver files"): read by `prompt`, never copied into mindprobe.
PROMPTS_FILE = _upstream("evals/elsuite/already_said_that/prompts.py", "f46dfc950dc49f7e5640bb2569d9dd62348108fd62efba4f009a0c54e75d68ac")
COT_PROMPTS_FILE = _upstream("evals/solvers/prompts/cot.py", "bbc54167a76f904d1101e06dfaa14705db3802ab461bb6bae36b388cf1b6367b")
COT_SOLVER_FILE = _upstream("evals/solvers/nested/cot_solver.py", "4d9b59ede04a824e83a0637c0a7b29c5a1eec8343a78c0caff3bde69ee3c7eb5")
SOLVERS_FILE = _upstream("evals/registry/solvers/already_said_that.yaml", "c7b0427a44bd153798f9f695a84d8708e60c0e6de446df7552f37f34d2347cbd")
DEFAULT_SOLVERS_FILE = _upstream("evals/registry/solvers/defaults.yaml", "a121d83f02b2ccbaf1de9761ded2a4c17de6f7a0b4135f7622546026032e643a")
UPSTREAM_FILES: tuple[DataFile, ...] = (
    PROMPTS_FILE, COT_PROMPTS_FILE, COT_SOLVER_FILE, SOLVERS_FILE, DEFAULT_SOLVERS_FILE)


def _base_model(path: str, commit: str, sha256: str) -> DataFile:
    """A file of upstream's base-model solver (`generation/hhh/*`). Not among shared's copies:
    its sha256 is that of the member of the PyPI wheel evals==3.0.1.post1 (the wheel SOURCE.md
    pins; its other five upstream files equal the copies above byte for byte), fetched from a
    commit that holds those bytes, else from the pinned commit."""
    return DataFile(f"upstream/{path}",
                    url=f"https://raw.githubusercontent.com/openai/evals/{commit}/{path}",
                    sha256=sha256, mirrors=(_RAW_BASE + path,))


# How upstream runs a base model (`generation/hhh/gpt-4-base`, `already_said_that/cot_hhh/...`):
# the HHH dialogues (`HHH_MSGS`), the solver that puts them before the task, the role prefixes
# of the text prompt (`ROLE_TO_PREFIX`, whose stripped values are the stop sequences) and the
# renderer (`chat_prompt_to_text_prompt`). Read by `upstream`, never copied into mindprobe.
HHH_PROMPTS_FILE = _base_model("evals/solvers/prompts/hhh.py", "31e19c73677708bbc32e35fc7b64647275dd5421", "12c5188108d489ccf2525023fab6b11c5766402ceaa809f07c03582b74463017")
HHH_SOLVER_FILE = _base_model("evals/solvers/nested/hhh_solver.py", "31e19c73677708bbc32e35fc7b64647275dd5421", "2172ff4712fcaafa195c8ad5c55c2fab298d1f339555c1e655b78536d06946d6")
OPENAI_SOLVER_FILE = _base_model("evals/solvers/providers/openai/openai_solver.py", "2420c623a19f8f174867593751e7afffce21c097", "43e6103245099dac625bcc6f1afdbffbf0552662ea4a749d7c3a539273148e20")
TEXT_PROMPT_FILE = _base_model("evals/prompt/base.py", "1625799945092623353615a464b8785f68c28e7d", "b126cf1b3567e76ceecaf8c6d4c9911d89dd8ca5ffa2f3f404d142c916d1e427")
BASE_MODEL_FILES: tuple[DataFile, ...] = (
    HHH_PROMPTS_FILE, HHH_SOLVER_FILE, OPENAI_SOLVER_FILE, TEXT_PROMPT_FILE)
DATA_FILES: tuple[DataFile, ...] = (SAMPLES_FILE, *DISTRACTOR_FILES.values(), *UPSTREAM_FILES,
                                    *BASE_MODEL_FILES)

# The single synthetic item of the distractorless variant; it only serves as the prompt example.
DISTRACTORLESS_ITEM: tuple[str, str] = ("What is the capital of Italy?", "rome")

_HEAVIER_SUFFIX = " Answer Yes or No"
_SORT_INSTRUCTION_LEN = 96  # the "(respond as concisely as possible ...):" tail incl. its space
_FETCH_HINT = "run `mindprobe data fetch already_said_that` to download the pinned files"


def resolve_variant(name: str) -> str:
    """Map the upstream alias to its variant; reject unknown names with the valid choices."""
    variant = ALIASES.get(name, name)
    if variant not in VARIANTS:
        choices = ", ".join((*VARIANTS, *ALIASES))
        raise ValueError(f"unknown already_said_that variant {name!r}; choose one of: {choices}")
    return variant


def _read_verified(data_dir: Path | str, file: DataFile) -> tuple[str, str]:
    path = resolve("already_said_that", list(DATA_FILES), file.relpath, Path(data_dir))
    return path.read_text(encoding="utf-8"), str(path)


def _json_lines(text: str, source: str) -> list[tuple[int, Any]]:
    """Parse non-empty lines as JSON, keeping 1-based line numbers for error messages."""
    rows = []
    for lineno, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            rows.append((lineno, json.loads(line)))
        except json.JSONDecodeError as exc:
            raise DataError(f"{source}:{lineno}: invalid JSON ({exc.msg}); {_FETCH_HINT}") from exc
    return rows


def parse_samples(text: str, source: str) -> list[list[str]]:
    """Parse the sample file: one `{"words": [...]}` record of distinct strings per line."""
    samples = []
    for lineno, record in _json_lines(text, source):
        words = record.get("words") if isinstance(record, dict) else None
        if (
            not isinstance(words, list)
            or not words
            or not all(isinstance(w, str) and w for w in words)
            or len(set(words)) != len(words)
        ):
            raise DataError(
                f"{source}:{lineno}: expected {{\"words\": [distinct non-empty strings]}}; "
                f"{_FETCH_HINT}"
            )
        samples.append(words)
    return samples


def load_samples(data_dir: Path | str) -> list[list[str]]:
    """All sample word lists in file order (`data_dir` is the benchmark's data folder)."""
    text, source = _read_verified(data_dir, SAMPLES_FILE)
    return parse_samples(text, source)


def select_indices(n_total: int, n_samples: int, seed: int) -> list[int]:
    """0-based file positions of the evaluated samples, in evaluation (idx) order.

    `Random.sample` picks by position only, so this equals selecting the records themselves.
    """
    if n_samples < 1:
        raise ValueError(f"n_samples must be at least 1, got {n_samples}")
    return random.Random(seed).sample(range(n_total), min(n_samples, n_total))


def select_samples(samples: list[list[str]], n_samples: int, seed: int) -> list[list[str]]:
    """The evaluated samples (spec §3); a sample's idx is its position in the result."""
    return [samples[i] for i in select_indices(len(samples), n_samples, seed)]


def _message(messages: list[Any], role: str, source: str, lineno: int) -> str:
    found = [m.get("content") for m in messages if isinstance(m, dict) and m.get("role") == role]
    if len(found) != 1 or not isinstance(found[0], str):
        raise DataError(
            f"{source}:{lineno}: expected exactly one {role!r} message with string content; "
            f"{_FETCH_HINT}"
        )
    return found[0]


def _question(variant: str, messages: list[Any], source: str, lineno: int) -> str:
    user = _message(messages, "user", source, lineno)
    if variant == "which-is-heavier":
        if not user.endswith(_HEAVIER_SUFFIX):
            raise DataError(
                f"{source}:{lineno}: question does not end with {_HEAVIER_SUFFIX!r}; {_FETCH_HINT}"
            )
        return user[: -len(_HEAVIER_SUFFIX)]
    if variant == "reverse-sort-words-eng":
        system = _message(messages, "system", source, lineno)
        tail = system[-_SORT_INSTRUCTION_LEN:]
        if len(system) <= _SORT_INSTRUCTION_LEN or not (
            tail.startswith(" (") and tail.endswith("):")
        ):
            raise DataError(
                f"{source}:{lineno}: system message lacks the expected parenthetical "
                f"instruction; {_FETCH_HINT}"
            )
        return system[:-_SORT_INSTRUCTION_LEN] + ": " + user
    return user


def parse_distractors(text: str, source: str, variant: str) -> list[tuple[str, str]]:
    """All (question, lowercased ideal) items of a distractor file, in file order (spec §4)."""
    items = []
    for lineno, record in _json_lines(text, source):
        messages = record.get("input") if isinstance(record, dict) else None
        ideal = record.get("ideal") if isinstance(record, dict) else None
        if not isinstance(messages, list) or not isinstance(ideal, str):
            raise DataError(
                f"{source}:{lineno}: expected {{\"input\": [messages], \"ideal\": string}}; "
                f"{_FETCH_HINT}"
            )
        items.append((_question(variant, messages, source, lineno), ideal.lower()))
    if not items:
        raise DataError(f"{source}: no records; {_FETCH_HINT}")
    return items


def load_distractors(
    data_dir: Path | str, variant: str
) -> tuple[list[tuple[str, str]], tuple[str, str]]:
    """(pool, example): the last item is the prompt example and is never asked (spec §4)."""
    variant = resolve_variant(variant)
    if variant == "distractorless":
        return [], DISTRACTORLESS_ITEM
    text, source = _read_verified(data_dir, DISTRACTOR_FILES[variant])
    items = parse_distractors(text, source, variant)
    return items[:-1], items[-1]
