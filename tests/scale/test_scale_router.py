"""Several endpoints for one model: least-loaded routing, per-item affinity, failover, the
endpoints file, `--dry-run`, and a run that stops cleanly when every endpoint is down.

Real test servers on 127.0.0.1 (different latencies, prefix-cache simulation, request logs);
servers are stopped from the test while a run is going on.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time
from collections import defaultdict
from pathlib import Path

import pytest

from mindprobe.core.store import read_records
from mindprobe.errors import UsageError
from mindprobe.models import parse_model_spec
from mindprobe.models.endpoints import DEFAULT_GROUP, parse_endpoints_file, spread
from mindprobe.models.router import RouterModel
from mindprobe.testing import server_group
from mindprobe.testing.responders import worldsense_answer


def ast_oracle(body: dict) -> str:
    """Already Said That played perfectly: yes when the word was shown before in this chat."""
    shown = [m["content"] for m in body["messages"] if m["role"] == "user"]
    *before, last = shown
    return "[answer: yes]" if last in before else "[answer: no]"


def _spawn(tmp_path: Path, args: list) -> subprocess.Popen:
    env = {**os.environ, "MINDPROBE_CACHE_DIR": str(tmp_path / "cache"), "PYTHONUNBUFFERED": "1"}
    return subprocess.Popen([sys.executable, "-m", "mindprobe.cli", *map(str, args)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _count_records(runs: Path) -> int:
    hits = list(runs.glob("*/*/*/records.jsonl"))
    return hits[0].read_bytes().count(b"\n") if hits else 0


def _when_records(runs: Path, n: int, action, timeout: float = 60) -> threading.Thread:
    """Run `action` in a thread once the run under `runs` has recorded `n` items."""
    def wait() -> None:
        deadline = time.time() + timeout
        while time.time() < deadline and _count_records(runs) < n:
            time.sleep(0.01)
        action()
    t = threading.Thread(target=wait, daemon=True)
    t.start()
    return t


def _metrics(doc: dict, label: str) -> str:
    """The results without usage, tokens, run and endpoints, the model label made neutral."""
    kept = {k: v for k, v in doc.items() if k not in ("usage", "run", "endpoints", "tokens")}
    kept["tables"] = {k: v for k, v in kept.get("tables", {}).items() if k != "tokens"}
    return json.dumps(kept, sort_keys=True).replace(label, "MODEL")


# -- the endpoints file ----------------------------------------------------------------------
def test_endpoints_file_parses_options_group_and_comments(tmp_path, monkeypatch):
    monkeypatch.setenv("VLLM_KEY", "s3cret")
    monkeypatch.delenv("MINDPROBE_API_KEY", raising=False)
    f = tmp_path / "endpoints.txt"
    f.write_text("# two GPUs\ngroup = llama-70b\n\nhttp://gpu1:8000/v1  concurrency=8  "
                 "key_env=VLLM_KEY\ngpu2:8000   # scheme and /v1 are added\n")
    specs, group = parse_endpoints_file(f)
    assert group == "llama-70b"
    assert [s.url for s in specs] == ["http://gpu1:8000/v1", "http://gpu2:8000/v1"]
    assert (specs[0].concurrency, specs[0].key) == (8, "s3cret")
    assert (specs[1].concurrency, specs[1].key) == (None, None)
    assert "s3cret" not in repr(specs[0])
    model = parse_model_spec("openai:llama", endpoints_file=f)
    assert isinstance(model, RouterModel)
    # The cache key and the run directory name the model and the group, never the URLs.
    assert model.identity() == {"model": "llama", "endpoint_group": "llama-70b"}
    assert model.label == "llama-llama-70b" and model.default_concurrency == 8 + 16


@pytest.mark.parametrize(("lines", "bad_line", "words"), [
    (["http://a:1/v1", "http://b:1/v1 concurrency=zero"], 2, "concurrency"),
    (["# c", "", "http://a:1/v1 weight=3"], 3, "unknown option 'weight'"),
    (["http://a:1/v1 key_env=NOT_SET_ANYWHERE_42"], 1, "NOT_SET_ANYWHERE_42"),
    (["http://a:1/v1", "http://a:1"], 2, "listed twice"),
    (["concurrency=8 http://a:1/v1"], 1, "expected a URL first"),
    (["http://a:1/v1 concurrency"], 1, "KEY=VALUE"),
    (["group = a", "group = b", "http://a:1/v1"], 2, "named twice"),
])
def test_a_bad_endpoints_line_names_the_file_and_line(tmp_path, lines, bad_line, words):
    f = tmp_path / "eps.txt"
    f.write_text("\n".join(lines) + "\n")
    with pytest.raises(UsageError) as exc:
        parse_endpoints_file(f)
    assert f"{f} line {bad_line}:" in str(exc.value) and words in str(exc.value)


def test_bad_endpoints_file_on_the_command_line_exits_2(cli, tmp_path):
    f = tmp_path / "eps.txt"
    f.write_text("http://127.0.0.1:9/v1\nhttp://127.0.0.1:8/v1 concurrency=-1\n")
    code, _, err = cli("run", "worldsense:fresh", "--model", "openai:m", "--endpoints", f,
                       "--runs-dir", tmp_path / "runs")
    assert code == 2 and f"{f} line 2" in err and "Traceback" not in err
    code, _, err = cli("run", "worldsense:fresh", "--model", "openai:m", "--endpoints",
                       tmp_path / "missing.txt", "--runs-dir", tmp_path / "runs")
    assert code == 2 and "--endpoints" in err and "no such file" in err
    code, _, err = cli("run", "worldsense:fresh", "--model", "openai:m@http://x:1/v1",
                       "--endpoints", f, "--runs-dir", tmp_path / "runs")
    assert code == 2 and "without @URL" in err
    assert not (tmp_path / "runs").exists()


# -- routing, failover ------------------------------------------------------------------------
@pytest.mark.slow
def test_killed_endpoint_mid_run_every_item_once_and_same_metrics(cli, tmp_path):
    """Three servers (fast, medium, slow); the medium one dies mid-run. The run completes, every
    item is recorded once, the faster server served more, metrics equal a one-server run."""
    runs = tmp_path / "runs"
    with server_group({"latency": 0.005}, {"latency": 0.02}, {"latency": 0.04},
                      responder=worldsense_answer) as (fast, medium, slow):
        urls = ",".join(s.base_url for s in (fast, medium, slow))
        proc = _spawn(tmp_path, ["run", "worldsense:fresh", "--model", f"openai:test-model@{urls}",
                                 "--runs-dir", runs, "--concurrency", 9, "--no-cache", "--json"])
        killer = _when_records(runs, 150, medium.stop)
        out, err = proc.communicate(timeout=120)
        killer.join()
        served = {"fast": fast.stats()["served_ok"], "slow": slow.stats()["served_ok"]}
        code1, single, err1 = cli("run", "worldsense:fresh", "--model",
                                  f"openai:test-model@{fast.base_url}", "--runs-dir",
                                  tmp_path / "single", "--no-cache", "--json")
    assert proc.returncode == 0, err
    assert code1 == 0, err1
    doc = json.loads(out)
    records = read_records(next(runs.glob("worldsense/fresh/*/records.jsonl")))
    assert len(records) == 504 and len({r["id"] for r in records}) == 504
    assert not any("error" in r for r in records)
    assert doc["usage"]["requests"] == 504 and doc["usage"]["errors"] == 0
    eps = {e["endpoint"]: e for e in doc["endpoints"]}
    assert eps[medium_url(urls, 1)]["state"] == "down" and eps[medium_url(urls, 1)]["ok"] > 0
    assert served["fast"] > served["slow"] > 0
    assert sum(e["ok"] for e in eps.values()) == 504  # no request answered twice
    assert _metrics(doc, "test-model-openai-compatible") == _metrics(
        single, single["run"].rsplit("___", 1)[1])
    assert "endpoints" in err and "down" in err  # the summary's per-endpoint lines


def medium_url(urls: str, i: int) -> str:
    return urls.split(",")[i]


def test_an_endpoint_down_from_the_start_is_skipped(cli, tmp_path):
    with server_group({"latency": 0.0}, responder=worldsense_answer) as (srv,):
        dead, live = "http://127.0.0.1:9/v1", srv.base_url  # discard port: nothing listens
        code, doc, err = cli("run", "worldsense:fresh", "--model",
                             f"openai:test-model@{srv.base_url},{dead}", "--limit", 30,
                             "--runs-dir", tmp_path / "runs", "--no-cache", "--json")
    assert code == 0, err
    eps = {e["endpoint"]: e for e in doc["endpoints"]}
    assert eps[dead]["state"] == "down" and eps[dead]["ok"] == 0
    assert eps[live]["ok"] == doc["usage"]["requests"] >= 30


def test_cache_and_run_directory_do_not_depend_on_the_endpoints(cli, tmp_path):
    """Adding/removing endpoints keeps the cache and resumes the same run directory."""
    cache = tmp_path / "responses.sqlite"
    with server_group({}, {}, {}, responder=worldsense_answer) as (a, b, c):
        first = ["--runs-dir", tmp_path / "runs", "--cache", cache, "--json"]
        code, doc1, err = cli("run", "worldsense:fresh", "--model",
                              f"openai:test-model@{a.base_url},{b.base_url}", "--limit", 20,
                              *first)
        assert code == 0, err
        served = a.stats()["served_ok"] + b.stats()["served_ok"]
        code, doc2, err = cli("run", "worldsense:fresh", "--model",
                              f"openai:test-model@{b.base_url},{c.base_url}", "--limit", 20,
                              "--runs-dir", tmp_path / "other", "--cache", cache, "--json")
        assert code == 0, err
        assert doc2["usage"]["cache_hits"] == served and doc2["usage"]["requests"] == 0
        code, doc3, err = cli("run", "worldsense:fresh", "--model",
                              f"openai:test-model@{c.base_url},{a.base_url}", "--limit", 40,
                              *first)
    assert code == 0, err
    assert doc1["run"] == doc3["run"]  # resumed with other endpoints
    assert len(read_records(Path(doc3["run"]) / "records.jsonl")) == doc3["usage"]["requests"] \
        + doc3["usage"]["cache_hits"]


@pytest.mark.slow
def test_already_said_that_chats_stay_on_one_endpoint(cli, shared_data, tmp_path):
    """Every chat's turns hit one server (its prefix cache), so cached prompt tokens are as
    high as with one endpoint; metrics are the same."""
    data = shared_data("already_said_that")
    common = ["already_said_that:distractorless", "--n-samples", 6, "--data-dir", data,
              "--no-cache", "--json"]
    cfg = {"simulate_prefix_cache": True, "request_log": True, "responder": ast_oracle}
    with server_group({}, {}, {}, **cfg) as servers:
        urls = ",".join(s.base_url for s in servers)
        code, doc, err = cli("run", *common, "--model", f"openai:test-model@{urls}",
                             "--runs-dir", tmp_path / "multi")
        assert code == 0, err
        logs = [s.stats()["log"] for s in servers]
    with server_group({}, **cfg) as (one,):
        code, single, err = cli("run", *common, "--model", f"openai:test-model@{one.base_url}",
                                "--runs-dir", tmp_path / "single")
        assert code == 0, err
    where: dict[str, set[int]] = defaultdict(set)
    for i, log in enumerate(logs):
        for entry in log:
            where[entry["conversation"]].add(i)
    assert len(where) == 6  # six chats
    assert all(len(servers_of) == 1 for servers_of in where.values())  # each on one server
    assert all(log for log in logs)  # all three took chats
    turns = sum(len(log) for log in logs)
    assert turns == doc["usage"]["requests"] == single["usage"]["requests"] > 6 * 50
    u, u1 = doc["usage"], single["usage"]
    assert u["prompt_tokens"] == u1["prompt_tokens"]
    # Only the system prompt, cached across chats on one server, is prefilled once per server.
    system = logs[0][0]["prompt_tokens"]
    assert u1["cached_prompt_tokens"] - 2 * system <= u["cached_prompt_tokens"]
    assert u["cached_prompt_tokens"] > 0.9 * u["prompt_tokens"]
    assert _metrics(doc, "test-model-openai-compatible") == _metrics(
        single, single["run"].rsplit("___", 1)[1])


@pytest.mark.slow
def test_all_endpoints_down_stops_with_one_message_and_keeps_records(cli, tmp_path):
    runs = tmp_path / "runs"
    with server_group({"latency": 0.002}, {"latency": 0.004},
                      responder=worldsense_answer) as servers:
        urls = ",".join(s.base_url for s in servers)
        killer = _when_records(runs, 60, lambda: [s.stop() for s in servers])
        code, _, err = cli("run", "worldsense:fresh", "--model", f"openai:test-model@{urls}",
                           "--runs-dir", runs, "--concurrency", 4, "--no-cache")
        killer.join()
    assert code == 2
    assert err.count("error:") == 1 and "all 2 endpoints of test-model are down" in err
    assert "Traceback" not in err
    run = next(runs.glob("worldsense/fresh/*"))
    records = read_records(run / "records.jsonl")
    assert 60 <= len(records) < 504 and not any("error" in r for r in records)
    assert len({r["id"] for r in records}) == len(records)
    assert json.loads((run / "manifest.json").read_text())["status"] == "failed"


# -- dry run ----------------------------------------------------------------------------------
def test_dry_run_shows_the_spread_and_sends_nothing(cli, tmp_path, shared_data):
    f = tmp_path / "eps.txt"
    f.write_text("http://127.0.0.1:9/v1 concurrency=8\nhttp://127.0.0.1:8/v1 concurrency=4\n")
    code, doc, err = cli("run", "worldsense:fresh", "--model", "openai:test-model",
                         "--endpoints", f, "--limit", 120, "--dry-run", "--json",
                         "--runs-dir", tmp_path / "runs")
    assert code == 0, err
    # WorldSense estimates its requests: every answer re-asked once at most
    assert doc["dry_run"] and doc["requests_bound"] == "up to"
    assert doc["requests"] == 2 * doc["items"] and doc["tokens"]["prompt_tokens"] > 0
    rows = {r["endpoint"]: r for r in doc["endpoints"]}
    assert rows["http://127.0.0.1:9/v1"]["items"] == 2 * rows["http://127.0.0.1:8/v1"]["items"]
    assert sum(r["items"] for r in rows.values()) == doc["items"] >= 120
    assert "nothing sent" in err and not (tmp_path / "runs").exists()
    data = shared_data("already_said_that")
    code, doc, err = cli("run", "already_said_that:distractorless", "--model",
                         "openai:test-model@127.0.0.1:9,127.0.0.1:8,127.0.0.1:7",
                         "--n-samples", 6, "--data-dir", data, "--dry-run", "--json",
                         "--runs-dir", tmp_path / "runs")
    assert code == 0, err
    assert [r["items"] for r in doc["endpoints"]] == [2, 2, 2]
    assert doc["requests"] == 600 and doc["requests_bound"] == "up to"
    assert doc["tokens"]["prefill_tokens"] < doc["tokens"]["prompt_tokens"]
    assert sum(r["prompt_tokens"] for r in doc["endpoints"]) == pytest.approx(
        doc["tokens"]["prompt_tokens"], abs=3)


def test_spread_follows_capacity():
    assert spread(12, [8.0, 4.0]) == [8, 4]
    assert spread(7, [1.0, 1.0, 1.0]) == [3, 2, 2]
    assert spread(0, [1.0]) == [0]


def test_inline_endpoint_list_and_single_url_stay_distinct():
    single = parse_model_spec("openai:m@http://127.0.0.1:9/v1")
    assert not isinstance(single, RouterModel)  # unchanged backend, unchanged cache key
    multi = parse_model_spec("openai:m@127.0.0.1:9,127.0.0.1:8")
    assert isinstance(multi, RouterModel) and multi.group == DEFAULT_GROUP
    assert multi.spec == f"openai:m@{DEFAULT_GROUP}"
    assert multi.can("logprobs") and multi.supports_slots
    assert [e["endpoint"] for e in multi.endpoint_stats()] == [
        "http://127.0.0.1:9/v1", "http://127.0.0.1:8/v1"]
    with pytest.raises(UsageError, match=re.escape("empty URL")):
        parse_model_spec("openai:m@127.0.0.1:9,,127.0.0.1:8")
