"""Prefix-group affinity: a group's items run back to back on one slot / endpoint, its later
runs wait until its first item is done (so they find the prefix cached), other groups go on in
parallel; records and their order do not change. Real test servers on 127.0.0.1."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from mindprobe.core.plan import Item
from mindprobe.core.runner import PassSettings, execute, prefix_runs
from mindprobe.core.session import Session
from mindprobe.core.store import RunStore
from mindprobe.models import parse_model_spec
from mindprobe.models.base import Request
from mindprobe.models.slots import SlotPool
from mindprobe.testing import server_group


def _items(groups: int, per_group: int, grouped: bool = True) -> list[Item]:
    """Items interleaved across groups in plan order (g0 g1 g2 g0 g1 g2 …)."""
    return [Item(f"{g}-{i}", {"group": g, "i": i}, prefix_group=f"g{g}" if grouped else None)
            for i in range(per_group) for g in range(groups)]


async def _play(item: Item, session: Session) -> dict[str, Any]:
    p = item.payload
    comp = await session.generate(Request(messages=[
        {"role": "system", "content": f"shared prefix of group {p['group']} " * 20},
        {"role": "user", "content": f"question {p['i']}"}], max_tokens=4))
    return {"group": p["group"], "reply": comp.text}


def _run(spec: str, items: list[Item], concurrency: int, tmp: Path) -> list[dict[str, Any]]:
    async def go() -> list[dict[str, Any]]:
        model = parse_model_spec(spec)
        model.configure(concurrency)
        await model.start()
        store = RunStore(tmp)
        store.open({"benchmark": "t", "variant": "v", "model": spec, "config": {}, "data": {}})
        try:
            result = await execute(items, _play, {"model": model}, store, {},
                                   PassSettings(concurrency=concurrency),
                                   console=Console(quiet=True), description="t")
        finally:
            store.close("finished")
            await model.close()
        return result.records
    return asyncio.run(go())


def _logger(log: list, server: int):
    lock = threading.Lock()

    def respond(body: dict) -> str:
        with lock:
            log.append((server, time.monotonic(), body["messages"][0]["content"].split()[4],
                        body["messages"][1]["content"]))
        return "ok"
    return respond


def test_runs_keep_a_group_together_and_cut_big_groups_to_a_fair_share():
    items = _items(3, 4)
    runs = prefix_runs(items, concurrency=3)
    assert [[it.id for it in r] for r in runs] == [
        ["0-0", "0-1", "0-2", "0-3"], ["1-0", "1-1", "1-2", "1-3"], ["2-0", "2-1", "2-2", "2-3"]]
    one_group = [Item(str(i), None, prefix_group="demos") for i in range(10)]
    assert [len(r) for r in prefix_runs(one_group, concurrency=4)] == [3, 3, 3, 1]
    plain = [Item(str(i), None) for i in range(3)]
    assert [[it.id for it in r] for r in prefix_runs(plain, 8)] == [["0"], ["1"], ["2"]]


def test_slot_pool_gives_a_group_back_its_own_slot():
    async def go() -> None:
        pool = SlotPool(3)
        a = await pool.take("g1")
        b = await pool.take("g2")
        pool.give(a)
        pool.give(b)
        assert await pool.take("g2") == b  # its KV holds g2's prefix
        assert await pool.take(None) not in (a, b)  # a slot holding no group's prefix
        c = await pool.take("g1")
        assert c == a
        waiter = asyncio.ensure_future(pool.take("g3"))
        await asyncio.sleep(0)
        assert not waiter.done()  # all three are held
        pool.give(b)
        assert await waiter == b
    asyncio.run(go())


def test_router_keeps_each_group_on_one_endpoint_and_records_are_unchanged(tmp_path):
    log: list = []
    with server_group({"responder": _logger(log, 0)}, {"responder": _logger(log, 1)},
                      latency=0.01) as (a, b):
        spec = f"openai:test-model@{a.base_url},{b.base_url}"
        grouped = _run(spec, _items(4, 3), 4, tmp_path / "grouped")
        by_group: dict[str, set[int]] = {}
        for server, _, group, _ in log:
            by_group.setdefault(group, set()).add(server)
        assert len(by_group) == 4 and all(len(s) == 1 for s in by_group.values()), by_group
        assert {s for ss in by_group.values() for s in ss} == {0, 1}  # groups in parallel
        log.clear()
        plain = _run(spec, _items(4, 3, grouped=False), 4, tmp_path / "plain")
    strip = [{k: v for k, v in r.items() if k not in ("usage", "latency")} for r in grouped]
    assert strip == [{k: v for k, v in r.items() if k not in ("usage", "latency")}
                     for r in plain]
    assert [r["id"] for r in grouped] == [it.id for it in _items(4, 3)]  # the plan's order


@pytest.mark.slow
def test_a_groups_later_runs_wait_for_its_first_item(tmp_path):
    """One group of 6 at concurrency 3: the first request goes alone (it fills the cache),
    then the group's runs fan out one by one. Without a group all three start at once."""
    log: list = []
    with server_group({"responder": _logger(log, 0), "latency": 0.5}) as (srv,):
        spec = f"openai:test-model@{srv.base_url}"
        items = [Item(str(i), {"group": 0, "i": i}, prefix_group="demos") for i in range(6)]
        _run(spec, items, 3, tmp_path / "grouped")
        times = [t for _, t, _, _ in log]
        assert log[0][3] == "question 0"
        assert all(t - times[0] >= 0.45 for t in times[1:]), times
        assert len(log) == 6
        # runs of 2 items (6 / concurrency 3) start one after another, each after the
        # previous run's first answer
        first = {q: t for _, t, _, q in log}
        assert first["question 4"] - first["question 2"] >= 0.45, log
        log.clear()
        plain = [Item(str(i), {"group": 0, "i": i}) for i in range(6)]
        _run(spec, plain, 3, tmp_path / "plain")
        times = [t for _, t, _, _ in log]
        assert times[2] - times[0] < 0.45, times  # no answer can have come back yet


