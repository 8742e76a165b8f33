"""mindprobe against inspect_evals' WorldSense task: the same trials, the same instant server, the
same concurrency; requests/s and CPU per request for both, on a first run and on later runs.

Each tool runs as a whole process, as a user starts it, against one instant OpenAI-compatible
server on 127.0.0.1 (`python -m mindprobe.testing.server`, a subprocess whose CPU is not
counted). Requests are counted at the server; CPU is the process's own rusage (`os.wait4`:
user + system, with any child it waited for); requests/s is the server's count over the
process's wall time (start-up, data loading, scoring and logs included: what a user waits for).

- mindprobe: `python -m mindprobe.cli run worldsense:test_set --model openai:test-model@URL
  --limit N --concurrency C --reasks 0` (one request per trial, as inspect_evals sends), a
  fresh runs folder and a fresh response cache each time (every request a miss, and written).
- inspect_evals: its task, `inspect_evals.worldsense.worldsense()` (what `inspect eval
  inspect_evals/worldsense` runs), through inspect_ai's `eval()` with `model="openai/m"`,
  `model_base_url=URL`, `max_connections=C` and `model_args={"responses_api": False}` (Chat
  Completions, what the server and mindprobe speak; the command line's `-M
  responses_api=false`), its dataset narrowed to the trials mindprobe ran with inspect_ai's
  `Dataset.filter` (its `sample_id=` / `--sample-id` would match 5,000 ids by fnmatch against
  each of the 87,048 samples: quadratic, too slow to use). It is the task's own data loading
  (all 87,048 trials decoded, as in any run of it): inspect_evals reads the official
  `trials.jsonl.bz2` from `INSPECT_EVALS_CACHE_DIR` when the file there has the pinned sha256
  (no internet here: the bench puts the local official file there, as its download would).
- The trials: those a `mindprobe run --limit N` samples (whole tuples, balanced across problem
  families), read from the first run's records; every run is checked to have sent exactly
  that many requests.
- "First run": each tool with empty caches (mindprobe: a new `MINDPROBE_CACHE_DIR`, so the
  official file is decoded into its memo; inspect_evals: a new cache folder holding just the
  official file, new inspect_ai data and log folders). "Later run": the same command again,
  on the caches its first run left. Each round has the four, interleaved (mindprobe first,
  inspect first, mindprobe later, inspect later; inspect's before mindprobe's every other
  round), so both tools see the same machine load.

Every child gets a home, cache, data and config folder of the bench's own (nothing is read or
written in the user's), and runs without PYTHONDONTWRITEBYTECODE: an installed package has its
bytecode. inspect_evals is a bench-only tool: `pip install 'mindprobe[bench]'`.

    python bench/inspect_evals_compare.py [--trials 5001] [--concurrency 32] [--rounds 5]
        [--data-dir ../shared/data/worldsense]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from importlib.util import find_spec
from pathlib import Path

from mindprobe.core.files import write_file

OFFICIAL = Path("test_set") / "trials.jsonl.bz2"
KINDS = ("mindprobe first", "inspect_evals first", "mindprobe later", "inspect_evals later")


def child_env(home: Path, **extra: str) -> dict[str, str]:
    """A child's environment: its own home and XDG folders, bytecode allowed, a dummy key."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(HOME=str(home), XDG_CACHE_HOME=str(home / "cache"),
               XDG_DATA_HOME=str(home / "data"), XDG_CONFIG_HOME=str(home / "config"),
               OPENAI_API_KEY="unused", **extra)
    for key in ("OPENAI_BASE_URL", "INSPECT_LOG_DIR", "INSPECT_EVAL_MODEL"):
        if key not in extra:
            env.pop(key, None)
    return env


