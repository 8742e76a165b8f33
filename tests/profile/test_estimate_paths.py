"""The plan's estimate follows the request path the run takes on a llama.cpp backend (what
`--model local` is): WorldSense's log-prob scoring asks once per candidate token, a base
model's MR-GSM8K reply is generated in stages, each re-sending the prompt. Against the test
server speaking llama.cpp's native `/completion`, the estimate (counted with the server's
tokenizer, as the profile's plan counts) is within 20% of the usage the run records."""

from __future__ import annotations

import json
import zlib
from pathlib import Path
from typing import Any

import pytest

from mindprobe.core.estimate import counting
from mindprobe.core.loop import run_blocking
from mindprobe.core.plan import ModelFacts
from mindprobe.engine.run import plan_all, prepare, run_task
from mindprobe.engine.settings import Reporter, RunSettings
from mindprobe.models.endpoint_client import LlamaEndpointClient
from mindprobe.models.endpoints import EndpointSpec
from mindprobe.profiling.tokens import measured_counter, template_tokens
from mindprobe.testing import TestServer


def _tokenizer(text: str, add_special: bool) -> list[int]:
    """Three characters a token: candidate answers take several (IMPOSSIBLE: 4)."""
    return [zlib.crc32(text[i:i + 3].encode()) % 50_000 for i in range(0, len(text), 3)]


def _template(messages: list[dict[str, Any]]) -> str:
    return "".join(f"<|{m['role']}|>\n{m['content']}\n" for m in messages) + "<|assistant|>\n"


def _evaluation(body: dict[str, Any]) -> str:
    """A base model's evaluation in upstream's format, ~250 tokens before 'Error Analysis:';
    some start their analysis on the next line (a blank stage: one more call)."""
    prompt = str(body["prompt"])
    blank = zlib.crc32(prompt[:2000].encode()) % 6 == 0
    return ("Solution Analysis: " + "the step follows from the one before. " * 19
            + "\nSolution Correctness: correct\nFirst Error Step: N/A\nError Analysis:"
            + ("\nN/A\n" if blank else " N/A\n") + "Question: next")


@pytest.fixture(scope="module")
def llama():
    with TestServer(models=["test"], owned_by="llamacpp", tokenizer=_tokenizer,
                    chat_template=_template, responder=_evaluation) as srv:
        yield srv


def _estimate_then_run(srv, task: str, options: dict[str, Any], tmp: Path, **kw: Any
                       ) -> tuple[dict[str, Any], dict[str, int]]:
    """The plan's estimate (the profile's token counting) and the run's recorded usage."""
    # one slot: the estimate's prefix reuse is each prompt's with the one before it (`local`
    # copies a shared prefix between its slots; this server's slots do not)
    settings = RunSettings(model="llama", runs_dir=tmp / "runs", concurrency=1, cache=False,
                           **kw)
    reporter = Reporter(progress=False)

    def client() -> LlamaEndpointClient:
        return LlamaEndpointClient("test", EndpointSpec(srv.base_url, concurrency=1,
                                                        llama_slots=True), timeout=30)

    t = prepare(task, options, settings)
    model = client()
    (_, plan), = plan_all(t, settings, ModelFacts.of(model), reporter)

    async def counted() -> dict[str, Any]:
        await model.start()
        try:
            counter = await measured_counter(model, lambda: t.bench.estimate(plan, t.opts), 0,
                                             await template_tokens(model))
        finally:
            await model.close()
        assert counter is not None
        with counting(counter):
            return t.bench.estimate(plan, t.opts).detail["estimate"]

    est = run_blocking(counted())
    outcome = run_task(t, settings, reporter, model=client())
    assert outcome.code == 0
    manifest, = (tmp / "runs").glob("**/manifest.json")
    return est, json.loads(manifest.read_text())["summary"]["usage"]


def _within(used: int, expected: int, share: float = 0.2) -> bool:
    return abs(used / expected - 1) < share


def test_worldsense_logprob_scoring_asks_once_per_candidate_token(llama, tmp_path):
    est, used = _estimate_then_run(llama, "worldsense:fresh",
                                   {"scoring": "logprob", "prompting": "basic"}, tmp_path,
                                   limit=24)
    assert "one request per candidate answer token" in est["note"]
    # more requests than candidates (IMPOSSIBLE is four tokens here): the path, not a guess
    assert used["requests"] == est["expected_requests"] > 2 * 24
    assert _within(used["prompt_tokens"], est["expected_prompt_tokens"]), (est, used)
    prefill = used["prompt_tokens"] - used["cached_prompt_tokens"]
    assert _within(prefill, est["expected_prefill_tokens"]), (est, used)


def test_mr_gsm8k_base_model_reply_in_stages(llama, shared_data, tmp_path):
    root = shared_data("mr_gsm8k")
    est, used = _estimate_then_run(
        llama, "mr_gsm8k", {"data_file": str(root / "sample_records.jsonl")}, tmp_path,
        limit=12, data_dir=root)
    assert "2 stages" in est["note"] and "depends on the model's replies" in est["note"]
    # expected: one call per stage; a blank stage asks once more, within the bound
    assert est["expected_requests"] == 2 * 12
    assert est["expected_requests"] <= used["requests"] <= est["requests"]
    assert _within(used["requests"], est["expected_requests"]), (est, used)
    assert _within(used["prompt_tokens"], est["expected_prompt_tokens"]), (est, used)
    assert used["prompt_tokens"] <= est["prompt_tokens"]
    prefill = used["prompt_tokens"] - used["cached_prompt_tokens"]
    assert _within(prefill, est["expected_prefill_tokens"]), (est, used)
