"""A conversation with one model: the design's Chat (ask appends both turns; fork re-asks).

Multi-turn benchmarks (re-asks, 100-turn chats, search loops) keep their history here instead
of hand-building message lists, and every turn of one chat stays on one KV slot.
"""

from __future__ import annotations

from typing import Any, Protocol

from mindprobe.core.model import Completion, Request


class Generates(Protocol):
    """What a chat asks through: one request under a role (`core.session.Session` is one), so
    the chat needs nothing else of the session that hands it out."""

    async def generate(self, request: Request, role: str = "model") -> Completion: ...


class Chat:
    def __init__(self, session: Generates, role: str = "model", system: str | None = None,
                 messages: list[dict[str, str]] | None = None) -> None:
        self.session = session
        self.role = role
        self.messages: list[dict[str, str]] = list(messages or [])
        if system is not None and not self.messages:
            self.messages.append({"role": "system", "content": system})

    def add(self, role: str, content: str) -> None:
        """Put a turn into the history without asking (e.g. a tool result)."""
        self.messages.append({"role": role, "content": content})

    async def ask(self, text: str | None, **request: Any) -> Completion:
        """Send `text` as the next user turn (None: ask on the history as it is), append the
        reply as the assistant turn, and return the completion."""
        if text is not None:
            self.add("user", text)
        req = Request(messages=list(self.messages), **request)
        comp = await self.session.generate(req, role=self.role)
        self.add("assistant", comp.text)
        return comp

    def fork(self) -> Chat:
        """An independent copy of the history (same session and KV slot)."""
        return Chat(self.session, self.role, messages=self.messages)

    def __len__(self) -> int:
        return len(self.messages)
