"""FanOutQA questions and generations files, typed and validated.

The questions come from the ``fanoutqa==1.1.1`` wheel, read as plain JSON: importing the package
creates a cache directory and an HTTP client, so we only locate it (spec §1.1). The files are
pinned by SHA-256 so a silently different copy (e.g. upstream's 2026 corrections) cannot be scored
as "nov23".
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from mindprobe.errors import DataError

DATASET_VERSION = "nov23"
PACKAGE = "fanoutqa"
PACKAGE_VERSION = "1.1.1"
FILES = {"dev": "fanout-final-dev.json", "test": "fanout-final-test.json"}
# sha256 of the files shipped in the fanoutqa 1.1.1 wheel (observed, then pinned).
SHA256 = {
    "fanout-final-dev.json": "359300b029c6891567816f351bf8786e9b018d7af8a1a44b7da9ba5ef4651288",
    "fanout-final-test.json": "bb98b76d196842ac239682e4b85bf23470f2351c4f439a08aacf8c2a2ac76b78",
    "LICENSE": "4e0fd171b79f997e1fb13111149135af19fb91028388746eda82cfee615b553c",
}
N_QUESTIONS = {"dev": 310, "test": 725}
INSTALL_HINT = f"pip install {PACKAGE}=={PACKAGE_VERSION}"

Primitive = bool | int | float | str
Answer = dict[str, Primitive] | list[Primitive] | Primitive
Split = Literal["dev", "test"]


@dataclass(frozen=True)
class Evidence:
    """One Wikipedia page pinned to its revision at the dataset epoch."""

    pageid: int
    revid: int
    title: str
    url: str


@dataclass(frozen=True)
class Subquestion:
    """A node of the human decomposition: either evidence-backed or further decomposed."""

    id: str
    question: str
    answer: Answer
    decomposition: tuple[Subquestion, ...] = ()
    depends_on: tuple[str, ...] = ()
    evidence: Evidence | None = None


@dataclass(frozen=True)
class Question:
    """A top-level question; dev questions carry ``answer`` and ``decomposition``, test ones not.

    ``necessary_evidence`` is derived for dev (the file has no such key, spec §1.2) and stored
    for test, so both splits expose the same attribute to the prompts and breakdowns.
    """

    id: str
    question: str
    categories: tuple[str, ...]
    split: Split
    answer: Answer | None = None
    decomposition: tuple[Subquestion, ...] = ()
    test_evidence: tuple[Evidence, ...] = field(default=(), repr=False)

    @property
    def has_answer(self) -> bool:
        return self.split == "dev"

    @property
    def necessary_evidence(self) -> list[Evidence]:
        """Depth-first pre-order: a node's evidence before its children's; duplicates kept."""
        if self.split == "test":
            return list(self.test_evidence)
        out: list[Evidence] = []
        stack: list[Subquestion] = list(reversed(self.decomposition))
        while stack:
            node = stack.pop()
            if node.evidence is not None:
                out.append(node.evidence)
            stack.extend(reversed(node.decomposition))
        return out

    @property
    def n_evidence(self) -> int:
        """Fan-out width: number of evidence pages, duplicates counted (as the prompts use them)."""
        return len(self.necessary_evidence)


@dataclass(frozen=True)
class Generation:
    """One submitted answer; ``line`` is the 1-based line (JSONL) or element index (JSON list)."""

    id: str
    answer: str
    line: int


# ---------------------------------------------------------------- locating and verifying files


def data_dir() -> Path:
    """The wheel's data folder, found without importing ``fanoutqa`` (avoids its side effects)."""
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise DataError(
            f"FanOutQA data not found: the {PACKAGE} package is not installed ({INSTALL_HINT})"
        )
    return Path(next(iter(spec.submodule_search_locations))) / "data"


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def data_path(split: Split, verify: bool = True) -> Path:
    """Path of a split's JSON file, checked against the pinned SHA-256."""
    if split not in FILES:
        raise DataError(f"unknown FanOutQA split {split!r}; expected one of {sorted(FILES)}")
    path = data_dir() / FILES[split]
    if not path.is_file():
        raise DataError(f"FanOutQA {split} file missing at {path}; reinstall with {INSTALL_HINT}")
    if verify:
        got = sha256_file(path)
        if got != SHA256[path.name]:
            raise DataError(
                f"{path}: sha256 {got} does not match the pinned {DATASET_VERSION} file "
                f"({SHA256[path.name]}); install exactly {INSTALL_HINT}"
            )
    return path


# ---------------------------------------------------------------- parsing questions


def _where(src: str, qid: Any) -> str:
    return f"{src}: question {qid!r}"


