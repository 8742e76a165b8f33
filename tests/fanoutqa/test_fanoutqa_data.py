"""FanOutQA data: the pinned releases (jul26, nov23), derived evidence, generations files."""

from __future__ import annotations

import collections
import json

import pytest

from mindprobe.benchmarks.fanoutqa import data
from mindprobe.benchmarks.fanoutqa import upstream as releases
from mindprobe.benchmarks.fanoutqa.data import (
    Generation,
    load_generations,
    pair_answers,
    parse_questions,
    write_generations,
)
from mindprobe.errors import DataError


def test_dev_shape(dev):
    assert len(dev) == 310 and {q.version for q in dev} == {"nov23"}
    kinds = collections.Counter(type(q.answer).__name__ for q in dev)
    assert kinds == {"dict": 274, "str": 13, "list": 12, "int": 10, "bool": 1}
    widths = [q.n_evidence for q in dev]
    assert min(widths) == 5 and max(widths) == 46
    assert round(sum(widths) / len(widths), 1) == 6.9
    assert sum(len({e.pageid for e in q.necessary_evidence}) != q.n_evidence for q in dev) == 4


def test_necessary_evidence_is_preorder(dev_by_id):
    q = dev_by_id["563b95ed6141123c"]
    order = []

    def walk(nodes):
        for n in nodes:
            if n.evidence:
                order.append(n.evidence)
            walk(n.decomposition)

    walk(q.decomposition)
    assert q.necessary_evidence == order
    nested = [q for q in dev_by_id.values() if any(s.decomposition for s in q.decomposition)]
    assert nested, "the dev set has depth-2 decompositions"
    for q in nested:  # a parent's evidence comes before its children's
        flat, stack = [], list(reversed(q.decomposition))
        while stack:
            n = stack.pop()
            flat += [n.evidence] if n.evidence else []
            stack += reversed(n.decomposition)
        assert q.necessary_evidence == flat


def test_test_split(testset):
    assert len(testset) == 725
    assert all(q.answer is None and not q.has_answer for q in testset)
    assert sum(len({e.pageid for e in q.necessary_evidence}) != q.n_evidence for q in testset) == 13


def test_what_changed_between_the_releases(dev, testset, dev_jul26):
    """The counts SOURCE.md and the issue give: 82 dev answers and 12 dev question texts
    changed, 48 test question texts changed and one test question is gone."""
    old = {q.id: q for q in dev}
    assert [q.id for q in dev_jul26] == [q.id for q in dev]
    assert sum(q.answer != old[q.id].answer for q in dev_jul26) == 82
    assert sum(q.question != old[q.id].question for q in dev_jul26) == 12
    test_new = data.load_test("jul26")
    assert len(test_new) == 724 and {q.version for q in test_new} == {"jul26"}
    old_test = {q.id: q for q in testset}
    assert set(old_test) - {q.id for q in test_new} == {"36146d2306ce9ca3"}
    assert sum(q.question != old_test[q.id].question for q in test_new) == 48


def test_the_default_release_is_jul26(dev_jul26):
    assert data.DEFAULT_VERSION == "jul26" and {q.version for q in dev_jul26} == {"jul26"}
    assert data.load_dev()[0].version == "jul26"


def test_every_file_is_pinned_at_the_upstream_commit():
    for f in data.DATA_FILES:
        assert f.url == (f"https://raw.githubusercontent.com/zhudotexe/fanoutqa/"
                         f"{data.UPSTREAM_COMMIT}/fanoutqa/data/{f.relpath}")
        assert len(f.git_blob) == 40 and len(f.sha256) == 64


def test_hash_mismatch_is_a_clear_error(tmp_path, shared_data):
    src = shared_data("fanoutqa") / "fanout-final-dev.json"
    (tmp_path / "fanout-final-dev.json").write_bytes(src.read_bytes().replace(b"Pat", b"Pet", 1))
    with pytest.raises(DataError, match="does not match the official file.*data fetch fanoutqa"):
        data.load_dev("jul26", tmp_path)


def test_missing_files_name_the_fetch_command(tmp_path, monkeypatch):
    monkeypatch.setattr(releases, "wheel_dir", lambda: None)  # no fanoutqa wheel either
    for version in data.VERSIONS:
        with pytest.raises(DataError, match=f"{version} dev file.*mindprobe data fetch fanoutqa"):
            data.load_dev(version, tmp_path)
    with pytest.raises(DataError, match="unknown FanOutQA dataset version 'oct99'"):
        data.load_dev("oct99")


def test_nov23_still_comes_from_the_wheel(tmp_path, dev):
    if data.wheel_dir() is None:
        pytest.skip("the fanoutqa==1.1.1 wheel is not installed")
    path = data.data_path("dev", "nov23", tmp_path)  # nothing in tmp_path: the wheel's copy
    assert path.parent == data.wheel_dir() and path.name == "fanout-final-dev.json"


@pytest.mark.parametrize(
    "record, message",
    [
        ({"id": "a", "question": "q", "decomposition": [], "categories": []}, "no 'answer'"),
        (
            {"id": "a", "question": "q", "decomposition": [], "categories": [], "answer": [[1]]},
            "not a primitive",
        ),
        (
            {
                "id": "a",
                "question": "q",
                "decomposition": [],
                "categories": [],
                "answer": {"k": None},
            },
            "not a primitive",
        ),
        (
            {"id": "a", "question": 3, "decomposition": [], "categories": [], "answer": 1},
            "'question' must be str",
        ),
        (
            {"id": "a", "question": "q", "categories": [], "answer": 1},
            "missing key 'decomposition'",
        ),
    ],
)
def test_malformed_questions(record, message):
    with pytest.raises(DataError, match=message):
        parse_questions([record], "dev", "x.json")


