"""Builders for tiny WorldSense test sets on disk (trials.jsonl.bz2 + results files)."""

from __future__ import annotations

import bz2
import json
from pathlib import Path

from mindprobe.benchmarks.worldsense import write_results_file
from mindprobe.benchmarks.worldsense.data import GOLD_DEOBFUSCATION

EXPECTED = {"TF": ["TRUE", "FALSE"], "123": ["1", "2", "3"], "PI": ["POSSIBLE", "IMPOSSIBLE"]}
OBFUSCATE = {plain: name for name, plain in GOLD_DEOBFUSCATION.items()}
NO_LINE = object()


def write_set(root: Path, tuples: list[tuple], runs: dict[str, list]) -> Path:
    """Write trials.jsonl.bz2 plus one results file per run name.

    ``tuples``: (problemname, size, [(gold, resp_or_NO_LINE), ...]); ``runs`` maps a results
    file stem to per-tuple response lists (None = use the responses given in ``tuples``).
    """
    root.mkdir(parents=True, exist_ok=True)
    trials, rows = [], []
    key = -(2**62)  # large keys catch any float round-trip
    for t, (problem, size, items) in enumerate(tuples):
        kind = "123" if problem.startswith("Compl") else "PI" if "Consist" in problem else "TF"
        for gold, resp in items:
            key += 7919
            trials.append({
                "Key": key, "problemname": problem, "tuple_ID": f"t{t + 1}", "text": f"q{key}",
                "expectedresp": EXPECTED[kind], "span": 2, "descr": "[(0, 1)]",
                "query": "(0, 1)", "objects": ["a", "b", "c"], "problemsize": size,
                "skin": "old/young", "qskin": "directQ1", "complexity": "Complexity_0",
                "query_len": 2, "goldresp_obfusc": OBFUSCATE.get(gold, gold)})
            rows.append((key, resp))
    lines = "".join(json.dumps(r) + "\n" for r in trials)
    (root / "trials.jsonl.bz2").write_bytes(bz2.compress(lines.encode()))
    for stem, resp_override in runs.items():
        chosen = rows if resp_override is None else list(zip([k for k, _ in rows],
                                                             resp_override, strict=True))
        write_results_file(root / "results" / f"{stem}___results.jsonl",
                           [(k, r) for k, r in chosen if r is not NO_LINE])
    return root
