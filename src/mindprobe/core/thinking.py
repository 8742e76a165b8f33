"""One policy for a reasoning model's thinking, used by every benchmark and judge.

A model that thinks before answering (reasoning_content, a `<think>` block) spends tokens a
benchmark's reply cap was never sized for: upstream's 16 or 1024 tokens would cut it off before
any answer. So, unless the user chose `--max-tokens`, a model known to think gets THINKING_ROOM
more; a model found to think only once it answered (its first reply showed thinking) gets the
room from then on; and a reply cut off while still thinking is asked once more with the room
(if that is cut off too, the record says `truncated_in_reasoning`). The thinking itself is never
parsed: backends split it off the answer.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mindprobe.core.model import Completion, Request
    from mindprobe.core.session import Session

#: Extra tokens a model known to think gets on top of a benchmark's reply cap (no --max-tokens).
THINKING_ROOM = 4096
#: Why a planned cap differs from upstream's when the room made it so (for a run's deviations).
ROOM_REASON = "room for a reasoning model's thinking"


@dataclass(frozen=True)
class ReplyBudget:
    """The reply cap a run plans with: `max_tokens` (what a request asks for; already the room
    for a model known to think while planning) and `room` (what a thinking model gets). Both
    are recorded in the run's config (`max_tokens`, `max_tokens_thinking`)."""

    max_tokens: int
    room: int

    @classmethod
    def plan(cls, upstream: int, explicit: int | None, thinks: bool) -> ReplyBudget:
        """Upstream's cap, or the user's `--max-tokens` (then never more); `thinks`: the model
        is known to think before it has answered."""
        room = explicit or upstream + THINKING_ROOM
        return cls(explicit or (room if thinks else upstream), room)

    @classmethod
    def of(cls, config: dict[str, Any], default: int | None = None) -> ReplyBudget:
        """The budget a run recorded (`default`: the cap of a run that recorded none)."""
        max_tokens = config["max_tokens"] if default is None else config.get("max_tokens",
                                                                               default)
        return cls(max_tokens, config.get("max_tokens_thinking", max_tokens))

    def config(self) -> dict[str, int]:
        """The budget as the run's config records it."""
        return {"max_tokens": self.max_tokens, "max_tokens_thinking": self.room}


async def generate_with_room(session: Session, request: Request, room: int,
                             role: str = "model") -> Completion:
    """Send `request` under the thinking policy: a model known to think by now gets at least
    `room` tokens, and a reply cut off while still thinking is asked once more with `room`."""
    if session.model(role).can("reasoning"):
        request = replace(request, max_tokens=max(request.max_tokens, room))
    comp = await session.generate(request, role=role)
    if comp.truncated_in_reasoning and room > request.max_tokens:
        comp = await session.generate(replace(request, max_tokens=room), role=role)
    return comp
