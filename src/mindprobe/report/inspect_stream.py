"""An Inspect `.eval` log written sample by sample, in time linear in the samples.

inspect_ai's `write_eval_log` takes the whole log in memory and hands each sample to its
recorder's buffer, which first searches the buffer for an earlier copy of the same sample (a
re-run during a live eval): every sample is compared with every earlier one, so 20,000 records
took minutes and a run of 87,048 did not finish. A finished run has one record per id, so
nothing can be superseded: the samples go into the same recorder's zip (inspect_ai's own
layout, member names, summaries journal, `summaries.json` and header) a batch at a time, as
the JSON inspect_ai writes for them (`inspect_data`), serialised by its own serialiser. Time
is linear, memory one batch: the summaries `summaries.json` lists at the end wait in a
temporary file, as the JSON their journal members hold.

Each member is zstd-compressed, as inspect_ai compresses it, but by one single-threaded zstd
context reused for every sample: inspect_ai's compressor starts a 12-thread zstd pool for
every member (0.6 ms of a ~2 KB sample's 1.6 ms). The output is the same zstd format at the same
level, a standard frame per member (still split every 200 MiB as inspect_ai splits it).

Where the installed inspect_ai lacks the recorder internals this relies on, the samples go
through the recorder's public `log_sample`/`flush` in the same batches (correct, slower).
"""

from __future__ import annotations

import tempfile
import threading
import time
import zipfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from itertools import islice
from pathlib import Path
from typing import IO, Any

#: Samples made and held before they are written out: the summaries journal gets one member
#: per batch, so a batch is a twentieth of the run (at least 1,000, at most 5,000 samples).
MIN_BATCH, MAX_BATCH, BATCHES = 1000, 5000, 20

#: (the sample's JSON, its summary's JSON), as `inspect_data.sample_json` makes them.
Item = tuple[dict[str, Any], dict[str, Any]]


