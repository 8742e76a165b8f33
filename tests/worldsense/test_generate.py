"""WorldSense fresh-problem generator and independent solver (spec §1, §5)."""

from __future__ import annotations

import ast
import bz2
import functools
import itertools
import json
import random
from collections import Counter, defaultdict

import pytest

from mindprobe.benchmarks.worldsense import wording as render
from mindprobe.benchmarks.worldsense.generate import (
    ALL_PROBLEMS,
    FIELDS,
    OBFUSCATION,
    STANDARD_PROBLEMS,
    TEST_SKINS,
    deobfuscate,
    generate_trials,
    write_chat,
    write_testset,
)
from mindprobe.benchmarks.worldsense.reference_solver import solve
from mindprobe.benchmarks.worldsense.skins import PARALLEL_SKINS, SKINS
from mindprobe.benchmarks.worldsense.wording import Names
from mindprobe.errors import DataError

SIZES = (3, 4, 5, 6, 7)
PER_CELL = 36  # every skin twice per cell, so each skin meets both qskins


@pytest.fixture(scope="module")
def trials() -> list[dict]:
    return generate_trials(seed=11, n=PER_CELL, sizes=SIZES, problems=ALL_PROBLEMS)


@pytest.fixture(scope="module")
def tuples(trials: list[dict]) -> dict[str, list[dict]]:
    grouped: dict[str, list[dict]] = defaultdict(list)
    for t in trials:
        grouped[t["tuple_ID"]].append(t)
    return grouped


def _indices(query: str) -> tuple:
    """The entity indices named by a stored query (``i(a, b)`` is a plain pair)."""
    value = ast.literal_eval(query[1:] if query.startswith("i") else query)
    return tuple(v for v in value if isinstance(v, int) and not isinstance(v, bool))


# ------------------------------------------------------------------ gold = brute-force solver


@pytest.mark.slow
def test_solver_agrees_with_every_generated_gold(trials):
    wrong = [
        (t["problemname"], t["problemsize"], t["query"], t["goldresp_obfusc"])
        for t in trials
        if solve(t) != deobfuscate(t["goldresp_obfusc"])
    ]
    assert wrong == []
    covered = Counter((t["problemname"], t["problemsize"]) for t in trials)
    assert set(covered) == {(p, n) for p in ALL_PROBLEMS for n in SIZES}


def test_every_skin_and_qskin_is_exercised(trials):
    ordering = {(t["skin"], t["qskin"]) for t in trials if t["problemname"] != "Infer.parallel"}
    assert ordering == {(s, q) for s in TEST_SKINS for q in render.QSKINS}
    grid = {(t["skin"], t["qskin"]) for t in trials if t["problemname"] == "Infer.parallel"}
    assert grid == {(s, q) for s in PARALLEL_SKINS for q in render.QSKINS}
    assert len(TEST_SKINS) == 18 and all(len(SKINS[s].pool) >= 12 for s in TEST_SKINS)


def test_cells_are_balanced_by_cycling(trials):
    cells: dict[tuple, list[dict]] = defaultdict(list)
    for t in trials:
        cells[(t["problemname"], t["problemsize"])].append(t)
    for (problem, _), rows in cells.items():
        heads = {r["tuple_ID"]: r for r in rows}.values()
        assert Counter(r["qskin"] for r in heads) == {"directQ1": 18, "directQ2": 18}
        if problem != "Infer.parallel":
            assert set(Counter(r["skin"] for r in heads).values()) == {2}
        levels = Counter(r["complexity"] for r in heads)
        if problem in ("Infer.normal", "Consist.trivial", "Consist.normal", "Infer.extrema"):
            assert levels == {f"Complexity_{c}": 12 for c in range(3)}
        else:
            assert levels == {"Complexity_0": 36}


def test_small_sets_still_use_every_skin_equally():
    heads = {t["tuple_ID"]: t for t in generate_trials(seed=0, n=12)}.values()
    assert Counter(t["skin"] for t in heads) == {s: 12 for s in TEST_SKINS}
    assert Counter(t["qskin"] for t in heads) == {"directQ1": 108, "directQ2": 108}


