"""The profile's benchmarks are planned at once (`profiling.parallel`): every plan is under way
before the first one ends, yet what the plans say, their errors (missing data, cannot run) and
the entries come out in the profile's order, as when they were planned one after another."""

from __future__ import annotations

import threading
import time

import pytest

from mindprobe.engine.settings import Reporter, RunSettings
from mindprobe.errors import DataError, UsageError
from mindprobe.profiling import plan as profile_plan
from mindprobe.profiling.parallel import HeldReporter, planned_at_once
from mindprobe.profiling.plan import CANNOT, MISSING, profiled
from mindprobe.profiling.request import ProfileRequest
from mindprobe.profiling.run import plan


class Heard(Reporter):
    """A reporter that writes down what it is told, and from which thread."""

    def __init__(self) -> None:
        super().__init__(progress=False)
        self.said: list[tuple[str, str]] = []
        self.threads: set[str] = set()

    def _hear(self, kind: str, text: str) -> None:
        self.said.append((kind, text))
        self.threads.add(threading.current_thread().name)

    def warn(self, message: str) -> None:
        self._hear("warn", message)

    def note(self, message: str) -> None:
        self._hear("note", message)

    def loading(self, what: str) -> None:
        self._hear("loading", what)


def test_benchmarks_plan_at_once_and_are_heard_in_order(monkeypatch, tmp_path):
    names = [n for n, _ in profiled("quick")]
    # every plan waits until all have started: planned one after another, the first would
    # wait in vain (the barrier breaks after its timeout)
    barrier = threading.Barrier(len(names), timeout=30)

    def plan_all(task, settings, facts, reporter):
        reporter.loading(task.name)
        barrier.wait()
        time.sleep(0.05 * (len(names) - names.index(task.name)))  # the first ends last
        reporter.warn(f"{task.name}: first")
        reporter.note(f"{task.name}: second")
        if task.name == names[1]:
            raise DataError(f"missing data file {tmp_path / 'x.json'}: fetch it")
        if task.name == names[2]:
            raise UsageError(f"{task.name} cannot run here")
        return []

    monkeypatch.setattr(profile_plan, "plan_all", plan_all)
    heard = Heard()
    prof = plan(ProfileRequest(run=RunSettings(model="random", runs_dir=tmp_path),
                               size="quick", data_root=tmp_path), heard)
    assert heard.said == [(kind, f"{n}: {what}" if what else n) for n in names
                          for kind, what in (("loading", ""), ("warn", "first"),
                                             ("note", "second"))]
    assert heard.threads == {threading.main_thread().name}  # replayed, not heard live
    assert [e.name for e in prof.entries] == names
    assert prof.entries[1].status == MISSING and str(tmp_path / "x.json") in \
        prof.entries[1].reason
    assert prof.entries[2].status == CANNOT and "cannot run here" in prof.entries[2].reason


def test_an_unexpected_error_is_raised_in_its_turn():
    heard = Heard()

    def first(reporter):
        reporter.note("one")
        return 1

    def broken(reporter):
        reporter.note("two")
        raise RuntimeError("a bug")

    def third(reporter):
        reporter.note("three")
        return 3

    outcomes = planned_at_once([first, broken, third], heard)
    assert outcomes[0]() == 1
    assert heard.said == [("note", "one")]
    with pytest.raises(RuntimeError, match="a bug"):
        outcomes[1]()
    assert heard.said == [("note", "one"), ("note", "two")]  # the third is not heard yet


def test_ctrl_c_ends_the_wait_at_once():
    """Ctrl-C while a plan is loading: the command stops now, the plan's thread (a daemon)
    is left behind, not waited for."""
    import _thread

    release = threading.Event()
    outcomes = planned_at_once([lambda r: release.wait(60)], Heard())
    planning = [t for t in threading.enumerate() if t.name == "mindprobe-plan"]
    assert planning and all(t.daemon for t in planning)
    timer = threading.Timer(0.3, _thread.interrupt_main)
    timer.start()
    t0 = time.monotonic()
    try:
        with pytest.raises(KeyboardInterrupt):
            outcomes[0]()
        assert time.monotonic() - t0 < 5
    finally:
        release.set()
        timer.join()


def test_plans_see_the_callers_context():
    """A plan made inside `counting(...)` counts with that counter, in its thread too."""
    from mindprobe.core.estimate import TokenCounter, counting, text_tokens

    with counting(TokenCounter(ratio=2.0)):
        outcomes = planned_at_once([lambda r: text_tokens("abcdefgh")], Heard())
    assert outcomes[0]() == 4
    assert text_tokens("abcdefgh") == 2


def test_the_held_reporter_keeps_the_console():
    heard = Heard()
    held = HeldReporter(heard)
    held.warn("w")
    assert held.console is heard.console and heard.said == []
    held.replay(heard)
    assert heard.said == [("warn", "w")]
