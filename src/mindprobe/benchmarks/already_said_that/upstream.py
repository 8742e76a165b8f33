"""Already Said That's wording and solvers, read from upstream's own files (openai/evals, MIT).

Nothing here is typed from upstream: the task description is `TASK_DESCRIPTION` of
`evals/elsuite/already_said_that/prompts.py`, filled as upstream's eval fills it (`str.format`
with the example item, spec §6); the chain-of-thought messages are `evals/solvers/prompts/cot.py`'s
defaults of `CoTSolver`; the sampling settings are those of the solver registry entries the
published runs used (`scripts/run_experiments.sh`: `generation/direct/gpt-4-turbo-preview` and
`already_said_that/cot/gpt-4-turbo-preview`). Where the spec paraphrases, these files are the
authority. A missing or altered file is one error naming it and `mindprobe data fetch`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mindprobe.core.data import DataFile, resolve
from mindprobe.core.upstream_source import PythonSource, Template
from mindprobe.errors import DataError

from .data import (
    COT_PROMPTS_FILE,
    COT_SOLVER_FILE,
    DATA_FILES,
    DEFAULT_SOLVERS_FILE,
    PROMPTS_FILE,
    SOLVERS_FILE,
)

BENCH = "already_said_that"
#: How upstream's `build_message` writes a main-task turn; the scorer depends on it (spec §5).
MAIN_PREFIX = "MAIN TASK - "
#: The registry entries of the published runs, per mindprobe solver.
REGISTRY_ENTRIES = {"direct": (DEFAULT_SOLVERS_FILE, "generation/direct/gpt-4-turbo-preview"),
                    "cot": (SOLVERS_FILE, "already_said_that/cot/gpt-4-turbo-preview")}
_TASK = ("task_description", "TASK_DESCRIPTION")
_COT = {"cot": ("cot_template", "DEFAULT_COT_TEMPLATE"),
        "extract_answer": ("extract_template", "DEFAULT_EXTRACT_ANSWER_TEMPLATE")}


def _python(file: DataFile, data_dir: Path | None) -> PythonSource:
    return PythonSource.official(BENCH, list(DATA_FILES), file.relpath, data_dir)


def templates(data_dir: Path | None) -> dict[str, Template]:
    """The benchmark's templates by name: the task description (slots `distractor_question`,
    `distractor_answer`, `distractor_word`, as upstream's `.format` fills them) and the CoT
    solver's two system messages (no slots)."""
    task = _python(PROMPTS_FILE, data_dir)
    text = task.constants([_TASK[1]])[_TASK[1]]
    out = {_TASK[0]: Template.from_braced(text, f"{task.path}: {_TASK[1]}")}
    cot = _python(COT_PROMPTS_FILE, data_dir)
    consts = cot.constants(const for _, const in _COT.values())
    for name, (_, const) in _COT.items():
        out[name] = Template((consts[const],), f"{cot.path}: {const}")
    return out


def example_word(question: str) -> str:
    """The example item's last token, edge punctuation `.,!?` stripped and lowercased."""
    tokens = question.split()
    if not tokens:
        raise ValueError("the example question is empty")
    return tokens[-1].strip(".,!?").lower()


def task_description(template: Template, example: tuple[str, str]) -> str:
    """The system prompt with the variant's example item (the file's last record)."""
    question, ideal = example
    return template.render(distractor_question=question, distractor_answer=ideal,
                           distractor_word=example_word(question))


@dataclass(frozen=True)
class Sampling:
    """One call's settings as upstream's registry gives them (`extra_options`)."""

    temperature: float  # as upstream writes it (1, not 1.0), so the request body matches
    max_tokens: int


@dataclass(frozen=True)
class Solver:
    """Upstream's solver of one mindprobe `--solver`: its registry entry, the settings of each
    call of a turn (`answer`; CoT first `reason`), whether CoT keeps its reasoning in later
    turns (never: upstream's `persistent_memory: False` is the only protocol read)."""

    name: str
    entry: str
    calls: dict[str, Sampling]

    def describe(self) -> dict[str, Any]:
        out: dict[str, Any] = {"registry_entry": self.entry}
        if "reason" in self.calls:
            out["persistent_memory"] = False
        out["calls"] = {k: {"temperature": v.temperature, "max_tokens": v.max_tokens}
                        for k, v in self.calls.items()}
        return out


def solver(name: str, data_dir: Path | None) -> Solver:
    """The published runs' solver for `--solver name`, read from upstream's registry."""
    file, entry = REGISTRY_ENTRIES[name]
    path = resolve(BENCH, list(DATA_FILES), file.relpath, data_dir)
    fix = f"re-fetch it with `mindprobe data fetch {BENCH}`"
    import yaml

    try:
        spec = (yaml.safe_load(path.read_text(encoding="utf-8")) or {})[entry]
        if name == "direct":
            return Solver(name, entry, {"answer": _sampling(spec)})
        args = spec["args"]
        if not spec["class"].endswith(":CoTSolver"):
            raise ValueError(f"{entry} is not a CoTSolver")
        # Upstream's defaults (cot.py) unless the entry overrides them: refused, not ignored.
        overridden = [arg for arg, _ in _COT.values() if arg in args]
        if overridden:
            raise ValueError(f"{entry} sets {', '.join(overridden)}")
        if args.get("persistent_memory", True) is not False:
            raise ValueError(f"{entry} keeps private memories (persistent_memory), a protocol "
                             "mindprobe does not implement")
        _python(COT_SOLVER_FILE, data_dir)  # the protocol implemented here, pinned
        return Solver(name, entry, {"reason": _sampling(args["cot_solver"]),
                                    "answer": _sampling(args["extract_solver"])})
    except (KeyError, TypeError, ValueError, AttributeError, yaml.YAMLError) as exc:
        raise DataError(f"{path}: registry entry {entry} is not what mindprobe reads "
                        f"({type(exc).__name__}: {exc}); {fix}") from None


def _sampling(spec: dict[str, Any]) -> Sampling:
    extra = spec["args"]["completion_fn_options"]["extra_options"]
    temperature, max_tokens = extra["temperature"], extra["max_tokens"]
    if not isinstance(temperature, int | float) or not isinstance(max_tokens, int):
        raise ValueError("temperature/max_tokens are not numbers")
    return Sampling(temperature, max_tokens)
