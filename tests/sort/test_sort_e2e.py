"""SORT end to end: build, run on built or on-the-fly data, sweep, retrieval, bad input."""

from __future__ import annotations

import shutil

import pytest

from mindprobe.core.store import read_records


@pytest.fixture
def sort_data(shared_data, monkeypatch):
    """The shared data, also as the data cache: upstream's prompt files are found there when
    --data-dir is a folder of Book-SORT tables or books only (as after `data fetch sort`)."""
    data = shared_data("sort")
    monkeypatch.setenv("MINDPROBE_DATA_DIR", str(data.parent))
    return data


def _run(cli, tmp_path, data, *extra):
    return cli("run", "sort:250-20", "--model", "random", "--data-dir", data, "--books",
               "73017", "--runs-dir", tmp_path / "runs", "--json", *extra)


def test_run_on_the_fly_and_on_built_files_agree(cli, tmp_path, sort_data):
    code, doc, err = _run(cli, tmp_path, sort_data, "--limit", 40)
    assert code == 0, err
    assert doc["n_rows"] == 40 and doc["headline"]["chance"] == 0.5
    assert 0 <= doc["headline"]["value"] <= 1 and doc["headline"]["ci_method"].startswith("Wilson")
    assert {"overall", "by_condition", "distance_bin", "book", "label_bias"} <= set(doc["tables"])
    built = tmp_path / "built"
    code, _, err = cli("build", "sort", "--books", sort_data, "--out", built, "--conditions",
                       "250-20", "--book-ids", "73017", "--workers", 1)
    assert code == 0, err
    names = {p.name for p in built.iterdir()}
    assert {"books_250-s20-n110.csv", "excerpts_250-s20-n110.csv", "segments_250-s20-n110.csv",
            "test_e250_s20.parquet", "validation_e250_s20.parquet"} <= names
    code, doc2, err = cli("run", "sort:250-20", "--model", "random", "--data-dir", built,
                          "--runs-dir", tmp_path / "runs2", "--limit", 40, "--json")
    assert code == 0, err
    assert doc2["tables"] == doc["tables"]  # same rows, same seeded answers


def test_retrieval_and_context_comparison(cli, tmp_path, sort_data):
    for ctx in ("in-context", "no-context", "retrieval"):
        code, doc, err = _run(cli, tmp_path, sort_data, "--limit", 12, "--condition", ctx)
        assert code == 0, err
    runs = sorted((tmp_path / "runs" / "sort" / "250-20").iterdir())
    recs = read_records(next(r for r in runs if "retrieval" in r.name) / "records.jsonl")
    assert all(r["context"] == "retrieval" for r in recs)
    code, doc, err = cli("analyse", "sort", *[a for r in runs for a in ("--run", r)], "--json")
    assert code == 0, err
    assert "context" in doc["tables"]
    assert {"accuracy_in_context", "accuracy_no_context", "difference"} <= set(
        doc["tables"]["context"][0])


def test_sweep_picks_the_best_prompt(cli, tmp_path, sort_data):
    code, doc, err = cli("sweep", "sort", "--model", "random", "--data-dir", sort_data,
                         "--books", "73017", "--prompts", "prompt_0,prompt_5", "--limit", 8,
                         "--runs-dir", tmp_path, "--json")
    assert code == 0, err
    assert [r["prompt"] for r in doc["sweep"]] == ["prompt_0", "prompt_5"]
    best = max(doc["sweep"], key=lambda r: r["accuracy"])["prompt"]
    assert doc["best_prompt"] == best and doc["test"]["prompt"] == best
    assert doc["test"]["split"] == "test"


@pytest.mark.parametrize("extra, message", [
    (["--prompt", "prompt_99"], "invalid choice: 'prompt_99'"),
    (["--books", "x"], "--books expects Gutenberg ids"),
])
def test_bad_options(cli, tmp_path, sort_data, extra, message):
    code, _, err = _run(cli, tmp_path, sort_data, *extra)
    assert code == 2 and message in err


def test_condition_that_does_not_fit_the_context(cli, tmp_path, sort_data):
    code, _, err = cli("run", "sort:10000-50", "--model", "local", "--data-dir", sort_data,
                       "--runs-dir", tmp_path)
    assert code == 2 and "context window" in err and len(err.strip().splitlines()) == 1


def test_corrupt_book_and_short_text(cli, tmp_path, sort_data):
    bad = tmp_path / "books"
    shutil.copytree(sort_data / "pg", bad / "pg")
    (bad / "pg" / "full_text" / "73017-0.txt").chmod(0o644)
    with open(bad / "pg" / "full_text" / "73017-0.txt", "a") as f:
        f.write("tampered\n")
    code, _, err = cli("run", "sort:250-20", "--model", "random", "--data-dir", bad, "--books",
                       "73017", "--runs-dir", tmp_path / "r")
    assert code == 2 and "73017-0.txt" in err and "sha256" in err
    short = tmp_path / "short.txt"
    short.write_text("Too short. Far too short.")
    code, _, err = cli("build", "sort", "--text", short, "--out", tmp_path / "o")
    assert code == 2 and "words" in err


@pytest.mark.slow
def test_embedded_model_scores_every_row_by_logprob_with_prefix_reuse(cli, tmp_path, sort_data):
    code, doc, err = cli("run", "sort:250-20", "--model", "local", "--data-dir", sort_data,
                         "--books", "73017", "--excerpts", 2, "--runs-dir", tmp_path, "--json")
    assert code == 0, err
    recs = read_records(next(tmp_path.rglob("records.jsonl")))
    assert len(recs) == 8 and all(r["answer"] in ("A", "B") for r in recs)
    assert not any(r["logprobs_missing"] for r in recs)
    assert doc["usage"]["cached_prompt_tokens"] > 0  # the excerpt's prefix was reused


def test_text_scoring_names_its_own_reason_for_no_answer(cli, tmp_path, sort_data):
    from mindprobe.testing import TestServer

    with TestServer(reply="hello") as srv:
        code, doc, err = cli("run", "sort:250-20", "--model",
                             f"openai:test-model@{srv.base_url}", "--data-dir", sort_data,
                             "--books", "73017", "--limit", 6, "--scoring", "text",
                             "--runs-dir", tmp_path, "--json")
    assert code == 0, err
    assert any("the reply names neither label" in w for w in doc["warnings"])
    assert {"share_A", "share_B", "share_X"} <= set(doc["tables"]["overall"][0])
    assert doc["invalid"]["count"] == 6


def test_more_excerpts_extend_a_run_fewer_are_refused(cli, tmp_path, sort_data):
    """Issue 32.6: a larger --excerpts (a size, as --limit is) resumes the run it extends."""
    code, doc, err = _run(cli, tmp_path, sort_data, "--excerpts", 1)
    assert code == 0, err
    records = tmp_path / doc["run"] / "records.jsonl"
    first = records.read_text().splitlines()
    code, doc, err = _run(cli, tmp_path, sort_data, "--excerpts", 2)
    assert code == 0, err
    lines = records.read_text().splitlines()
    assert lines[:len(first)] == first and len(lines) == 2 * len(first)
    code, _, err = _run(cli, tmp_path, sort_data, "--excerpts", 1)
    assert code == 2 and "leaves out" in err
