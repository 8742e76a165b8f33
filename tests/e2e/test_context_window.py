"""The context window: known from the server (/props n_ctx, max_model_len) or --context-window,
checked before sending; an item that cannot fit is recorded as `does not fit` and never sent
(the test server enforces its window: a request past it would be refused with HTTP 400)."""

from __future__ import annotations

import asyncio

import pytest

from mindprobe.core.fit import DoesNotFit, check_fits
from mindprobe.core.model import Request
from mindprobe.core.store import read_records
from mindprobe.models import parse_model_spec
from mindprobe.testing import TestServer


def ast_wordy(body: dict) -> str:
    """Already Said That played perfectly, with a long reply: chats grow ~25 tokens a turn."""
    shown = [m["content"] for m in body["messages"] if m["role"] == "user"]
    *before, last = shown
    answer = "yes" if last in before else "no"
    return f"[answer: {answer}] " + "because I remember every word shown so far " * 2


def _records(root):
    return read_records(next(root.rglob("records.jsonl")))


@pytest.mark.slow
def test_already_said_that_chats_end_where_the_next_turn_would_not_fit(cli, tmp_path,
                                                                          shared_data):
    data = shared_data("already_said_that")
    with TestServer(responder=ast_wordy, max_model_len=2048) as srv:
        code, doc, err = cli("run", "already_said_that:which-is-heavier", "--model",
                             f"openai:test-model@{srv.base_url}", "--limit", 3,
                             "--data-dir", data, "--runs-dir", tmp_path, "--json")
        stats = srv.stats()
    assert code == 0, err
    assert stats["rejected"] == {}  # nothing past the window was ever sent
    records = _records(tmp_path)
    assert len(records) == 3
    for r in records:
        assert r["end"] == "does_not_fit" and 10 < r["num_turns"] < 100
        assert "2,048 (the server's max_model_len)" in r["ended_by_context_window"]
        assert r["transcript"][-1]["answer"] in ("yes", "no")  # the last turn sent was played
    assert doc["headline"]["value"] == sum(r["num_turns"] for r in records) / 3
    assert any(n.startswith("does not fit: 3 of 3 chats") for n in doc["notes"])
    assert doc["usage"]["ended_by_context_window"] == 3 and doc["usage"]["does_not_fit"] == 0


def test_a_chat_whose_first_turn_does_not_fit_is_recorded_as_such(cli, tmp_path, shared_data):
    data = shared_data("already_said_that")
    with TestServer(responder=ast_wordy) as srv:
        code, doc, err = cli("run", "already_said_that:which-is-heavier", "--model",
                             f"openai:test-model@{srv.base_url}", "--limit", 2,
                             "--context-window", 64, "--data-dir", data,
                             "--runs-dir", tmp_path, "--json")
        stats = srv.stats()
    assert code == 0, err
    assert stats["requests"]["/v1/chat/completions"] == 0
    assert "2 items not sent, not scored (the context window)" in err  # the summary's row
    records = _records(tmp_path)
    assert all(r["does_not_fit"].endswith("> 64 (--context-window); not sent") for r in records)
    assert doc["usage"]["does_not_fit"] == 2 and doc["usage"]["errors"] == 0
    assert doc["does_not_fit"] == 2 and doc["tables"]["does_not_fit"][0]["items"] == 2
    code, out, err = cli("analyse", "already_said_that", "--run",
                         next(tmp_path.rglob("records.jsonl")).parent, "--json")
    assert code == 0 and out["does_not_fit"] == 2, err
    code, _, err = cli("report", "--runs-dir", tmp_path, "--format", "md",
                       "--out", tmp_path / "r.md")
    assert code == 0, err
    assert "does not fit: 2 of 2 items" in (tmp_path / "r.md").read_text()


