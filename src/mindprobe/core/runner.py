"""One executor for every model pass (a run, a judge pass, a sweep): bounded concurrency, a
per-item time limit, progress, the response cache, and one record per item through the store.

Per-item failures (a request that still fails after its retries, an unusable reply, the item's
time limit) are recorded with their error and counted; failures no retry can fix (bad key,
unknown model, a server that stopped answering) stop everything with one message. Either way,
every record already written stays.
"""

from __future__ import annotations

import asyncio
import traceback
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from rich.console import Console

from mindprobe.core.cache import ResponseCache
from mindprobe.core.fit import DOES_NOT_FIT, ENDED_UNFIT, DoesNotFit, unfit_count
from mindprobe.core.model import Model, TransientError, Usage
from mindprobe.core.plan import Item
from mindprobe.core.progress import RunProgress
from mindprobe.core.retry import RetryPolicy
from mindprobe.core.secrets import redact_value
from mindprobe.core.session import Session, SlotLease
from mindprobe.core.store import RunStore, encode_record
from mindprobe.errors import MindprobeError, ModelError

Play = Callable[[Item, Session], Awaitable[dict[str, Any]]]


@dataclass
class RunResult:
    records: list[dict[str, Any]]
    n_items: int
    n_new: int
    errors: int = 0


@dataclass
class PassSettings:
    """How one pass runs: everything but the items, the episode and where records go."""

    concurrency: int
    seed: int = 0
    cache: ResponseCache | None = None
    config: dict[str, Any] = field(default_factory=dict)
    #: The benchmark's typed options (`RunPlan.options`), as episodes read them.
    options: Any = None
    prompting: str = "basic"
    resources: dict[str, Any] = field(default_factory=dict)
    item_time_limit: float | None = None
    #: The role whose tokens the progress bar shows.
    progress_role: str = "model"
    debug: bool = False
    #: Consecutive items failing on connections before the server counts as dead (0: auto):
    #: the safety net for a model without a dead-server rule of its own (see `execute`).
    dead_after: int = 0
    #: A progress display shared by several passes at once (one line each); None: its own.
    progress: Any = None


_USAGE_FIELDS = Usage.__slots__


def total_usage(records: list[dict[str, Any]]) -> dict[str, Usage]:
    """Sum per-role usage over records (a resumed run counts every record once)."""
    sums: dict[str, dict[str, int]] = {}
    for rec in records:
        for role, u in (rec.get("usage") or {}).items():
            u = u or {}
            acc = sums.get(role)
            if acc is None:
                acc = sums[role] = dict.fromkeys(_USAGE_FIELDS, 0)
            for k in _USAGE_FIELDS:
                v = u.get(k)
                if v:
                    acc[k] += int(v)
    return {role: Usage(**acc) for role, acc in sums.items()}


def usage_summary(records: list[dict[str, Any]], role: str = "model") -> dict[str, int]:
    """The `usage` object of a run's JSON document: tokens, requests and errored items."""
    u = total_usage(records).get(role, Usage()).as_dict()
    u["errors"] = sum(1 for r in records if "error" in r)
    u[DOES_NOT_FIT], u[ENDED_UNFIT] = unfit_count(records)
    return u


async def _play(play: Play, item: Item, session: Session, settings: PassSettings
                ) -> tuple[dict[str, Any], bool]:
    """(record, failed on a connection) of one item."""
    connection = False
    try:
        coro = play(item, session)
        if settings.item_time_limit:
            fields = await asyncio.wait_for(coro, settings.item_time_limit)
        else:
            fields = await coro
        rec: dict[str, Any] = {"id": item.id, **fields}
    except TransientError as exc:
        rec = {"id": item.id, "error": str(exc)}
        connection = exc.kind == "connection"
    except DoesNotFit as exc:  # never sent: a state of its own, not an error
        rec = {"id": item.id, DOES_NOT_FIT: str(exc)}
    except TimeoutError:
        rec = {"id": item.id, "error": f"item time limit of {settings.item_time_limit:g} s reached"}
    except MindprobeError:
        raise
    except Exception as exc:  # a benchmark bug or an unusable reply: record, do not crash
        if settings.debug:
            raise
        tb = traceback.format_exception_only(type(exc), exc)[-1].strip()
        rec = {"id": item.id, "error": f"internal error: {tb}"}
    finally:
        session.release()
    if item.key is not None:  # what the item is, where its id does not say (`Item.key`)
        rec["item_key"] = item.key
    _attach_request(rec, session, settings.progress_role)
    if session.invalid_reply is not None:
        rec["invalid_reply"] = session.invalid_reply
    rec["usage"] = session.usage_dict()
    rec["latency"] = round(session.latency, 6)
    # what the server sent back (a reply, an error) is masked for the secrets this process
    # sent before anything keeps or shows it: the record, the summary's first error
    return redact_value(rec), connection


