"""Fresh WorldSense problems: deterministic generation and writing in the official formats.

Every tuple is built from its own ``random.Random`` seeded by (seed, problem, size, index), so a
trial never depends on which other cells were requested or in what order. Skins, prompt
templates (qskin) and complexities are assigned by cycling, not sampling, so even small sets are
balanced. Records carry exactly the 15 official fields (spec §1) in the official order.
"""

from __future__ import annotations

import bz2
import hashlib
import json
import random
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from mindprobe.core.files import write_file

from .data import GOLD_DEOBFUSCATION
from .data import deobfuscate as deobfuscate  # where it was first: its home is data.py
from .families import FAMILIES, LEVELS, Draft, Setting
from .skins import PARALLEL_SKINS, SKINS, TEST_SKINS, get_parallel_skin, get_skin
from .wording import QSKINS

__all__ = [
    "ALL_PROBLEMS",
    "FIELDS",
    "OBFUSCATION",
    "PARALLEL_SKINS",
    "STANDARD_PROBLEMS",
    "TEST_SKINS",
    "deobfuscate",
    "generate_trials",
    "write_chat",
    "write_testset",
]

STANDARD_PROBLEMS: tuple[str, ...] = (
    "Infer.trivial",
    "Infer.normal",
    "Consist.trivial",
    "Consist.normal",
    "Compl.trivial",
    "Compl.normal",
)
ALL_PROBLEMS: tuple[str, ...] = (*STANDARD_PROBLEMS, "Infer.extrema", "Infer.parallel")

FIELDS: tuple[str, ...] = (
    "Key",
    "problemname",
    "tuple_ID",
    "text",
    "expectedresp",
    "span",
    "descr",
    "query",
    "objects",
    "problemsize",
    "skin",
    "qskin",
    "complexity",
    "query_len",
    "goldresp_obfusc",
)

# Spec §1: the official gold obfuscation (plain token -> stored token), inverted from the loader's.
OBFUSCATION: dict[str, str] = {plain: name for name, plain in GOLD_DEOBFUSCATION.items()}
MIN_SIZE = 3


def _key(seed: int, problem: str, size: int, index: int, trial: int) -> int:
    digest = hashlib.blake2b(
        f"worldsense|{seed}|{problem}|{size}|{index}|{trial}".encode(), digest_size=8
    ).digest()
    return int.from_bytes(digest, "big", signed=True)