def batch_size(n: int) -> int:
    """Samples per batch for a run of `n`: few summaries journal members, bounded memory."""
    return min(MAX_BATCH, max(MIN_BATCH, n // BATCHES))


def batches(items: Iterable[Any], size: int) -> Iterator[list[Any]]:
    """`items` in lists of `size` (the last shorter), made as they are asked for."""
    it = iter(items)
    while chunk := list(islice(it, size)):
        yield chunk


def write_eval_streamed(doc: Any, items: Iterable[Item], n: int, out: Path) -> None:
    """Write `doc` (an `EvalLog` without samples) with `items` (made lazily) as the `.eval`
    file `out`."""
    from inspect_ai._util._async import run_coroutine

    run_coroutine(_write(doc, items, batch_size(n), out))


async def _write(doc: Any, items: Iterable[Item], size: int, out: Path) -> None:
    from inspect_ai.log import EvalSample
    from inspect_ai.log._recorders.eval import EvalRecorder

    recorder = EvalRecorder(str(out.parent))
    await recorder.log_init(doc.eval, str(out), clean=True)
    await recorder.log_start(doc.eval, doc.plan)
    log = _zip_log(recorder, doc.eval)
    with one_thread_zstd(), tempfile.TemporaryFile() as spool:
        summaries = Summaries(spool)
        for chunk in batches(items, size):
            if log is not None:
                _write_batch(log, chunk, summaries)
            else:
                for sample, _ in chunk:
                    await recorder.log_sample(doc.eval, EvalSample.model_validate(sample))
                await recorder.flush(doc.eval)
        if log is not None:
            summaries.replace_write(log)
        await recorder.log_finish(doc.eval, doc.status, doc.stats, doc.results,
                                  doc.reductions, doc.error)


def _write_batch(log: Any, chunk: list[Item], summaries: Summaries) -> None:
    """What the recorder's `write_buffered_samples` does for a batch, less its search for
    earlier copies: each sample's member, then one summaries journal member."""
    from inspect_ai.log._recorders.eval import (
        _journal_summary_file,
        _journal_summary_path,
        _sample_filename,
    )

    from mindprobe.report.inspect_data import to_bytes

    for sample, _ in chunk:
        log._zip.writestr(_sample_filename(sample["id"], sample["epoch"]), to_bytes(sample))
    journal = to_bytes([summary for _, summary in chunk])
    log._summary_counter += 1
    log._zip.writestr(_journal_summary_path(_journal_summary_file(log._summary_counter)),
                      journal)
    summaries.add(journal)


class Summaries:
    """Every sample's summary, as the JSON `summaries.json` holds, spooled to a temporary
    file batch by batch (inspect_ai holds them all as models and copies them all to write
    that member: half a gigabyte at the end of an 87,048-sample log)."""

    def __init__(self, spool: IO[bytes]) -> None:
        self._spool, self._size = spool, 0

    def add(self, batch: bytes) -> None:
        """One batch's summaries (a JSON list, as its journal member holds them)."""
        inner = batch[1:-1]
        if inner:
            if self._size:
                self._spool.write(b",")
                self._size += 1
            self._spool.write(inner)
            self._size += len(inner)

    def write_member(self, zf: zipfile.ZipFile, name: str) -> None:
        """The member `name` of `zf` with the spooled list, as `writestr` would write those
        bytes (same method, level and attributes), read from the spool a block at a time."""
        info = zipfile.ZipInfo(name, date_time=time.localtime(time.time())[:6])
        info.compress_type = zf.compression
        info._compresslevel = zf.compresslevel  # type: ignore[attr-defined]
        info.external_attr = 0o600 << 16
        info.file_size = self._size + 2
        self._spool.seek(0)
        with zf.open(info, "w") as dest:  # a member of the recorder's own temporary zip
            dest.write(b"[")
            while block := self._spool.read(1 << 20):
                dest.write(block)
            dest.write(b"]")

    def replace_write(self, log: Any) -> None:
        """Make the recorder's finish write `summaries.json` from the spool (its own list of
        summaries is empty here); every other member it writes as it does."""
        from inspect_ai.log._recorders.eval import SUMMARIES_JSON

        write = log.write

        async def write_summaries_from_spool(filename: str, data: Any) -> None:
            if filename != SUMMARIES_JSON:
                await write(filename, data)
                return
            async with log._lock:
                self.write_member(log._zip, filename)

        log.write = write_summaries_from_spool


def _zip_log(recorder: Any, spec: Any) -> Any:
    """The recorder's zip log where this inspect_ai has the internals `_write_batch` uses,
    else None."""
    try:
        from inspect_ai.log._recorders import eval as recorders

        for name in ("_journal_summary_file", "_journal_summary_path", "_sample_filename",
                     "SUMMARIES_JSON"):
            getattr(recorders, name)
        log = recorder.data[recorder._log_file_key(spec)]
        if not (isinstance(log._summary_counter, int) and isinstance(log._zip, zipfile.ZipFile)
                and callable(log.write) and log._lock is not None):
            return None
    except (ImportError, AttributeError, KeyError):
        return None
    return log


@contextmanager
def one_thread_zstd() -> Iterator[None]:
    """While open, zip members this thread writes with zstd at the default level are
    compressed by single-threaded zstd contexts, each reused once its member is done (one
    for the whole export; two members open at once get one each). Other threads and other
    methods get the compressor zipfile had. Restored on leaving, whatever happens."""
    import zstandard

    try:
        from inspect_ai._util.zipfile import _ZIP_ZSTANDARD, _MultiFrameZstdCompressObj
    except ImportError:  # another inspect_ai: its own compressor, unchanged
        yield
        return
    original = zipfile._get_compressor  # type: ignore[attr-defined]
    owner = threading.get_ident()
    free: list[Any] = []

    def compressor(kind: int, level: int | None = None) -> Any:
        if kind != _ZIP_ZSTANDARD or level is not None or threading.get_ident() != owner:
            return original(kind, level)
        context = free.pop() if free else zstandard.ZstdCompressor(level=3)  # inspect_ai's
        return _Member(_MultiFrameZstdCompressObj(context.compressobj),
                       lambda: free.append(context))

    zipfile._get_compressor = compressor  # type: ignore[attr-defined]
    try:
        yield
    finally:
        zipfile._get_compressor = original  # type: ignore[attr-defined]


class _Member:
    """One member's compressor: its context goes back to the free ones at the member's end
    (zipfile flushes a member's compressor once, when it closes the member)."""

    def __init__(self, inner: Any, done: Any) -> None:
        self._inner, self._done = inner, done

    def compress(self, data: bytes) -> bytes:
        return bytes(self._inner.compress(data))

    def flush(self) -> bytes:
        try:
            return bytes(self._inner.flush())
        finally:
            self._done()
