"""KV slots of one llama.cpp server, handed out with prefix-group affinity, and which slot's
cache best serves a new item's first request.

A slot keeps the KV cache of the last prompt it served. An item of a prefix group (items that
share a long prefix: SORT's questions on one excerpt, MR-GSM8K's demo block) therefore gets the
free slot that last held its group, whose cache already holds the shared prefix; other items
get the slot idle longest (first in, first out, as a plain queue would) among those holding
no group's prefix. While every slot is held, waiting items get a slot in the order they asked
(a slot given back goes straight to the first waiter, never to an item that asks after it), so
runs sharing one slot (the benchmarks of a profile on the embedded model) take turns item by
item instead of one keeping the slot for all its items. The pool also remembers each slot's last request, so that before an item's
first request a slot can be given the KV of the slot that shares most of its prompt (another
chat's system prompt and example, a group's excerpt), copied instead of prefilled. Servers that
save slots into one folder (several llama.cpp servers on one machine) are peers: a slot of one
can be restored from a file another saved, so each prefix is prefilled once on the machine.

A slot's cache grows with every reply, and a model with sliding-window attention (Gemma 3)
saves only the window's last positions of those layers: a slot whose state runs more than a
window past the shared prefix restores as useless, and the prompt is prefilled again. So where
a prefix can be copied at all (several slots, or peers), a group's first request on a server
first leaves a checkpoint: its prompt prefilled alone and saved, before the reply. Copies
prefer checkpoints, and never come from a slot whose last reply was long.
"""

from __future__ import annotations

import asyncio
from collections import deque
from typing import Any

#: A copy is worth it when another slot shares at least this many more prompt characters
#: (about 100 tokens) than the slot's own cache: a copy costs tens of milliseconds, and may
#: wait for the other slot's request to finish.
MIN_COPY_GAIN = 400
#: From a slot of the item's own prefix group, a shorter shared prefix is worth a copy (a
#: FanOutQA instruction, ~50 tokens): the runner starts a group's runs one at a time, each
#: once the previous one has an answer, so the copy waits for at most one request.
MIN_GROUP_COPY_GAIN = 100
#: A slot whose last reply was longer (tokens) is no copy source: its state may run past a
#: sliding window (Gemma 3's: 512) beyond the prefix it shares.
LONG_REPLY = 256


def prompt_parts(request: Any) -> list[str]:
    """The prompt as comparable parts: each message (role and text), or the raw prompt."""
    if request.messages is None:
        return [request.prompt or ""]
    return [f"{m.get('role')}\x00{m.get('content') or ''}" for m in request.messages]


