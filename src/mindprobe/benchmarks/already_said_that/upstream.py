"""Already Said That's wording and solvers, read from upstream's own files (openai/evals, MIT).

Nothing here is typed from upstream: the task description is `TASK_DESCRIPTION` of
`evals/elsuite/already_said_that/prompts.py`, filled as upstream's eval fills it (`str.format`
with the example item, spec §6); the chain-of-thought messages are `evals/solvers/prompts/cot.py`'s
defaults of `CoTSolver`; the sampling settings are those of the solver registry entries the
published runs used (`scripts/run_experiments.sh`: `generation/direct/gpt-4-turbo-preview` and
`already_said_that/cot/gpt-4-turbo-preview`). Where the spec paraphrases, these files are the
authority. A missing or altered file is one error naming it and `mindprobe data fetch`.

A base model is run as upstream runs one (`generation/hhh/gpt-4-base`, the README's "Direct
gpt-4-base" row; `already_said_that/cot_hhh/gpt-4-base`): `HHHSolver` puts the dialogues of
`evals/solvers/prompts/hhh.py` before the task, and `OpenAISolver` sends the chat as one text
prompt with the role prefixes of its `ROLE_TO_PREFIX`, stopping at them (`TextFormat`).
"""

from __future__ import annotations

import functools
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
    HHH_PROMPTS_FILE,
    HHH_SOLVER_FILE,
    OPENAI_SOLVER_FILE,
    PROMPTS_FILE,
    SOLVERS_FILE,
    TEXT_PROMPT_FILE,
)

BENCH = "already_said_that"
#: How upstream's `build_message` writes a main-task turn; the scorer depends on it (spec §5).
MAIN_PREFIX = "MAIN TASK - "
#: The registry entries of the published runs, per mindprobe solver.
REGISTRY_ENTRIES = {"direct": (DEFAULT_SOLVERS_FILE, "generation/direct/gpt-4-turbo-preview"),
                    "cot": (SOLVERS_FILE, "already_said_that/cot/gpt-4-turbo-preview")}
#: Those upstream runs a base model with.
BASE_REGISTRY_ENTRIES = {"direct": (DEFAULT_SOLVERS_FILE, "generation/hhh/gpt-4-base"),
                         "cot": (SOLVERS_FILE, "already_said_that/cot_hhh/gpt-4-base")}
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


@functools.lru_cache(maxsize=8)
def _registry(path: str) -> dict[str, Any]:
    """An upstream registry file (sha256-verified by `resolve`), parsed once per process with
    libyaml where PyYAML has it (every variant of a plan reads the same file)."""
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return yaml.load(Path(path).read_text(encoding="utf-8"), Loader=loader) or {}


def solver(name: str, data_dir: Path | None, base: bool = False) -> Solver:
    """The published runs' solver for `--solver name` (`base`: the one upstream runs a base
    model with, its `HHHSolver` layers unwrapped), read from upstream's registry."""
    file, entry = (BASE_REGISTRY_ENTRIES if base else REGISTRY_ENTRIES)[name]
    path = resolve(BENCH, list(DATA_FILES), file.relpath, data_dir)
    fix = f"re-fetch it with `mindprobe data fetch {BENCH}`"
    import yaml

    try:
        spec = _registry(str(path))[entry]
        if name == "direct":
            return Solver(name, entry, {"answer": _sampling(_unwrap(spec, base))})
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
        return Solver(name, entry, {"reason": _sampling(_unwrap(args["cot_solver"], base)),
                                    "answer": _sampling(_unwrap(args["extract_solver"], base))})
    except (KeyError, TypeError, ValueError, AttributeError, yaml.YAMLError) as exc:
        raise DataError(f"{path}: registry entry {entry} is not what mindprobe reads "
                        f"({type(exc).__name__}: {exc}); {fix}") from None


def _sampling(spec: dict[str, Any]) -> Sampling:
    extra = spec["args"]["completion_fn_options"]["extra_options"]
    temperature, max_tokens = extra["temperature"], extra["max_tokens"]
    if not isinstance(temperature, int | float) or not isinstance(max_tokens, int):
        raise ValueError("temperature/max_tokens are not numbers")
    return Sampling(temperature, max_tokens)