def _require(obj: Any, key: str, typ: type | tuple[type, ...], where: str) -> Any:
    if not isinstance(obj, dict):
        raise DataError(f"{where}: expected a JSON object, got {type(obj).__name__}")
    if key not in obj:
        raise DataError(f"{where}: missing key {key!r}")
    value = obj[key]
    if not isinstance(value, typ) or (typ is int and isinstance(value, bool)):
        names = typ.__name__ if isinstance(typ, type) else "/".join(t.__name__ for t in typ)
        raise DataError(f"{where}: {key!r} must be {names}, got {type(value).__name__}")
    return value


def _is_primitive(x: Any) -> bool:
    return isinstance(x, bool | int | float | str)


def validate_answer(answer: Any, where: str) -> Answer:
    """Answer = dict[str, Primitive] | list[Primitive] | Primitive (spec §1.2); else DataError."""
    if _is_primitive(answer):
        return answer
    if isinstance(answer, list):
        for i, x in enumerate(answer):
            if not _is_primitive(x):
                raise DataError(
                    f"{where}: answer list element {i} is {type(x).__name__}, not a primitive"
                )
        return answer
    if isinstance(answer, dict):
        for k, v in answer.items():
            if not _is_primitive(v):
                raise DataError(
                    f"{where}: answer value for key {k!r} is {type(v).__name__}, not a primitive"
                )
        return answer
    raise DataError(f"{where}: answer has unsupported type {type(answer).__name__}")


def _evidence(obj: Any, where: str) -> Evidence:
    return Evidence(
        pageid=_require(obj, "pageid", int, where),
        revid=_require(obj, "revid", int, where),
        title=_require(obj, "title", str, where),
        url=_require(obj, "url", str, where),
    )


def _subquestion(obj: Any, where: str) -> Subquestion:
    sid = _require(obj, "id", str, where)
    here = f"{where} > subquestion {sid!r}"
    decomposition = tuple(_subquestion(d, here) for d in _require(obj, "decomposition", list, here))
    ev = obj.get("evidence")
    evidence = None if ev is None else _evidence(ev, here + " evidence")
    if evidence is None and not decomposition:
        raise DataError(f"{here}: has neither evidence nor a decomposition")
    depends = _require(obj, "depends_on", list, here)
    if not all(isinstance(d, str) for d in depends):
        raise DataError(f"{here}: 'depends_on' must be a list of ids (strings)")
    if "answer" not in obj:
        raise DataError(f"{here}: missing key 'answer'")
    return Subquestion(
        id=sid,
        question=_require(obj, "question", str, here),
        answer=validate_answer(obj["answer"], here),
        decomposition=decomposition,
        depends_on=tuple(depends),
        evidence=evidence,
    )


def _categories(obj: dict, where: str) -> tuple[str, ...]:
    cats = _require(obj, "categories", list, where)
    if not all(isinstance(c, str) for c in cats):
        raise DataError(f"{where}: 'categories' must be a list of strings")
    return tuple(cats)


def parse_questions(records: Any, split: Split, source: str = "<memory>") -> list[Question]:
    """Validate raw JSON records of one split into Questions; errors name the question id."""
    if not isinstance(records, list):
        raise DataError(
            f"{source}: expected a JSON list of questions, got {type(records).__name__}"
        )
    out: list[Question] = []
    seen: set[str] = set()
    for i, rec in enumerate(records):
        qid = _require(rec, "id", str, f"{source}: element {i}")
        where = _where(source, qid)
        if qid in seen:
            raise DataError(f"{where}: duplicate question id")
        seen.add(qid)
        text = _require(rec, "question", str, where)
        cats = _categories(rec, where)
        if split == "dev":
            if "answer" not in rec:
                raise DataError(f"{where}: dev question has no 'answer'")
            decomposition = tuple(
                _subquestion(d, where) for d in _require(rec, "decomposition", list, where)
            )
            out.append(
                Question(
                    qid, text, cats, "dev", validate_answer(rec["answer"], where), decomposition
                )
            )
        else:
            evidence = tuple(
                _evidence(e, f"{where} evidence {j}")
                for j, e in enumerate(_require(rec, "necessary_evidence", list, where))
            )
            out.append(Question(qid, text, cats, "test", test_evidence=evidence))
    return out


def load_questions(split: Split = "dev", verify: bool = True) -> list[Question]:
    """Load and validate a split (dev: 310 with answers; test: 725 without), in file order."""
    path = data_path(split, verify=verify)
    try:
        records = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise DataError(f"{path}: cannot read FanOutQA {split} JSON ({e})") from e
    questions = parse_questions(records, split, str(path))
    if verify and len(questions) != N_QUESTIONS[split]:
        raise DataError(f"{path}: {len(questions)} questions, expected {N_QUESTIONS[split]}")
    return questions


def load_dev(verify: bool = True) -> list[Question]:
    return load_questions("dev", verify)


def load_test(verify: bool = True) -> list[Question]:
    return load_questions("test", verify)


# ---------------------------------------------------------------- generations (submissions)


