"""The profile plan's time estimate against real time, on the machine at hand.

A quick profile of `local:smollm2` takes about an hour on 2 cores, so the real run is a
reduced one, and the result is an extrapolation (said in the output):

1. `mindprobe profile --dry-run --json`: plan A, with each benchmark's expected time and the
   engine speed it was measured with.
2. The real profile, interrupted (SIGINT, as Ctrl-C: what it answered is kept) after
   `--seconds`.
3. The dry-run again: plan B, the work still left.
4. The work done is A's expected prefill, reply tokens and requests less B's, priced at A's
   measured speed; the real time of that work is the sum of the recorded items' latencies
   (one request at a time, the engine's default, so they do not overlap). Their ratio is
   real / estimated; the full profile's real time is extrapolated as A's total times it.
   The tokens the items really used, priced at the same speed, separate the two errors: the
   speed's (real / used) and the plan's assumptions about replies and chats (used / est).
   The real run uses no response cache (a cached answer costs no time).

    python bench/profile_time.py [--model local:smollm2] [--size quick] [--seconds 300]
        [--data-dir ../shared/data] [-O mr_gsm8k.data_file=../shared/data/mr_gsm8k/sample_records.jsonl]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "data"


def _profile(args: argparse.Namespace, runs: Path, *extra: str) -> list[str]:
    opts = [x for o in args.option for x in ("-O", o)]
    return [sys.executable, "-m", "mindprobe.cli", "profile", "--model", args.model, "--size",
            args.size, "--data-dir", args.data_dir, "--runs-dir", str(runs), *opts, *extra]


def _plan(args: argparse.Namespace, runs: Path) -> dict:
    out = subprocess.run(_profile(args, runs, "--dry-run", "--json"), capture_output=True,
                         text=True, check=True)
    return json.loads(out.stdout)


def _work(plan: dict) -> dict[str, tuple[int, int, int]]:
    """(expected prefill, reply, requests) per benchmark still to run."""
    return {r["benchmark"]: (r["expected prefill"] or 0, r["expected completion"] or 0,
                             r["expected requests"] or 0)
            for r in plan["plan"] if r.get("expected seconds") is not None}


def _used(runs: Path) -> dict[str, list[float]]:
    """Per benchmark: seconds the recorded items took (one at a time: they add up), and the
    prefill, reply tokens and requests they really used."""
    out: dict[str, list[float]] = {}
    for records in runs.rglob("records.jsonl"):
        parts = records.relative_to(runs).parts  # profile-SIZE___LABEL/runs/BENCH/...
        row = out.setdefault(parts[parts.index("runs") + 1], [0.0, 0, 0, 0])
        for line in records.read_text().splitlines():
            try:
                rec = json.loads(line)
            except ValueError:
                continue
            use = (rec.get("usage") or {}).get("model") or {}
            row[0] += float(rec.get("latency") or 0.0)
            row[1] += use.get("prompt_tokens", 0) - use.get("cached_prompt_tokens", 0)
            row[2] += use.get("completion_tokens", 0)
            row[3] += use.get("requests", 0)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="local:smollm2")
    ap.add_argument("--size", default="quick")
    ap.add_argument("--seconds", type=float, default=300.0, help="the real run's length")
    ap.add_argument("--data-dir", default=str(SHARED))
    ap.add_argument("-O", "--option", action="append", default=[
        f"mr_gsm8k.data_file={SHARED / 'mr_gsm8k' / 'sample_records.jsonl'}"])
    args = ap.parse_args()
    runs = Path(tempfile.mkdtemp(prefix="profile-time-"))
    print(f"load average {os.getloadavg()[0]:.1f}; runs in {runs}", flush=True)
    t0 = time.perf_counter()
    before = _plan(args, runs)
    print(f"plan A in {time.perf_counter() - t0:.0f} s: {before['timing']}", flush=True)
    speed = before["engine speed"]
    if not speed:
        sys.exit("the plan gave no time estimate for this model (an engine of ours, one "
                 "request at a time, is needed)")
    planning = time.perf_counter() - t0
    t1 = time.perf_counter()
    proc = subprocess.Popen(_profile(args, runs, "--no-cache"), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        proc.wait(timeout=args.seconds)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGINT)
        proc.wait(timeout=300)
    wall = time.perf_counter() - t1
    after = _plan(args, runs)
    a, b, used = _work(before), _work(after), _used(runs)

    def priced(prefill: float, reply: float, requests: float) -> float:
        return (prefill / speed["prefill_per_s"] + reply / speed["generate_per_s"]
                + requests * speed["overhead_s"])

    # estimated: the plan's work done (A less B); tokens used: what the items really used,
    # priced at the same speed (checks the speed alone); real: their recorded latencies
    print(f"\n{'benchmark':<20}{'estimated s':>12}{'tokens used':>12}{'real s':>10}"
          f"{'real/est':>10}{'real/used':>10}")
    est_total = real_total = used_total = 0.0
    for bench, (pf, rp, rq) in a.items():
        pf2, rp2, rq2 = b.get(bench, (0, 0, 0))
        est = priced(pf - pf2, rp - rp2, rq - rq2)
        got, *tokens = used.get(bench, [0.0, 0, 0, 0])
        spent = priced(*tokens)
        if est <= 0 and got <= 0:
            continue
        est_total, real_total, used_total = est_total + est, real_total + got, used_total + spent
        ratio = f"{got / est:.2f}" if est > 0 else "–"
        print(f"{bench:<20}{est:>12.0f}{spent:>12.0f}{got:>10.0f}{ratio:>10}"
              f"{got / spent if spent else 0:>10.2f}")
    planned = sum(r.get("expected seconds") or 0 for r in before["plan"])
    if est_total > 0:
        ratio = real_total / est_total
        print(f"{'all':<20}{est_total:>12.0f}{used_total:>12.0f}{real_total:>10.0f}"
              f"{ratio:>10.2f}{real_total / used_total if used_total else 0:>10.2f}")
        busy = max(0.0, wall - planning)  # the real run plans (and starts the engine) again
        print(f"by wall time instead: {busy:.0f} s of the run's {wall:.0f} s after its own "
              f"planning (~{planning:.0f} s, as plan A's): real/est {busy / est_total:.2f}")
        print(f"\nreduced run ({args.seconds:.0f} s, interrupted) extrapolated: the plan said "
              f"{planned / 60:.0f} min for the whole {args.size} profile; at the measured "
              f"ratio it would take ~{planned * ratio / 60:.0f} min. "
              f"load average now {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