def _balance(
    problem: str, size: int, index: int, n_skins: int, n_levels: int
) -> tuple[int, int, int]:
    """(skin, qskin, complexity) for a tuple: skins cycle fastest and each then meets every
    (qskin, complexity) pair in turn; the skin cycle is rotated per cell (step 7, coprime with
    18) so a set with fewer tuples per cell than skins still uses every skin equally often."""
    within = index % n_skins
    turn = (within + index // n_skins) % (2 * n_levels)
    cell = ALL_PROBLEMS.index(problem) * 3 + size - MIN_SIZE
    return (within + 7 * cell) % n_skins, turn % 2, turn // 2


def _max_size(problem: str, skin_names: Sequence[str]) -> int:
    """Distinct names are drawn from the pools; Compl.trivial also needs one name left over."""
    if problem == "Infer.parallel":
        return min(len(get_parallel_skin(name).pool) for name in skin_names)
    spare = 1 if problem == "Compl.trivial" else 0
    return min(len(get_skin(name).pool) for name in skin_names) - spare


def _check(
    problems: Sequence[str], sizes: Sequence[int], ordering: list[str], grid: list[str]
) -> None:
    """Refuse requests that cannot yield valid, uniquely keyed tuples, saying why."""
    for label, values in (("problems", problems), ("sizes", sizes)):
        if len(set(values)) != len(values):
            raise ValueError(f"{label} {list(values)} lists a value twice; list each once")
    for problem in problems:
        if problem not in FAMILIES:
            valid = ", ".join(ALL_PROBLEMS)
            raise ValueError(f"unknown WorldSense problem {problem!r}; choose from {valid}")
        names = grid if problem == "Infer.parallel" else ordering
        if not names:
            raise ValueError(
                f"{problem} needs at least one ordering skin (see TEST_SKINS) in skins"
            )
        top = _max_size(problem, names)
        for size in sizes:
            if isinstance(size, bool) or not isinstance(size, int) or not MIN_SIZE <= size <= top:
                raise ValueError(
                    f"{problem} cannot be built with problemsize {size!r}: sizes must be "
                    f"integers from {MIN_SIZE} (a query needs span >= 2) to {top} "
                    "(entity names are drawn without replacement from the skins' pools)"
                )


def _make_tuple(
    seed: int, problem: str, size: int, index: int, skin_names: Sequence[str]
) -> list[dict]:
    rng = random.Random(f"worldsense|{seed}|{problem}|{size}|{index}")
    levels = LEVELS.get(problem, 1)
    skin_i, qskin_i, complexity = _balance(problem, size, index, len(skin_names), levels)
    name = skin_names[skin_i]
    skin = get_parallel_skin(name) if problem == "Infer.parallel" else get_skin(name)
    objects = rng.sample(skin.pool, size)
    spare = [p for p in skin.pool if p not in objects]
    absent = rng.choice(spare) if spare else ""
    setting = Setting(rng, skin, objects, QSKINS[qskin_i], complexity, absent)
    drafts: list[Draft] = FAMILIES[problem](setting)
    rng.shuffle(drafts)
    tuple_id = f"mindprobe_ws_seed{seed}_{problem}_size{size}_{index:06d}"
    return [
        {
            "Key": _key(seed, problem, size, index, j),
            "problemname": problem,
            "tuple_ID": tuple_id,
            "text": d.text,
            "expectedresp": list(d.expectedresp),
            "span": d.span,
            "descr": d.descr,
            "query": d.query,
            "objects": list(objects),
            "problemsize": size,
            "skin": name,
            "qskin": setting.qskin,
            "complexity": f"Complexity_{complexity}",
            "query_len": d.query_len,
            "goldresp_obfusc": OBFUSCATION[d.gold],
        }
        for j, d in enumerate(drafts)
    ]


def generate_trials(
    seed: int,
    n: int,
    sizes: Sequence[int] = (3, 4, 5),
    problems: Sequence[str] = STANDARD_PROBLEMS,
    skins: Sequence[str] = TEST_SKINS,
) -> list[dict]:
    """``n`` tuples per (problem, size) cell, as official trial records (gold obfuscated).

    ``skins`` may mix ordering skins (used by all families but Infer.parallel) and grid skins
    (``lines``, ``streets``, ``canals``; Infer.parallel only, all three when none is given).
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise ValueError(f"n (tuples per problem and size) must be a non-negative int, got {n!r}")
    unknown = [s for s in skins if s not in SKINS and s not in PARALLEL_SKINS]
    if unknown:
        valid = ", ".join([*SKINS, *PARALLEL_SKINS])
        raise ValueError(f"unknown WorldSense skin(s) {unknown}; choose from {valid}")
    ordering = [s for s in skins if s in SKINS]
    grid = [s for s in skins if s in PARALLEL_SKINS] or list(PARALLEL_SKINS)
    _check(problems, sizes, ordering, grid)
    trials: list[dict] = []
    for problem in problems:
        names = grid if problem == "Infer.parallel" else ordering
        for size in sizes:
            for index in range(n):
                trials.extend(_make_tuple(seed, problem, size, index, names))
    keys = {t["Key"] for t in trials}
    if len(keys) != len(trials):
        raise RuntimeError("trial Key collision; use another seed")
    return trials


def _jsonl(records: Iterable[Mapping]) -> bytes:
    """Compact one-line JSON per record, the official files' style."""
    lines = (json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n" for r in records)
    return "".join(lines).encode("utf-8")


def _ordered(trial: Mapping, position: int) -> dict:
    missing = [f for f in FIELDS if f not in trial]
    if missing:
        raise ValueError(f"trial #{position} lacks official field(s) {missing}")
    return {f: trial[f] for f in FIELDS}


def write_testset(trials: Sequence[Mapping], out_dir: str | Path) -> Path:
    """Write ``out_dir/trials.jsonl.bz2`` (byte-identical for identical trials)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    path = out / "trials.jsonl.bz2"
    data = _jsonl(_ordered(t, i) for i, t in enumerate(trials))
    write_file(path, bz2.compress(data, compresslevel=9), replace=True)
    return path


def write_chat(trials: Sequence[Mapping], path: str | Path) -> Path:
    """Write trials in the training-set chat format; bz2-compressed when the name ends in .bz2."""
    target = Path(path)
    records = (
        {
            "dialog_history": {"messages": [{"role": "user", "content": t["text"]}]},
            "target_message": deobfuscate(t["goldresp_obfusc"]),
        }
        for t in trials
    )
    data = _jsonl(records)
    target.parent.mkdir(parents=True, exist_ok=True)
    return write_file(target, bz2.compress(data, compresslevel=9)
                      if target.name.endswith(".bz2") else data, replace=True)