def test_solver_rejects_unanswerable_records():
    record = {"Key": 1, "problemname": "Infer.normal", "problemsize": 3}
    with pytest.raises(DataError, match="not decided"):
        solve({**record, "descr": "[(0, 1)]", "query": "(1, 2)"})
    with pytest.raises(DataError, match="not a Python literal"):
        solve({**record, "descr": "[(0, 1),", "query": "(1, 2)"})
    parallel = {**record, "problemname": "Infer.parallel", "descr": "[(0, 1, 'par')]"}
    with pytest.raises(DataError, match="dummy"):
        solve({**parallel, "query": "(0, 1)"})


# ------------------------------------------------------------------ tuples and schema


def test_tuples_are_complete_with_each_gold_once(tuples):
    constant = ("problemname", "problemsize", "skin", "qskin", "complexity", "objects")
    for rows in tuples.values():
        expected = rows[0]["expectedresp"]
        assert sorted(deobfuscate(r["goldresp_obfusc"]) for r in rows) == sorted(expected)
        assert len(rows) == len(expected) == (3 if expected == ["1", "2", "3"] else 2)
        for field in constant:
            assert len({json.dumps(r[field]) for r in rows}) == 1, field


def test_records_have_exactly_the_official_schema(trials):
    assert len(FIELDS) == 15
    assert len({t["Key"] for t in trials}) == len(trials)
    answers = {
        "Infer": ["TRUE", "FALSE"],
        "Consist": ["POSSIBLE", "IMPOSSIBLE"],
        "Compl": ["1", "2", "3"],
    }
    for t in trials:
        assert tuple(t) == FIELDS
        assert type(t["Key"]) is int and -(2**63) <= t["Key"] < 2**63
        assert isinstance(t["tuple_ID"], str) and t["problemsize"] == len(t["objects"])
        assert t["expectedresp"] == answers[t["problemname"].split(".")[0]]
        assert t["goldresp_obfusc"] in OBFUSCATION.values()
        assert isinstance(ast.literal_eval(t["descr"]), list)
        assert t["descr"].startswith("[(") and "),(" in t["descr"]
        if t["problemname"] == "Infer.parallel":
            assert t["span"] is None and t["query_len"] == 2
            continue
        if t["problemname"] == "Consist.trivial":
            assert t["span"] == 0
        elif t["problemname"] == "Infer.extrema":
            assert t["span"] == 0 and t["query_len"] == 2
        elif -1 not in _indices(t["query"]):
            known = _indices(t["query"])
            assert t["span"] == max(known) - min(known)
            assert t["query_len"] == len(known)


def test_same_seed_gives_byte_identical_files(tmp_path):
    first = write_testset(generate_trials(5, 4), tmp_path / "a")
    second = write_testset(generate_trials(5, 4), tmp_path / "b")
    other = write_testset(generate_trials(6, 4), tmp_path / "c")
    assert first.name == "trials.jsonl.bz2"
    assert first.read_bytes() == second.read_bytes() != other.read_bytes()
    lines = bz2.decompress(first.read_bytes()).decode().splitlines()
    assert [json.loads(line) for line in lines] == generate_trials(5, 4)
    assert lines[0].startswith('{"Key":') and '","problemname":' not in lines[0]


def test_cells_do_not_depend_on_what_else_is_requested(trials):
    alone = generate_trials(seed=11, n=5, sizes=(6,), problems=("Compl.normal",))
    wanted = {t["Key"] for t in alone}
    assert alone == [t for t in trials if t["Key"] in wanted]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"sizes": (2,)}, "problemsize 2"),
        ({"sizes": (12,), "problems": ("Compl.trivial",)}, "problemsize 12"),
        ({"sizes": (13,)}, "problemsize 13"),
        ({"sizes": (4, 4)}, "twice"),
        ({"problems": ("Infer.hard",)}, "unknown WorldSense problem"),
        ({"skins": ("old/young", "giants")}, "unknown WorldSense skin"),
        ({"skins": ("lines",)}, "needs at least one ordering skin"),
        ({"n": -1}, "non-negative"),
    ],
)
def test_impossible_requests_raise_clear_errors(kwargs, message):
    args = {"seed": 0, "n": 1, **kwargs}
    with pytest.raises(ValueError, match=message):
        generate_trials(**args)


