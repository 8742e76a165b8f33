"""SORT sends what upstream's `sort/evaluation/evaluation.py` sends, byte for byte.

The reference below is written by reading upstream's `experiment()` (lines 99-194 of the pinned
evaluation.py): it renders real Book-SORT rows (built from ../shared/data/sort) with the
configurations read straight from upstream's YAML files. mindprobe runs against the local
OpenAI-compatible test server, which records every request body; the two must be equal for
several configurations, in and out of context, on the chat path (upstream's `openai` API), on
the prompt path (upstream's vLLM/HF path: chat template + answer prefix) and on the
continue-the-assistant-turn path, with and without the extra space.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest
import yaml

from mindprobe.core.requests import expand_calls
from mindprobe.core.store import load_run, read_records
from mindprobe.testing.server import TestServer

CONDITION = (250, 20)
BOOK = 73017
PROMPTS = Path("upstream/sort/evaluation/conf/prompts")


# ------------------------------------------------------------------ upstream, as its code reads
def chat_template(messages: list[dict]) -> str:
    """The test server's chat template (a ChatML-like one, generation prompt added)."""
    body = "".join(f"<|{m['role']}|>\n{m['content']}<|end|>\n" for m in messages)
    return "<s>" + body + "<|assistant|>\n"


def _ids(pieces: list[str]) -> list[int]:
    return [int(hashlib.sha1(p.encode()).hexdigest()[:6], 16) for p in pieces]


def spaces_apart(text: str, add_special: bool) -> list[int]:
    """A tokenizer that encodes every space as its own token (upstream: add the space)."""
    return [1] * add_special + _ids(re.findall(r" |[^ ]+", text))


def spaces_merged(text: str, add_special: bool) -> list[int]:
    """A tokenizer that merges a space into the next word (upstream: no space)."""
    return [1] * add_special + _ids(re.findall(r" ?[^ ]+| ", text))


def upstream_add_whitespace(encode) -> bool:
    """evaluation.py lines 100-104, with `tokenizer.encode` = encode(text, add_special=True)."""
    white_space_token_id = encode(" ", True)[-1]
    test_string = "This is a test to see how a tokenizer tokenizes tokens"
    n_whitespaces = test_string.count(" ")
    n_whitespace_tokens = sum([token_id == white_space_token_id
                               for token_id in encode(test_string, True)])
    return n_whitespaces == n_whitespace_tokens


def upstream_request(prompts: dict, row: dict, *, in_context: bool, api: str,
                     add_whitespace: bool, task_type: str = "first") -> dict:
    """evaluation.py lines 149-194 for one row (use_system_prompt true, label_list [A, B])."""
    label_list = ["A", "B"]
    segment_1, segment_2 = row["segment_1"], row["segment_2"]
    excerpt, book_title = row["excerpt_text"], row["book_title"]
    if row["present_seg1_first"]:
        segments_prompt = f"Segment {label_list[0]}: {segment_1} Segment {label_list[1]}:" \
                          f" {segment_2}\n"
    else:
        segments_prompt = f"Segment {label_list[0]}: {segment_2} Segment {label_list[1]}: {segment_1}\n"
    pre_excerpt_string = prompts["pre_excerpt"].replace("<booktitle>", book_title).replace(
        "<tasktype>", task_type).replace("<excerpt>", excerpt)
    pre_excerpt_string = pre_excerpt_string if in_context else ""
    post_excerpt_string = prompts["post_excerpt"].replace("<booktitle>", book_title).replace(
        "<tasktype>", task_type).replace("<segments>", segments_prompt)
    system_prompt = prompts["system_prompt"].replace("<tasktype>", task_type)
    user_prompt = pre_excerpt_string + post_excerpt_string
    messages = [{"role": "system", "content": system_prompt},
                {"role": "user", "content": user_prompt}]
    if api == "openai":
        tmp_txt = messages[-1]["content"]
        tmp_txt += " " if add_whitespace else ""
        tmp_txt = tmp_txt.replace("<label_list[0]>", label_list[0]).replace(
            "<label_list[1]>", label_list[1])
        messages[-1]["content"] = tmp_txt
        return {"messages": messages, "max_tokens": 1, "top_logprobs": 20, "temperature": 0,
                "logprobs": True}
    full_prompt = chat_template(messages)
    full_prompt += prompts["model_answer_prefix"]
    full_prompt += " " if add_whitespace else ""
    full_prompt = full_prompt.replace("<label_list[0]>", label_list[0]).replace(
        "<label_list[1]>", label_list[1])
    return {"prompt": full_prompt, "max_tokens": 1, "logprobs": 20, "temperature": 0}


