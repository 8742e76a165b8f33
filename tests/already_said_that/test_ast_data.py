"""Data loading, pinning and selection (spec §2-§4, SOURCE.md)."""

from __future__ import annotations

import hashlib
import shutil

import pytest

from mindprobe.benchmarks.already_said_that import (
    BASE_MODEL_FILES,
    DATA_FILES,
    DISTRACTOR_FILES,
    SAMPLES_FILE,
    UPSTREAM_COMMIT,
    VARIANTS,
    load_distractors,
    load_samples,
    parse_distractors,
    parse_samples,
    resolve_variant,
    select_indices,
    select_samples,
)
from mindprobe.errors import DataError

POOL_SIZES = {
    "which-is-heavier": 182,
    "first-letters": 99,
    "ambiguous-sentences": 59,
    "reverse-sort-words-eng": 24,
    "distractorless": 0,
}


def test_variants_and_alias():
    assert tuple(POOL_SIZES) == VARIANTS
    assert resolve_variant("already_said_that") == "reverse-sort-words-eng"
    assert resolve_variant("first-letters") == "first-letters"
    with pytest.raises(ValueError, match="which-is-heavier"):
        resolve_variant("which_is_heavier")


def test_file_table_matches_source_md():
    assert [f.relpath for f in DATA_FILES] == [
        "already_said_that/500_100.jsonl",
        "which_is_heavier/which_is_heavier.jsonl",
        "first-letters/samples.jsonl",
        "ambiguous-sentences/samples.jsonl",
        "reverse-sort-words-eng/samples.jsonl",
        "upstream/evals/elsuite/already_said_that/prompts.py",
        "upstream/evals/solvers/prompts/cot.py",
        "upstream/evals/solvers/nested/cot_solver.py",
        "upstream/evals/registry/solvers/already_said_that.yaml",
        "upstream/evals/registry/solvers/defaults.yaml",
        # upstream's base-model solver: not among shared's copies (pinned from the wheel)
        "upstream/evals/solvers/prompts/hhh.py",
        "upstream/evals/solvers/nested/hhh_solver.py",
        "upstream/evals/solvers/providers/openai/openai_solver.py",
        "upstream/evals/prompt/base.py",
    ]
    assert all(len(f.sha256) == 64 for f in DATA_FILES)
    assert DATA_FILES[9].url == (
        f"https://raw.githubusercontent.com/openai/evals/{UPSTREAM_COMMIT}/"
        "evals/registry/solvers/defaults.yaml")
    for f in DATA_FILES[10:]:  # a commit holding the wheel's bytes, then the pinned commit
        path = f.relpath.removeprefix("upstream/")
        assert f.url.startswith("https://raw.githubusercontent.com/openai/evals/")
        assert f.url.endswith("/" + path)
        assert f.mirrors == (f"https://raw.githubusercontent.com/openai/evals/"
                             f"{UPSTREAM_COMMIT}/{path}",)
    assert SAMPLES_FILE.url == (
        "https://media.githubusercontent.com/media/openai/evals/"
        f"{UPSTREAM_COMMIT}/evals/registry/data/already_said_that/500_100.jsonl"
    )
    assert set(DISTRACTOR_FILES) == set(VARIANTS) - {"distractorless"}


def test_pinned_hashes_match_shared_data(shared_data):
    root = shared_data("already_said_that")
    for f in DATA_FILES:
        if f in BASE_MODEL_FILES and not (root / f.relpath).exists():
            continue  # not among shared's copies
        assert hashlib.sha256((root / f.relpath).read_bytes()).hexdigest() == f.sha256


def test_samples_and_selection(shared_data):
    samples = load_samples(shared_data("already_said_that"))
    assert len(samples) == 500
    assert all(len(w) == 100 and len(set(w)) == 100 for w in samples)
    assert not any({"yes", "no"} & set(w) for w in samples)
    assert select_indices(500, 250, 20220722)[:5] == [488, 187, 149, 299, 63]
    selected = select_samples(samples, 250, 20220722)
    assert len(selected) == 250
    assert selected[:5] == [samples[i] for i in (488, 187, 149, 299, 63)]
    assert len(select_samples(samples, 10_000, 1)) == 500
    with pytest.raises(ValueError):
        select_samples(samples, 0, 1)


