"""Execute a prepared benchmark against model(s): bounded concurrency, one record per item.

Per-item failures (a request that still fails after its retries, an unusable reply) are
recorded with their error and counted; failures no retry can fix (bad key, unknown model)
stop everything with one message. Either way, every record already written stays.
"""

from __future__ import annotations

import asyncio
import traceback
from collections import deque
from dataclasses import dataclass
from typing import Any

from rich.console import Console

from mindprobe.core.benchmark import Benchmark, Item, Prepared
from mindprobe.core.cache import ResponseCache
from mindprobe.core.progress import RunProgress
from mindprobe.core.session import Session
from mindprobe.core.store import RunStore
from mindprobe.errors import MindprobeError
from mindprobe.models.base import Model, TransientError, Usage


@dataclass
class RunResult:
    records: list[dict[str, Any]]
    n_items: int
    n_new: int
    errors: int = 0


def total_usage(records: list[dict[str, Any]]) -> dict[str, Usage]:
    """Sum per-role usage over records (a resumed run counts every record once)."""
    out: dict[str, Usage] = {}
    for rec in records:
        for role, u in (rec.get("usage") or {}).items():
            out.setdefault(role, Usage()).add(Usage.from_dict(u))
    return out


def usage_summary(records: list[dict[str, Any]], role: str = "model") -> dict[str, int]:
    """The `usage` object of a run's JSON document: tokens, requests and errored items."""
    u = total_usage(records).get(role, Usage()).as_dict()
    u["errors"] = sum(1 for r in records if "error" in r)
    return u


async def _play(
    bench: Benchmark, item: Item, session: Session, debug: bool
) -> dict[str, Any]:
    try:
        fields = await bench.run_item(item, session)
        rec: dict[str, Any] = {"id": item.id, **fields}
    except TransientError as exc:
        rec = {"id": item.id, "error": str(exc)}
    except MindprobeError:
        raise
    except Exception as exc:  # a benchmark bug or an unusable reply: record, do not crash
        if debug:
            raise
        tb = traceback.format_exception_only(type(exc), exc)[-1].strip()
        rec = {"id": item.id, "error": f"internal error: {tb}"}
    finally:
        session.release()
    rec["usage"] = session.usage_dict()
    rec["latency"] = round(session.latency, 6)
    return rec


async def execute(
    bench: Benchmark,
    prepared: Prepared,
    models: dict[str, Model],
    store: RunStore,
    done: dict[str, dict[str, Any]],
    *,
    concurrency: int,
    seed: int,
    cache: ResponseCache | None,
    console: Console,
    description: str,
    debug: bool = False,
) -> RunResult:
    """Run every item not in `done`, appending one record per item to `store`."""
    items = prepared.items
    todo = deque(it for it in items if it.id not in done)
    identities = {role: m.identity() for role, m in models.items()}
    n_new = 0
    fatal: list[BaseException] = []

    with RunProgress(console, description, total=len(items), done=len(items) - len(todo)) as bar:

        async def worker() -> None:
            nonlocal n_new
            while todo and not fatal:
                item = todo.popleft()
                session = Session(
                    models, item.id, seed=seed, cache=cache, identities=identities,
                    config=prepared.config, prompting=prepared.prompting,
                )
                try:
                    rec = await _play(bench, item, session, debug)
                except BaseException as exc:
                    fatal.append(exc)
                    raise
                store.append(rec)
                n_new += 1
                bar.advance(rec["usage"].get("model"), "error" in rec)

        workers = [asyncio.create_task(worker()) for _ in range(max(1, min(concurrency, len(todo))))]
        try:
            await asyncio.gather(*workers)
        except BaseException:
            for w in workers:
                w.cancel()
            await asyncio.gather(*workers, return_exceptions=True)
            raise
        finally:
            if cache is not None:
                cache.flush()

    ids = {it.id for it in items}
    records = [r for r in store.records() if r["id"] in ids]
    return RunResult(
        records=records,
        n_items=len(items),
        n_new=n_new,
        errors=sum(1 for r in records if "error" in r),
    )
