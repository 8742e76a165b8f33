"""WorldSense loaders and results files (spec §2, §3.1): formats, exact Keys, clear errors."""

from __future__ import annotations

import bz2
import json

import numpy as np
import pandas as pd
import pytest

from mindprobe.benchmarks.worldsense import (
    load_results,
    load_testset,
    load_trainset,
    read_results_file,
    results_from_pairs,
    write_results_file,
)
from mindprobe.benchmarks.worldsense.upstream import (
    concat_results,
    parse_results_filename,
    results_filename,
)
from mindprobe.errors import DataError

BIG = 2**63 - 1


def test_results_roundtrip_exact_keys_and_string_resps(tmp_path):
    path = tmp_path / "results" / "basic___GPT4___results.jsonl"
    rows = [(-(2**63), "1"), (BIG, "2"), (-276741083417243227, "3"), (5, "")]
    write_results_file(path, rows)
    assert path.read_text().splitlines()[0] == '{"Key":-9223372036854775808,"resp":"1"}'
    df = read_results_file(path)
    assert list(df.columns) == ["Key", "resp", "prompting", "modelname"]
    assert df["Key"].dtype == np.int64
    assert df["Key"].tolist() == [k for k, _ in rows]
    assert df["resp"].tolist() == ["1", "2", "3", ""]  # all-numeric file: still strings
    assert set(df["prompting"]) == {"basic"} and set(df["modelname"]) == {"GPT4"}
    write_results_file(path, [(7, "TRUE")], append=True)
    assert read_results_file(path)["Key"].tolist()[-1] == 7


def test_results_reader_tolerates_blank_lines_and_spacing(tmp_path):
    path = tmp_path / "COT___m___results.jsonl"
    path.write_text('\n{ "resp" : "TRUE", "Key" : 3 }\r\n\n{"Key":4,"resp":"FALSE"}\n\n')
    df = read_results_file(path)
    assert df["Key"].tolist() == [3, 4] and df["resp"].tolist() == ["TRUE", "FALSE"]


def test_results_escapes_and_unicode_match_json(tmp_path):
    path = tmp_path / "basic___m___results.jsonl"
    write_results_file(path, [(1, "é"), (2, 'say "3"'), (3, "3")])
    assert read_results_file(path)["resp"].tolist() == ["é", 'say "3"', "3"]
    path.write_text('{"Key":1,"resp":"\\u0031"}\n{"Key":-0,"resp":"2"}\n')
    df = read_results_file(path)
    assert df["resp"].tolist() == ["1", "2"] and df["Key"].tolist() == [1, 0]


@pytest.mark.parametrize(("content", "line", "words"), [
    ('{"Key":1,"resp":"1"}\n{"Key":2,"resp":"2"\n', 2, "malformed JSON"),
    ('{"Key":1,"resp":"1"}\n\n{"Key":2,"resp":"2"} x\n', 3, "extra data"),
    ('{"Key":1,"resp":"1"}\n{"Key":2.0,"resp":"2"}\n', 2, "64-bit integer"),
    ('{"Key":1,"resp":"1"}\n{"Key":true,"resp":"2"}\n', 2, "64-bit integer"),
    (f'{{"Key":{2**63},"resp":"1"}}\n', 1, "64-bit integer"),
    ('{"Key":1,"resp":"1"}\n{"Key":2,"resp":2}\n', 2, "JSON string"),
    ('{"Key":1,"resp":"1"}\n{"Key":2}\n', 2, "'resp'"),
    ('{"Key":1,"resp":"1"}\n[2, "2"]\n', 2, "'Key'"),
])
def test_malformed_results_line_names_file_and_line(tmp_path, content, line, words):
    path = tmp_path / "basic___M___results.jsonl"
    path.write_text(content)
    with pytest.raises(DataError) as info:
        read_results_file(path)
    assert f"{path}:{line}:" in str(info.value)
    assert words in str(info.value)


@pytest.mark.parametrize("name", ["basic___results.jsonl", "a___b___c___results.jsonl"])
def test_results_name_needs_three_parts(tmp_path, name):
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / name).write_text('{"Key":1,"resp":"1"}\n')
    with pytest.raises(DataError, match="exactly 3"):
        load_results(tmp_path)


