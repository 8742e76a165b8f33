"""SORT prompts rendered exactly as upstream's `sort/evaluation/evaluation.py` renders them.

The wording is upstream's own, read from its files (`upstream.py`): a configuration's YAML
fields and the segments f-string of `evaluation.py`. What is kept here is upstream's procedure:

1. segments: upstream's f-string, the earlier segment first iff `present_seg1_first`;
2. pre = pre_excerpt with `<booktitle>`, `<tasktype>`, `<excerpt>` replaced, in that order
   (no-context: pre = "");  post = post_excerpt with `<booktitle>`, `<tasktype>`, `<segments>`;
   system = system_prompt with `<tasktype>`;
3. user = pre + post, **no separator**; messages = [system, user] (or [user] without the
   system prompt);
4. chat APIs (upstream's `openai` path): no answer prefix; a space appended to the user
   message when the model's tokenizer encodes spaces as separate tokens; the labels
   `<label_list[0]>`, `<label_list[1]>` replaced in that message only;
5. local models (upstream's vLLM/HF path): the chat template applied to the messages (tags
   still in them) with the generation prompt, then `model_answer_prefix`, then that space, and
   the labels replaced in the whole prompt.

`render_pre_excerpt` / `render_post_excerpt` fill one configuration's parts on their own (the
fine-tune corpus renders the pre-excerpt of a configuration with a book chunk).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mindprobe.benchmarks.sort.upstream import (
    EvaluationCode,
    PromptConfig,
    evaluation_code,
    load_config,
)
from mindprobe.errors import UsageError

if TYPE_CHECKING:
    from mindprobe.core.model import Model

LABELS: tuple[str, str] = ("A", "B")
#: `first` is upstream's (its sweep's only choice); `last` asks for the later segment.
TASK_TYPES: tuple[str, ...] = ("first", "last")
DEFAULT_PROMPT = "prompt_0"
_LABEL_TAGS = ("<label_list[0]>", "<label_list[1]>")


def fill_labels(text: str, labels: Sequence[str] = LABELS) -> str:
    """Upstream's last step: `<label_list[0]>` -> A, then `<label_list[1]>` -> B."""
    return text.replace(_LABEL_TAGS[0], labels[0]).replace(_LABEL_TAGS[1], labels[1])


def render_pre_excerpt(config: PromptConfig, book_title: str, excerpt: str,
                       task_type: str = "first") -> str:
    """A configuration's pre-excerpt for one excerpt (labels not yet filled)."""
    return (config.pre_excerpt.replace("<booktitle>", book_title)
            .replace("<tasktype>", task_type).replace("<excerpt>", excerpt))


def render_post_excerpt(config: PromptConfig, book_title: str, segments: str,
                        task_type: str = "first") -> str:
    """A configuration's post-excerpt around a rendered segments block (labels not filled)."""
    return (config.post_excerpt.replace("<booktitle>", book_title)
            .replace("<tasktype>", task_type).replace("<segments>", segments))


def render_segments(code: EvaluationCode, segment_1: str, segment_2: str,
                    present_seg1_first: int | bool, labels: Sequence[str] = LABELS) -> str:
    """Upstream's segments block (its f-string), the earlier segment first iff
    present_seg1_first."""
    template = code.segments_first if present_seg1_first else code.segments_swapped
    return template.render(cfg_label_list_0=labels[0], cfg_label_list_1=labels[1],
                           segment_1=segment_1, segment_2=segment_2)


@dataclass(frozen=True)
class RenderedPrompt:
    """One row rendered up to upstream's `messages` (label tags still in them), ready for
    either of upstream's two paths."""

    messages: tuple[Mapping[str, str], ...]
    answer_prefix: str
    labels: tuple[str, str] = LABELS

    def template_messages(self) -> list[dict[str, str]]:
        """The messages upstream hands to `apply_chat_template` (label tags unfilled)."""
        return [dict(m) for m in self.messages]

    def chat(self, add_space: bool = False) -> list[dict[str, str]]:
        """Upstream's chat-API messages: the last message gets the space (if any), then its
        labels; no answer prefix."""
        out = self.template_messages()
        last = out[-1]["content"] + (" " if add_space else "")
        out[-1] = {**out[-1], "content": fill_labels(last, self.labels)}
        return out

    def completion(self, head: str, add_space: bool = False) -> str:
        """Upstream's prompt for local models: `head` (the chat template applied to
        `template_messages()` with the generation prompt) + answer prefix + space, labels
        filled in the whole text."""
        return fill_labels(head + self.answer_prefix + (" " if add_space else ""), self.labels)

    def prefix_messages(self, add_space: bool = False) -> list[dict[str, str]]:
        """For servers that continue a final assistant turn but do not expose their template:
        the messages and the answer prefix as that turn, labels filled everywhere."""
        out = [{**m, "content": fill_labels(m["content"], self.labels)}
               for m in self.template_messages()]
        prefix = fill_labels(self.answer_prefix + (" " if add_space else ""), self.labels)
        return [*out, {"role": "assistant", "content": prefix}]