def common_chars(a: list[str], b: list[str]) -> int:
    """Characters of the prompt prefix two requests share."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            k = 0
            for cx, cy in zip(x, y, strict=False):
                if cx != cy:
                    break
                k += 1
            return n + k
        n += len(x)
    return n


class SlotPool:
    """`n` slots; `take` waits while all are held, first come first served."""

    def __init__(self, n: int) -> None:
        #: Pools of servers sharing this one's slot folder, itself first (see `link_folders`).
        self.peers: list[SlotPool] = [self]
        #: The client of this pool's server (it saves and restores the slots).
        self.server: Any = None
        #: Names this pool's files apart from its peers' in a shared folder.
        self.tag = "0"
        self._free: list[int] = list(range(max(1, n)))
        self._group: dict[int, str] = {}
        self._waiters: deque[tuple[asyncio.Future[int], str | None]] = deque()
        self._fresh: set[int] = set()
        #: The last prompt of each slot; checkpoints under negative ids.
        self._last: dict[int, list[str]] = {}
        #: Tokens of each slot's last reply.
        self._reply: dict[int, int] = {}
        #: Checkpoint ids, oldest first; at most one per slot (their files are overwritten).
        self._checkpoints: deque[int] = deque()
        self._n = max(1, n)

    def __len__(self) -> int:
        return len(self._free)

    @property
    def waiting(self) -> int:
        """Items waiting for a slot."""
        return sum(1 for w, _ in self._waiters if not w.done())

    def attach(self, client: Any) -> None:
        """`client` talks to this pool's server: it hands out its slots and copies into them."""
        self.server = client
        client.slot_pool = self

    def take_nowait(self, group: str | None = None) -> int | None:
        """A free slot (the group's own if free), or None when all are held."""
        if not self._free:
            return None
        own = [i for i, s in enumerate(self._free) if group is not None
               and self._group.get(s) == group]
        # Else the slot idle longest among those holding no group's prefix, so a group's
        # cache survives as long as possible.
        plain = [i for i, s in enumerate(self._free) if s not in self._group]
        slot = self._free.pop((own or plain or [0])[0])
        if group is None:
            self._group.pop(slot, None)
        else:
            self._group[slot] = group
        self._fresh.add(slot)
        return slot

    async def take(self, group: str | None = None) -> int:
        """A slot; when all are held, the next one given back after every earlier waiter's."""
        if not self._waiters:
            slot = self.take_nowait(group)
            if slot is not None:
                return slot
        waiter: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        self._waiters.append((waiter, group))
        try:
            return await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():
                self.give(waiter.result())  # handed a slot it will not use: pass it on
            raise

    def copy_source(self, slot: int, parts: list[str]) -> tuple[SlotPool, int] | None:
        """On a slot's first request since it was taken: the other slot, of this server or
        of a peer (its own server first), whose last prompt shares MIN_COPY_GAIN more
        characters with `parts` than this slot's own, if any."""
        if slot not in self._fresh:
            return None
        self._fresh.discard(slot)
        own = common_chars(self._last.get(slot, []), parts)
        group = self._group.get(slot)
        best, src = own, None
        # Checkpoints first: of the same shared prefix, theirs restores for certain.
        candidates = sorted(((pool, other, last) for pool in self.peers
                             for other, last in pool._last.items()), key=lambda c: c[1] >= 0)
        for pool, other, last in candidates:
            if (pool is self and other == slot) or pool._reply.get(other, 0) > LONG_REPLY:
                continue
            gain = MIN_GROUP_COPY_GAIN if group is not None and \
                pool._group.get(other) == group else MIN_COPY_GAIN
            shared = common_chars(last, parts)
            if shared >= own + gain and shared > best:
                best, src = shared, (pool, other)
        return src

    def served(self, slot: int, parts: list[str]) -> None:
        """`slot`'s cache now holds this prompt (as far as `common_chars` can tell)."""
        self._last[slot] = parts

    def replied(self, slot: int, tokens: int) -> None:
        """`slot`'s last reply had `tokens` tokens (its cache holds them after the prompt)."""
        self._reply[slot] = tokens

    def wants_checkpoint(self, slot: int) -> bool:
        """Before `slot`'s first request since it was taken: whether its group has no
        checkpoint on this server or a peer yet (the slot then leaves one)."""
        group = self._group.get(slot)
        return (self._n > 1 or len(self.peers) > 1) and slot in self._fresh and \
            group is not None and not any(pool._group.get(c) == group
                                          for pool in self.peers for c in pool._checkpoints)

    def checkpoint(self, slot: int) -> str:
        """Record `slot`'s last prompt as its group's checkpoint; the file name to save it
        to (the oldest checkpoint's, when there are as many as slots)."""
        if len(self._checkpoints) >= self._n:
            cid = self._checkpoints.popleft()
        else:
            cid = -1 - len(self._checkpoints)
        self._checkpoints.append(cid)
        self._last[cid] = self._last.get(slot, [])
        self._group[cid] = self._group.get(slot, "")
        return self.file(cid)

    def file(self, slot: int) -> str:
        """The file a slot (or a checkpoint: a negative id) is saved to."""
        kind = "ckpt" if slot < 0 else "slot"
        return f"mindprobe-{kind}-{self.tag}-{abs(slot)}.bin"

    def give(self, slot: int) -> None:
        """Free `slot`, or hand it (or the waiter's group's own free slot) to the first
        waiter still waiting."""
        self._free.append(slot)
        while self._waiters:
            waiter, group = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(self.take_nowait(group))  # type: ignore[arg-type]
                return


def link_folders(pools: list[tuple[SlotPool, str | None]]) -> None:
    """Make the pools whose servers save slots into the same folder (not None) peers, each
    with its own file names."""
    by_folder: dict[str, list[SlotPool]] = {}
    for pool, folder in pools:
        if folder is not None:
            by_folder.setdefault(folder, []).append(pool)
    for members in by_folder.values():
        for i, pool in enumerate(members):
            pool.tag = str(i)
            pool.peers = [pool, *(p for p in members if p is not pool)]