def test_results_filename_roundtrip_and_refusals():
    assert results_filename("basic", "Llama2-FT+1M") == "basic___Llama2-FT+1M___results.jsonl"
    assert parse_results_filename("basic___Llama2-FT+1M___results.jsonl") == (
        "basic", "Llama2-FT+1M")
    for bad in ("a___b", "", "x/y", "ends_"):
        with pytest.raises(ValueError):
            results_filename("basic", bad)


def test_load_results_recursive_sorted_and_duplicate_labels(tmp_path):
    assert load_results(tmp_path).empty  # no results folder: empty table, no error
    write_results_file(tmp_path / "results" / "sub" / "COT___B___results.jsonl", [(2, "2")])
    write_results_file(tmp_path / "results" / "basic___A___results.jsonl", [(1, "1")])
    (tmp_path / "results" / "notes.jsonl").write_text("not a results file\n")
    df = load_results(tmp_path)
    assert df["Key"].tolist() == [1, 2]
    assert df["modelname"].tolist() == ["A", "B"] and df["prompting"].tolist() == ["basic", "COT"]
    write_results_file(tmp_path / "results" / "other" / "COT___B___results.jsonl", [(3, "3")])
    with pytest.raises(DataError, match="both hold"):
        load_results(tmp_path)


def test_results_from_pairs_and_concat():
    a = results_from_pairs([(1, "TRUE"), (BIG, "3")], "basic", "me")
    b = results_from_pairs([], "COT", "you")
    both = concat_results([a, b, results_from_pairs([(2, "")], "COT", "you")])
    assert both["Key"].tolist() == [1, BIG, 2]
    assert both["prompting"].tolist() == ["basic", "basic", "COT"]
    assert both["modelname"].tolist() == ["me", "me", "you"]
    assert isinstance(both["modelname"].dtype, pd.CategoricalDtype)


def test_testset_missing_dir_or_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="directory"):
        load_testset(tmp_path / "nope")
    with pytest.raises(FileNotFoundError) as info:
        load_testset(tmp_path)
    assert isinstance(info.value, DataError) and "trials.jsonl.bz2" in str(info.value)
    with pytest.raises(FileNotFoundError):
        load_trainset(tmp_path / "trials_100k.jsonl.bz2")


def test_testset_corrupt_or_incomplete(tmp_path):
    (tmp_path / "trials.jsonl.bz2").write_bytes(b"not bzip2")
    with pytest.raises(DataError, match="bzip2"):
        load_testset(tmp_path)
    (tmp_path / "trials.jsonl.bz2").write_bytes(bz2.compress(b'{"Key": 1}\n{"Key": 2, \n'))
    with pytest.raises(DataError, match=r"trials\.jsonl\.bz2:2: malformed"):
        load_testset(tmp_path)
    (tmp_path / "trials.jsonl.bz2").write_bytes(bz2.compress(b'{"Key": 1}\n'))
    with pytest.raises(DataError, match=r":1: record is not an object with field 'problemname'"):
        load_testset(tmp_path)


def test_bz2_multistream_and_truncated(tmp_path):
    records = [{"dialog_history": {"messages": [{"role": "user", "content": f"q{i}"}]},
                "target_message": "TRUE"} for i in range(3)]
    lines = [json.dumps(r) + "\n" for r in records]
    path = tmp_path / "t.jsonl.bz2"
    path.write_bytes(bz2.compress("".join(lines[:2]).encode()) + bz2.compress(lines[2].encode()))
    assert load_trainset(path)["dialog_history"].iloc[2]["messages"][0]["content"] == "q2"
    path.write_bytes(bz2.compress("".join(lines).encode())[:-10])
    with pytest.raises(DataError, match="bzip2"):
        load_trainset(path)


