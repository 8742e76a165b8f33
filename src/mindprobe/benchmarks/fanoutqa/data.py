"""FanOutQA questions and generations files, typed and validated (the releases and where
their files are: :mod:`.releases`)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mindprobe.core.files import write_file
from mindprobe.core.inputs import read_input
from mindprobe.errors import DataError

from .upstream import (  # noqa: F401  (re-exported: one place to import FanOutQA data from)
    BENCHMARK,
    DATA_FILES,
    DEFAULT_VERSION,
    INSTALL_HINT,
    LEGACY_VERSION,
    PACKAGE,
    PACKAGE_VERSION,
    PINS,
    RAW_BASE,
    RELEASES,
    SHA256,
    UPSTREAM_COMMIT,
    UPSTREAM_REPO,
    VERSIONS,
    WHEEL_FILES,
    Release,
    Split,
    check_version,
    data_path,
    sha256_file,
    version_of,
    wheel_dir,
)

Primitive = bool | int | float | str
Answer = dict[str, Primitive] | list[Primitive] | Primitive


#: What the jul26 release puts in ``pageid``/``revid`` of the pages its corrections added (read
#: by title: from the Kiwix archive, or resolved at the epoch through the API).
TBD = "###TBD###"


@dataclass(frozen=True)
class Evidence:
    """One Wikipedia page pinned to its revision at the dataset epoch (ids None: not pinned)."""

    pageid: int | None
    revid: int | None
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
    #: The release the question was read from ("jul26", "nov23"; "" when built in memory).
    version: str = field(default="", compare=False)

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


def _page_id(obj: Any, key: str, where: str) -> int | None:
    value = _require(obj, key, (int, str), where)
    if isinstance(value, str):
        if value != TBD:
            raise DataError(f"{where}: {key!r} must be int (or {TBD!r}), got {value!r}")
        return None
    return value


def _evidence(obj: Any, where: str) -> Evidence:
    return Evidence(
        pageid=_page_id(obj, "pageid", where),
        revid=_page_id(obj, "revid", where),
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


def parse_questions(records: Any, split: Split, source: str = "<memory>",
                    version: str = "") -> list[Question]:
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
                Question(qid, text, cats, "dev", validate_answer(rec["answer"], where),
                         decomposition, version=version)
            )
        else:
            evidence = tuple(
                _evidence(e, f"{where} evidence {j}")
                for j, e in enumerate(_require(rec, "necessary_evidence", list, where))
            )
            out.append(Question(qid, text, cats, "test", test_evidence=evidence,
                                version=version))
    return out


def load_questions(split: Split = "dev", version: str = DEFAULT_VERSION,
                   data_dir: Path | None = None, verify: bool = True) -> list[Question]:
    """Load and validate a split of one release (dev: 310 with answers; test: 724 (jul26) or
    725 (nov23) without), in file order."""
    path = data_path(split, version, data_dir, verify_hash=verify)
    try:
        records = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise DataError(f"{path}: cannot read FanOutQA {split} JSON ({e})") from e
    questions = parse_questions(records, split, str(path), version)
    expected = RELEASES[version].n_questions[split]
    if verify and len(questions) != expected:
        raise DataError(f"{path}: {len(questions)} questions, expected {expected}")
    return questions


def load_dev(version: str = DEFAULT_VERSION, data_dir: Path | None = None,
             verify: bool = True) -> list[Question]:
    return load_questions("dev", version, data_dir, verify)


def load_test(version: str = DEFAULT_VERSION, data_dir: Path | None = None,
              verify: bool = True) -> list[Question]:
    return load_questions("test", version, data_dir, verify)


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
        text = read_input(path, "--generations", "results file", DataError).decode(
            "utf-8")
    except UnicodeDecodeError as e:
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
    path: str | Path, generations: Iterable[Generation | Mapping[str, Any]],
    replace: bool = True, flag: str | None = None,
) -> Path:
    """Write the submission JSONL the maintainers expect (id + answer per line), whole or not
    at all; an existing file is replaced only with `replace` (`core.files`)."""
    def lines() -> Iterator[str]:
        for g in generations:
            gid, ans = (g.id, g.answer) if isinstance(g, Generation) else (g["id"], g["answer"])
            yield json.dumps({"id": gid, "answer": ans}, ensure_ascii=False) + "\n"

    return write_file(Path(path), lines(), replace=replace, flag=flag)


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
