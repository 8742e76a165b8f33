"""What was sent: every request a session makes, as records store it, and how readers expand it.

Every record carries what its item sent under one field, `request`, and the raw reply under
`reply` (the benchmark's parsed answer lives in its own fields). One call is stored as

    {"messages": [...]} or {"prompt": "..."}, plus "params": {"max_tokens": …, "temperature": …}

and several calls as a list of such objects, each then carrying its own `reply` (the record's
`reply` is the last one). Calls of one item to one role form a chain: a call that continues the
previous one (its messages start with that call's messages, then its reply as the assistant
turn) stores only its new messages plus `"history": k`, the number of leading messages taken
from that base. A 100-turn chat thus stores each turn once. A text prompt that starts with the
previous call's prompt (a chat sent to a base model as text) stores only the rest, plus
`"continues": n`, the number of characters taken from that prompt.

A long text repeated across items (a system prompt, an in-context example) is written once per
run to `texts.jsonl` (see `TextStore`) and a message's `content` then reads `{"sha256": …}`.
A benchmark may also name a long text that is only part of a message (`Session.share_text`,
e.g. a SORT excerpt several questions quote): the content is then a list of parts, strings and
such references, to be joined. `expand_calls` puts the texts back.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import orjson

from mindprobe.core.files import open_append
from mindprobe.core.inputs import read_input
from mindprobe.core.model import Request
from mindprobe.core.records import append_whole
from mindprobe.core.secrets import redact_known
from mindprobe.errors import DataError

TEXTS = "texts.jsonl"
#: Texts at least this long are stored once per run when a second item sends them.
SHARED_TEXT_MIN = 400


def params_of(request: Request) -> dict[str, Any]:
    """The sampling parameters of a request: always max_tokens and temperature, the rest when
    set (a constrained answer set, stop strings, log-probs, a continued assistant turn)."""
    params: dict[str, Any] = {"max_tokens": request.max_tokens,
                              "temperature": request.temperature}
    if request.stop:
        params["stop"] = list(request.stop)
    if request.seed is not None:
        params["seed"] = request.seed
    if request.logprobs:
        params["logprobs"] = request.logprobs
    if request.constrain and request.choices:
        params["choices"] = list(request.choices)
    if request.continue_final:
        params["continue_final"] = True
    if request.reasoning_effort:
        params["reasoning_effort"] = request.reasoning_effort
    if request.extra:
        params["extra"] = dict(request.extra)
    return params


def call_of(request: Request, **more: Any) -> dict[str, Any]:
    """One call as recorded (full messages; `chain` later shortens a continuation)."""
    out: dict[str, Any] = ({"prompt": request.prompt} if request.prompt is not None else
                           {"messages": [dict(m) for m in request.messages or []]})
    out["params"] = {**params_of(request), **more}
    return out


class CallLog:
    """The calls of one item, in order, per role; `take` hands them over chained."""

    def __init__(self) -> None:
        self._pending: list[tuple[str, dict[str, Any], str | None]] = []
        #: Per role: the full messages of the last call handed over, plus its reply.
        self._base: dict[str, list[dict[str, Any]]] = {}
        #: Per role: the last text prompt handed over.
        self._prompt: dict[str, str] = {}

    def add(self, role: str, call: dict[str, Any], reply: str | None) -> None:
        self._pending.append((role, call, reply))

    def __bool__(self) -> bool:
        return bool(self._pending)

    def roles(self) -> list[str]:
        """Roles with calls not yet taken, in order of their first call."""
        return list(dict.fromkeys(p[0] for p in self._pending))

    def take(self, role: str | None = None) -> tuple[Any, Any]:
        """(request, reply) of the calls since the last take (of `role`, or all): one call
        -> its object and its reply; several -> a list (each with its reply) and the last
        reply; none -> (None, None)."""
        picked = [p for p in self._pending if role is None or p[0] == role]
        self._pending = [p for p in self._pending if not (role is None or p[0] == role)]
        calls = [self._chain(r, call, reply) for r, call, reply in picked]
        if not calls:
            return None, None
        if len(calls) == 1:
            return calls[0], picked[0][2]
        for c, (_, _, reply) in zip(calls, picked, strict=True):
            if reply is not None:
                c["reply"] = reply
        return calls, picked[-1][2]

    def _chain(self, role: str, call: dict[str, Any], reply: str | None) -> dict[str, Any]:
        messages = call.get("messages")
        if messages is None:
            self._base.pop(role, None)
            prompt, before = call.get("prompt"), self._prompt.pop(role, "")
            if not isinstance(prompt, str):
                return call
            self._prompt[role] = prompt
            if not before or not prompt.startswith(before):
                return call
            return {"continues": len(before), "prompt": prompt[len(before):],
                    "params": call["params"]}
        self._prompt.pop(role, None)
        base = self._base.get(role) or []
        k = 0
        while k < len(base) and k < len(messages) and base[k] == messages[k]:
            k += 1
        self._base[role] = [*messages, *([{"role": "assistant", "content": reply}]
                                         if reply is not None else [])]
        if k == 0:
            return call
        return {"history": k, "messages": messages[k:], "params": call["params"]}


class TextStore:
    """A run's shared long texts, `texts.jsonl`: one `{"sha256", "text"}` line per text, in one
    `write(2)` each (like records). A text goes there the second time an item sends it; the
    first sender keeps it inline, so a text sent once costs nothing extra."""

    def __init__(self, run_dir: Path, min_chars: int = SHARED_TEXT_MIN) -> None:
        self.path = Path(run_dir) / TEXTS
        self.min_chars = min_chars
        #: text -> its sha256, for the texts stored (looked up by the text: its hash is cached)
        self._stored: dict[str, str] = {t: d for d, t in read_texts(self.path).items()}
        #: Python hashes of the long texts sent once: a text's sha256 is computed only when it
        #: is sent a second time (most long texts are sent once; a collision merely stores one)
        self._seen: set[int] = set()

    def ref(self, text: str) -> str | dict[str, str]:
        """`text`, or `{"sha256": …}` once the run has stored it."""
        if len(text) < self.min_chars:
            return text
        digest = self._stored.get(text)
        if digest is not None:
            return {"sha256": digest}
        if hash(text) not in self._seen:
            self._seen.add(hash(text))
            return text
        digest = hashlib.sha256(text.encode()).hexdigest()
        line = redact_known(orjson.dumps({"sha256": digest, "text": text},
                                         option=orjson.OPT_APPEND_NEWLINE))
        fd = open_append(self.path)
        try:
            append_whole(fd, line)  # a full disk leaves no torn line for the next to follow
        finally:
            os.close(fd)
        self._stored[text] = digest
        return {"sha256": digest}

    def share(self, request: Any, parts: tuple[str, ...] = ()) -> Any:
        """The recorded request (one call or a list) with long repeated contents referenced,
        and the long repeated `parts` inside a content (or prompt) referenced in place."""
        if isinstance(request, list):
            return [self.share(c, parts) for c in request]
        if not isinstance(request, dict):
            return request
        if isinstance(request.get("prompt"), str):
            return {**request, "prompt": self._content(request["prompt"], parts)}
        if not isinstance(request.get("messages"), list):
            return request
        return {**request, "messages": [
            {**m, "content": self._content(m["content"], parts)}
            if isinstance(m.get("content"), str) else m for m in request["messages"]]}

    def _content(self, text: str, parts: tuple[str, ...]) -> Any:
        whole = self.ref(text)
        if not isinstance(whole, str):
            return whole
        for part in parts:
            at = text.find(part) if len(part) >= self.min_chars else -1
            if at < 0:
                continue
            ref = self.ref(part)
            if isinstance(ref, str):
                continue  # seen for the first time: stays inline
            before, after = text[:at], text[at + len(part):]
            return [p for p in (before, ref, after) if p != ""]
        return text


def read_texts(path: Path) -> dict[str, str]:
    """sha256 -> text of a run's `texts.jsonl` (absent: none; a torn last line is ignored)."""
    path = Path(path)
    if not path.exists() and not path.is_symlink():
        return {}
    data = read_input(path, "the run's shared texts", "records", DataError)
    out: dict[str, str] = {}
    for line in data[: data.rfind(b"\n") + 1].splitlines():
        try:
            d = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        if isinstance(d, dict) and isinstance(d.get("text"), str):
            out[str(d.get("sha256"))] = d["text"]
    return out


