"""SORT prompts (spec §4.1–§4.2): 13 configs as data, rendered exactly in upstream's order.

The wording is mindprobe's own (upstream's YAML text is not reproduced); what is kept is the
structure that scores depend on: which pre-excerpt and post-excerpt family each config uses,
the ``<tag>`` substitution order, pre + post with **no separator** (the published excerpt's
trailing blank line separates them), label substitution last, and the answer prefix
``Answer: Segment`` so that the next token is the label.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mindprobe.errors import UsageError

LABELS: tuple[str, str] = ("A", "B")
TASK_TYPES: tuple[str, ...] = ("first", "last")
ANSWER_PREFIX = "Answer: Segment"

_SYSTEM = "You are an assistant who is helpful, respectful and honest."
_SYSTEM_STRICT = (_SYSTEM + " Reply only with <label_list[0]> or <label_list[1]>, "
                  "nothing else.")

PRE_EXCERPT: dict[str, str] = {
    "Pa": ("Please read the following extract from the book <booktitle> slowly, making sure "
           "you understand it fully. Here is the extract: <excerpt>"),
    "Pb": ("I need you to read the following extract from the book <booktitle> slowly, "
           "making sure you understand it fully. Here is the extract: <excerpt>"),
    "Pc": "Read the following excerpt with care. This is the relevant passage: <excerpt>",
}
_ASK = "<label_list[0]> or <label_list[1]>?"
POST_EXCERPT: dict[str, str] = {
    "Q0": ("Below are pairs of text fragments from <booktitle>. For each pair, decide which "
           "fragment occurs <tasktype> in the book. There will be 10 such pairs.\n<segments>"
           "Which fragment occurs <tasktype> in the book, " + _ASK),
    "Q1": ("Your goal is to tell which segment, <label_list[0]> or <label_list[1]>, comes "
           "<tasktype> in <booktitle>. Read both segments closely to work out their order, "
           "then reply with <label_list[0]> or <label_list[1]>.\n<segments>"
           "Which segment comes <tasktype> in the book, " + _ASK),
    "Q2": ("Try to recall which segment, <label_list[0]> or <label_list[1]>, appears "
           "<tasktype> in <booktitle>. Read both segments closely and remember their order, "
           "then reply with <label_list[0]> or <label_list[1]>.\n<segments>"
           "Which segment appears <tasktype> in the book, " + _ASK),
    "Q3": ("Here are two segments of <booktitle>, labelled <label_list[0]> and "
           "<label_list[1]>. Recall the order in which they occur in the book and say which "
           "one comes <tasktype>.\n<segments>Which segment comes <tasktype>, " + _ASK),
    "Q4": ("You will see two short passages of a book, marked <label_list[0]> and "
           "<label_list[1]>. Say which passage occurs <tasktype> in <booktitle>; think back "
           "to where each one comes from.\n<segments>Which passage occurs <tasktype>, "
           + _ASK),
    "Q5": ("This is your task: you are given two segments of <booktitle>, <label_list[0]> "
           "and <label_list[1]>. State which segment occurs <tasktype>; try to remember where "
           "each one appears.\n<segments>Which segment occurs <tasktype>, " + _ASK),
}
# Config number → (pre family, post family), the mapping of spec §4.2.
FAMILIES: tuple[tuple[str, str], ...] = (
    ("Pa", "Q0"), ("Pb", "Q1"), ("Pb", "Q2"), ("Pb", "Q3"), ("Pb", "Q4"), ("Pb", "Q5"),
    ("Pc", "Q0"), ("Pc", "Q1"), ("Pc", "Q2"), ("Pc", "Q3"), ("Pc", "Q4"), ("Pc", "Q5"),
    ("Pb", "Q2"),
)


@dataclass(frozen=True)
class PromptConfig:
    """One prompt config (the fields of an upstream prompt YAML) plus its family names."""

    name: str
    system_prompt: str
    pre_excerpt: str
    post_excerpt: str
    model_answer_prefix: str = ANSWER_PREFIX
    pre_family: str = ""
    post_family: str = ""


PROMPT_CONFIGS: dict[str, PromptConfig] = {
    f"prompt_{i}": PromptConfig(
        name=f"prompt_{i}", system_prompt=_SYSTEM_STRICT if i == 12 else _SYSTEM,
        pre_excerpt=PRE_EXCERPT[pre], post_excerpt=POST_EXCERPT[post],
        pre_family=pre, post_family=post)
    for i, (pre, post) in enumerate(FAMILIES)
}
DEFAULT_PROMPT = "prompt_0"


def get_prompt_config(name: str) -> PromptConfig:
    """Config by name (``prompt_0`` … ``prompt_12``, ``.yaml`` suffix tolerated)."""
    key = name.removesuffix(".yaml")
    if key not in PROMPT_CONFIGS:
        raise UsageError(f"unknown SORT prompt {name!r}; known: {', '.join(PROMPT_CONFIGS)}")
    return PROMPT_CONFIGS[key]


@dataclass(frozen=True)
class RenderedPrompt:
    """A rendered SORT prompt: system text, user text and the assistant answer prefix."""

    system: str
    user: str
    answer_prefix: str
    use_system_prompt: bool = True

    def messages(self, system_role: bool = True) -> list[dict[str, str]]:
        """Chat messages; without a system role the system text opens the user turn."""
        if not self.use_system_prompt:
            return [{"role": "user", "content": self.user}]
        if system_role:
            return [{"role": "system", "content": self.system},
                    {"role": "user", "content": self.user}]
        return [{"role": "user", "content": f"{self.system}\n\n{self.user}"}]

    def prefix(self, add_space: bool = False) -> str:
        """Answer prefix for local chat models (+1 space for tokenizers with space tokens)."""
        return self.answer_prefix + (" " if add_space else "")

    def raw(self, add_space: bool = False) -> str:
        """Plain completion prompt: system, blank line, user, newline, answer prefix.

        mindprobe's choice for completion-only backends; upstream always used chat templates.
        """
        head = f"{self.system}\n\n" if self.use_system_prompt else ""
        return f"{head}{self.user}\n{self.prefix(add_space)}"


def is_wrapped(text: str) -> bool:
    """Published Book-SORT strings start with ``*`` and end with ``*`` (excerpts: ``*\\n\\n``)."""
    return text.startswith("*") and text.rstrip("\n").endswith("*")


def published_segment(text: str) -> str:
    """Segment in the published ``*…*`` form (unchanged if already wrapped)."""
    return text if is_wrapped(text) else f"*{text}*"


def published_excerpt(text: str) -> str:
    """Excerpt in the published ``*…*\\n\\n`` form (unchanged if already wrapped)."""
    return text if is_wrapped(text) else f"*{text}*\n\n"


def render_segments(segment_1: str, segment_2: str, present_seg1_first: int | bool) -> str:
    """``Segment <A>: … Segment <B>: …`` + LF; the earlier segment is A iff present_seg1_first."""
    first, second = (segment_1, segment_2) if present_seg1_first else (segment_2, segment_1)
    return f"Segment <label_list[0]>: {first} Segment <label_list[1]>: {second}\n"


def _labelled(text: str, labels: Sequence[str]) -> str:
    return text.replace("<label_list[0]>", labels[0]).replace("<label_list[1]>", labels[1])


def render_prompt(config: PromptConfig | str, row: Mapping[str, Any], *,
                  in_context: bool = True, task_type: str = "first",
                  labels: Sequence[str] = LABELS, use_system_prompt: bool = True,
                  wrap: bool = True, excerpt: str | None = None) -> RenderedPrompt:
    """Render one dataset row (spec §4.1 steps 1–7).

    ``row`` needs book_title, segment_1, segment_2, present_seg1_first and, in context,
    excerpt_text. ``wrap`` puts unwrapped texts into the published ``*…*`` form.
    ``excerpt`` replaces the row's excerpt (e.g. retrieved passages) in context.
    """
    cfg = get_prompt_config(config) if isinstance(config, str) else config
    if task_type not in TASK_TYPES:
        raise UsageError(f"unknown task type {task_type!r}; choose first or last")
    seg1, seg2 = str(row["segment_1"]), str(row["segment_2"])
    if wrap:
        seg1, seg2 = published_segment(seg1), published_segment(seg2)
    segments = render_segments(seg1, seg2, int(row["present_seg1_first"]))
    title = str(row["book_title"])
    pre = ""
    if in_context:
        text = str(row["excerpt_text"]) if excerpt is None else excerpt
        text = published_excerpt(text) if wrap else text
        pre = (cfg.pre_excerpt.replace("<booktitle>", title).replace("<tasktype>", task_type)
               .replace("<excerpt>", text))
    post = (cfg.post_excerpt.replace("<booktitle>", title).replace("<tasktype>", task_type)
            .replace("<segments>", segments))
    system = cfg.system_prompt.replace("<tasktype>", task_type)
    return RenderedPrompt(system=_labelled(system, labels), user=_labelled(pre + post, labels),
                          answer_prefix=_labelled(cfg.model_answer_prefix, labels),
                          use_system_prompt=use_system_prompt)


def ground_truth(present_seg1_first: int | bool, task_type: str = "first",
                 labels: Sequence[str] = LABELS) -> str:
    """Correct label: for ``first`` A iff the earlier segment is shown as A; ``last`` flips."""
    earlier_is_a = bool(present_seg1_first)
    if task_type == "last":
        earlier_is_a = not earlier_is_a
    return labels[0] if earlier_is_a else labels[1]