def test_trainset_synthetic(tmp_path):
    records = [{"dialog_history": {"messages": [{"role": "user", "content": f"q{i}"}]},
                "target_message": t} for i, t in enumerate(["TRUE", "3"])]
    path = tmp_path / "t.jsonl.bz2"
    path.write_bytes(bz2.compress("".join(json.dumps(r) + "\n" for r in records).encode()))
    df = load_trainset(path)
    assert list(df.columns) == ["dialog_history", "target_message"]
    assert df["target_message"].tolist() == ["TRUE", "3"]
    assert df["dialog_history"].iloc[1] == {"messages": [{"role": "user", "content": "q1"}]}


def test_trainset_10k(shared_data):
    df = load_trainset(shared_data("worldsense") / "training_set" / "trials_10k.jsonl.bz2")
    assert df.shape == (12096, 2)
    assert df["target_message"].value_counts().to_dict() == {
        "POSSIBLE": 2592, "IMPOSSIBLE": 2592, "TRUE": 2160, "FALSE": 2160,
        "1": 864, "2": 864, "3": 864}
    messages = df["dialog_history"].map(lambda d: d["messages"])
    assert (messages.map(len) == 1).all()
    assert (messages.map(lambda m: m[0]["role"]) == "user").all()


def test_limit_samples_whole_tuples_in_a_seeded_order():
    """`--limit N`: tuples in a seeded shuffle of their sorted ids, whole, until N trials."""
    import random

    from mindprobe.benchmarks.worldsense.task import sample_tuples, tuple_of
    from mindprobe.core.data import Grouped

    trials = [{"tuple_ID": f"T{t}", "Key": 10 * t + i} for t in (3, 1, 2, 0) for i in range(3)]
    g = Grouped.of(trials, tuple_of)
    ids = sorted(f"T{t}" for t in range(4))
    random.Random(5).shuffle(ids)
    chosen = sample_tuples(g, 5, 4)  # 4 trials asked: the second tuple is completed
    assert [t["tuple_ID"] for t in chosen[::3]] == ids[:2] and len(chosen) == 6
    assert [t["Key"] % 10 for t in chosen] == [0, 1, 2, 0, 1, 2]
    assert len(sample_tuples(g, 5, None)) == 12 == len(sample_tuples(g, 5, 100))
    assert sample_tuples(g, 5, 1) == chosen[:3]


def test_integer_tuple_ids_sort_as_numbers():
    """A --data-file with int tuple ids samples as before the grouped cache: 2 before 10."""
    import random

    from mindprobe.benchmarks.worldsense.task import sample_tuples, tuple_of
    from mindprobe.core.data import Grouped

    trials = [{"tuple_ID": t, "Key": t} for t in (2, 10, 1, 33)]
    for seed in range(6):
        ids = [1, 2, 10, 33]
        random.Random(seed).shuffle(ids)
        assert [t["tuple_ID"] for t in sample_tuples(Grouped.of(trials, tuple_of), seed, 3)] \
            == ids[:3]


def test_limit_takes_as_many_whole_tuples_from_every_analysis_cell():
    """Each cell (problem family × size) gets the same number of whole tuples (within one),
    whatever its share of the file, N overshot by less than a tuple; the same seed gives the
    same sample, a larger N extends a smaller one's, and cells alternate in the run order."""
    from collections import Counter

    from mindprobe.benchmarks.worldsense.task import sample_tuples, tuple_of
    from mindprobe.core.data import Grouped

    sizes = {"Infer.normal": (60, 2), "Consist.normal": (30, 2), "Compl.trivial": (20, 3)}
    trials = [{"problemname": fam, "problemsize": 3 + t % 2, "tuple_ID": f"{fam}-{t}",
               "Key": f"{fam}-{t}-{i}"}
              for fam, (n, size) in sizes.items() for t in range(n) for i in range(size)]
    g = Grouped.of(trials, tuple_of)
    chosen = sample_tuples(g, 7, 100)  # 6 cells, 14 trials a round: 7 or 8 tuples each
    per_cell = Counter((t["problemname"], t["problemsize"]) for t in chosen
                       if t["Key"].endswith("-0"))
    assert len(per_cell) == 6 and max(per_cell.values()) - min(per_cell.values()) <= 1
    assert 100 <= len(chosen) < 103
    per_tuple = Counter(t["tuple_ID"] for t in chosen)
    assert all(n == sizes[tid.rsplit("-", 1)[0]][1] for tid, n in per_tuple.items())
    assert chosen == sample_tuples(g, 7, 100) != sample_tuples(g, 8, 100)
    assert sample_tuples(g, 7, 200)[:len(chosen)] == chosen
    assert len({t["problemname"] for t in chosen[:14]}) == 3  # the first round
    # cells that run out (Compl.trivial: 10 tuples per size) leave the rest to the others
    assert Counter(t["problemname"] for t in sample_tuples(g, 7, 300)
                   if t["Key"].endswith("-0"))["Compl.trivial"] == 20
    assert len(sample_tuples(g, 7, None)) == len(trials)


