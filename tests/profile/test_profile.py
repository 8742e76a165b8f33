"""`mindprobe profile` against the OpenAI-compatible test server: all five benchmarks in one
folder and one report, a second identical command sends nothing, the plan (--dry-run, missing
data, --strict), and --compare; stratified subsets."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import urllib.request
from collections import Counter

import pytest

import mindprobe
from mindprobe.core.sampling import allocate, stratified_sample


class _Server:
    """The test server in its own process: thousands of requests, without sharing the GIL
    with the client under test."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "mindprobe.testing.server",
                                      "--port", "0", "--models", "test",
                                      "--prefix-cache"],
                                     stdout=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline().strip()  # READY <base_url>
        assert line.startswith("READY "), line
        self.base_url = line.split()[1]

    def stats(self) -> dict:
        with urllib.request.urlopen(self.base_url.removesuffix("/v1") + "/stats") as resp:
            return json.loads(resp.read())

    def close(self) -> None:
        self.proc.terminate()
        self.proc.wait(10)


@pytest.fixture(scope="module")
def server():
    srv = _Server()
    try:
        yield srv
    finally:
        srv.close()


def _requests(srv) -> int:
    return int(srv.stats()["requests_total"])


def _completions(srv) -> int:
    """Completion requests only (a plan may ask the server's /models and /tokenize)."""
    return sum(n for path, n in srv.stats()["requests"].items() if "completions" in path)


def _usage(folder) -> dict[str, dict[str, int]]:
    """Each benchmark's recorded usage, summed over its runs' manifests."""
    out: dict[str, dict[str, int]] = {}
    for m in folder.glob("runs/*/**/manifest.json"):
        usage = json.loads(m.read_text())["summary"]["usage"]
        name = m.relative_to(folder / "runs").parts[0]
        for k in ("requests", "prompt_tokens", "cached_prompt_tokens", "completion_tokens"):
            out.setdefault(name, {}).setdefault(k, 0)
            out[name][k] += usage[k]
    return out


def _args(srv, data, runs, *extra):
    return ("profile", "--model", f"openai:test@{srv.base_url}", "--size", "quick",
            "--data-dir", data, "--runs-dir", runs, "--concurrency", 32, "--json", *extra)


