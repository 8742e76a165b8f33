"""A run's state, derived in one place from its records and its manifest.

`mindprobe runs`, `analyse`, the report, a profile's `profile.json` and the Python API all show
this one derivation, so they never disagree. The records are the truth: a run whose every
planned item is recorded without an error is finished, whatever its manifest says (a process
that died after its last record, a re-run that only scored); the manifest only tells a run
still being written (`running`, its lock held) and one stopped by an error apart from one cut
short.

- finished: every planned item recorded, none ended in an error;
- partial: the run ended, but some items ended in errors or are missing (a torn last line,
  a cut records file): its numbers are over the items that did finish;
- interrupted: stopped before every item was asked (Ctrl-C, kill, a crash): resume it;
- failed: stopped by an error, or every item ended in one: no score;
- running: another process is writing it now.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mindprobe.core.results import Results

FINISHED, PARTIAL, INTERRUPTED, FAILED, RUNNING = (
    "finished", "partial", "interrupted", "failed", "running")


@dataclass(frozen=True)
class RunState:
    """What a run came to: its state and the counts behind it."""

    state: str
    #: Items recorded (answered or ended in an error).
    done: int
    #: Recorded items that ended in an error.
    failed: int
    #: Items the run's last plan holds (None: a manifest from before it was recorded).
    planned: int | None
    #: Torn last lines of the records file (a write cut off by a kill): not counted in `done`.
    torn: int = 0

    @property
    def complete(self) -> bool:
        return self.state == FINISHED

    @property
    def scored(self) -> int:
        """Items the results are computed over (recorded without an error)."""
        return self.done - self.failed

    @property
    def of(self) -> int:
        """The items the run should have: planned, or what was recorded if more."""
        return max(self.planned or 0, self.done)

    def text(self) -> str:
        """`finished 310/310`, `partial 30/30 (17 failed)`, `interrupted 299/300 (1 torn
        line)`: the one wording of every view."""
        extra = []
        if self.failed:
            extra.append(f"{self.failed} failed")
        if self.torn:
            extra.append(f"{self.torn} torn line" + ("s" if self.torn > 1 else ""))
        planned = "?" if self.planned is None else str(self.planned)
        return f"{self.state} {self.done}/{planned}" + (f" ({', '.join(extra)})"
                                                        if extra else "")

    def subset(self) -> str | None:
        """`13 of 30 items` when the results cover fewer items than the run should have."""
        if self.scored >= self.of or self.scored == 0:
            return None
        return f"{self.scored} of {self.of} items"

    def as_dict(self) -> dict[str, Any]:
        return {"state": self.state, "complete": self.complete, "done": self.done,
                "failed": self.failed, "planned": self.planned, "torn": self.torn,
                "scored": self.scored}

    def failed_dict(self) -> dict[str, int] | None:
        """`{"errors": 17, "of": 30}` when any item ended in an error (None: none did)."""
        return {"errors": self.failed, "of": self.done} if self.failed else None


def derive(manifest: dict[str, Any], records: list[dict[str, Any]], torn: int = 0,
           held_elsewhere: bool = False) -> RunState:
    """The state of a run from its manifest and records (first-wins, torn tail dropped)."""
    status = str(manifest.get("status", "?"))
    planned = manifest.get("n_items")
    planned = planned if isinstance(planned, int) and not isinstance(planned, bool) else None
    done = len(records)
    failed = sum(1 for r in records if "error" in r)
    missing = max((planned or 0) - done, 0)

    def made(state: str) -> RunState:
        return RunState(state, done, failed, planned, torn)

    if status == RUNNING and held_elsewhere:
        return made(RUNNING)
    if done and failed == done:
        return made(FAILED)
    if not missing and not failed and not torn and (done or status == FINISHED):
        return made(FINISHED)
    if status == FAILED:
        return made(FAILED)
    if status in (RUNNING, INTERRUPTED) or (not done and status != "finished"):
        return made(INTERRUPTED)
    return made(PARTIAL)


def label_subset(res: Results, state: RunState) -> Results:
    """Results over fewer items than the run should have say so: the headline names its
    subset (`13 of 30 items`, in every view) and a warning says why."""
    subset = state.subset()
    if subset is None or res.failed is not None:
        return res
    if res.headline is not None and res.headline.value is not None:
        res.headline.subset = subset
    why = []
    if state.failed:
        why.append(f"{state.failed} ended in errors (resume with --retry-errors to ask "
                   "them again)")
    left = state.of - state.done
    if left:
        torn = f", {state.torn} of them a torn last line" if state.torn else ""
        why.append(f"{left} not recorded{torn} (resume the run to ask them)")
    res.warnings.append(f"the results are over {subset} ({state.state}): "
                        + "; ".join(why))
    return res


def document(state: RunState) -> dict[str, Any]:
    """What a run's JSON document says about its state (`run --json`, `analyse --json`)."""
    return {"state": state.state, "complete": state.complete, "items": state.as_dict(),
            "failed": state.failed_dict()}