def test_subquestion_without_evidence_or_decomposition():
    sub = {
        "id": "s",
        "question": "q",
        "decomposition": [],
        "answer": 1,
        "depends_on": [],
        "evidence": None,
    }
    rec = {"id": "a", "question": "q", "decomposition": [sub], "categories": [], "answer": 1}
    with pytest.raises(DataError, match="subquestion 's'.*neither evidence nor a decomposition"):
        parse_questions([rec], "dev", "x.json")


# ---------------------------------------------------------------- generations files


def test_generations_jsonl_and_list(tmp_path):
    rows = [{"id": "a", "answer": "x", "extra": 1}, {"id": "b", "answer": ""}]
    jl = tmp_path / "g.jsonl"
    jl.write_text(json.dumps(rows[0]) + "\n\n" + json.dumps(rows[1]) + "\n")
    assert load_generations(jl) == [Generation("a", "x", 1), Generation("b", "", 3)]
    js = tmp_path / "g.json"
    js.write_text(json.dumps(rows, indent=1))
    assert [(g.id, g.answer, g.line) for g in load_generations(js)] == [("a", "x", 1), ("b", "", 2)]
    out = write_generations(tmp_path / "w.jsonl", load_generations(js))
    assert [json.loads(x) for x in out.read_text().splitlines()] == [
        {"id": "a", "answer": "x"},
        {"id": "b", "answer": ""},
    ]


@pytest.mark.parametrize(
    "lines, message",
    [
        (['{"id": "a", "answer": "x"}', '{"id": "b", "answer": '], r"line 2: invalid JSON"),
        (
            ['{"id": "a", "answer": "x"}', '{"id": "b", "answer": 42}'],
            r"line 2: 'answer' must be a string, got int",
        ),
        (['{"id": "a", "answer": ["x"]}'], r"line 1: 'answer' must be a string, got list"),
        (['{"id": "a", "answer": null}'], r"line 1: 'answer' must be a string, got NoneType"),
        (['{"id": 7, "answer": "x"}'], r"line 1: 'id' must be a string"),
        (["", '{"answer": "x"}'], r"line 2: missing key 'id'"),
        (['"just a string"'], r"line 1: expected an object"),
    ],
)
def test_malformed_generations_name_the_line(tmp_path, lines, message):
    p = tmp_path / "bad.jsonl"
    p.write_text("\n".join(lines) + "\n")
    with pytest.raises(DataError, match=message):
        load_generations(p)


def test_malformed_json_list(tmp_path):
    p = tmp_path / "bad.json"
    p.write_text('[\n {"id": "a", "answer": "x"},\n {"id": "b", "answer": 1.5}\n]')
    with pytest.raises(DataError, match=r"element 2: 'answer' must be a string, got float"):
        load_generations(p)
    p.write_text('[\n {"id": "a", "answer": "x"},\n oops\n]')
    with pytest.raises(DataError, match=r"line 3: invalid JSON list"):
        load_generations(p)
    with pytest.raises(DataError, match="nope.jsonl: no such file"):
        load_generations(tmp_path / "nope.jsonl")
    (tmp_path / "empty.jsonl").write_text("\n")
    with pytest.raises(DataError, match="no generations"):
        load_generations(tmp_path / "empty.jsonl")


def test_pairing_default_and_only_answered(dev):
    q1, q2, q3 = dev[:3]
    gens = [
        Generation(q2.id, "first", 1),
        Generation("ffffffffffffffff", "?", 2),
        Generation(q2.id, "second", 3),
        Generation(q1.id, "a", 4),
    ]
    p = pair_answers([q1, q2, q3], gens)
    assert [(q.id, a) for q, a in p.pairs] == [(q1.id, "a"), (q2.id, "second"), (q3.id, None)]
    assert p.unknown_ids == ["ffffffffffffffff"] and p.duplicate_ids == [q2.id]
    assert p.missing_ids == [q3.id]
    with pytest.raises(DataError, match=r"'ffffffffffffffff' \(line 2\).*only_score_answered"):
        pair_answers([q1, q2, q3], gens, only_score_answered=True)
    p = pair_answers([q1, q2, q3], [g for g in gens if g.line != 2], only_score_answered=True)
    assert [(q.id, a) for q, a in p.pairs] == [(q2.id, "first"), (q2.id, "second"), (q1.id, "a")]


def test_data_fetch_verifies_both_releases_in_place(cli, tmp_path, shared_data):
    """`mindprobe data fetch fanoutqa` over a folder that already holds the pinned files (both
    releases and the 16 leaderboard submissions): each verified by its hash, nothing
    downloaded (tests never touch the internet)."""
    import shutil

    from mindprobe.benchmarks.fanoutqa.task import FanOutQABenchmark

    files = FanOutQABenchmark.data_files
    for f in files:
        (tmp_path / f.relpath).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(shared_data("fanoutqa") / f.relpath, tmp_path / f.relpath)
    code, _, err = cli("data", "fetch", "fanoutqa", "--data-dir", tmp_path)
    assert code == 0, err
    assert err.count("ok") == len(files) == len(data.DATA_FILES) + 16 == 21
    assert [q.version for q in data.load_dev("jul26", tmp_path)[:1]] == ["jul26"]
