"""mindprobe sends what upstream's code sends: requests recorded by the local OpenAI-compatible
server equal reference requests written here from upstream's own files (openai/evals, byte
copies in ../shared/data/already_said_that/upstream): the eval's `TaskState` (task description
as the system message, then user turns and raw replies), `OpenAISolver` (system first, then the
messages, `extra_options` as sampling), `CoTSolver` (two calls, its two system messages, only
the second reply kept) and the solver registry entries of the published runs.

The references read upstream's files with `ast.literal_eval` / `yaml` (never running them) and
build the messages by hand; the user messages of the first ten turns are those of spec §12.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest
import yaml

from mindprobe.cli import main
from mindprobe.core.store import read_records
from mindprobe.testing import TestServer

UP = "upstream/evals"
# Spec §12: which-is-heavier, seed 20220722, idx 0, an always-correct solver.
FIRST_USER_MESSAGES = [
    "MAIN TASK - tightlipped",
    "Is 15 pounds of marshmallows heavier than 10 pounds of concrete blocks?",
    "MAIN TASK - concrete",
    "MAIN TASK - concrete",
    "Is 20 pounds of eyelashes heavier than 5 pounds of bronze?",
    "Is 20 kilograms of popcorn heavier than 5 kilograms of large rocks?",
    "Is 4 pounds of marshmallows heavier than 1 pound of rebar?",
    "MAIN TASK - eyelashes",
    "Is 12 pounds of feathers heavier than 10 pounds of bricks?",
    "Is 8 pounds of soap foam heavier than 5 pounds of cannonballs?",
]


def _constant(path: Path, name: str) -> str:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    node = next(n for n in tree.body if isinstance(n, ast.Assign) and n.targets[0].id == name)
    return ast.literal_eval(node.value)


def _extra_options(spec: dict) -> dict:
    return spec["args"]["completion_fn_options"]["extra_options"]


class Upstream:
    """What upstream's code would send, from its files."""

    def __init__(self, root: Path) -> None:
        heavier = [json.loads(line) for line in
                   (root / "which_is_heavier/which_is_heavier.jsonl").read_text().splitlines()]
        # distractors.py: the question without " Answer Yes or No", the ideal lowercased; the
        # last record is the prompt's example (spec §4, §6).
        self.ideal = {r["input"][-1]["content"][:-17]: r["ideal"].lower() for r in heavier}
        question = heavier[-1]["input"][-1]["content"][:-17]
        self.system = _constant(root / UP / "elsuite/already_said_that/prompts.py",
                                "TASK_DESCRIPTION").format(
            distractor_question=question, distractor_answer=heavier[-1]["ideal"].lower(),
            distractor_word="particles")
        cot = root / UP / "solvers/prompts/cot.py"
        self.cot = _constant(cot, "DEFAULT_COT_TEMPLATE")
        self.extract = _constant(cot, "DEFAULT_EXTRACT_ANSWER_TEMPLATE")
        reg = root / UP / "registry/solvers"
        self.direct = _extra_options(yaml.safe_load((reg / "defaults.yaml").read_text())[
            "generation/direct/gpt-4-turbo-preview"])
        entry = yaml.safe_load((reg / "already_said_that.yaml").read_text())[
            "already_said_that/cot/gpt-4-turbo-preview"]
        assert entry["args"]["persistent_memory"] is False
        self.reason_opts = _extra_options(entry["args"]["cot_solver"])
        self.answer_opts = _extra_options(entry["args"]["extract_solver"])

    def correct(self, messages: list[dict]) -> str:
        """An always-correct reply to the chat's last user message."""
        users = [m["content"] for m in messages if m["role"] == "user"]
        last = users[-1]
        if not last.startswith("MAIN TASK - "):
            return f"[answer: {self.ideal[last]}]"
        return "[answer: yes]" if last in users[:-1] else "[answer: no]"


def _run(capsys, root: Path, tmp_path: Path, responder, *extra: str) -> list[dict]:
    bodies: list[dict] = []

    def record(body: dict) -> str:
        bodies.append(body)
        return responder(body)

    with TestServer(responder=record) as srv:
        code = main(["run", "already_said_that:which-is-heavier", "--model",
                     f"openai:test-model@{srv.base_url}", "--data-dir", str(root), "--runs-dir",
                     str(tmp_path / "runs"), "--n-samples", "1", "--max-turns", "12",
                     "--no-cache", "--json", *extra])
    out, err = capsys.readouterr()
    assert code == 0, err
    return bodies