def resolve_text(value: Any, texts: Mapping[str, str]) -> Any:
    """A recorded content or prompt as text: a reference (`{"sha256": …}`) or a list of parts
    put back from the run's texts; anything else unchanged."""
    if isinstance(value, dict) and set(value) == {"sha256"}:
        return texts.get(value["sha256"], f"[text {value['sha256'][:12]}… not in {TEXTS}]")
    if isinstance(value, list):
        return "".join(str(resolve_text(p, texts)) for p in value)
    return value


def expand_calls(calls: Iterable[Mapping[str, Any]], texts: Mapping[str, str] | None = None,
                 replies: Iterable[str | None] | None = None) -> list[dict[str, Any]]:
    """Full calls from recorded ones, in the order they were made (one chain, e.g. one item's
    calls to one role, or a chat's turns in order): `history` resolved against the previous
    call plus its reply (the call's own `reply`, else the matching entry of `replies`: pass
    `replies_of(record)`, since a list's last call leaves its reply to the record), shared
    texts put back. Each result has `messages` (or `prompt`), `params` and `reply` if known."""
    texts = texts or {}
    extra = list(replies) if replies is not None else []
    base: list[dict[str, Any]] = []
    before = ""  # the previous call's prompt
    out = []
    for i, call in enumerate(calls):
        reply = call.get("reply", extra[i] if i < len(extra) else None)
        full: dict[str, Any] = {"params": call.get("params") or {}}
        if "prompt" in call:
            rest = str(resolve_text(call["prompt"], texts) or "")
            full["prompt"] = before[: int(call.get("continues") or 0)] + rest
            before, base = full["prompt"], []
        else:
            before = ""
            new = [{**m, "content": resolve_text(m.get("content"), texts)}
                   for m in call.get("messages") or []]
            msgs = base[: int(call.get("history") or 0)] + new
            full["messages"] = msgs
            base = msgs + ([{"role": "assistant", "content": reply}] if reply is not None
                           else [])
        if reply is not None:
            full["reply"] = reply
        out.append(full)
    return out