def test_a_fresh_slot_copies_from_the_slot_sharing_most_of_its_prompt():
    """Before an item's first request, the slot whose last prompt shares at least
    MIN_COPY_GAIN more characters is the copy source; later requests of the item copy nothing."""
    from mindprobe.models.slots import MIN_COPY_GAIN, common_chars, prompt_parts

    def req(*contents: str) -> Request:
        return Request(messages=[{"role": "user", "content": c} for c in contents])

    system = "x" * (MIN_COPY_GAIN + 10)
    shared = len("user\x00abc") + len("user\x00d")  # roles count; parts compared in order
    assert common_chars(prompt_parts(req("abc", "de")), prompt_parts(req("abc", "dx"))) == shared

    async def go() -> None:
        pool = SlotPool(3)
        a = await pool.take()
        assert pool.copy_source(a, prompt_parts(req(system, "chat 1"))) is None  # nothing yet
        pool.served(a, prompt_parts(req(system, "chat 1")))
        b = await pool.take()
        assert pool.copy_source(b, prompt_parts(req(system, "chat 2"))) == (pool, a)
        pool.served(b, prompt_parts(req(system, "chat 2")))
        assert pool.copy_source(b, prompt_parts(req(system, "chat 2", "turn 2"))) is None
        c = await pool.take()
        assert pool.copy_source(c, prompt_parts(req("short", "unrelated"))) is None
    asyncio.run(go())