# ------------------------------------------------------------------ mindprobe against the server
def _run(cli, tmp_path, data, server_args: dict, *extra) -> tuple[list[dict], list[dict]]:
    # No response cache: two servers of one model are one identity, and the wire is the point.
    bodies: list[dict] = []

    def capture(body: dict) -> str:
        bodies.append(body)
        return "A"

    with TestServer(responder=capture, **server_args) as srv:
        code, _, err = cli("run", f"sort:{CONDITION[0]}-{CONDITION[1]}", "--model",
                           f"openai:test-model@{srv.base_url}", "--data-dir", data, "--books",
                           BOOK, "--excerpts", 1, "--runs-dir", tmp_path / "runs", "--concurrency",
                           1, "--no-cache", *extra)
    assert code == 0, err
    recs = [r for p in (tmp_path / "runs").rglob("records.jsonl") for r in read_records(p)]
    return bodies, recs


def _rows(data: Path) -> dict[str, dict]:
    from mindprobe.benchmarks.sort import sources
    from mindprobe.benchmarks.sort.planned import planned_rows, split_of

    books = sources.load_source_books(data, [BOOK])
    rows = planned_rows(split_of(sources.built_rows(data, [CONDITION], books), "test"),
                        [CONDITION])
    return {r["row_id"]: r for r in rows}


def _yaml(data: Path, name: str) -> dict:
    return yaml.safe_load((data / PROMPTS / f"{name}.yaml").read_text(encoding="utf-8"))


def _wire(body: dict) -> dict:
    keys = ("messages", "prompt", "max_tokens", "top_logprobs", "temperature", "logprobs")
    return {k: body[k] for k in keys if k in body}


@pytest.fixture
def data(shared_data):
    return shared_data("sort")


@pytest.mark.parametrize("prompt, context, tokenizer", [
    ("prompt_0", "in-context", spaces_merged),
    ("prompt_5", "no-context", spaces_merged),
    ("prompt_9", "in-context", spaces_apart),
    ("prompt_12", "no-context", spaces_apart),
])
def test_prompt_path_equals_upstreams_vllm_prompt(cli, tmp_path, data, prompt, context,
                                                  tokenizer):
    """A llama.cpp server (chat template and tokenizer exposed): upstream's full prompt."""
    bodies, recs = _run(cli, tmp_path, data, {"owned_by": "llamacpp",
                                              "chat_template": chat_template,
                                              "tokenizer": tokenizer},
                        "--prompt", prompt, "--condition", context)
    rows, prompts = _rows(data), _yaml(data, prompt)
    add = upstream_add_whitespace(tokenizer)
    assert add is (tokenizer is spaces_apart)
    assert len(bodies) == len(recs) >= 3  # the segment pairs of one excerpt
    texts = load_run(next((tmp_path / "runs").rglob("records.jsonl")).parent).texts
    for body, rec in zip(bodies, recs, strict=True):
        want = upstream_request(prompts, rows[rec["id"]], in_context=context == "in-context",
                                api="vllm", add_whitespace=add)
        assert _wire(body) == want
        # the record stores what was sent (an excerpt quoted again: once per run, by sha256)
        assert expand_calls([rec["request"]], texts)[0]["prompt"] == want["prompt"]
        assert rec["request"]["params"]["max_tokens"] == 1 and rec["reply"] == "A"
    shared = [r for r in recs if isinstance(r["request"]["prompt"], list)]
    assert bool(shared) is (context == "in-context")
    manifest = yaml.safe_load(next((tmp_path / "runs").rglob("manifest.json")).read_text())
    assert manifest["config"]["extra_space"] is add
    assert "tokenizer" in manifest["config"]["extra_space_decided_by"]
    assert manifest["config"]["request_path"] == "prompt" and "deviations" not in manifest[
        "config"]


@pytest.mark.parametrize("prompt, context, space", [
    ("prompt_2", "in-context", "no"), ("prompt_7", "no-context", "yes")])
def test_chat_path_equals_upstreams_openai_messages(cli, tmp_path, data, prompt, context, space):
    """A chat API (no template exposed, no assistant prefill): upstream's openai messages."""
    bodies, recs = _run(cli, tmp_path, data, {"owned_by": "someone-else"}, "--prompt", prompt,
                        "--condition", context, "--space", space)
    rows, prompts = _rows(data), _yaml(data, prompt)
    texts = load_run(next((tmp_path / "runs").rglob("records.jsonl")).parent).texts
    for body, rec in zip(bodies, recs, strict=True):
        want = upstream_request(prompts, rows[rec["id"]], in_context=context == "in-context",
                                api="openai", add_whitespace=space == "yes")
        assert _wire(body) == want
        assert expand_calls([rec["request"]], texts)[0]["messages"] == want["messages"]
    config = json.loads(next((tmp_path / "runs").rglob("manifest.json")).read_text())["config"]
    assert config["request_path"] == "chat" and config["extra_space"] is (space == "yes")
    notes = " | ".join(config["deviations"])
    assert "path for chat APIs" in notes and f"space after the answer prefix: --space {space}" \
        in notes