def test_direct_requests_are_upstreams(shared_data, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("MINDPROBE_CACHE_DIR", str(tmp_path / "cache"))
    root = shared_data("already_said_that")
    up = Upstream(root)
    bodies = _run(capsys, root, tmp_path, lambda b: up.correct(b["messages"]))
    assert len(bodies) == 12  # one call per turn, the always-correct chat lasts
    history: list[dict] = []
    for i, body in enumerate(bodies):
        user = body["messages"][-1]["content"]
        if i < len(FIRST_USER_MESSAGES):
            assert user == FIRST_USER_MESSAGES[i]
        # OpenAISolver: system = task description, then TaskState.messages; the eval appends
        # the solver's raw output as the assistant turn.
        expected = [{"role": "system", "content": up.system}, *history,
                    {"role": "user", "content": user}]
        assert body["messages"] == expected
        assert {k: v for k, v in body.items() if k != "messages"} == {
            "model": "test-model", **up.direct}
        assert body["temperature"] == 1 and body["max_tokens"] == 512  # the published runs
        history += [expected[-1], {"role": "assistant", "content": up.correct(expected)}]


def test_cot_requests_are_upstreams(shared_data, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("MINDPROBE_CACHE_DIR", str(tmp_path / "cache"))
    root = shared_data("already_said_that")
    up = Upstream(root)

    def responder(body: dict) -> str:
        last = body["messages"][-1]["content"]
        if last == up.cot:
            return f"Thinking privately, call {len(body['messages'])}.\n[answer: maybe]"
        assert last == up.extract
        return "The answer: " + up.correct(body["messages"])

    bodies = _run(capsys, root, tmp_path, responder, "--solver", "cot")
    assert len(bodies) == 24  # two calls per turn
    history: list[dict] = []
    for turn in range(12):
        reason, answer = bodies[2 * turn], bodies[2 * turn + 1]
        user = {"role": "user", "content": reason["messages"][-2]["content"]}
        if turn < len(FIRST_USER_MESSAGES):
            assert user["content"] == FIRST_USER_MESSAGES[turn]
        base = [{"role": "system", "content": up.system}, *history, user]
        # CoTSolver._solve: + system cot_template; then + assistant reasoning + system
        # extract_template; each sub-solver with its own extra_options.
        first = [*base, {"role": "system", "content": up.cot}]
        assert reason["messages"] == first
        reasoning = f"Thinking privately, call {len(first)}.\n[answer: maybe]"
        assert answer["messages"] == [*first, {"role": "assistant", "content": reasoning},
                                      {"role": "system", "content": up.extract}]
        assert {k: v for k, v in reason.items() if k != "messages"} == {
            "model": "test-model", **up.reason_opts}
        assert {k: v for k, v in answer.items() if k != "messages"} == {
            "model": "test-model", **up.answer_opts}
        # persistent_memory False: the eval keeps the extract call's whole output, no reasoning.
        history += [user, {"role": "assistant", "content": "The answer: " + up.correct(base)}]
    rec = read_records(next(tmp_path.glob("runs/already_said_that/*/cot___*/records.jsonl")))[0]
    assert rec["usage_by_call"]["reason"]["requests"] == 12
    assert rec["usage_by_call"]["answer"]["requests"] == 12
    assert rec["transcript"][0]["cot_reasoning"].startswith("Thinking privately")


def test_temperature_zero_is_a_labelled_deviation(shared_data, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("MINDPROBE_CACHE_DIR", str(tmp_path / "cache"))
    root = shared_data("already_said_that")
    up = Upstream(root)
    bodies = _run(capsys, root, tmp_path, lambda b: up.correct(b["messages"]),
                  "--temperature", "0")
    assert {b["temperature"] for b in bodies} == {0}
    (manifest,) = tmp_path.glob("runs/already_said_that/which-is-heavier/*/manifest.json")
    assert manifest.parent.name.startswith("direct-temp0___")
    config = json.loads(manifest.read_text())["config"]
    assert config["deviations"] == ["answer calls at temperature 0 (upstream's published "
                                    "runs: 1)"]
    assert config["upstream_solver"] == {
        "registry_entry": "generation/direct/gpt-4-turbo-preview",
        "calls": {"answer": {"temperature": 1, "max_tokens": 512}}}


@pytest.mark.parametrize("damage", ["missing", "altered"])
def test_missing_or_altered_upstream_file(shared_data, tmp_path, capsys, damage):
    """A data folder without upstream's prompts.py, or with an edited one: one clear error."""
    src = shared_data("already_said_that")
    root = tmp_path / "data"
    for path in src.rglob("*"):
        if path.is_file():
            (root / path.relative_to(src)).parent.mkdir(parents=True, exist_ok=True)
            (root / path.relative_to(src)).write_bytes(path.read_bytes())
    prompts = root / UP / "elsuite/already_said_that/prompts.py"
    if damage == "missing":
        prompts.unlink()
    else:
        prompts.write_text(prompts.read_text().replace("You will be", "You'll be"))
    code = main(["run", "already_said_that:distractorless", "--model", "random", "--data-dir",
                 str(root), "--runs-dir", str(tmp_path / "runs")])
    err = capsys.readouterr().err
    flat = " ".join(err.split())
    assert code == 2 and "Traceback" not in err
    assert "prompts.py" in flat and "mindprobe data fetch already_said_that" in flat
    assert ("missing data file" if damage == "missing" else "does not match") in flat