def _generation(obj: Any, where: str, line: int) -> Generation:
    if not isinstance(obj, dict):
        raise DataError(
            f'{where}: expected an object {{"id": ..., "answer": ...}}, got {type(obj).__name__}'
        )
    for key in ("id", "answer"):
        if key not in obj:
            raise DataError(f"{where}: missing key {key!r}")
    if not isinstance(obj["id"], str):
        raise DataError(f"{where}: 'id' must be a string, got {type(obj['id']).__name__}")
    if not isinstance(obj["answer"], str):
        raise DataError(
            f"{where}: 'answer' must be a string, got {type(obj['answer']).__name__} "
            "(FanOutQA scores free text; the leaderboard rejects non-string answers)"
        )
    return Generation(obj["id"], obj["answer"], line)


def parse_generations(records: Iterable[Any], source: str = "<memory>") -> list[Generation]:
    """Validate in-memory generation objects (element numbers are 1-based)."""
    return [_generation(r, f"{source}: element {i}", i) for i, r in enumerate(records, 1)]


def _jsonl_lines(text: str, source: str) -> Iterator[Generation]:
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as e:
            raise DataError(
                f"{source}: line {n}: invalid JSON ({e.msg} at column {e.colno})"
            ) from e
        yield _generation(obj, f"{source}: line {n}", n)


def load_generations(path: str | Path) -> list[Generation]:
    """Load a JSONL file (one object per line) or a JSON list of ``{"id", "answer"}`` objects.

    Extra keys are ignored; blank lines are skipped; every error names the line (JSONL) or the
    element (JSON list), because a submission that fails halfway is otherwise hard to fix.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError as e:
        raise DataError(f"generations file not found: {path}") from e
    except (OSError, UnicodeDecodeError) as e:
        raise DataError(f"{path}: cannot read generations ({e})") from e
    if text.lstrip().startswith("["):
        try:
            records = json.loads(text)
        except json.JSONDecodeError as e:
            raise DataError(f"{path}: line {e.lineno}: invalid JSON list ({e.msg})") from e
        return parse_generations(records, str(path))
    gens = list(_jsonl_lines(text, str(path)))
    if not gens:
        raise DataError(f"{path}: no generations found (expected JSONL or a JSON list)")
    return gens


def write_generations(
    path: str | Path, generations: Iterable[Generation | Mapping[str, Any]]
) -> Path:
    """Write the submission JSONL the maintainers expect (id + answer per line)."""
    path = Path(path)
    with path.open("w", encoding="utf-8") as f:
        for g in generations:
            gid, ans = (g.id, g.answer) if isinstance(g, Generation) else (g["id"], g["answer"])
            f.write(json.dumps({"id": gid, "answer": ans}, ensure_ascii=False) + "\n")
    return path


# ---------------------------------------------------------------- pairing questions and answers


@dataclass(frozen=True)
class Pairing:
    """Which (question, answer) pairs are scored, plus what was ignored and why (spec §6.7)."""

    pairs: list[tuple[Question, str | None]]
    only_score_answered: bool
    unknown_ids: list[str]  # answer ids that are not questions (ignored in default mode)
    duplicate_ids: list[str]  # ids answered more than once (default mode: the later one wins)
    missing_ids: list[str]  # questions without an answer (default mode: scored as unanswered)


def pair_answers(
    questions: Sequence[Question],
    generations: Sequence[Generation],
    only_score_answered: bool = False,
) -> Pairing:
    """Default: every question, its answer looked up by id (later duplicates overwrite earlier),
    unknown ids ignored. ``only_score_answered``: the answers in file order (duplicates counted),
    and an unknown id is an error (upstream crashes with a KeyError)."""
    by_id = {q.id: q for q in questions}
    seen: dict[str, int] = {}
    for g in generations:
        seen[g.id] = seen.get(g.id, 0) + 1
    unknown = [g for g in generations if g.id not in by_id]
    duplicates = [gid for gid, n in seen.items() if n > 1 and gid in by_id]
    unknown_ids = list(dict.fromkeys(g.id for g in unknown))
    if only_score_answered:
        if unknown:
            shown = ", ".join(f"{g.id!r} (line {g.line})" for g in unknown[:5])
            more = f" and {len(unknown) - 5} more" if len(unknown) > 5 else ""
            raise DataError(
                f"{len(unknown)} answer(s) have ids that are not questions of this split: "
                f"{shown}{more}; with only_score_answered every answer must match a question"
            )
        pairs = [(by_id[g.id], g.answer) for g in generations]
        return Pairing(pairs, True, [], duplicates, [])
    answers = {g.id: g.answer for g in generations}  # later duplicates overwrite
    pairs = [(q, answers.get(q.id)) for q in questions]
    missing = [q.id for q in questions if q.id not in answers]
    return Pairing(pairs, False, unknown_ids, duplicates, missing)
