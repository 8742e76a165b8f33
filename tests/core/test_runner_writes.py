"""How the runner writes records: those finishing in one turn of the event loop go out in one
write, none is lost to Ctrl-C or held back, and a failed write stops the run with every
earlier record kept."""

from __future__ import annotations

import asyncio
import errno
import os
import time
from pathlib import Path

import pytest
from rich.console import Console

from mindprobe.core.plan import Item
from mindprobe.core.runner import PassSettings, execute
from mindprobe.core.store import RunStore, base_manifest, read_records
from mindprobe.models.random import RandomModel


class CountingStore(RunStore):
    """A store that counts its writes and can be told to fail the n-th one (a full disk)."""

    def __init__(self, run_dir: Path, fail_at: int | None = None) -> None:
        super().__init__(run_dir)
        self.writes: list[int] = []
        self.fail_at = fail_at

    def append_encoded(self, data: bytes) -> None:
        if self.fail_at is not None and len(self.writes) + 1 == self.fail_at:
            raise OSError(errno.ENOSPC, "No space left on device")
        super().append_encoded(data)
        self.writes.append(data.count(b"\n"))


def _open(store: RunStore) -> RunStore:
    store.open(base_manifest(benchmark="b", variant="v", model={}, config={}, data={}))
    return store


def _execute(store: RunStore, play, n: int, concurrency: int):
    items = [Item(f"i{k}", k) for k in range(n)]
    return execute(items, play, {"model": RandomModel()}, store, {},
                   PassSettings(concurrency=concurrency), console=Console(quiet=True),
                   description="t")


def test_records_of_one_loop_turn_share_a_write(tmp_path):
    async def play(item: Item, session) -> dict:
        await asyncio.sleep(0)  # every worker finishes its item in the same turn
        return {"k": item.payload}

    store = _open(CountingStore(tmp_path / "r"))
    result = asyncio.run(_execute(store, play, 40, 8))
    store.close("finished")
    ids = [r["id"] for r in read_records(store.records_path)]
    assert sorted(ids) == sorted(f"i{k}" for k in range(40)) and len(result.records) == 40
    assert sum(store.writes) == 40
    assert len(store.writes) <= 40 // 8 + 1  # eight records a write, not one


def test_a_record_is_written_before_the_next_item_finishes(tmp_path):
    # one worker: a record waits for the end of its loop turn, not for later items
    seen: list[int] = []

    async def play(item: Item, session) -> dict:
        await asyncio.sleep(0.001)
        seen.append(len(read_records(tmp_path / "r" / "records.jsonl")))
        return {}

    store = _open(RunStore(tmp_path / "r"))
    asyncio.run(_execute(store, play, 5, 1))
    store.close("finished")
    assert seen == [0, 1, 2, 3, 4]


def test_a_failed_write_stops_the_run_and_keeps_what_was_written(tmp_path):
    started: list[str] = []

    async def play(item: Item, session) -> dict:
        started.append(item.id)
        await asyncio.sleep(0)
        return {}

    store = _open(CountingStore(tmp_path / "r", fail_at=3))
    with pytest.raises(OSError, match="No space left"):
        asyncio.run(_execute(store, play, 100, 4))
    store.close("failed")
    kept = read_records(store.records_path)
    assert len(kept) == sum(store.writes) == 8  # the two writes before the failure
    assert len(started) < 100  # no item was started once the write had failed


def test_cancelled_run_keeps_every_finished_record(tmp_path):
    finished: set[str] = set()

    async def play(item: Item, session) -> dict:
        await asyncio.sleep(0.002)
        finished.add(item.id)
        return {}

    async def main(store: RunStore) -> None:
        task = asyncio.ensure_future(_execute(store, play, 200, 6))
        while len(finished) < 30:
            await asyncio.sleep(0.001)
        task.cancel()  # what Ctrl-C does to the run
        with pytest.raises(asyncio.CancelledError):
            await task

    store = _open(RunStore(tmp_path / "r"))
    asyncio.run(main(store))
    store.close("interrupted")
    ids = [r["id"] for r in read_records(store.records_path)]
    assert len(ids) == len(set(ids))
    assert set(ids) == finished and 30 <= len(ids) < 200


def test_a_failed_write_stops_items_in_flight_at_once(tmp_path):
    # a full disk is not discovered only after every slow request in flight has finished
    async def play(item: Item, session) -> dict:
        await asyncio.sleep(0.01 if item.id == "i0" else 5)
        return {}

    store = _open(CountingStore(tmp_path / "r", fail_at=1))
    t0 = time.monotonic()
    with pytest.raises(OSError, match="No space left"):
        asyncio.run(_execute(store, play, 8, 4))
    assert time.monotonic() - t0 < 2
    store.close("failed")


def test_a_record_that_cannot_be_encoded_fails_alone(tmp_path):
    # one item's unusable record stops the run; the records finished beside it are kept
    async def play(item: Item, session) -> dict:
        await asyncio.sleep(0)
        return {"n": 2 ** 70 if item.id == "i5" else 1}  # wider than JSON's 64-bit ints

    store = _open(RunStore(tmp_path / "r"))
    with pytest.raises(TypeError):
        asyncio.run(_execute(store, play, 20, 4))
    store.close("failed")
    ids = {r["id"] for r in read_records(store.records_path)}
    assert {"i0", "i1", "i2", "i3", "i4", "i6", "i7"} <= ids and "i5" not in ids


def test_a_partly_taken_write_is_cut_back(tmp_path, monkeypatch):
    store = _open(RunStore(tmp_path / "r"))
    store.append({"id": "a"})
    real_write = os.write
    calls = []

    def full_disk(fd: int, data) -> int:  # the OS takes 5 bytes, then the disk is full
        calls.append(len(data))
        if len(calls) == 1:
            return real_write(fd, bytes(data[:5]))
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr("mindprobe.core.run_store.os.write", full_disk)
    with pytest.raises(OSError):
        store.append({"id": "b", "pad": "x" * 100})
    monkeypatch.setattr("mindprobe.core.run_store.os.write", real_write)
    store.append({"id": "c"})  # space again: the next line follows a whole one
    store.close("finished")
    assert [r["id"] for r in read_records(store.records_path)] == ["a", "c"]