@pytest.mark.slow
def test_quick_profile_plans_runs_all_five_then_resumes_sending_nothing(cli, server,
                                                                        shared_data, tmp_path):
    root = shared_data("worldsense").parent
    # FanOutQA re-reads its questions when it scores: from the folder its run recorded (issue
    # 32.1: not the data cache, which here holds nothing)
    sample = root / "mr_gsm8k" / "sample_records.jsonl"
    mr = ("-O", f"mr_gsm8k.data_file={sample}")  # the official file is not shipped
    runs = tmp_path / "runs"
    # the plan: no completion requested (the server's tokenizer counts a sample), nothing written
    before, asked = _requests(server), _completions(server)
    code, plan, err = cli(*_args(server, root, runs, *mr, "--dry-run", "--price", "1,4"))
    assert code == 0, err
    assert _completions(server) == asked and not runs.exists()
    assert plan["tokens counted"].startswith("counted with the server's tokenizer"), err
    rows = {r["benchmark"]: r for r in plan["plan"]}
    assert set(rows) == {"worldsense", "already_said_that", "mr_gsm8k", "sort", "fanoutqa"}
    assert all(r["status"] == "runs" for r in rows.values()) and plan["fetch"] is None
    ast = rows["already_said_that"]
    assert ast["expected prompt"] < ast["prompt tokens"]  # expected value below the bound
    assert rows["sort"]["requests"] == rows["sort"]["items"]
    assert rows["fanoutqa"]["cost (USD)"] > 0
    # stated half-widths: a proportion over ~400 items is within ±5 points
    assert rows["worldsense"]["±95% stated"] < 5.0 and rows["sort"]["±95% stated"] < 5.5
    # the run: all five, one folder with its manifest, one report
    code, doc, err = cli(*_args(server, root, runs, *mr))
    assert code == 0, err
    ran = {r["benchmark"] for r in doc["results"]}
    assert ran == set(rows), err
    assert "closed-book: no Wikipedia source" in err
    assert _requests(server) > before
    folder = runs / "profile-quick___test"  # the model, not its address
    # the plan's tokens against what the run used: one request per item, within 20% (prefill:
    # the server's prefix cache against the estimate's reuse of each previous prompt)
    used = _usage(folder)
    for name in ("fanoutqa", "mr_gsm8k", "sort"):
        r, u = rows[name], used[name]
        assert u["requests"] == r["expected requests"], name
        assert abs(u["prompt_tokens"] / r["expected prompt"] - 1) < 0.2, (name, u, r)
        prefill = u["prompt_tokens"] - u["cached_prompt_tokens"]
        assert abs(prefill / r["expected prefill"] - 1) < 0.2, (name, u, r)
        assert u["completion_tokens"] <= r["completion tokens"]
    # the test server's "OK" is no answer: WorldSense re-asks it, between expected (answered
    # at once) and bound (every answer re-asked); Already Said That's chats end early
    ws, u = rows["worldsense"], used["worldsense"]
    assert ws["expected prompt"] < u["prompt_tokens"] <= ws["prompt tokens"]
    assert u["requests"] <= ws["requests"]
    u = used["already_said_that"]
    assert u["prompt_tokens"] <= ast["prompt tokens"] and u["requests"] <= ast["requests"]
    manifest = json.loads((folder / "profile.json").read_text())
    assert manifest["size"] == "quick" and manifest["model_identity"]["model"] == "test"
    # issue 32.2: profile.json, `runs` and the report say the same (`core.run_state`)
    assert {b["status"] for b in manifest["benchmarks"].values()} == {"finished"}
    code, listed, err = cli("runs", "--runs-dir", folder, "--json")
    assert {r["status"] for r in listed} == {"finished"}, err
    assert (folder / "report.html").is_file() and doc["report"] == str(folder / "report.html")
    # the same command again: every benchmark is finished, nothing is sent (not even /models)
    sent = _requests(server)
    code, doc2, err = cli(*_args(server, root, runs, *mr))
    assert code == 0, err
    assert _requests(server) == sent
    assert [r["value"] for r in doc2["results"]] == [r["value"] for r in doc["results"]]
    assert all(r["status"] == "done" for r in doc2["plan"])
    # the library is the same command: same folder, same headlines, nothing sent
    prof = mindprobe.profile(f"openai:test@{server.base_url}", size="quick", data_dir=root,
                             runs_dir=runs, concurrency=32, progress=False,
                             options={"mr_gsm8k": {"data_file": str(sample)}})
    assert _requests(server) == sent and prof.dir == folder
    assert [r["value"] for r in prof.profile] == [r["value"] for r in doc["results"]]
    # two profiles of one size compare benchmark by benchmark with paired intervals
    other = tmp_path / "copy"
    shutil.copytree(folder, other)
    code, cmp, err = cli("profile", "--compare", folder, other, "--json")
    assert code == 0, err
    assert {r["benchmark"] for r in cmp["rows"]} == ran
    assert all(r["difference"] == 0 for r in cmp["rows"] if r["difference"] is not None)
    # an item that ended in an error is unfinished: the next command asks it again, only it
    records = next(folder.glob("runs/fanoutqa/**/records.jsonl"))
    lines = records.read_text().splitlines()
    again = json.loads(lines[0])["id"]
    lines[0] = json.dumps({"id": again, "error": "connection dropped"})
    records.write_text("\n".join(lines) + "\n")
    code, doc3, err = cli(*_args(server, root, runs, *mr))
    assert code == 0, err
    assert [r["status"] for r in doc3["plan"] if r["benchmark"] == "fanoutqa"] == ["resumes"]
    by_id = {r["id"]: r for r in map(json.loads, records.read_text().splitlines())}
    assert len(by_id) == 310 and "error" not in by_id[again]  # asked (its reply was cached)