def _attach_request(rec: dict[str, Any], session: Session, primary: str) -> None:
    """What the item sent and got back (`request`, `reply`), unless its episode stored it
    itself (a chat's turns, a judge's verdict); another role's calls go under
    `<role>_request` / `<role>_reply`. An errored item keeps the calls that did succeed."""
    for role in session.sent.roles():
        field = "request" if role == primary else f"{role}_request"
        answer = "reply" if role == primary else f"{role}_reply"
        if field in rec:
            continue
        request, reply = session.take_request(role)
        rec[field] = request
        if reply is not None and answer not in rec:
            rec[answer] = reply


class _Writer:
    """Records that finish in the same turn of the event loop reach the records file in one
    write, at the end of that turn: at concurrency 32 about five per write, a few µs saved per
    item; a record waits for microseconds, not for other items. Each record is encoded when it
    is added, so one that cannot be encoded fails its own item's worker, as before. A failed
    write sets `failed`, on which the run stops at once, every earlier record kept."""

    def __init__(self, store: RunStore) -> None:
        self._store = store
        self._pending: list[bytes] = []
        self.failed: asyncio.Future[BaseException] = asyncio.get_running_loop().create_future()

    def add(self, record: dict[str, Any]) -> None:
        line = encode_record(record)
        if not self._pending:
            asyncio.get_running_loop().call_soon(self._flush_soon)
        self._pending.append(line)

    def _flush_soon(self) -> None:
        try:
            self.flush()
        except Exception as exc:  # noqa: BLE001 - raised by `execute`, which stops the run
            if not self.failed.done():
                self.failed.set_result(exc)

    def flush(self, quiet: bool = False) -> None:
        lines, self._pending = self._pending, []
        if not lines:
            return
        try:
            self._store.append_encoded(b"".join(lines))
        except Exception:
            if not quiet:
                raise