def timed(cmd: list[str], env: dict[str, str]) -> tuple[float, float, int]:
    """(wall s, CPU s, exit code) of one child process, CPU from its own rusage."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    err = proc.stderr.read()  # a child's messages, kept for a failure
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode not in (0, 1):
        sys.stderr.write(err.decode(errors="replace")[-4000:])
        raise SystemExit(f"failed ({proc.returncode}): {' '.join(cmd[:6])} ...")
    return wall, usage.ru_utime + usage.ru_stime, proc.returncode


class Server:
    """The instant test server, and its request counter (GET /stats, POST /reset-stats)."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "mindprobe.testing.server", "--port", "0",
             "--models", "test-model,m"], stdout=subprocess.PIPE, text=True)
        self.url = self.proc.stdout.readline().split()[1]  # "READY http://127.0.0.1:PORT/v1"
        self.root = self.url.rsplit("/v1", 1)[0]

    def _call(self, path: str, method: str = "GET") -> dict:
        req = urllib.request.Request(self.root + path, method=method, data=b"" if
                                     method == "POST" else None)
        with urllib.request.urlopen(req) as r:
            return json.loads(r.read())

    def reset(self) -> None:
        self._call("/reset-stats", "POST")

    def chat_requests(self) -> int:
        return self._call("/stats")["requests"]["/v1/chat/completions"]

    def close(self) -> None:
        self.proc.terminate()
        self.proc.wait()


def mindprobe_cmd(url: str, trials: int, concurrency: int, data_dir: Path, runs: Path,
                  cache: Path) -> list[str]:
    return [sys.executable, "-m", "mindprobe.cli", "run", "worldsense:test_set", "--model",
            f"openai:test-model@{url}", "--limit", str(trials), "--concurrency",
            str(concurrency), "--reasks", "0", "--data-dir", str(data_dir), "--runs-dir",
            str(runs), "--cache", str(cache)]


def inspect_cmd(url: str, ids_file: Path, concurrency: int, log_dir: Path) -> list[str]:
    return [sys.executable, __file__, "--inspect-child", url, str(ids_file), str(concurrency),
            str(log_dir)]


def inspect_child(url: str, ids_file: str, concurrency: str, log_dir: str) -> None:
    """Run inspect_evals' WorldSense task on the given trials (in the timed child process):
    the task as registered, its dataset narrowed with inspect_ai's own `Dataset.filter` (a
    set lookup per sample; `sample_id=` matches every id against every pattern with fnmatch,
    87,048 x 5,001 calls, which ran for over ten minutes without sending a request)."""
    from inspect_ai import eval as inspect_eval
    from inspect_evals.worldsense import worldsense

    ids = set(json.loads(Path(ids_file).read_text()))
    task = worldsense()
    task.dataset = task.dataset.filter(lambda sample: sample.id in ids)
    logs = inspect_eval(task, model="openai/m", model_base_url=url,
                        model_args={"responses_api": False}, max_connections=int(concurrency),
                        log_dir=log_dir, display="none")
    if logs[0].status != "success" or len(logs[0].samples or []) != len(ids):
        error = logs[0].error.message if logs[0].error else ""
        raise SystemExit(f"inspect_evals: {logs[0].status} {error}")


def trial_ids(runs: Path) -> list[str]:
    """inspect_evals' sample ids (`worldsense_<Key>`) of the trials a mindprobe run sent."""
    (records,) = runs.rglob("records.jsonl")
    with records.open() as f:
        return [f"worldsense_{json.loads(line)['Key']}" for line in f]


def inspect_home(root: Path, data_dir: Path) -> tuple[Path, dict[str, str]]:
    """A fresh home for inspect_evals, its cache holding the official file (as its download
    leaves it: the task checks the pinned sha256 and reads it)."""
    cache = root / "inspect_evals_cache"
    (cache / "worldsense").mkdir(parents=True)
    shutil.copyfile(data_dir / OFFICIAL, cache / "worldsense" / "trials.jsonl.bz2")
    return root, {"INSPECT_EVALS_CACHE_DIR": str(cache)}


