"""An Inspect `.eval` log written sample by sample, in time linear in the samples.

inspect_ai's `write_eval_log` takes the whole log in memory and hands each sample to its
recorder's buffer, which first searches the buffer for an earlier copy of the same sample (a
re-run during a live eval): every sample is compared with every earlier one, so 20,000 records
took minutes and a run of 87,048 did not finish. A finished run has one record
per id, so nothing can be superseded: the samples go to the same recorder (inspect_ai's own
zip layout, summaries and header) in batches, each batch buffered without the search and
written out before the next is made. Time is linear, memory one batch. Samples are stored
as made, not condensed into attachments (`write_eval_log` moves long texts there, a quarter of
its time; Inspect reads both forms alike).

Where the installed inspect_ai lacks the recorder internals this relies on, the samples go
through the recorder's public `log_sample`/`flush` in the same batches (correct, slower).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

#: Samples made and held before they are written out: the summaries journal is rebuilt once
#: per batch, so a batch is a twentieth of the run (at least 1,000, at most 5,000 samples).
MIN_BATCH, MAX_BATCH, BATCHES = 1000, 5000, 20


def batch_size(n: int) -> int:
    """Samples per batch for a run of `n`: few batches (the summaries are rebuilt per batch)
    and bounded memory."""
    return min(MAX_BATCH, max(MIN_BATCH, n // BATCHES))


def write_eval_streamed(doc: Any, samples: Iterable[Any], n: int, out: Path) -> None:
    """Write `doc` (an `EvalLog` without samples) with `samples` (`EvalSample`s, made lazily)
    as the `.eval` file `out`."""
    from inspect_ai._util._async import run_coroutine

    run_coroutine(_write(doc, samples, batch_size(n), out))


async def _write(doc: Any, samples: Iterable[Any], batch: int, out: Path) -> None:
    from inspect_ai.log._recorders.eval import EvalRecorder

    recorder = EvalRecorder(str(out.parent))
    await recorder.log_init(doc.eval, str(out), clean=True)
    await recorder.log_start(doc.eval, doc.plan)
    buffer = _fast_buffer(recorder, doc.eval)
    pending = 0
    for s in samples:
        if buffer is not None:
            buffer.append(s)
        else:
            await recorder.log_sample(doc.eval, s)
        pending += 1
        if pending == batch:
            await (buffer.write() if buffer is not None else recorder.flush(doc.eval))
            pending = 0
    await recorder.log_finish(doc.eval, doc.status, doc.stats, doc.results, doc.reductions,
                              doc.error)


class _Buffer:
    """The recorder's sample buffer, filled without its per-sample search for duplicates."""

    def __init__(self, log: Any, buffered: Any) -> None:
        self._log, self._buffered = log, buffered

    def append(self, sample: Any) -> None:
        self._log._samples.append(self._buffered(sample=sample, summary=sample.summary()))

    async def write(self) -> None:
        await self._log.write_buffered_samples()


def _fast_buffer(recorder: Any, spec: Any) -> _Buffer | None:
    """The direct buffer where this inspect_ai has the internals it needs, else None."""
    try:
        from inspect_ai.log._recorders.eval import _BufferedSample

        log = recorder.data[recorder._log_file_key(spec)]
        if not isinstance(log._samples, list) or not callable(log.write_buffered_samples):
            return None
    except (ImportError, AttributeError, KeyError):
        return None
    return _Buffer(log, _BufferedSample)
