"""The typed contract end to end: episodes and `results` get the benchmark's Options instance,
which the manifest records and one `Run.plan()` rebuilds (old manifests from their config);
one thinking-room policy and one retry policy, each with one home."""

from __future__ import annotations

import ast
import asyncio
import json
import re
from pathlib import Path

import pytest

from mindprobe.benchmarks.already_said_that.options import AlreadySaidThatOptions
from mindprobe.benchmarks.worldsense.options import WorldSenseOptions
from mindprobe.benchmarks.worldsense.task import WorldSenseBenchmark
from mindprobe.core.options import NoOptions, build_options, rebuild_options
from mindprobe.core.retry import RetryPolicy
from mindprobe.core.store import load_run
from mindprobe.core.thinking import THINKING_ROOM, ReplyBudget
from mindprobe.engine.run import Task, run_task
from mindprobe.engine.settings import Reporter, RunSettings
from mindprobe.errors import ModelError
from mindprobe.models.base import CallContext, Request, TransientError
from mindprobe.models.openai_compat import OpenAICompatModel
from mindprobe.resources.wikipedia import WikipediaClient, WikipediaError
from mindprobe.testing import TestServer
from mindprobe.testing.mediawiki import MediaWikiServer

SRC = Path(__file__).resolve().parents[2] / "src" / "mindprobe"


class SpyWorldSense(WorldSenseBenchmark):
    """WorldSense, noting the options object each episode and each results call receives."""

    def __init__(self) -> None:
        self.episodes: list[object] = []
        self.results_got: list[object] = []

    async def run_item(self, item, session):
        self.episodes.append(session.options)
        return await super().run_item(item, session)

    def results(self, records, plan):
        self.results_got.append(plan.options)
        return super().results(records, plan)


def test_episodes_and_results_receive_the_typed_options_and_the_manifest_rebuilds_them(tmp_path):
    opts = build_options(WorldSenseOptions, {"prompting": "direct", "reasks": "0"},
                         benchmark="worldsense")
    spy = SpyWorldSense()
    settings = RunSettings(model="random", limit=12, runs_dir=tmp_path, cache=False, seed=5)
    outcome = run_task(Task(spy, opts, ["fresh"]), settings, Reporter(progress=False))
    assert outcome.code == 0
    assert spy.episodes and all(o is opts for o in spy.episodes)
    assert spy.results_got == [opts] and spy.results_got[0] is opts
    run = load_run(outcome.results["fresh"].run_dir)
    assert json.loads((run.dir / "manifest.json").read_text())["options"]["reasks"] == 0
    rebuilt = run.plan().options
    assert isinstance(rebuilt, WorldSenseOptions) and rebuilt == opts
    # results from the stored run equal those of the run itself
    again = WorldSenseBenchmark().results(run.records, run.plan())
    assert again.to_json() == outcome.results["fresh"].to_json()


def _write_run(folder: Path, manifest: dict) -> Path:
    folder.mkdir(parents=True)
    (folder / "manifest.json").write_text(json.dumps(manifest))
    (folder / "records.jsonl").write_text("")
    return folder


def test_run_plan_rebuilds_options_from_the_manifest_and_from_an_old_config(tmp_path):
    config = {"seed": 1, "variant": "first-letters", "solver": "cot", "max_turns": 7,
              "n_samples": 3, "calls": {}}
    old = _write_run(tmp_path / "old", {"benchmark": "already_said_that", "config": config})
    assert load_run(old).plan().options == AlreadySaidThatOptions(
        solver="cot", max_turns=7, n_samples=3)
    # recorded options win over the config; names the class no longer has are dropped
    new = _write_run(tmp_path / "new", {
        "benchmark": "already_said_that", "config": config,
        "options": {"solver": "direct", "max_turns": 9, "n_samples": 3, "gone": 1}})
    plan = load_run(new).plan()
    assert plan.options == AlreadySaidThatOptions(solver="direct", max_turns=9, n_samples=3)
    assert plan.config == config
    # a benchmark no longer installed: its records still load, without options
    gone = _write_run(tmp_path / "gone", {"benchmark": "no_such_plugin", "config": {}})
    assert isinstance(load_run(gone).plan().options, NoOptions)
    assert isinstance(rebuild_options(NoOptions, {"x": 1}), NoOptions)


def test_the_reply_budget_leaves_room_for_thinking_unless_the_user_chose_a_cap():
    assert ReplyBudget.plan(1024, None, thinks=False) == ReplyBudget(1024, 1024 + THINKING_ROOM)
    assert ReplyBudget.plan(1024, None, thinks=True) == ReplyBudget(1024 + THINKING_ROOM,
                                                                   1024 + THINKING_ROOM)
    assert ReplyBudget.plan(16, 300, thinks=True) == ReplyBudget(300, 300)
    budget = ReplyBudget.plan(512, None, thinks=False)
    assert budget.config() == {"max_tokens": 512, "max_tokens_thinking": 512 + THINKING_ROOM}
    assert ReplyBudget.of(budget.config()) == budget
    assert ReplyBudget.of({}, 16) == ReplyBudget(16, 16)  # a run that recorded no budget


def _calls_and_assignments(path: Path) -> tuple[set[str], set[str]]:
    tree = ast.parse(path.read_text())
    calls = {n.func.attr if isinstance(n.func, ast.Attribute) else getattr(n.func, "id", "")
             for n in ast.walk(tree) if isinstance(n, ast.Call)}
    names = {t.id for n in ast.walk(tree) if isinstance(n, ast.Assign)
             for t in n.targets if isinstance(t, ast.Name)}
    return calls, names