def prefix_runs(items: list[Item], concurrency: int) -> deque[list[Item]]:
    """Items in runs played back to back on one slot: a prefix group's items together (in
    their order, the run placed where the group first appears), every other item alone.
    A group larger than its share of the work (items / concurrency) is cut into runs of that
    size, so that with few groups every slot still has work; each run prefills the shared
    prefix once."""
    share = max(1, -(-len(items) // max(1, concurrency)))
    runs: deque[list[Item]] = deque()
    open_runs: dict[str, list[Item]] = {}
    for it in items:
        g = it.prefix_group
        if g is None:
            runs.append([it])
            continue
        run = open_runs.get(g)
        if run is None or len(run) >= share:
            run = open_runs[g] = []
            runs.append(run)
        run.append(it)
    return runs


class RunQueue:
    """Runs waiting for a worker, in order, except that a prefix group's runs start one at a
    time: each once the model answered the previous one's first request (or its first item
    ended). Every run after the first then finds the shared prefix in a cache (the engine's
    prefix cache, or a slot of its server it can be copied from) instead of all prefilling it
    at once."""

    def __init__(self, runs: deque[list[Item]]) -> None:
        self._runs = runs
        #: The run of each group that started and has had no answer yet.
        self._warming: dict[str, int] = {}
        self._changed = asyncio.Event()

    def __len__(self) -> int:
        return len(self._runs)

    async def next(self) -> list[Item] | None:
        """The next run that may start (None: nothing left)."""
        while self._runs:
            for i, run in enumerate(self._runs):
                g = run[0].prefix_group
                if g is None or g not in self._warming:
                    del self._runs[i]
                    if g is not None:
                        self._warming[g] = id(run)
                    return run
            self._changed.clear()  # only runs of groups still warming up are left
            await self._changed.wait()
        return None

    def warmed(self, run: list[Item]) -> None:
        """`run` had a request answered, or one of its items ended."""
        g = run[0].prefix_group
        if g is not None and self._warming.get(g) == id(run):
            del self._warming[g]
            self._changed.set()


async def execute(
    items: list[Item],
    play: Play,
    models: dict[str, Model],
    store: RunStore,
    done: dict[str, dict[str, Any]],
    settings: PassSettings,
    *,
    console: Console,
    description: str,
) -> RunResult:
    """Play every item not in `done`, appending one record per item to `store`."""
    todo = [it for it in items if it.id not in done]
    queue = RunQueue(prefix_runs(todo, settings.concurrency))
    identities = {role: m.identity() for role, m in models.items()}
    new: dict[str, dict[str, Any]] = {}
    fatal: list[BaseException] = []
    # The built-in clients stop a run by their own policy long before their items fail (their
    # retries ride out an outage first); a plugin Model without one fails items fast. Items in a
    # row that fail to connect, after whatever retries the model made, are the same dead-server
    # rule (`core.retry`) with a streak only: the model already spent its patience.
    safety_net = RetryPolicy(
        dead_streak=settings.dead_after or max(12, 2 * settings.concurrency),
        refused_window=0.0, broken_window=0.0)
    unreachable: list[dict[str, Any]] = []

    with RunProgress(console, description, total=len(items), done=len(items) - len(todo),
                     shared=settings.progress) as bar:

        async def one(item: Item, run: list[Item], lease: SlotLease) -> None:
            session = Session(
                models, item.id, seed=settings.seed, cache=settings.cache,
                identities=identities, config=settings.config, options=settings.options,
                prompting=settings.prompting,
                resources=settings.resources,
                on_usage=bar.tokens if settings.progress_role in models else None,
                usage_role=settings.progress_role, texts=store.texts, lease=lease,
                on_reply=lambda: queue.warmed(run),
            )
            try:
                rec, connection = await _play(play, item, session, settings)
            except BaseException as exc:
                fatal.append(exc)
                raise
            if connection:
                # Held back until the server answers again: if it turns out to be dead,
                # these items stay unrecorded and a resume asks them again.
                unreachable.append(rec)
                if safety_net.failed(refused=True):
                    exc = ModelError(
                        f"the model server stopped answering: {len(unreachable)} items in a "
                        f"row failed to connect (last: {rec['error']})")
                    fatal.append(exc)
                    raise exc
                return
            safety_net.answered()
            for held in [*unreachable, rec]:
                out.add(held)
                new[held["id"]] = held
                bar.advance("error" in held)
            unreachable.clear()

        async def worker() -> None:
            lease: SlotLease | None = None
            try:
                while not fatal:
                    run = await queue.next()
                    if run is None:
                        return
                    group = run[0].prefix_group
                    if lease is not None and (group is not None or lease.group is not None):
                        lease.release()
                        lease = None
                    lease = lease or SlotLease(models, group)
                    for item in run:
                        if fatal:
                            break
                        try:
                            await one(item, run, lease)
                        finally:
                            queue.warmed(run)
                        lease.between_items()
                    if group is not None or not lease.keep():
                        lease.release()
                        lease = None
            finally:
                if lease is not None:
                    lease.release()

        out = _Writer(store)
        n_workers = max(1, min(settings.concurrency, len(queue)))
        workers = [asyncio.create_task(worker()) for _ in range(n_workers)]
        every = asyncio.gather(*workers)
        try:
            await asyncio.wait((every, out.failed), return_when=asyncio.FIRST_COMPLETED)
            if out.failed.done():  # a write failed between items: stop now
                raise out.failed.result()
            every.result()  # a worker's error
            for held in unreachable:  # the run ended without the server coming back
                out.add(held)
                new[held["id"]] = held
            out.flush()
        except BaseException:
            for w in workers:
                w.cancel()
            await asyncio.gather(*workers, return_exceptions=True)
            if every.done() and not every.cancelled():
                every.exception()  # seen (it is the error being raised, or one beside it)
            raise
        finally:
            out.flush(quiet=True)  # whatever finished before a failure or Ctrl-C is kept
            if settings.cache is not None:
                settings.cache.flush()

    records = [new.get(it.id) or done[it.id] for it in items if it.id in new or it.id in done]
    return RunResult(
        records=records,
        n_items=len(items),
        n_new=len(new),
        errors=sum(1 for r in records if "error" in r),
    )
