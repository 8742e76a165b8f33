"""The embedded model (Gemma 3 270M via xllamacpp) end to end: small enough for CI."""

from __future__ import annotations

import asyncio

import pytest

from mindprobe.benchmarks.already_said_that import (
    load_distractors,
    load_samples,
    run_episode,
    task_description,
    templates,
)
from mindprobe.core.session import Session
from mindprobe.core.store import read_records
from mindprobe.models import parse_model_spec
from mindprobe.models.base import Request


@pytest.mark.slow
def test_constrained_worldsense_run(cli, tmp_path):
    code, doc, err = cli("run", "worldsense:fresh", "--model", "local", "--limit", 4,
                         "--prompting", "constrained", "--runs-dir", tmp_path, "--json")
    assert code == 0, err
    run = next(tmp_path.glob("worldsense/fresh/constrained___*"))
    records = read_records(run / "records.jsonl")
    assert len(records) >= 4
    assert all(r["resp"] in r["expectedresp"] for r in records)  # the grammar held
    assert doc["usage"]["requests"] == len(records) and doc["usage"]["prompt_tokens"] > 0


@pytest.mark.slow
def test_multi_turn_chat_reuses_kv_prefix(shared_data, tmp_path, monkeypatch):
    """A 10-turn Already Said That chat: later turns report cached prompt tokens, so each turn
    only prefills its new tokens (linear, not quadratic, prompt processing)."""
    monkeypatch.setenv("MINDPROBE_CACHE_DIR", str(tmp_path / "cache"))
    data = shared_data("already_said_that")
    pool, example = load_distractors(data, "which-is-heavier")
    system = task_description(templates(data)["task_description"], example)
    words = load_samples(data)[0]
    per_turn: list[tuple[int, int]] = []

    async def go() -> dict:
        model = parse_model_spec("local")
        model.configure(1)
        await model.start()
        try:
            session = Session({"model": model}, "0", seed=0, cache=None,
                              identities={"model": model.identity()})

            async def reply(messages):
                c = await session.generate(Request(messages=messages, max_tokens=12))
                per_turn.append((c.prompt_tokens, c.cached_prompt_tokens))
                return c.text

            rec = await run_episode(variant="which-is-heavier", idx=0, seed=1, words=words,
                                    pool=pool, system=system, reply=reply, max_turns=10,
                                    drive_all_turns=True)
            session.release()
            return rec
        finally:
            await model.close()

    record = asyncio.run(go())
    assert len(per_turn) == 10 and len(record["transcript"]) == 10
    assert per_turn[0][1] == 0 or per_turn[0][1] < per_turn[0][0]
    later = per_turn[1:]
    assert all(cached > 0 for _, cached in later), per_turn
    # each later turn prefills far less than its whole prompt
    assert sum(p - c for p, c in later) < 0.5 * sum(p for p, _ in later), per_turn


def test_local_spec_errors(cli, tmp_path):
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(b"not a gguf at all")
    code, _, err = cli("run", "worldsense:fresh", "--model", f"local:{bad}", "--runs-dir",
                       tmp_path, "--limit", 2)
    assert code == 2 and "could not load" in err and "Traceback" not in err


@pytest.mark.slow
def test_choice_scoring_gives_every_trial_a_valid_answer(cli, tmp_path):
    """The embedded base model echoes prompts; answered by log-probability (its default) every
    one of 60 trials gets an allowed answer, so the table shows real accuracy and bias."""
    code, doc, err = cli("run", "worldsense:fresh", "--model", "local", "--limit", 60,
                         "--runs-dir", tmp_path, "--json")
    assert code == 0, err
    assert "log-probability" in err  # the default is stated
    records = read_records(next(tmp_path.glob("worldsense/fresh/logprob___*")) / "records.jsonl")
    assert len(records) >= 60 and doc["n_invalid"] == 0
    assert all(r["resp"] in r["expectedresp"] for r in records)
    assert all(v is not None for r in records for v in r["logprobs"].values())
    assert 0.0 < doc["headline"]["value"] < 1.0
    assert doc["usage"]["cached_prompt_tokens"] > 0  # candidates share the prompt's KV prefix