def test_missing_data_is_one_fetch_command_and_strict_refuses(cli, server, tmp_path):
    empty = tmp_path / "data"
    empty.mkdir()
    before = _requests(server)
    code, doc, err = cli(*_args(server, empty, tmp_path / "runs", "--dry-run"))
    assert code == 2 and "--data-dir" in err, err  # nothing can run: the plan, then an error
    missing = [r["benchmark"] for r in doc["plan"] if r["status"] == "missing data"]
    assert "worldsense" in missing and "mr_gsm8k" in missing
    assert doc["fetch"] == "mindprobe data fetch " + " ".join(missing)
    code, _, err = cli(*_args(server, empty, tmp_path / "runs", "--strict"))
    assert code == 2 and "--strict" in err
    assert _requests(server) == before


def test_bad_profile_flags_are_one_clear_error(cli, tmp_path):
    code, _, err = cli("profile", "--model", "random", "-O", "nosuch=1",
                       "--runs-dir", tmp_path)
    assert code == 2 and "BENCH.KEY=VALUE" in err
    code, _, err = cli("profile", "--compare", tmp_path, tmp_path)
    assert code == 2 and "not a profile folder" in err
    # a typo in a benchmark's option, or a value out of range, is the user's error (exit 2),
    # not a benchmark that "cannot run" while the profile goes on and exits 0
    code, _, err = cli("profile", "--model", "random", "-O", "worldsense.bogus=1",
                       "--runs-dir", tmp_path, "--dry-run")
    assert code == 2 and "unknown option 'bogus' of worldsense" in err, err
    code, _, err = cli("profile", "--model", "random", "-O", "worldsense.shots=many",
                       "--runs-dir", tmp_path, "--dry-run")
    assert code == 2 and "worldsense" in err and "Traceback" not in err, err


def test_stratified_sample_keeps_every_stratum_share():
    items = [("a", i) for i in range(600)] + [("b", i) for i in range(300)] + \
        [("c", i) for i in range(100)]
    got = stratified_sample(items, lambda x: x[0], 100, seed=1)
    assert Counter(x[0] for x in got) == {"a": 60, "b": 30, "c": 10}
    assert got == sorted(got, key=items.index)  # original order kept
    assert got == stratified_sample(items, lambda x: x[0], 100, seed=1)
    assert sum(allocate({"x": 5, "y": 3, "z": 1}, 4).values()) == 4


@pytest.mark.slow
def test_without_a_tokenizer_the_plan_says_heuristic(cli, shared_data, tmp_path):
    """A model with no tokenizer (random), or a server that cannot be reached: the plan
    counts ~4 characters per token and says so (the latter with a warning), exit 0."""
    import socket

    root = shared_data("worldsense").parent
    code, doc, err = cli("profile", "--model", "random", "--size", "quick", "--data-dir", root,
                         "--runs-dir", tmp_path / "runs", "--dry-run", "--json")
    assert code == 0, err
    assert doc["tokens counted"].startswith("heuristic")
    rows = [r for r in doc["plan"] if r["status"] == "runs"]
    assert rows and all(r["tokens counted"].startswith("heuristic") for r in rows)
    # issue 32.3: what cannot run for this model is said, with its reason, before anything
    # starts (the random model picks from closed answer sets; FanOutQA's answers are free)
    by_name = {r["benchmark"]: r for r in doc["plan"]}
    fanout = by_name["fanoutqa"]
    assert fanout["status"] == "cannot run" and "free text" in fanout["reason"]
    assert "fanoutqa: cannot run: FanOutQA needs answers in free text" in err
    # issue 32.7: MR-GSM8K's offline hint names what a profile accepts (-O BENCH.KEY=...)
    mr = by_name["mr_gsm8k"]
    assert mr["status"] == "missing data"
    assert mr["reason"] == str(root / "mr_gsm8k" / "MR-GSM8K.json")  # what it looked for
    assert f"-O mr_gsm8k.data_file={root / 'mr_gsm8k' / 'sample_records.jsonl'}" in mr["enable"]
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    code, doc, err = cli("profile", "--model", f"openai:test@http://127.0.0.1:{port}/v1",
                         "--size", "quick", "--data-dir", root, "--runs-dir", tmp_path / "r2",
                         "--dry-run", "--json", "--max-attempts", 1, "--timeout", 5)
    assert code == 0, err
    assert doc["tokens counted"].startswith("heuristic") and "tokens are estimated" in err
