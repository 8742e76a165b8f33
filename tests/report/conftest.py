"""Runs for the report tests, made once per session through the real CLI: the random baseline
and a scripted model on a local OpenAI-compatible server, on WorldSense (offline), and on
Already Said That and MR-GSM8K when the shared data is present."""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from mindprobe.cli import main
from mindprobe.testing import TestServer

JUDGE_MARK = "Ground Truth Error Reason:"
REPO = Path(__file__).resolve().parents[2]
#: As in tests/conftest.py: ../shared/data, or $MINDPROBE_SHARED_DATA.
SHARED_DATA = Path(os.environ.get("MINDPROBE_SHARED_DATA", REPO.parent / "shared" / "data"))


def _h(text: str, mod: int) -> int:
    return int(hashlib.sha256(text.encode()).hexdigest(), 16) % mod


def scripted_model(body: dict) -> str:
    """A deterministic model for all three benchmarks (and the MR-GSM8K judge)."""
    msgs = body.get("messages") or [{"role": "user", "content": body.get("prompt", "")}]
    last = msgs[-1]["content"]
    if JUDGE_MARK in last:
        return "Step-by-Step Reasoning: r\nStudent Error Reason Analysis: a\n3. Final Decision: " \
               + ("Correct" if _h(last, 2) else "Wrong")
    if "MAIN TASK - " in last:
        word = last.split("MAIN TASK - ", 1)[1].strip()
        seen = any(m["role"] == "user" and m["content"].strip() == f"MAIN TASK - {word}"
                   for m in msgs[:-1])
        return f"[answer: {'yes' if seen else 'no'}]"
    if "Final Judgement" in last:
        k = _h(last, 5)
        verdict = "correct\nFirst Error Step: N/A" if k == 0 else f"wrong\nFirst Error Step: {k}"
        return f"Checked.\nFinal Judgement: {verdict}\nError Analysis: step {k} is off."
    if "'TRUE'" in last:
        return ["TRUE", "FALSE"][_h(last, 2)]
    if "IMPOSSIBLE" in last:
        return ["POSSIBLE", "IMPOSSIBLE"][_h(last, 2)]
    options = re.findall(r"'([^']+)'", last) or ["1", "2", "3"]
    return options[_h(last, len(options))]


@dataclass
class Runs:
    root: Path
    label: str  # the scripted model's label
    dirs: dict[str, Path] = field(default_factory=dict)
    ast: bool = False
    mr: bool = False

    def of(self, bench: str) -> list[Path]:
        return sorted(p for k, p in self.dirs.items() if k.startswith(bench + "/"))


def _run(*args: object) -> None:
    code = main([str(a) for a in args])
    assert code == 0, f"mindprobe {' '.join(map(str, args))} exited {code}"


@pytest.fixture(scope="session")
def report_runs(tmp_path_factory) -> Runs:
    root = tmp_path_factory.mktemp("report_runs")
    runs = root / "runs"
    common = ["--runs-dir", runs, "--no-cache"]
    ast_data = SHARED_DATA / "already_said_that"
    mr_data = SHARED_DATA / "mr_gsm8k"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("MINDPROBE_CACHE_DIR", str(root / "cache"))
        with TestServer(responder=scripted_model) as srv:
            model = f"openai:test-model@{srv.base_url}"
            label = "test-model"
            for spec in ("random", model):
                _run("run", "worldsense:fresh", "--model", spec, "--limit", 60, *common)
            if ast_data.is_dir():
                _run("run", "already_said_that:all", "--model", "random", "--n-samples", 5,
                     "--data-dir", ast_data, *common)
                _run("run", "already_said_that:first-letters", "--model", model,
                     "--n-samples", 5, "--max-turns", 30, "--data-dir", ast_data, *common)
            if mr_data.is_dir():
                _run("run", "mr_gsm8k:sample", "--model", "random", "--data-dir", mr_data,
                     *common)
                _run("run", "mr_gsm8k:sample", "--model", model, "--judge", model,
                     "--data-dir", mr_data, *common)
    out = Runs(root, label, ast=ast_data.is_dir(), mr=mr_data.is_dir())
    for manifest in sorted(runs.rglob("manifest.json")):
        m = json.loads(manifest.read_text())
        out.dirs[f"{m['benchmark']}/{m['variant']}/{m['model_label']}"] = manifest.parent
    return out