# ------------------------------------------------------------------ texts (§5.5 templates)

_ENDINGS = {
    ("TF", "directQ1"): "' TRUE or FALSE ?\nOnly respond with one of these 2 options: 'TRUE', "
    "'FALSE' without any explanation.",
    ("TF", "directQ2"): "' TRUE or FALSE?",
    ("PI", "directQ1"): ".', is the situation I just described possible or impossible ? Only "
    "respond with 'POSSIBLE' or 'IMPOSSIBLE' without any explanation. ",
    ("PI", "directQ2"): ".', would that situation be POSSIBLE or IMPOSSIBLE ? Only respond with "
    "'POSSIBLE' or 'IMPOSSIBLE' without any explanation:\n",
    ("123", "directQ1"): ", or (3) is it impossible to decide ?\nOnly respond with one of these "
    "options: (1), (2), or (3) without any explanation.",
    ("123", "directQ2"): ", or (3) it is impossible to decide.\nThink carefully, and only respond "
    "with one of these possible options (1), (2), or (3).",
}
_KIND = {"TRUE": "TF", "POSSIBLE": "PI", "1": "123"}


def test_texts_follow_the_templates(trials):
    for t in trials:
        text, skin_name = t["text"], t["skin"]
        assert text.endswith(_ENDINGS[(_KIND[t["expectedresp"][0]], t["qskin"])])
        if t["expectedresp"][0] == "TRUE" and t["qskin"] == "directQ2":
            assert "without any explanation:\nIs the following sentence '" in text
        if t["problemname"] == "Infer.parallel":
            intro = PARALLEL_SKINS[skin_name].intro.format(n=t["problemsize"])
            assert text.startswith(intro + ": ")
            assert text.split("\nIs the following")[0][-1] != "."  # upstream: no final period
            continue
        skin = SKINS[skin_name]
        assert text.startswith(skin.intro.format(n=t["problemsize"]))
        if t["problemname"] == "Infer.trivial":
            listing = "".join(f"\n  - {o}" for o in t["objects"])
            assert f". {skin.list_intro}:{listing}\n\n" in text
        named = {i for r in ast.literal_eval(t["descr"]) for i in r}
        for i in named | {i for i in _indices(t["query"]) if i >= 0}:
            assert t["objects"][i] in text
        if t["problemname"] != "Infer.trivial":  # prefix on the first relation only (§5.1)
            after_intro = text[len(skin.intro.format(n=t["problemsize"])) :]
            opener = "'" if t["expectedresp"][0] == "POSSIBLE" else ": "
            relations = after_intro.split(opener, 1)[1].split(".", 1)[0]
            assert relations.startswith(skin.prefix)
            assert not skin.prefix or relations.count(skin.prefix) == 1


def test_compl_variants_and_absent_entities(trials):
    kinds = Counter()
    for t in trials:
        if not t["problemname"].startswith("Compl"):
            continue
        query = t["query"]
        if query.startswith("i"):
            kinds["unrelated"] += 1
        elif -1 in _indices(query):
            kinds["absent"] += 1
            options = t["text"].split("\n(1) ")[-1] if "\n(1) " in t["text"] else t["text"]
            present = [o for o in SKINS[t["skin"]].pool if o not in t["objects"] and o in options]
            assert present, "the stranger of a -1 query must be named in the options"
        if t["problemname"] == "Compl.normal" and t["problemsize"] > 3:
            kinds[f"normal-{t['query_len']}"] += 1
    assert min(kinds.values()) > 20 and len(kinds) == 4