def test_slot_pool_hands_slots_over_in_arrival_order():
    """One slot shared by two runs that each take it again as soon as they give it back (the
    benchmarks of a profile on the embedded model): the slot goes to whoever waited first, so
    the runs take turns item by item instead of one keeping it for all its items."""
    order: list[str] = []

    async def run(name: str, pool: SlotPool) -> None:
        for i in range(3):
            slot = await pool.take()
            order.append(f"{name}{i}")
            await asyncio.sleep(0)
            pool.give(slot)

    async def go() -> None:
        pool = SlotPool(1)
        await asyncio.gather(run("a", pool), run("b", pool))
        # a cancelled waiter is skipped; one handed a slot it will not use passes it on
        held = await pool.take()
        gone = asyncio.ensure_future(pool.take())
        nxt = asyncio.ensure_future(pool.take())
        await asyncio.sleep(0)
        gone.cancel()
        pool.give(held)
        assert await nxt == held
    asyncio.run(go())
    assert order == ["a0", "b0", "a1", "b1", "a2", "b2"]


class _OneSlot:
    """The slot side of a model with one llama.cpp slot (the embedded model's pool)."""

    def __init__(self) -> None:
        self.pool = SlotPool(1)

    async def acquire_slot(self, group=None):
        return await self.pool.take(group)

    def release_slot(self, slot):
        self.pool.give(slot)

    def slots_contended(self):
        return self.pool.waiting > 0


def test_a_run_hands_a_contended_slot_over_between_its_items(monkeypatch):
    """A run of a prefix group keeps its slot while nobody waits, or until it has held it
    SLOT_QUANTUM seconds past its first item; then, with another item waiting, it gives the
    slot to that item (first come, first served) and queues again at its next request."""
    from mindprobe.core import session as session_mod
    from mindprobe.core.session import SlotLease

    clock = [0.0]
    monkeypatch.setattr(session_mod.time, "monotonic", lambda: clock[0])

    async def go() -> None:
        model = _OneSlot()
        lease = SlotLease({"model": model}, "excerpt 1")
        slot = await lease.slot("model")
        lease.between_items()  # its first item ended: the quantum starts
        clock[0] += session_mod.SLOT_QUANTUM + 1
        lease.between_items()  # nobody waits: it keeps the slot (and the prefix in it)
        assert await lease.slot("model") == slot
        other = asyncio.ensure_future(model.acquire_slot(None))
        await asyncio.sleep(0)
        assert not other.done()
        clock[0] += 1
        lease.between_items()  # spent, and an item waits: handed over
        assert await other == slot
        again = asyncio.ensure_future(lease.slot("model"))
        await asyncio.sleep(0)
        assert not again.done()  # queued behind the item it handed over to
        model.release_slot(slot)
        assert await again == slot
    asyncio.run(go())


def test_a_worker_of_single_items_keeps_a_contended_slot_for_its_quantum(monkeypatch):
    """Items of no group: the worker carries its lease to its next item while others wait
    and the quantum lasts, then gives it back; nobody waiting, it gives it back at once."""
    from mindprobe.core import session as session_mod
    from mindprobe.core.session import SlotLease

    clock = [0.0]
    monkeypatch.setattr(session_mod.time, "monotonic", lambda: clock[0])

    async def go() -> None:
        model = _OneSlot()
        lease = SlotLease({"model": model})
        await lease.slot("model")
        lease.between_items()
        assert not lease.keep()  # nobody waits
        other = asyncio.ensure_future(model.acquire_slot(None))
        await asyncio.sleep(0)
        assert lease.keep()  # someone waits, the quantum lasts
        clock[0] += session_mod.SLOT_QUANTUM
        assert not lease.keep()
        lease.release()
        assert await other == 0


