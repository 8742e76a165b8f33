"""WorldSense prompting strategies: what is sent for one trial, and how the reply is read.

The paper compares prompting strategies (labels in its analysis: basic, direct, clarified, COT,
incontext_IID, incontext_DIFFERENTCAT) but its wordings are not published. The templates here
are mindprobe's own, short on purpose, and recorded verbatim in every run's config
(`describe()`), so a reader of a manifest knows exactly what was asked:

- basic: the trial text verbatim (spec §4); the answer is the whole reply.
- direct: the trial text + an instruction to give the bare answer, nothing else.
- clarified: the trial text + the question restated in plain words with the meaning of each
  option.
- cot: the trial text + "think step by step, then end with a line `Answer: X`"; only that
  last `Answer:` line is scored (the reasoning stays in the record, unscored).
- incontext-iid / incontext-diffcat: k worked examples (earlier chat turns: the example's
  text, then its gold answer) before the trial text verbatim. IID: examples of the same
  problem category as the question; DIFFERENTCAT: of the other two. Categories are the three
  answer formats, which is also all the official training sets say about a record:
  Infer (TRUE/FALSE), Consist (POSSIBLE/IMPOSSIBLE), Compl (1/2/3).
- constrained: the trial text verbatim, the answer set enforced by the backend's grammar.

In-context examples come from the official training set (`training_set/trials_10k.jsonl.bz2`,
sha256-verified; other skins than the test set) when it is present. `worldsense:fresh` and
`--data-file` runs without it draw from freshly generated training-like trials (another seed
than the questions). Either way an example is never a trial of the run's question set (same
text) and never of a question's tuple (same tuple_ID), and one question's examples come from
distinct tuples; they are drawn per question with a seeded RNG, so reruns ask the same.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mindprobe.core.data import read_jsonl_bz2
from mindprobe.errors import DataError

# name on the command line -> prompting label of the analysis (spec §3.6 order)
LABELS: dict[str, str] = {
    "basic": "basic",
    "direct": "direct",
    "clarified": "clarified",
    "cot": "COT",
    "incontext-iid": "incontext_IID",
    "incontext-diffcat": "incontext_DIFFERENTCAT",
    "constrained": "constrained",
}
NAMES = list(LABELS)
INCONTEXT = ("incontext-iid", "incontext-diffcat")
#: Strategies whose prompt can be scored by log-probability of the allowed answers.
LOGPROB_OK = ("basic", "direct", "clarified", *INCONTEXT)

DEFAULT_SHOTS = 3
#: Default --max-tokens: a bare answer, or a chain of thought ending in `Answer: X`.
ANSWER_MAX_TOKENS = 16
COT_MAX_TOKENS = 1024

TRAINING_FILE = "training_set/trials_10k.jsonl.bz2"
#: Seed offset of the generated example pool (the questions use the run's seed itself).
POOL_SEED_OFFSET = 100_003
POOL_TUPLES_PER_CELL = 12

# --------------------------------------------------------------------------- templates
DIRECT_TEMPLATE = "{text}\n\nReply with the answer only: {options}. No explanation, no other words."
CLARIFIED_TEMPLATE = "{text}\n\n{clarification}\nReply with the answer only: {options}."
CLARIFICATIONS: dict[str, str] = {
    "TF": ("In other words: taking only the description above as true, is the sentence true "
           "or false?\n"
           "- TRUE means the description makes the sentence true.\n"
           "- FALSE means the description makes the sentence false."),
    "PI": ("In other words: can all of these statements be true at the same time?\n"
           "- POSSIBLE means yes: there is an arrangement in which every statement holds.\n"
           "- IMPOSSIBLE means no: some of the statements contradict each other."),
    "123": ("In other words: does the description settle which of the two alternatives holds?\n"
            "- 1 means the description implies alternative (1).\n"
            "- 2 means the description implies alternative (2).\n"
            "- 3 means the description does not say enough to decide between (1) and (2)."),
}
COT_TEMPLATE = (
    "{text}\n\nDisregard the request to answer without explanation: think step by step first, "
    "writing out your reasoning. Then end your reply with a last line of the form "
    "\"Answer: X\", where X is one of {options} (for example \"Answer: {example}\")."
)
COT_REASK_TEMPLATE = (
    "Give your final answer on a last line of the form \"Answer: X\", where X is one of "
    "{options}."
)
REASK_TEMPLATE = "Only respond with one of these options: {allowed}"
INCONTEXT_LAYOUT = (
    "{k} worked examples as earlier turns of the chat (user: the example trial's text "
    "verbatim; assistant: its gold answer, e.g. TRUE or 1), then the question's text verbatim "
    "as the last user turn"
)
_KIND_OF = {"TRUE": "TF", "FALSE": "TF", "POSSIBLE": "PI", "IMPOSSIBLE": "PI",
            "1": "123", "2": "123", "3": "123"}
#: Problem category by answer format (the training sets carry nothing else).
CATEGORY = {"TF": "Infer", "PI": "Consist", "123": "Compl"}
_STRIP = " \t\n\r\"'`*.()[]:"
_ANSWER_LINE = re.compile(r"^[ \t>*_#-]*(?:final[ \t]+)?answer[ \t*_]*:[ \t*_]*(.*?)[ \t]*$",
                          re.IGNORECASE | re.MULTILINE)


def label_of(strategy: str) -> str:
    return LABELS[strategy]


def kind_of(allowed: Sequence[str]) -> str:
    """TF, PI or 123: the trial's answer format."""
    try:
        return _KIND_OF[allowed[0]]
    except (KeyError, IndexError):
        raise DataError(f"unknown WorldSense answer set {list(allowed)!r}") from None