def is_wrapped(text: str) -> bool:
    """Published Book-SORT strings start with ``*`` and end with ``*`` (excerpts: ``*\\n\\n``)."""
    return text.startswith("*") and text.rstrip("\n").endswith("*")


def published_segment(text: str) -> str:
    """Segment in the published ``*…*`` form (unchanged if already wrapped)."""
    return text if is_wrapped(text) else f"*{text}*"


def published_excerpt(text: str) -> str:
    """Excerpt in the published ``*…*\\n\\n`` form (unchanged if already wrapped)."""
    return text if is_wrapped(text) else f"*{text}*\n\n"


def get_prompt_config(name: str, data_dir: Path | None = None) -> PromptConfig:
    """Upstream's configuration by name (`prompt_0` … `prompt_12`, `.yaml` tolerated)."""
    return load_config(name, data_dir)


def render_prompt(config: PromptConfig | str, row: Mapping[str, Any], *,
                  in_context: bool = True, task_type: str = "first",
                  labels: Sequence[str] = LABELS, use_system_prompt: bool = True,
                  wrap: bool = True, excerpt: str | None = None,
                  code: EvaluationCode | None = None,
                  data_dir: Path | None = None) -> RenderedPrompt:
    """Render one dataset row as upstream's `experiment()` does (module docstring, 1-3).

    ``row`` needs book_title, segment_1, segment_2, present_seg1_first and, in context,
    excerpt_text. ``wrap`` puts unwrapped texts into the published ``*…*`` form (the rows
    upstream reads are so wrapped). ``excerpt`` replaces the row's excerpt (retrieved
    passages, mindprobe's retrieval condition). ``code``: upstream's evaluation.py as read
    (else read from ``data_dir`` or the data cache).
    """
    cfg = load_config(config, data_dir) if isinstance(config, str) else config
    if task_type not in TASK_TYPES:
        raise UsageError(f"unknown task type {task_type!r}; choose first or last")
    code = code or evaluation_code(data_dir)
    seg1, seg2 = str(row["segment_1"]), str(row["segment_2"])
    if wrap:
        seg1, seg2 = published_segment(seg1), published_segment(seg2)
    segments = render_segments(code, seg1, seg2, int(row["present_seg1_first"]), labels)
    title = str(row["book_title"])
    pre = ""
    if in_context:
        text = str(row["excerpt_text"]) if excerpt is None else excerpt
        pre = render_pre_excerpt(cfg, title, published_excerpt(text) if wrap else text,
                                 task_type)
    user = pre + render_post_excerpt(cfg, title, segments, task_type)
    system = cfg.system_prompt.replace("<tasktype>", task_type)
    messages = ({"role": "system", "content": system}, {"role": "user", "content": user}) \
        if use_system_prompt else ({"role": "user", "content": user},)
    return RenderedPrompt(messages, cfg.model_answer_prefix, (labels[0], labels[1]))


def ground_truth(present_seg1_first: int | bool, task_type: str = "first",
                 labels: Sequence[str] = LABELS) -> str:
    """Correct label: for ``first`` A iff the earlier segment is shown as A; ``last`` flips."""
    earlier_is_a = bool(present_seg1_first)
    if task_type == "last":
        earlier_is_a = not earlier_is_a
    return labels[0] if earlier_is_a else labels[1]


def whitespace_probe(data_dir: Path | None = None) -> str:
    """The sentence upstream tokenizes to decide the space after the answer prefix."""
    return evaluation_code(data_dir).whitespace_probe


async def needs_space(tokenize: Any, probe: str) -> bool:
    """Upstream's rule: a space goes after the answer prefix iff the tokenizer turns every
    space of `probe` into the token it encodes `" "` as (spaces as separate tokens).
    `tokenize(text)` gives token ids with special tokens added, like `tokenizer.encode`."""
    spaces = await tokenize(" ")
    if not spaces:
        return False
    space = spaces[-1]
    return probe.count(" ") == sum(t == space for t in await tokenize(probe))


#: How a request is sent (recorded as the manifest's `request_path`), and what it means.
PATHS = {
    "prompt": "prompt: the backend's chat template applied to upstream's messages, then "
              "upstream's answer prefix (upstream's vLLM/HF path)",
    "prefix": "messages with upstream's answer prefix as an assistant turn to continue: the "
              "server renders it with its own template (upstream renders the template, then "
              "appends the prefix)",
    "chat": "messages without the answer prefix (upstream's path for chat APIs)",
}


def request_path(model: Model, scoring: str) -> str:
    """`prompt` where the backend exposes its chat template (upstream's path for local
    models), `prefix` where it continues an assistant turn, else `chat`."""
    if scoring == "logprob" and model.can("template"):
        return "prompt"
    if scoring == "logprob" and model.can("prefix"):
        return "prefix"
    return "chat"