def replies_of(holder: Mapping[str, Any]) -> list[Any]:
    """The raw replies of a record (or chat turn), in order: each call's own `reply` when it
    made several (the last call's is the holder's `reply` when the call keeps none: a reply
    is stored once, `core.stored_replies`), else its `reply`."""
    calls = [c for c in holder.get("request") or [] if isinstance(c, dict)] \
        if isinstance(holder.get("request"), list) else None
    if calls is not None:
        out = [c.get("reply") for c in calls]
        if calls and "reply" not in calls[-1]:
            out[-1] = holder.get("reply")
        return out
    return [holder["reply"]] if "reply" in holder else []


def calls_of(request: Any) -> list[dict[str, Any]]:
    """A record's `request` field as a list of calls (one object, a list, or nothing)."""
    if isinstance(request, dict):
        return [request]
    if isinstance(request, list):
        return [c for c in request if isinstance(c, dict)]
    return []


def sent_calls(request: Any, reply: Any = None, texts: Mapping[str, str] | None = None
               ) -> list[tuple[dict[str, Any], list[dict[str, Any]], Any]]:
    """Each call of a record's `request` as it was shown to the model: (the call, the messages
    new to it with shared texts put back (a prompt as one user message), its reply: the call's
    own, else the record's `reply` for the last call). What transcripts and exports walk."""
    texts = texts or {}
    calls = calls_of(request)
    out = []
    for i, call in enumerate(calls):
        if "prompt" in call:
            msgs = [{"role": "user", "content": resolve_text(call["prompt"], texts)}]
        else:
            msgs = [{**m, "role": str(m.get("role", "user")),
                     "content": resolve_text(m.get("content"), texts)}
                    for m in call.get("messages") or [] if isinstance(m, dict)]
        out.append((call, msgs, call.get("reply", reply if i == len(calls) - 1 else None)))
    return out