def category_of(allowed: Sequence[str]) -> str:
    return CATEGORY[kind_of(allowed)]


def options_text(allowed: Sequence[str]) -> str:
    """`TRUE or FALSE`, `1, 2 or 3`."""
    items = list(allowed)
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " or " + items[-1]


# --------------------------------------------------------------------------- answers
def normalise_answer(text: str, allowed: Sequence[str]) -> str | None:
    """The allowed answer a reply states, tolerating case, quotes, brackets and a final period
    (e.g. `(1)`, `'TRUE'.`, `**False**`), or None. Nothing looser: no search inside prose."""
    t = text.strip().strip(_STRIP).strip()
    for a in allowed:
        if t == a or t.upper() == a.upper():
            return a
    return None


def parse_cot(text: str, allowed: Sequence[str]) -> str | None:
    """The answer of a chain-of-thought reply: the value of its last `Answer: X` line.

    Several `Answer:` lines: the last one counts (the model's final word). No such line: None,
    even when an allowed answer appears inside the reasoning. A last line whose value is not
    an allowed answer (`Answer: maybe`, `Answer:` alone): None, earlier lines are not tried."""
    values = _ANSWER_LINE.findall(text)
    if not values:
        return None
    return normalise_answer(values[-1], allowed)


def parse_reply(strategy: str, text: str, allowed: Sequence[str], reasked: bool = False
                ) -> str | None:
    """The allowed answer of a reply under `strategy` (None: invalid). After a re-ask a CoT
    reply may also be the bare answer, which is what the re-ask asks for."""
    if strategy == "cot":
        found = parse_cot(text, allowed)
        if found is None and reasked:
            found = normalise_answer(text, allowed)
        return found
    return normalise_answer(text, allowed)


def reask_message(strategy: str, allowed: Sequence[str]) -> str:
    """What is said after an invalid answer (the README's insistence; CoT: the answer line)."""
    if strategy == "cot":
        return COT_REASK_TEMPLATE.format(options=options_text(allowed))
    return REASK_TEMPLATE.format(allowed=", ".join(allowed))


def reply_choices(strategy: str, allowed: Sequence[str]) -> list[str]:
    """The closed reply set (the random model samples it; constrained backends enforce it)."""
    if strategy == "cot":
        return [f"Answer: {a}" for a in allowed]
    return list(allowed)


def human_wrap(strategy: str):  # noqa: ANN201 (a tiny callable or None)
    """A person answering a CoT prompt types the answer; it becomes the `Answer:` line."""
    if strategy != "cot":
        return None
    return lambda typed: typed if _ANSWER_LINE.search(typed) else f"Answer: {typed.strip()}"


# --------------------------------------------------------------------------- prompts
@dataclass(frozen=True)
class Example:
    """One worked example: where it comes from (a training line or a generated Key)."""

    id: str
    text: str
    gold: str
    tuple_id: str | None = None

    @property
    def category(self) -> str:
        return CATEGORY[_KIND_OF[self.gold]]


#: Strategies that send the trial's text as it is.
_AS_IS = frozenset(("basic", "constrained", *INCONTEXT))


def render(strategy: str, trial: dict[str, Any], examples: Sequence[Example] = ()
           ) -> list[dict[str, str]]:
    """The chat messages sent for `trial` under `strategy`."""
    text, allowed = trial["text"], trial["expectedresp"]
    if strategy in _AS_IS:
        content = text
    elif strategy == "direct":
        content = DIRECT_TEMPLATE.format(text=text, options=options_text(allowed))
    elif strategy == "clarified":
        content = CLARIFIED_TEMPLATE.format(text=text, options=options_text(allowed),
                                            clarification=CLARIFICATIONS[kind_of(allowed)])
    elif strategy == "cot":
        content = COT_TEMPLATE.format(text=text, options=options_text(allowed),
                                      example=allowed[0])
    else:
        raise ValueError(f"unknown WorldSense prompting strategy {strategy!r}")
    messages: list[dict[str, str]] = []
    for ex in examples:
        messages.append({"role": "user", "content": ex.text})
        messages.append({"role": "assistant", "content": ex.gold})
    messages.append({"role": "user", "content": content})
    return messages