@pytest.mark.slow
def test_sort_items_past_the_servers_window_are_counted_and_never_sent(cli, tmp_path,
                                                                        shared_data, monkeypatch):
    data = shared_data("sort")
    monkeypatch.setenv("MINDPROBE_DATA_DIR", str(data.parent))
    with TestServer(reply="A", max_model_len=2048, request_log=True) as srv:
        code, doc, err = cli("run", "sort", "--model", f"openai:test-model@{srv.base_url}",
                             "--books", "73017", "--excerpts", 1, "--data-dir", data,
                             "--runs-dir", tmp_path, "--json")
        stats = srv.stats()
    assert code == 0, err
    assert stats["rejected"] == {}
    records = _records(tmp_path)
    unfit = [r for r in records if "does_not_fit" in r]
    assert unfit and len(unfit) < len(records)
    assert stats["requests"]["/v1/chat/completions"] == len(records) - len(unfit)
    assert doc["usage"]["does_not_fit"] == len(unfit) == doc["does_not_fit"]
    assert all(e["prompt_tokens"] + 1 <= 2048 for e in stats["log"])
    assert any(n.startswith(f"does not fit: {len(unfit)} of {len(records)} items")
               for n in doc["notes"])


def test_mr_gsm8k_few_shot_prompts_past_the_window_are_not_sent(cli, tmp_path, shared_data):
    data = shared_data("mr_gsm8k")
    with TestServer(reply="Final Judgement: correct", max_model_len=2048) as srv:
        code, doc, err = cli("run", "mr_gsm8k:sample", "--model",
                             f"openai:test-model@{srv.base_url}", "--limit", 6, "--shots", 3,
                             "--data-dir", data, "--runs-dir", tmp_path, "--json")
        stats = srv.stats()
    assert code == 0, err
    assert stats["rejected"] == {}
    unfit = doc["usage"]["does_not_fit"]
    assert 0 < unfit < 6 and stats["requests"]["/v1/chat/completions"] == 6 - unfit
    assert all("1,024 reply tokens > 2,048" in r["does_not_fit"]
               for r in _records(tmp_path) if "does_not_fit" in r)


def test_sort_picks_the_conditions_a_given_window_fits(cli, tmp_path, shared_data, monkeypatch):
    data = shared_data("sort")
    monkeypatch.setenv("MINDPROBE_DATA_DIR", str(data.parent))
    with TestServer(reply="A") as srv:
        code, doc, err = cli("run", "sort", "--model", f"openai:test-model@{srv.base_url}",
                             "--books", "73017", "--excerpts", 1, "--limit", 8,
                             "--context-window", 2048, "--data-dir", data,
                             "--runs-dir", tmp_path, "--json")
    assert code == 0, err
    assert any(n.startswith("condition skipped: 2500-") for n in doc["notes"])
    assert all(r["excerpt_length"] <= 1000 for r in _records(tmp_path))
    manifest = next(tmp_path.rglob("manifest.json")).read_text()
    assert '"context_window": 2048' in manifest and '"--context-window"' in manifest


def test_retry_errors_asks_again_what_did_not_fit_under_a_larger_window(cli, tmp_path,
                                                                         shared_data):
    data = shared_data("already_said_that")
    args = ["run", "already_said_that:which-is-heavier", "--limit", 2, "--data-dir", data,
            "--runs-dir", tmp_path, "--max-turns", 5, "--json"]
    with TestServer(responder=ast_wordy) as srv:
        model = ["--model", f"openai:test-model@{srv.base_url}"]
        code, doc, err = cli(*args, *model, "--context-window", 64)
        assert code == 0 and doc["usage"]["does_not_fit"] == 2, err
        code, doc, err = cli(*args, *model, "--context-window", 4096, "--retry-errors")
    assert code == 0, err
    assert doc["usage"]["does_not_fit"] == 0
    assert [r["end"] for r in _records(tmp_path)] == ["survived", "survived"]


