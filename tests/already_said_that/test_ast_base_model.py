"""A base model gets the request upstream sends a base model (`generation/hhh/gpt-4-base`):
`HHHSolver`'s dialogues before the task, the chat rendered as one text prompt with
`OpenAISolver`'s role prefixes, generation stopped at them, the reply kept up to the first.

Upstream's hhh.py and openai_solver.py are not among ../shared's copies, so these tests write
stand-ins of the same shape (other dialogues, other prefixes: proof that they are read, not
assumed) and pin them in place of the real files' hashes. The reference prompt is built here
from the stand-ins by the rule of upstream's `chat_prompt_to_text_prompt`.
"""

from __future__ import annotations

import ast
import hashlib
import json
import shutil
from pathlib import Path

import pytest

from mindprobe.benchmarks.already_said_that import BASE_MODEL_FILES, DATA_FILES
from mindprobe.benchmarks.already_said_that import upstream as ast_upstream
from mindprobe.benchmarks.already_said_that.episode import ANSWER_RE
from mindprobe.core.data import DataFile
from mindprobe.core.requests import expand_calls, read_texts
from mindprobe.core.store import read_records

HHH = '''from evals.task_state import Message

HHH_MSGS = [
    Message(role="system", content="""Dialogues with a terse helper follow."""),
    Message(role="spacer", content=""),
    Message(role="user", content="MAIN TASK - ice"),
    # a comment, as upstream's file has one
    Message(role="assistant", content="[answer: no]"),
    Message(role="user", content="MAIN TASK - snow"),
    Message(role="assistant", content="[answer: no]"),
    Message(role="user", content="Is 1 pound of snow heavier than 2 pounds of ice?"),
    Message(role="assistant", content="[answer: no]"),
    Message(role="narrator", content="(a role without a prefix)"),
    Message(role="spacer", content=""),
]
'''
SOLVER = '''ROLE_TO_PREFIX = {
    "system": "Sys> ",
    "user": "Q> ",
    "assistant": "A> ",
    "spacer": "~~~",
}
'''
STOPS = ["Sys>", "Q>", "A>", "~~~"]


def base_model_data(shared: Path, dest: Path, monkeypatch) -> Path:
    """A copy of the shared data plus stand-ins of the base-model files, pinned in place."""
    shutil.copytree(shared, dest)
    texts = {"evals/solvers/prompts/hhh.py": HHH,
             "evals/solvers/providers/openai/openai_solver.py": SOLVER,
             "evals/solvers/nested/hhh_solver.py": "# stand-in\n",
             "evals/prompt/base.py": "# stand-in\n"}
    pins = []
    for f in BASE_MODEL_FILES:
        text = texts[f.relpath.removeprefix("upstream/")]
        (dest / f.relpath).parent.mkdir(parents=True, exist_ok=True)
        (dest / f.relpath).write_text(text)
        pins.append(DataFile(f.relpath, sha256=hashlib.sha256(text.encode()).hexdigest()))
    monkeypatch.setattr(ast_upstream, "DATA_FILES", (
        *(f for f in DATA_FILES if f not in BASE_MODEL_FILES), *pins))
    return dest


def reference_prompt(chat: list[dict[str, str]]) -> str:
    """The stand-ins read by hand: the first HHH message is the task description, the rest
    and the task's own system message precede the chat; each message on a line after its
    prefix (none: the role capitalised + ": "), then the assistant's prefix, stripped."""
    tree = ast.parse(HHH)
    calls = tree.body[1].value.elts
    hhh = [{k.arg: ast.literal_eval(k.value) for k in c.keywords} for c in calls]
    prefixes = ast.literal_eval(ast.parse(SOLVER).body[0].value)
    msgs = [{"role": "system", "content": hhh[0]["content"]}, *hhh[1:], *chat]
    text = "".join(prefixes.get(m["role"], m["role"].capitalize() + ": ") + m["content"] + "\n"
                   for m in msgs)
    return (text + prefixes["assistant"].rstrip()).lstrip()


def test_registry_entries_of_a_base_model(shared_data):
    root = shared_data("already_said_that")
    direct = ast_upstream.solver("direct", root, base=True)
    assert direct.entry == "generation/hhh/gpt-4-base"
    assert direct.describe()["calls"] == {"answer": {"temperature": 1, "max_tokens": 512}}
    cot = ast_upstream.solver("cot", root, base=True)
    assert cot.entry == "already_said_that/cot_hhh/gpt-4-base"
    assert set(cot.calls) == {"reason", "answer"}
    assert all(c.temperature == 1 and c.max_tokens == 512 for c in cot.calls.values())