def spread(values: list[float], fmt: str = "{:.0f}") -> str:
    """'median (min–max)' of a list."""
    return (f"{fmt.format(statistics.median(values))} ({fmt.format(min(values))}–"
            f"{fmt.format(max(values))})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=5001,
                    help="WorldSense trials (mindprobe's --limit: whole tuples, so a few more)")
    ap.add_argument("--concurrency", type=int, default=32)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--data-dir", type=Path, default=Path("../shared/data/worldsense"))
    ap.add_argument("--inspect-child", nargs=4, metavar=("URL", "IDS", "C", "LOGS"),
                    help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.inspect_child:
        inspect_child(*a.inspect_child)
        return
    if find_spec("inspect_evals") is None or find_spec("openai") is None:
        raise SystemExit("needs inspect_evals and openai: pip install 'mindprobe[bench]'")
    if not (a.data_dir / OFFICIAL).is_file():
        raise SystemExit(f"no {OFFICIAL} under {a.data_dir}: pass --data-dir")
    data_dir = a.data_dir.resolve()
    server = Server()
    try:
        with tempfile.TemporaryDirectory() as d:
            tmp = Path(d)
            ids_file = tmp / "ids.json"
            ids: list[str] = []
            rows: dict[str, list[tuple[float, float, int]]] = {k: [] for k in KINDS}
            loads = [os.getloadavg()[0]]
            for r in range(1, a.rounds + 1):
                # each round's first runs start from empty caches; its later runs reuse them
                mp_home = tmp / f"mindprobe-{r}"
                mp_env = child_env(mp_home, MINDPROBE_CACHE_DIR=str(mp_home / "mp"))
                ie_home, ie_extra = inspect_home(tmp / f"inspect-{r}", data_dir)
                ie_env = child_env(ie_home, **ie_extra)
                runs = {f"mindprobe {when}": (mindprobe_cmd(
                    server.url, a.trials, a.concurrency, data_dir, tmp / f"runs-{when}{r}",
                    tmp / f"cache-{when}{r}.sqlite"), mp_env) for when in ("first", "later")}
                runs.update({f"inspect_evals {when}": (inspect_cmd(
                    server.url, ids_file, a.concurrency, tmp / f"logs-{when}{r}"), ie_env)
                    for when in ("first", "later")})
                order = KINDS if r % 2 else (KINDS[1], KINDS[0], KINDS[3], KINDS[2])
                for kind in order:
                    server.reset()
                    wall, cpu, _ = timed(*runs[kind])
                    sent = server.chat_requests()
                    if not ids:  # the first run, mindprobe's: its trials are the trials
                        ids = trial_ids(tmp / "runs-first1")
                        write_file(ids_file, json.dumps(ids), replace=True)
                    if sent != len(ids):
                        raise SystemExit(f"{kind} sent {sent} requests, not {len(ids)}")
                    rows[kind].append((wall, cpu, sent))
                    print(f"round {r} {kind:20}: {wall:6.2f} s wall {cpu:6.2f} s CPU "
                          f"{sent / wall:7.0f} req/s {1000 * cpu / sent:6.3f} CPU-ms/req",
                          flush=True)
                loads.append(os.getloadavg()[0])
    finally:
        server.close()
    n = len(ids)
    print(f"\n{n} WorldSense trials, concurrency {a.concurrency}, {a.rounds} interleaved rounds; "
          f"load average (1 min) over the rounds {min(loads):.1f}–{max(loads):.1f}")
    print("median (min–max) over the rounds:")
    for kind in KINDS:
        rate = [s / w for w, _, s in rows[kind]]
        cpu = [1000 * c / s for _, c, s in rows[kind]]
        wall = [w for w, _, _ in rows[kind]]
        print(f"  {kind:20} {spread(rate)} req/s, {spread(cpu, '{:.3f}')} CPU-ms/request, "
              f"{spread(wall, '{:.1f}')} s wall")
    for when in ("first", "later"):
        mp, ie = rows[f"mindprobe {when}"], rows[f"inspect_evals {when}"]
        rate = [(m[2] / m[0]) / (i[2] / i[0]) for m, i in zip(mp, ie, strict=True)]
        cpu = [i[1] / m[1] for m, i in zip(mp, ie, strict=True)]
        print(f"  {when} runs, mindprobe against inspect_evals, each round's pair: "
              f"{spread(rate, '{:.1f}')}× the requests/s, {spread(cpu, '{:.1f}')}× less CPU "
              "per request")


if __name__ == "__main__":
    main()