def test_servers_sharing_a_slot_folder_copy_from_each_other_and_groups_copy_short_prefixes():
    """Pools linked by one slot folder are peers: a slot of one server finds the prefix a
    slot of the other holds (its own server first on a tie); a pool with a folder of its own
    does not. A slot of a prefix group copies a shorter shared prefix from its group's slot."""
    from mindprobe.models.slots import (
        MIN_COPY_GAIN,
        MIN_GROUP_COPY_GAIN,
        link_folders,
        prompt_parts,
    )

    def parts(*contents: str) -> list[str]:
        return prompt_parts(Request(messages=[{"role": "user", "content": c} for c in contents]))

    system = "x" * (MIN_COPY_GAIN + 10)
    short = "y" * (MIN_GROUP_COPY_GAIN + 10)

    async def go() -> None:
        a, b, alone = SlotPool(2), SlotPool(3), SlotPool(1)
        link_folders([(a, "/tmp/slots"), (b, "/tmp/slots"), (alone, "/tmp/other")])
        assert a.tag != b.tag and a.peers == [a, b] and alone.peers == [alone]
        s0 = await a.take()
        a.served(s0, parts(system, "chat 1"))
        s1 = await b.take()
        assert b.copy_source(s1, parts(system, "chat 2")) == (a, s0)
        t = await alone.take()
        assert alone.copy_source(t, parts(system, "chat 3")) is None
        g0 = await a.take("fanout")
        a.served(g0, parts(short + "question 1"))
        g1 = await b.take("fanout")
        assert b.copy_source(g1, parts(short + "question 2")) == (a, g0)
        n = await b.take()  # not of the group: the short prefix is not worth a copy
        assert b.copy_source(n, parts(short + "question 3")) is None
    asyncio.run(go())


def test_checkpoints_and_long_replies():
    """A sliding-window model's saved slot is useless beyond a window past the shared prefix
    (Gemma 3: a slot 600 tokens past it restored, then prefilled all 1,770 again). So a
    group's first slot on a server leaves a checkpoint (only where another slot could copy
    it), later slots prefer it, and a slot whose last reply was long is never a source."""
    from mindprobe.models.slots import LONG_REPLY, MIN_COPY_GAIN, link_folders, prompt_parts

    def parts(*contents: str) -> list[str]:
        return prompt_parts(Request(messages=[{"role": "user", "content": c} for c in contents]))

    system = "x" * (MIN_COPY_GAIN + 10)

    async def go() -> None:
        alone = SlotPool(1)
        s = await alone.take("ast")
        assert not alone.wants_checkpoint(s)  # nothing could ever copy it
        pool = SlotPool(3)
        a = await pool.take("ast")
        assert pool.wants_checkpoint(a)
        pool.served(a, parts(system, "chat 1"))
        pool.copy_source(a, parts(system, "chat 1"))
        assert pool.checkpoint(a) == "mindprobe-ckpt-0-1.bin"
        pool.replied(a, LONG_REPLY + 1)
        b = await pool.take("ast")
        assert not pool.wants_checkpoint(b)  # the group has one
        # slot a shares as much, but ran a long reply: the checkpoint (id -1) is the source
        assert pool.copy_source(b, parts(system, "chat 2")) == (pool, -1)
        pool.served(b, parts(system, "chat 2", "turn 2"))
        pool.replied(b, 5)
        c = await pool.take("ast")
        # b shares more than the checkpoint and its reply was short: b
        assert pool.copy_source(c, parts(system, "chat 2", "turn 2 x")) == (pool, b)
        assert pool.file(b) == f"mindprobe-slot-0-{b}.bin"
        # a peer's checkpoint counts: the other server's first slot of the group leaves none
        other = SlotPool(2)
        link_folders([(pool, "/tmp/f"), (other, "/tmp/f")])
        d = await other.take("ast")
        assert not other.wants_checkpoint(d)
        assert other.copy_source(d, parts(system, "chat 3")) == (pool, -1)
        # as many checkpoints as slots, the oldest file reused
        for g in ("g1", "g2", "g3"):
            pool.give(c)
            c = await pool.take(g)
            pool.served(c, parts(g))
            pool.checkpoint(c)
        assert len(pool._checkpoints) == 3 and pool._checkpoints[-1] == -1
    asyncio.run(go())
