"""What the test server answers: a fixed text, a regex script, an echo, or a callable.

Replies are a pure function of the request so cached and resumed runs can be checked exactly.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mindprobe.errors import DataError

_SCRIPT_HINT = 'each line must be a JSON object like {"match": "<regex>", "reply": "<text>"}'


@dataclass(frozen=True)
class ScriptRule:
    """Reply ``reply`` when ``pattern`` is found (``re.search``) in the cue."""

    pattern: re.Pattern[str]
    reply: str


def _rule(entry: Any, where: str) -> ScriptRule:
    if not isinstance(entry, Mapping) or set(entry) != {"match", "reply"}:
        raise DataError(f"{where}: expected exactly the keys 'match' and 'reply'; {_SCRIPT_HINT}")
    match, reply = entry["match"], entry["reply"]
    if not isinstance(match, str) or not isinstance(reply, str):
        raise DataError(f"{where}: 'match' and 'reply' must both be strings; {_SCRIPT_HINT}")
    try:
        return ScriptRule(re.compile(match), reply)
    except re.error as exc:
        raise DataError(f"{where}: invalid regex {match!r} ({exc}); fix the 'match' value") from exc


def load_script(path: str | Path) -> list[ScriptRule]:
    """Read a JSONL script file; blank lines are skipped, anything else malformed is an error."""
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise DataError(f"cannot read script file {path}: {exc.strerror}; check the path") from exc
    rules = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"script file {path}, line {number}"
        try:
            entry = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DataError(f"{where}: not valid JSON ({exc.msg}); {_SCRIPT_HINT}") from exc
        rules.append(_rule(entry, where))
    return rules


def parse_script(script: Sequence[Mapping[str, str]] | str | Path) -> list[ScriptRule]:
    """Accept either a JSONL path or an in-memory list of ``{"match", "reply"}`` dicts."""
    if isinstance(script, str | Path):
        return load_script(script)
    return [_rule(entry, f"script entry {i}") for i, entry in enumerate(script)]


class Responder:
    """Turns a request into reply text.

    ``cue`` is the last user message (chat) or the prompt (completions): what a script matches
    and what echo mode repeats. Precedence: ``responder`` callable, ``echo``, ``script`` (falling
    back to ``reply``), then the fixed ``reply``; combining the first three is rejected because
    only one of them could ever be used.
    """

    def __init__(
        self,
        reply: str = "OK",
        script: Sequence[Mapping[str, str]] | str | Path | None = None,
        echo: bool = False,
        responder: Callable[[dict[str, Any]], str] | None = None,
    ) -> None:
        modes = [
            name
            for name, on in (
                ("script", script is not None),
                ("echo", echo),
                ("responder", responder is not None),
            )
            if on
        ]
        if len(modes) > 1:
            raise ValueError(f"choose one reply mode, got {' + '.join(modes)}")
        if not isinstance(reply, str):
            raise ValueError(f"reply must be a string, got {type(reply).__name__}")
        self._reply = reply
        self._rules = parse_script(script) if script is not None else []
        self._echo = echo
        self._callable = responder

    def __call__(self, request: dict[str, Any], cue: str) -> str:
        """Reply text for one request; a non-string from a custom responder is a TypeError."""
        if self._callable is not None:
            text = self._callable(request)
            if not isinstance(text, str):
                raise TypeError(f"responder returned {type(text).__name__}, expected str")
            return text
        if self._echo:
            return cue
        for rule in self._rules:
            if rule.pattern.search(cue):
                return rule.reply
        return self._reply


def worldsense_answer(body: dict[str, Any]) -> str:
    """A deterministic WorldSense 'model' for tests: always the first option the prompt names."""
    text = body["messages"][-1]["content"] if "messages" in body else body["prompt"]
    if "'TRUE', 'FALSE'" in text:
        return "TRUE"
    if "POSSIBLE" in text:
        return "IMPOSSIBLE"
    return "(3)"