def test_consist_normal_never_restates_a_stated_ternary(trials):
    for t in trials:
        if t["problemname"] != "Consist.normal":
            continue
        query = ast.literal_eval(t["query"])
        rels = ast.literal_eval(t["descr"])
        stated = [set(r) for r in rels if len(r) == 3 and r != query]
        assert len(query) == 2 or set(query) not in stated


def test_obfuscation_round_trips():
    assert {deobfuscate(v): v for v in OBFUSCATION.values()} == {
        k: OBFUSCATION[k] for k in OBFUSCATION
    }
    assert deobfuscate("Mark") == "1" and deobfuscate("TRUE") == "TRUE"
    assert deobfuscate("") == ""


@pytest.mark.parametrize("name", ["train.jsonl", "train.jsonl.bz2"])
def test_write_chat_uses_the_training_format(tmp_path, name):
    trials = generate_trials(3, 1, problems=STANDARD_PROBLEMS)
    path = write_chat(trials, tmp_path / "sub" / name)
    raw = path.read_bytes()
    text = (bz2.decompress(raw) if name.endswith(".bz2") else raw).decode()
    records = [json.loads(line) for line in text.splitlines()]
    assert len(records) == len(trials)
    for record, trial in zip(records, trials, strict=True):
        assert record == {
            "dialog_history": {"messages": [{"role": "user", "content": trial["text"]}]},
            "target_message": deobfuscate(trial["goldresp_obfusc"]),
        }


# ------------------------------------------------------------------ against the official set


@functools.lru_cache(maxsize=1)
def _sample(path: str) -> tuple[dict, ...]:
    """3,000 trials drawn from the file's first 12,000 lines (all families are interleaved)."""
    with bz2.open(path, "rt", encoding="utf-8") as fh:
        head = list(itertools.islice(fh, 12000))
    return tuple(json.loads(line) for line in random.Random(0).sample(head, 3000))


@pytest.fixture
def official_sample(shared_data) -> tuple[dict, ...]:
    return _sample(str(shared_data("worldsense") / "test_set" / "trials.jsonl.bz2"))


def test_solver_reproduces_official_gold_except_known_noise(official_sample):
    mismatches = [t for t in official_sample if solve(t) != deobfuscate(t["goldresp_obfusc"])]
    for t in mismatches:  # spec §5.4: ternary Compl.normal gold 1/2 the description leaves open
        assert (t["problemname"], t["query_len"], solve(t)) == ("Compl.normal", 3, "3")
        assert deobfuscate(t["goldresp_obfusc"]) in ("1", "2")
    assert 0 < len(mismatches) < 60  # 564 of 87048 overall


def test_skins_render_official_descriptions_verbatim(official_sample):
    """Our templates, fed the official structured fields, rewrite the official TF/PI texts."""
    checked = 0
    for t in official_sample:
        if t["problemname"] not in ("Infer.normal", "Consist.trivial", "Consist.normal"):
            continue
        if "At horse race" in t["text"]:  # upstream's occasional missing article
            continue
        skin = SKINS[t["skin"]]
        names = Names(t["objects"])
        intro = skin.intro.format(n=t["problemsize"])
        rels = [tuple(r) for r in ast.literal_eval(t["descr"])]
        lists = [
            render.relation_list(skin, list(zip(rels, flips, strict=True)), names)
            for flips in itertools.product((False, True), repeat=len(rels))
        ]
        if t["problemname"].startswith("Consist"):
            texts = {render.pi_text(intro, r, t["qskin"]) for r in lists}
        else:
            query = ast.literal_eval(t["query"])
            texts = {
                render.tf_text(
                    render.sentence_description(intro, r),
                    render.statement(skin, query, flip, names),
                    t["qskin"],
                )
                for r in lists
                for flip in (False, True)
            }
        assert t["text"] in texts
        checked += 1
    assert checked > 500