def _unwrap(spec: dict[str, Any], base: bool) -> dict[str, Any]:
    """The OpenAISolver inside a base model's `HHHSolver` (the only wrapper read)."""
    if not base:
        return spec
    if not spec["class"].endswith(":HHHSolver"):
        raise ValueError(f"{spec['class']} is not an HHHSolver")
    inner = spec["args"]["solver"]
    if not inner["class"].endswith(":OpenAISolver") or set(inner["args"]) - {
            "completion_fn_options"}:
        raise ValueError("the HHHSolver wraps something other than a plain OpenAISolver")
    return inner


@dataclass(frozen=True)
class TextFormat:
    """How upstream sends a chat to a base model: `HHHSolver` (hhh_solver.py) makes the first
    HHH message the task description and puts the others, then the task's own description as
    a system message, before the chat; `OpenAISolver` (openai_solver.py) renders all of it
    with `chat_prompt_to_text_prompt` (evals/prompt/base.py) and its `ROLE_TO_PREFIX`, stops
    at the stripped prefixes, and keeps the reply up to the first of them, stripped."""

    hhh: tuple[dict[str, str], ...]
    prefixes: dict[str, str]

    def messages(self, chat: list[dict[str, str]]) -> list[dict[str, str]]:
        """The messages `OpenAISolver` sees for `chat` (system prompt first)."""
        head = {"role": "system", "content": self.hhh[0]["content"]}
        return [head, *(dict(m) for m in self.hhh[1:]), *chat]

    def render(self, messages: list[dict[str, str]]) -> str:
        """The text prompt: one line per message after its role's prefix (a role without one:
        its name capitalised, then ": "), ending with the assistant's prefix, right-stripped."""
        if len(messages) == 1:
            return messages[0]["content"]
        cue = self.prefixes.get("assistant", "Assistant: ").rstrip()
        return (self._lines(messages) + cue).lstrip()

    def head(self, system: str) -> str:
        """What every chat's prompt starts with: the dialogues, then the task description."""
        return self._lines(self.messages([{"role": "system", "content": system}])).lstrip()

    def _lines(self, messages: list[dict[str, str]]) -> str:
        return "".join(self._prefix(m.get("name") or m["role"]) + m["content"] + "\n"
                       for m in messages)

    def _prefix(self, role: str) -> str:
        return self.prefixes.get(role, role.capitalize() + ": ")

    @property
    def stops(self) -> list[str]:
        """The message separators: generation stops at them."""
        return [v.strip() for v in self.prefixes.values() if v.strip()]

    def parse(self, raw: str) -> str:
        """The reply upstream keeps: up to the first separator, stripped."""
        for sep in self.stops:
            raw = raw.split(sep)[0].strip()
        return raw

    def describe(self) -> dict[str, Any]:
        return {"format": "text prompt, HHH dialogues first (upstream's base-model solver)",
                "role_prefixes": dict(self.prefixes), "stop": self.stops}


def text_format(data_dir: Path | None) -> TextFormat:
    """Upstream's base-model format, read from its files (all four pinned and verified)."""
    hhh_file = _python(HHH_PROMPTS_FILE, data_dir)
    hhh = hhh_file.literal("HHH_MSGS")
    prefixes = _python(OPENAI_SOLVER_FILE, data_dir).literal("ROLE_TO_PREFIX")
    for file in (HHH_SOLVER_FILE, TEXT_PROMPT_FILE):  # the protocols implemented here, pinned
        _python(file, data_dir)
    ok_msgs = isinstance(hhh, list) and hhh and all(
        isinstance(m, dict) and isinstance(m.get("role"), str)
        and isinstance(m.get("content"), str) for m in hhh)
    if not ok_msgs:
        raise hhh_file.error("HHH_MSGS is not a list of Message(role=..., content=...)")
    if not (isinstance(prefixes, dict) and all(isinstance(v, str) for v in prefixes.values())):
        raise DataError(f"ROLE_TO_PREFIX of {OPENAI_SOLVER_FILE.relpath} is not a dict of "
                        f"strings; re-fetch it with `mindprobe data fetch {BENCH}`")
    return TextFormat(tuple(hhh), prefixes)
