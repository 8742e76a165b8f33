"""A person answering at the terminal: the human baseline, and a way to feel a benchmark."""

from __future__ import annotations

import asyncio
import sys
import time

from rich.console import Console
from rich.text import Text

from mindprobe.core.model import CallContext, Completion, Model, Request
from mindprobe.errors import UsageError


class HumanModel(Model):
    cacheable = False
    default_concurrency = 1
    interactive = True

    def __init__(self, spec: str = "human") -> None:
        self.spec = spec
        self.label = "human"
        self._console = Console(stderr=True, highlight=False)
        self._shown: dict[tuple[str, str], int] = {}

    def identity(self) -> dict[str, str]:
        return {"model": "human"}

    async def start(self) -> None:
        if not sys.stdin.isatty():
            raise UsageError("--model human needs an interactive terminal (stdin is not a TTY)")

    async def complete(self, request: Request, ctx: CallContext) -> Completion:
        self._show(request, ctx)
        t0 = time.perf_counter()
        line = await asyncio.to_thread(sys.stdin.readline)
        if line == "":
            raise KeyboardInterrupt  # EOF: the person left; stop like Ctrl-C, keeping results
        typed = line.rstrip("\n")
        text = request.human_wrap(typed) if request.human_wrap else typed
        return Completion(text=text, latency=time.perf_counter() - t0, finish_reason="stop")

    def _show(self, request: Request, ctx: CallContext) -> None:
        """Print only what the person has not seen yet in this conversation."""
        c = self._console
        if request.prompt is not None:
            c.print(Text.assemble("\n", ("prompt", "bold"), ": ", request.prompt))
        else:
            msgs = request.messages or []
            key = (ctx.item_id, ctx.role)
            start = self._shown.get(key, 0)
            if start == 0:
                c.rule(f"item {ctx.item_id}" + ("" if ctx.role == "model" else f" ({ctx.role})"))
            for m in msgs[start:]:
                c.print(Text.assemble((m["role"], "bold"), ": ", m["content"]))
            self._shown[key] = len(msgs) + 1
        if request.human_hint:
            c.print(Text(request.human_hint, style="dim"))
        elif request.choices:
            c.print(Text(f"answer with one of: {', '.join(request.choices)}", style="dim"))
        c.print(Text("> "), end="")