def test_assistant_prefix_path_continues_upstreams_prefix(cli, tmp_path, data):
    """A server that continues a final assistant turn (vLLM) without exposing its template:
    upstream's messages, labels filled, then upstream's answer prefix as that turn."""
    bodies, recs = _run(cli, tmp_path, data, {"owned_by": "vllm"}, "--prompt", "prompt_4")
    rows, prompts = _rows(data), _yaml(data, "prompt_4")
    for body, rec in zip(bodies, recs, strict=True):
        ref = upstream_request(prompts, rows[rec["id"]], in_context=True, api="openai",
                               add_whitespace=False)
        assert body["messages"][:-1] == ref["messages"]
        assert body["messages"][-1] == {"role": "assistant",
                                        "content": prompts["model_answer_prefix"]}
        assert body["continue_final_message"] is True and body["add_generation_prompt"] is False
        assert rec["request"]["params"]["continue_final"] is True


def test_no_sentence_of_upstream_is_typed_into_mindprobe(data):
    """Upstream's wording lives in its files only: no YAML text in mindprobe's source."""
    src = Path(__file__).resolve().parents[2] / "src" / "mindprobe"
    code = "\n".join(p.read_text() for p in src.rglob("*.py"))
    for path in sorted((data / PROMPTS).glob("*.yaml")):
        for key, text in yaml.safe_load(path.read_text()).items():
            if key == "name":
                continue
            for sentence in re.split(r"(?<=[.?:]) ", text):
                if len(sentence) > 25:
                    assert sentence not in code, (path.name, sentence)


def test_printed_templates_given_back_send_upstreams_wording(cli, tmp_path, data, capsys,
                                                             monkeypatch):
    """`mindprobe data prompts sort`, edited into nothing and given back as --prompt-file,
    sends exactly what upstream's own configuration sends."""
    from mindprobe.cli import main

    monkeypatch.setenv("MINDPROBE_DATA_DIR", str(data.parent))
    assert main(["data", "prompts", "sort"]) == 0
    pf = tmp_path / "same.yaml"
    pf.write_text(capsys.readouterr().out)
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    own, _ = _run(cli, tmp_path / "a", data, {"owned_by": "someone-else"})
    given, recs = _run(cli, tmp_path / "b", data, {"owned_by": "someone-else"},
                       "--prompt-file", pf)
    assert [_wire(b) for b in given] == [_wire(b) for b in own]


def test_llamacpp_without_apply_template_takes_the_chat_path(cli, tmp_path, data):
    """An older llama.cpp (or a proxy of /v1 and /completion only) has no /apply-template: the
    client finds out at start and says so once; every item runs on upstream's openai path (no
    item fails on a 404), and the manifest records the path and why it was taken."""
    bodies: list[dict] = []

    def capture(body: dict) -> str:
        bodies.append(body)
        return "A"

    with TestServer(responder=capture, owned_by="llamacpp", tokenizer=spaces_merged) as srv:
        code, _, err = cli("run", f"sort:{CONDITION[0]}-{CONDITION[1]}", "--model",
                           f"openai:test-model@{srv.base_url}", "--data-dir", data, "--books",
                           BOOK, "--excerpts", 1, "--runs-dir", tmp_path / "runs",
                           "--concurrency", 1, "--no-cache", "--prompt", "prompt_2")
        url = srv.base_url.removesuffix("/v1")
    assert code == 0, err
    flat = " ".join(err.split())
    assert flat.count("no POST /apply-template at the llama.cpp server") == 1, err
    assert f"server {url} (HTTP 404)" in flat
    assert "send plain messages to /v1/chat/completions instead" in flat
    recs = [r for p in (tmp_path / "runs").rglob("records.jsonl") for r in read_records(p)]
    assert len(recs) == len(bodies) >= 3 and not any("error" in r for r in recs)
    rows, prompts = _rows(data), _yaml(data, "prompt_2")
    texts = load_run(next((tmp_path / "runs").rglob("records.jsonl")).parent).texts
    for body, rec in zip(bodies, recs, strict=True):
        want = upstream_request(prompts, rows[rec["id"]], in_context=True, api="openai",
                                add_whitespace=upstream_add_whitespace(spaces_merged))
        assert _wire(body) == want
        assert expand_calls([rec["request"]], texts)[0]["messages"] == want["messages"]
    manifest = json.loads(next((tmp_path / "runs").rglob("manifest.json")).read_text())
    config, model = manifest["config"], manifest["models"]["model"]
    assert config["request_path"] == "chat"
    assert "path for chat APIs" in " | ".join(config["deviations"])
    assert "tokenizer" in config["extra_space_decided_by"]  # its /tokenize still answers
    assert {"template", "prefix"}.isdisjoint(model["capabilities"])
    assert "tokenize" in model["capabilities"]
    assert set(model["dropped_capabilities"]) == {"template", "prefix"}
    assert "no POST /apply-template (HTTP 404)" in model["dropped_capabilities"]["template"]