@pytest.mark.slow
def test_thinking_room_and_retry_policy_each_have_one_home():
    """No benchmark sizes its own thinking room or re-asks a cut-off reply itself, and no
    client keeps its own backoff or dead-server rule: they use core.thinking / core.retry."""
    bad = []
    for path in sorted(SRC.rglob("*.py")):
        rel = str(path.relative_to(SRC))
        text = path.read_text()
        calls, names = _calls_and_assignments(path)
        if rel != "core/thinking.py":
            if {n for n in names if "THINKING_ROOM" in n}:
                bad.append(f"{rel} defines its own thinking room")
            if "truncated_in_reasoning and" in text:
                bad.append(f"{rel} re-asks a reply cut off in its thinking itself")
            if '"max_tokens_thinking"' in text:
                bad.append(f"{rel} reads the recorded thinking room itself")
        if rel != "core/retry.py":
            if "Liveness" in calls or {"DEAD_STREAK", "DEAD_SECONDS"} & names:
                bad.append(f"{rel} keeps its own dead-server rule")
            if "uniform" in calls and rel.startswith(("models/", "resources/")):
                bad.append(f"{rel} jitters its own backoff")
            if rel.startswith(SERVER_SIDE):
                bad += [f"{rel}:{line} {why}" for line, why in _own_dead_rule(path)]
    assert bad == []


#: Modules that talk to servers or run items: where a second "server is dead" rule would hide.
SERVER_SIDE = ("models/", "resources/", "engine/", "core/runner.py", "core/session.py")
#: The policy's thresholds: read only by the rule itself (constructors may set them).
_THRESHOLDS = {"dead_streak", "refused_window", "broken_window"}
_ORDER = (ast.Lt, ast.LtE, ast.Gt, ast.GtE)


def _own_dead_rule(path: Path) -> list[tuple[int, str]]:
    """Where a module judges a server dead itself: a `..._since` timer in arithmetic or a
    comparison (an outage clock of its own), a count compared to a `dead...` threshold, or
    the policy's thresholds read to decide outside `core.retry`."""
    found: set[tuple[int, str]] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Attribute) and node.attr in _THRESHOLDS \
                and isinstance(node.ctx, ast.Load):
            found.add((node.lineno, f"reads the policy's {node.attr} to judge by itself"))
        if not isinstance(node, (ast.BinOp, ast.Compare)):
            continue
        ids = {n.id if isinstance(n, ast.Name) else n.attr for n in ast.walk(node)
               if isinstance(n, (ast.Name, ast.Attribute))}
        if any(i.endswith("_since") for i in ids):
            found.add((node.lineno, "keeps its own outage clock (a ..._since timer)"))
        if isinstance(node, ast.Compare) and any(isinstance(op, _ORDER) for op in node.ops) \
                and any(re.search(r"(^|_)dead(_|$)", i.lower()) for i in ids):
            found.add((node.lineno, "compares against its own dead-server threshold"))
    return sorted(found)


def test_the_dead_rule_scan_finds_a_second_rule(tmp_path):
    """The scan above fails on the router's and the runner's former rules."""
    old = tmp_path / "old.py"
    old.write_text(
        "def left(self, now):\n"
        "    return self._all_down_since + self.all_down_after - now\n"
        "def stop(streak, dead_after):\n"
        "    return streak >= dead_after\n"
        "def probe(self, silent):\n"
        "    return silent >= self.retry.refused_window\n")
    assert [line for line, _ in _own_dead_rule(old)] == [2, 4, 6]


def _model(url: str, max_attempts: int) -> OpenAICompatModel:
    return OpenAICompatModel("test-model", url, None, spec="t", label="t", grammar="llama",
                             max_attempts=max_attempts, backoff_base=0.01, backoff_max=0.02)


def test_the_model_client_and_the_wikipedia_client_retry_by_one_policy(tmp_path):
    """Both give up after their policy's attempts against a server that always fails, and
    both count a server that answers nothing as dead by the same rule."""
    with TestServer(fault_500=1.0) as srv:
        model = _model(srv.base_url, max_attempts=3)
        assert isinstance(model.retry, RetryPolicy)

        async def ask() -> None:
            await model.start()
            try:
                await model.complete(Request(messages=[{"role": "user", "content": "q"}]),
                                     CallContext("i", 0, 0))
            finally:
                await model.close()

        with pytest.raises(TransientError, match="after 3 attempts"):
            asyncio.run(ask())
        assert srv.stats()["faults"]["500"] == 3

    with MediaWikiServer() as wiki:
        wiki.inject(*["500"] * 5)
        client = WikipediaClient(api_url=wiki.api_url, cache_dir=tmp_path / "cache",
                                 max_attempts=3, backoff_base=0.01, backoff_max=0.02)
        assert isinstance(client.api.retry, RetryPolicy)

        async def search() -> None:
            async with client:
                await client.search("python")

        with pytest.raises(WikipediaError, match="after 3 attempts"):
            asyncio.run(search())
        assert [r["fault"] for r in wiki.requests()] == ["500"] * 3

    policy = RetryPolicy(max_attempts=2, dead_streak=2, refused_window=0.0, broken_window=0.0)
    assert policy.failed(refused=True) is None
    assert "2 failed requests in a row" in (policy.failed(refused=True) or "")
    assert policy.exhausted(2) and not policy.exhausted(1)
    with pytest.raises(ModelError, match="stopped answering"):
        model = _model("http://127.0.0.1:9", max_attempts=1)
        model.retry.dead_streak, model.retry.refused_window = 1, 0.0
        model._note_failure("refused", True)
