"""FanOutQA records store what was sent (`request`) and the raw reply (`reply`), the judge's
call under its verdict; equal to what the local test server received."""

from __future__ import annotations

import pytest

from mindprobe.core.store import read_records
from mindprobe.testing import TestServer


@pytest.fixture(autouse=True)
def _needs_data(dev):
    """The nov23 data (skips cleanly without the fanoutqa wheel)."""


def test_closedbook_and_judge_requests_are_recorded(cli, tmp_path):
    bodies: list[dict] = []

    def answer(body: dict) -> str:
        bodies.append(body)
        return "C" if body["model"] == "judge" else "Paris"

    with TestServer(models=["test-model", "judge"], responder=answer) as srv:
        code, _, err = cli("run", "fanoutqa", "--model", f"openai:test-model@{srv.base_url}",
                           "--judge", f"openai:judge@{srv.base_url}", "--limit", 2,
                           "--runs-dir", tmp_path, "--no-cache", "--concurrency", 1)
    assert code == 0, err
    recs = read_records(next(tmp_path.rglob("records.jsonl")))
    model_bodies = [b for b in bodies if b["model"] == "test-model"]
    judge_bodies = [b for b in bodies if b["model"] == "judge"]
    assert [r["request"]["messages"] for r in recs] == [b["messages"] for b in model_bodies]
    assert all(r["reply"] == "Paris" == r["answer"] for r in recs)
    assert [r["request"]["params"]["max_tokens"] for r in recs] == [
        b["max_tokens"] for b in model_bodies]
    assert [r["judge"]["request"]["messages"] for r in recs] == [b["messages"]
                                                                for b in judge_bodies]
    assert all(r["judge"]["reply"] == "C" and "judge_request" not in r for r in recs)
