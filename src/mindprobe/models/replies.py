"""What a server's reply may hold, taken as it comes: every legal form of a message's content
(a string, null, a list of parts) and the usage it reports, checked before anything believes
it. A form no server should send (an integer, an object) is an invalid reply with its reason,
never an internal error; usage that is negative, not finite or absurd (over 10^9 tokens) is
ignored, and the run says so once (`ReplyTally`), not once per item."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import orjson

from mindprobe.core.inputs import out_of_range

#: No reply has more tokens than this: a count above it is a server's bug, not a usage.
USAGE_MAX = 10**9

#: The part types whose `text` is the reply (OpenAI chat's "text", the Responses API's
#: "output_text"); every other part (an image, a refusal, audio) is ignored and counted.
TEXT_PARTS = frozenset({"text", "output_text"})


def load_reply(raw: bytes) -> Any:
    """A reply body as JSON; what orjson refuses but Python's parser reads (NaN, Infinity, a
    number too large for a double) is read too, so its usage is checked, not the body lost."""
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        return json.loads(raw)


def an_object(value: Any, what: str) -> dict[str, Any]:
    """`value` when it is a JSON object; else the body is malformed (a TypeError, retried as
    a garbled body is), never an AttributeError deep in the parsing."""
    if not isinstance(value, dict):
        raise TypeError(f"{what} is {type(value).__name__}, not an object")
    return value


@dataclass(frozen=True)
class ReplyText:
    """A message's content as text: `ignored` parts that were not text, and `invalid` (the
    reason) when the content was of no legal form (the text is then empty)."""

    text: str
    ignored: int = 0
    invalid: str | None = None


def reply_text(content: Any) -> ReplyText:
    """The text of a message's `content` (or a completion's `text`): a string as it is, null
    as no text (a reasoning model's reply may hold only `reasoning_content`), a list of parts
    as its text parts joined in order."""
    if content is None:
        return ReplyText("")
    if isinstance(content, str):
        return ReplyText(content)
    if isinstance(content, list):
        texts = [p["text"] for p in content if isinstance(p, dict)
                 and p.get("type") in TEXT_PARTS and isinstance(p.get("text"), str)]
        return ReplyText("".join(texts), ignored=len(content) - len(texts))
    return ReplyText("", invalid=f"content is {_kind(content)} (expected a string, null or a list of "
                                 "parts)")


def _kind(value: Any) -> str:
    names = {bool: "a boolean", int: "an integer", float: "a number", dict: "an object"}
    return names.get(type(value), f"a {type(value).__name__}")


def usage_count(value: Any) -> int | None:
    """A reported token count: a whole number in 0..USAGE_MAX (0 when absent), else None;
    the range check is the one reader's (`core.inputs.out_of_range`)."""
    if type(value) is int and 0 <= value <= USAGE_MAX:  # what nearly every reply holds
        return value
    if value is None:
        return 0
    if out_of_range(value, 0, USAGE_MAX) is not None:
        return None
    if isinstance(value, float) and not value.is_integer():
        return None
    return int(value)


@dataclass
class ReplyUsage:
    """The usage of one reply, checked: `bad` names each field that was ignored."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_prompt_tokens: int = 0
    reasoning_tokens: int = 0
    bad: list[str] = field(default_factory=list)


def reply_usage(payload: dict[str, Any]) -> ReplyUsage:
    """`usage` of a reply (cached tokens from `prompt_tokens_details`, else llama.cpp's
    `timings.cache_n`), every field checked; an ignored field counts as 0."""
    out = ReplyUsage()
    usage = payload.get("usage")
    if usage is None:
        return out
    if not isinstance(usage, dict):
        out.bad.append(f"usage={_shown(usage)}")
        return out
    details = usage.get("prompt_tokens_details")
    details = details if isinstance(details, dict) else {}
    cached = details.get("cached_tokens")
    if cached is None:
        timings = payload.get("timings")
        cached = timings.get("cache_n") if isinstance(timings, dict) else None
    out_details = usage.get("completion_tokens_details")
    out_details = out_details if isinstance(out_details, dict) else {}
    for name, value in (("prompt_tokens", usage.get("prompt_tokens")),
                        ("completion_tokens", usage.get("completion_tokens")),
                        ("cached_prompt_tokens", cached),
                        ("reasoning_tokens", out_details.get("reasoning_tokens"))):
        n = usage_count(value)
        if n is None:
            out.bad.append(f"{name}={_shown(value)}")
        else:
            setattr(out, name, n)
    if out.cached_prompt_tokens > out.prompt_tokens:
        out.cached_prompt_tokens = out.prompt_tokens
    return out


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


class ReplyTally:
    """What a backend's replies held that the run should hear about, once: usage it ignored,
    invalid content, parts that were not text. `take` hands the warnings over and starts
    afresh (one run's worth each time)."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.bad_usage = 0
        self.bad_usage_example = ""
        self.invalid: Counter[str] = Counter()
        self.ignored_parts = 0
        self.replies_with_parts = 0

    def saw(self, text: ReplyText, usage: ReplyUsage) -> None:
        if usage.bad:
            self.bad_usage += 1
            self.bad_usage_example = self.bad_usage_example or ", ".join(usage.bad)
        if text.invalid:
            self.invalid[text.invalid] += 1
        if text.ignored:
            self.ignored_parts += text.ignored
            self.replies_with_parts += 1

    def absorb(self, other: ReplyTally) -> None:
        """Add `other`'s counts (a router's endpoints: one warning for all), emptying it."""
        self.bad_usage += other.bad_usage
        self.bad_usage_example = self.bad_usage_example or other.bad_usage_example
        self.invalid.update(other.invalid)
        self.ignored_parts += other.ignored_parts
        self.replies_with_parts += other.replies_with_parts
        other.reset()

    def take(self) -> list[str]:
        out = []
        if self.bad_usage:
            out.append(f"the server reported impossible token usage in {self.bad_usage} "
                       f"repl{'y' if self.bad_usage == 1 else 'ies'} (e.g. "
                       f"{self.bad_usage_example}; counts must be whole numbers in "
                       f"0..{USAGE_MAX:,}): those fields were ignored (counted as 0)")
        for reason, n in self.invalid.items():
            out.append(f"{n} repl{'y' if n == 1 else 'ies'} held no text ({reason}): "
                       "each is recorded as an invalid answer")
        if self.ignored_parts:
            n = self.replies_with_parts
            out.append(f"{self.ignored_parts} content part(s) that were not text, in {n} "
                       f"repl{'y' if n == 1 else 'ies'}, were ignored (the text parts were "
                       "joined in order)")
        self.reset()
        return out