@pytest.mark.parametrize("server, source", [
    ({"owned_by": "llamacpp", "n_ctx": 2048}, "llama.cpp /props n_ctx"),
    ({"max_model_len": 2048}, "the server's max_model_len"),
])
def test_the_window_is_read_from_the_server(server, source):
    async def window(url: str) -> tuple[int | None, str | None]:
        model = parse_model_spec(f"openai:test-model@{url}")
        await model.start()
        try:
            fits = Request(messages=[{"role": "user", "content": "word " * 1500}], max_tokens=500)
            await check_fits(model, fits)
            with pytest.raises(DoesNotFit, match=r"1,\d+ prompt tokens .* > 2,048"):
                await check_fits(model, Request(messages=fits.messages, max_tokens=600))
            return model.context_window, model.context_window_source
        finally:
            await model.close()

    with TestServer(**server) as srv:
        assert asyncio.run(window(srv.base_url)) == (2048, source)


def test_a_window_of_no_use_is_not_believed():
    m = parse_model_spec("openai:m@127.0.0.1:9")
    for bad in (-1, 0, 2**40, 1.5e3, True, "2048", None):
        m.set_context_window(bad, "x")
        assert m.context_window is None
    m.set_context_window(2048, "--context-window", fixed=True)
    m.set_context_window(4096, "the server's max_model_len")
    assert (m.context_window, m.context_window_source) == (2048, "--context-window")


def _gguf(path, context_length: int) -> None:
    """A GGUF header as llama.cpp writes one: general.*, the vocabulary (an array of strings,
    skipped by the reader), then <arch>.context_length."""
    import struct

    def string(s: str) -> bytes:
        return struct.pack("<Q", len(s.encode())) + s.encode()

    pairs = [string("general.architecture") + struct.pack("<I", 8) + string("llama"),
             string("tokenizer.ggml.tokens") + struct.pack("<IIQ", 9, 8, 3)
             + b"".join(string(t) for t in ("a", "b", "c")),
             string("tokenizer.ggml.scores") + struct.pack("<IIQ", 9, 6, 2) + b"\0" * 8,
             string("llama.context_length") + struct.pack("<II", 4, context_length)]
    path.write_bytes(b"GGUF" + struct.pack("<IQQ", 3, 0, len(pairs)) + b"".join(pairs))


def test_a_gguf_trained_for_a_short_window_bounds_the_engines(tmp_path):
    from mindprobe.models.gguf import metadata, trained_context

    short, long_ = tmp_path / "short.gguf", tmp_path / "long.gguf"
    _gguf(short, 2048)
    _gguf(long_, 131072)
    assert trained_context(short) == 2048
    assert metadata(short) == {"general.architecture": "llama", "llama.context_length": 2048}
    m = parse_model_spec(f"local:{short}")
    assert (m.context_window, m.context_window_source) == (2048, "the GGUF's context_length")
    m = parse_model_spec(f"local:{long_}")
    assert m.context_window == 8192 and "n_ctx per slot" in m.context_window_source


def test_run_profile_and_the_api_take_the_window(cli, tmp_path):
    from mindprobe.cli import build_parser
    from mindprobe.engine.run import build_model
    from mindprobe.engine.settings import RunSettings

    for argv in (["run", "worldsense", "--model", "random", "--context-window", "2048"],
                 ["profile", "--model", "random", "--context-window", "2048"]):
        assert build_parser().parse_args(argv).context_window == 2048
    m = build_model("random", RunSettings(model="random", context_window=2048))
    assert (m.context_window, m.context_window_source) == (2048, "--context-window")
    for command in (["run", "worldsense:fresh", "--limit", 2], ["profile", "--dry-run"]):
        code, _, err = cli(*command, "--model", "random", "--context-window", 5,
                           "--runs-dir", tmp_path)
        assert code == 2 and "--context-window" in err and len(err.strip().splitlines()) == 1
    import mindprobe

    res = mindprobe.evaluate("worldsense:fresh", "random", limit=2, context_window=2048,
                             runs_dir=tmp_path / "api", progress=False)
    assert '"context_window_source": "--context-window"' in (
        res.run_dir / "manifest.json").read_text()