def describe(strategy: str, shots: int = 0, examples: dict[str, Any] | None = None
             ) -> dict[str, Any]:
    """The strategy's full wording for the run's config (templates verbatim, `{text}` = the
    trial text, `{options}` = its answers as in `TRUE or FALSE`)."""
    out: dict[str, Any] = {"strategy": strategy, "label": LABELS[strategy]}
    if strategy == "basic":
        out["template"] = "{text}"
        out["answer"] = "the whole reply is the answer (case, quotes, brackets tolerated)"
    elif strategy == "constrained":
        out["template"] = "{text}"
        out["answer"] = "the backend's grammar only lets the model produce an allowed answer"
    elif strategy == "direct":
        out["template"] = DIRECT_TEMPLATE
    elif strategy == "clarified":
        out["template"] = CLARIFIED_TEMPLATE
        out["clarification"] = dict(CLARIFICATIONS)
    elif strategy == "cot":
        out["template"] = COT_TEMPLATE
        out["answer"] = ("the value of the reply's last line of the form `Answer: X`; no such "
                         "line = invalid (an answer inside the reasoning is not read); the "
                         "reasoning is kept in the record, unscored")
        out["reask_template"] = COT_REASK_TEMPLATE
    else:
        out["template"] = "{text}"
        out["layout"] = INCONTEXT_LAYOUT.format(k=shots)
        out["examples_from"] = ("same category as the question" if strategy == "incontext-iid"
                                else "the two other categories")
        out["categories"] = {v: k for k, v in CATEGORY.items()}
        out["shots"] = shots
        out["examples"] = examples or {}
    if strategy != "cot":
        out.setdefault("reask_template", REASK_TEMPLATE)
    return out


# --------------------------------------------------------------------------- example pools
def read_training(path: Path) -> list[list[str]]:
    """[text, gold] of each record of an official training file (spec §2 format)."""

    def parse(rec: dict[str, Any]) -> list[str]:
        (msg,) = rec["dialog_history"]["messages"]
        text, gold = msg["content"], str(rec["target_message"])
        if gold not in _KIND_OF:
            raise ValueError(f"unknown target {gold!r}")
        return [text, gold]

    return read_jsonl_bz2(path, "training record", parse)


class ExamplePool:
    """Candidate worked examples by category, with everything of the question set excluded."""

    def __init__(self, examples: Iterable[Example], questions: Sequence[dict[str, Any]]) -> None:
        texts = {q["text"] for q in questions}
        tuples = {str(q["tuple_ID"]) for q in questions}
        self.by_category: dict[str, list[Example]] = {c: [] for c in CATEGORY.values()}
        self.excluded = 0
        for ex in examples:
            if ex.text in texts or (ex.tuple_id is not None and ex.tuple_id in tuples):
                self.excluded += 1
                continue
            self.by_category[ex.category].append(ex)

    @classmethod
    def from_training(cls, records: Sequence[Sequence[str]], questions: Sequence[dict[str, Any]]
                      ) -> ExamplePool:
        name = Path(TRAINING_FILE).name.split(".")[0]
        return cls((Example(f"{name}:{i + 1}", text, gold)
                    for i, (text, gold) in enumerate(records)), questions)

    @classmethod
    def from_generated(cls, trials: Sequence[dict[str, Any]], questions: Sequence[dict[str, Any]]
                       ) -> ExamplePool:
        return cls((Example(str(t["Key"]), t["text"], t["goldresp"], str(t["tuple_ID"]))
                    for t in trials), questions)

    def draw(self, strategy: str, question: dict[str, Any], k: int, seed: int) -> list[Example]:
        """k examples for one question: seeded by (seed, Key), from distinct tuples, never the
        question's own tuple; IID from its category, DIFFERENTCAT from the two others."""
        own = category_of(question["expectedresp"])
        if strategy == "incontext-iid":
            cands = list(self.by_category[own])
        else:
            cands = [ex for c, exs in self.by_category.items() if c != own for ex in exs]
        rng = random.Random(f"worldsense-shots|{seed}|{question['Key']}")
        rng.shuffle(cands)
        out: list[Example] = []
        used = {str(question.get("tuple_ID"))}
        for ex in cands:
            if ex.tuple_id is not None and ex.tuple_id in used:
                continue
            out.append(ex)
            if ex.tuple_id is not None:
                used.add(ex.tuple_id)
            if len(out) == k:
                break
        if len(out) < k:
            raise DataError(f"only {len(out)} in-context examples available for a {own} "
                            f"question under {strategy}; lower --shots")
        return out