@pytest.mark.parametrize("variant", VARIANTS)
def test_pool_sizes_and_examples(shared_data, variant):
    pool, example = load_distractors(shared_data("already_said_that"), variant)
    assert len(pool) == POOL_SIZES[variant]
    assert example not in pool
    assert all(ideal == ideal.lower() for _, ideal in [*pool, example])


def test_question_building(shared_data):
    root = shared_data("already_said_that")
    pool, example = load_distractors(root, "which-is-heavier")
    assert example == ("Is 1 kilogram of lead heavier than 5 kilograms of dust particles?", "no")
    assert pool[0] == ("Is 5 pounds of manganese heavier than 20 pounds of hydrogen?", "no")
    pool, example = load_distractors(root, "already_said_that")
    assert example == (
        "Sort the following comma-separated words in reversed alphabetical order: "
        "velvet, tent, monument, zodiac, whirl, samba, tide, parchment, geyser, tool",
        "zodiac, whirl, velvet, tool, tide, tent, samba, parchment, monument, geyser",
    )
    assert all(q.startswith("Sort the following comma-se") and "respond" not in q for q, _ in pool)
    _, example = load_distractors(root, "ambiguous-sentences")
    assert example == ("Jane gave Joan candy because she wasn't hungry. Who wasn't hungry?", "jane")
    _, example = load_distractors(root, "first-letters")
    assert example[0].endswith('"Just over budget."?') and example[1] == "job"
    assert load_distractors(root, "distractorless") == ([], ("What is the capital of Italy?", "rome"))


def test_missing_and_corrupt_files(shared_data, tmp_path):
    with pytest.raises(DataError, match=r"500_100\.jsonl.*data fetch"):
        load_samples(tmp_path)
    src = shared_data("already_said_that") / SAMPLES_FILE.relpath
    dst = tmp_path / SAMPLES_FILE.relpath
    dst.parent.mkdir(parents=True)
    shutil.copyfile(src, dst)
    assert len(load_samples(tmp_path)) == 500
    dst.write_bytes(src.read_bytes()[:-2] + b"]}")
    with pytest.raises(DataError, match=r"500_100\.jsonl does not match .*expected ce6eeade"):
        load_samples(tmp_path)
    dst.write_bytes(b"version https://git-lfs.github.com/spec/v1\noid sha256:ce6e\nsize 1\n")
    with pytest.raises(DataError, match="Git-LFS pointer"):
        load_samples(tmp_path)
    with pytest.raises(DataError, match="which_is_heavier.jsonl"):
        load_distractors(tmp_path, "which-is-heavier")


def test_malformed_lines_name_file_and_line():
    with pytest.raises(DataError, match=r"s\.jsonl:2: invalid JSON"):
        parse_samples('{"words": ["a"]}\n{"words": [\n', "s.jsonl")
    with pytest.raises(DataError, match=r"s\.jsonl:1: expected"):
        parse_samples('{"words": ["a", "a"]}\n', "s.jsonl")
    good = '{"input": [{"role": "user", "content": "Is x heavier? Answer Yes or No"}], "ideal": "Yes"}'
    assert parse_distractors(good, "d.jsonl", "which-is-heavier") == [("Is x heavier?", "yes")]
    bad = '{"input": [{"role": "user", "content": "Is x heavier?"}], "ideal": "Yes"}'
    with pytest.raises(DataError, match=r"d\.jsonl:2: question does not end"):
        parse_distractors(good + "\n" + bad, "d.jsonl", "which-is-heavier")
    with pytest.raises(DataError, match=r"d\.jsonl:1: expected exactly one 'system'"):
        parse_distractors(good, "d.jsonl", "reverse-sort-words-eng")
    with pytest.raises(DataError, match=r"d\.jsonl:1: expected \{"):
        parse_distractors('{"input": [], "ideal": 3}', "d.jsonl", "first-letters")