@pytest.mark.slow
def test_the_embedded_base_model_gets_upstreams_base_model_request(
        cli, shared_data, tmp_path, monkeypatch):
    """The embedded (base) model: each turn is one text prompt equal to the reference (the
    earlier turns' kept replies inside), stopped at the prefixes; a reply keeps no separator
    and, with a tag, ends at the `]` closing it (issue 25's answer end, recorded); the
    manifest names the registry entry, the format, the stop and the engine's settings."""
    data = base_model_data(shared_data("already_said_that"), tmp_path / "data", monkeypatch)
    code, doc, err = cli("run", "already_said_that:which-is-heavier", "--model", "local",
                         "--n-samples", 1, "--max-turns", 3, "--max-tokens", 24,
                         "--temperature", 0,  # greedy: the chat lasts (the stand-in teaches)
                         "--threads", 1, "--batch-size", 256, "--data-dir", data,
                         "--runs-dir", tmp_path / "runs", "--json")
    assert code == 0, err
    run = next((tmp_path / "runs").glob("already_said_that/which-is-heavier/*"))
    config = json.loads((run / "manifest.json").read_text())["config"]
    assert config["upstream_solver"]["registry_entry"] == "generation/hhh/gpt-4-base"
    assert config["base_model"]["stop"] == STOPS
    assert config["answer_end"] == [["]"]] and config["answer_pattern"] == ANSWER_RE.pattern
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["models"]["model"]["engine"] == {**manifest["models"]["model"]["engine"],
                                                     "threads": 1, "batch": 256}
    assert all(f.relpath in manifest["data"] for f in BASE_MODEL_FILES)

    turns = read_records(run / "records.jsonl")[0]["transcript"]
    sent = expand_calls([t["request"] for t in turns], read_texts(run / "texts.jsonl"))
    system = {"role": "system", "content": None}
    chat: list[dict[str, str]] = []
    for t, call in zip(turns, sent, strict=True):
        chat.append({"role": "user", "content": t["user"]})
        if system["content"] is None:  # the task description, as upstream fills it
            head = call["prompt"].split("\nSys> ", 1)[1]
            system["content"] = head.split("\nQ> " + t["user"])[0]
            assert system["content"].startswith("You will be presented with a list of words")
        assert call["prompt"] == reference_prompt([system, *chat])
        assert call["params"] == {"max_tokens": 24, "temperature": 0, "stop": STOPS}
        reply = t["reply"]
        assert reply == reply.strip() and not any(s in reply for s in STOPS)
        m = ANSWER_RE.search(reply)
        assert m is None or m.end() == len(reply), reply
        chat.append({"role": "assistant", "content": reply})
    assert len(turns) == 3
    assert [t["request"].get("continues") for t in turns][1:] == [
        len(c["prompt"]) for c in sent[:-1]]  # each turn stores only what it adds


def test_a_base_model_without_upstreams_base_model_files(cli, shared_data, tmp_path):
    shared = shared_data("already_said_that")
    if (shared / BASE_MODEL_FILES[0].relpath).exists():
        pytest.skip("this shared folder holds upstream's base-model files")
    code, _, err = cli("run", "already_said_that:which-is-heavier", "--model", "local",
                       "--n-samples", 1, "--data-dir", shared, "--runs-dir", tmp_path)
    flat = " ".join(err.split())
    assert code == 2 and "Traceback" not in err
    assert "hhh.py" in flat and "mindprobe data fetch already_said_that" in flat


@pytest.mark.parametrize(("full", "kept"), [
    # a separator ends the reply, even before a tag the model writes after it
    ("No tag on this line\nQ> MAIN TASK - x\nA> [answer: yes]", "No tag on this line\n"),
    # a `]` before the first tag goes on; the tag's `]` ends it (the answer end)
    ("a ] first, then [answer: no] and more\nQ>", "a ] first, then [answer: no]"),
    ("[answer: yes]", "[answer: yes]"),
])
def test_separators_end_a_staged_reply(full, kept):
    """llama.cpp's staged reply to the answer end also stops, for good, at the request's own
    stop strings (left out, as llama.cpp leaves a stop out)."""
    from mindprobe.benchmarks.already_said_that.task import ANSWER_END, ANSWER_PATTERN
    from mindprobe.core.loop import run_blocking
    from mindprobe.models.base import CallContext, Request
    from mindprobe.models.endpoint_client import LlamaEndpointClient
    from mindprobe.models.endpoints import EndpointSpec
    from mindprobe.testing import TestServer

    async def ask(url: str) -> str:
        client = LlamaEndpointClient("test", EndpointSpec(url, concurrency=1), timeout=30)
        await client.start()
        try:
            assert client.can("base")
            req = Request(prompt="Q> MAIN TASK - x\nA>", stop=STOPS, max_tokens=64,
                          temperature=0, answer_end=ANSWER_END, answer_pattern=ANSWER_PATTERN)
            return (await client.complete(req, CallContext("0", 0, 0, "model"))).text
        finally:
            await client.close()

    with TestServer(models=["test"], owned_by="llamacpp", responder=lambda b: full) as srv:
        assert run_blocking(ask(srv.base_url)) == kept