@pytest.mark.slow


def test_count_tokens_and_context_window_from_the_engine():
    async def go() -> tuple[int, int, int, int | None]:
        model = parse_model_spec("local")
        model.configure(1)
        await model.start()
        try:
            msgs = [{"role": "user", "content": "Which came first, A or B?"}]
            return (await model.count_tokens("hello world"), await model.count_tokens(msgs),
                    await model.count_tokens(msgs * 2), model.context_window)
        finally:
            await model.close()

    text, chat, chat2, window = asyncio.run(go())
    assert 2 <= text <= 4  # the GGUF's own tokenizer (plus BOS), not a character estimate
    assert chat > 8 and chat2 > chat  # the chat template's turn markers are counted too
    assert window == 8192


def test_engine_flags_need_the_embedded_engine(cli, tmp_path):
    code, _, err = cli("run", "worldsense:fresh", "--model", "openai:m@http://127.0.0.1:9/v1",
                       "--threads", 2, "--runs-dir", tmp_path)
    assert code == 2 and "--threads" in err and "Traceback" not in err
    code, _, err = cli("run", "worldsense:fresh", "--model", "local", "--threads", 0,
                       "--runs-dir", tmp_path)
    assert code == 2 and "--threads must be between 1 and 4096" in err


@pytest.mark.slow
def test_two_servers_sharing_a_slot_folder_restore_each_others_prefix(tmp_path):
    """Two embedded servers saving slots into one folder: the second one's first request
    restores the prefix the first one prefilled (a slot file), so it prefills only its own
    tokens; replies at temperature 0 are those of a server that prefilled everything."""
    from mindprobe.models.local import LocalModel
    from mindprobe.models.slots import link_folders

    system = "You answer questions about words. " * 40
    req = [Request(messages=[{"role": "user", "content": system + q}], max_tokens=4,
                   temperature=0.0) for q in ("Is a cat an animal?", "Is a dog a word?")]
    folder = str(tmp_path / "slots")
    (tmp_path / "slots").mkdir()

    async def go() -> tuple[list, str]:
        a, b = (LocalModel(None, spec="local", threads=1, slot_dir=folder) for _ in range(2))
        for m in (a, b):
            m.configure(1)
            await m.start()
        try:
            slots = [await a.acquire_slot(), await b.acquire_slot()]
            link_folders([(a._slots, folder), (b._slots, folder)])
            comps = []
            for m, slot, r in ((a, slots[0], req[0]), (b, slots[1], req[1])):
                r.slot = slot
                comps.append(await m.complete(r, None))
            fresh = LocalModel(None, spec="local", threads=1)
            fresh.configure(1)
            await fresh.start()
            try:
                plain = await fresh.complete(Request(messages=req[1].messages, max_tokens=4,
                                                     temperature=0.0), None)
            finally:
                await fresh.close()
            return comps, plain.text
        finally:
            await a.close()
            await b.close()

    (first, second), plain = asyncio.run(go())
    assert first.cached_prompt_tokens == 0
    # the shared prefix (~240 tokens) came from a's slot file: only the question is prefilled
    assert second.prompt_tokens - second.cached_prompt_tokens < 16, second
    assert second.text == plain


@pytest.mark.slow
def test_a_finished_rerun_loads_no_model(cli, tmp_path):
    """Issue 32.8: nothing left to ask, nothing started: the results are read back."""
    args = ("run", "worldsense:fresh", "--model", "local", "--limit", 2, "--runs-dir",
            tmp_path, "--json")
    code, doc, err = cli(*args)
    assert code == 0, err
    assert "starting the embedded llama.cpp server" in err
    code, again, err = cli(*args)
    assert code == 0, err
    assert "starting the embedded llama.cpp server" not in err
    assert again["headline"] == doc["headline"] and again["state"] == "finished"