def _sample_before(trials, seed, limit):
    """sample_tuples as it was written first (a sort of every key, `Random.shuffle`, the
    cell with the fewest taken looked for at every tuple): the sample the faster code keeps."""
    import random

    cells = {}
    for i in sorted(range(len(trials.keys)), key=trials.keys.__getitem__):
        cells.setdefault(trials.keys[i][:-1], []).append(i)
    rng = random.Random(seed)
    for _, order in sorted(cells.items()):
        rng.shuffle(order)
    taken = dict.fromkeys(cells, 0)
    chosen, n = [], 0
    while n < limit:
        open_ = [c for c in sorted(cells) if taken[c] < len(cells[c])]
        if not open_:
            break
        cell = min(open_, key=taken.__getitem__)
        i = cells[cell][taken[cell]]
        taken[cell] += 1
        chosen.append(trials.keys[i])
        n += trials.sizes[i]
    return trials.load(chosen)


def test_the_inlined_shuffle_is_random_shuffle():
    """`sampling.shuffle` makes Random.shuffle's permutation from the same draws, and leaves
    the generator where Random.shuffle does (the next cell's shuffle goes on from there)."""
    import random

    from mindprobe.benchmarks.worldsense.sampling import shuffle

    for seed in range(5):
        for n in (*range(40), 255, 256, 257, 1000, 4097):
            a, b = random.Random(seed), random.Random(seed)
            x, y = list(range(n)), list(range(n))
            a.shuffle(x)
            shuffle(b, y)
            assert x == y and a.random() == b.random()


def test_the_sample_is_the_one_the_first_algorithm_drew():
    """The round robin over cells draws the very sample of the first algorithm (the cell with
    the fewest tuples taken, ties to the first), for uneven cells, int and text tuple ids and
    limits that end mid-round, past the smallest cell and past everything."""
    from mindprobe.benchmarks.worldsense.task import sample_tuples, tuple_of
    from mindprobe.core.data import Grouped

    trials = [{"problemname": fam, "problemsize": 3 + t % 3, "Key": f"{fam}-{t}-{i}",
               "tuple_ID": t * 7 % 101 if fam == "Infer.normal" else f"{fam}-{t}"}
              for fam, n, size in (("Infer.normal", 90, 2), ("Consist.normal", 13, 4),
                                   ("Compl.trivial", 40, 3))
              for t in range(n) for i in range(size)]
    g = Grouped.of(trials, tuple_of)
    for seed in (0, 1, 17):
        for limit in (1, 5, 14, 15, 60, 61, 150, 400, 10_000):
            assert sample_tuples(g, seed, limit) == _sample_before(g, seed, limit), (seed, limit)


@pytest.mark.slow
def test_the_official_test_sets_sample_is_unchanged(shared_data):
    """The official test set, as a run plans it: the same 20,000-trial sample as before."""
    from mindprobe.benchmarks.worldsense import sets
    from mindprobe.benchmarks.worldsense.sampling import read_trials, sample_tuples, tuple_of
    from mindprobe.core.data import decoded_groups

    rel = sets.TRIALS_PATH["test_set"]
    g = decoded_groups(shared_data("worldsense") / rel, sets.sha256_of(rel),
                       "worldsense-trials-by-cell", read_trials, tuple_of)
    for limit in (20, 20_000):
        assert sample_tuples(g, 0, limit) == _sample_before(g, 0, limit)
