"""Long-term memory: a fine-tuned model against its base on the same no-context rows, from two
local test servers whose answers differ on a known subset (the rows of one book)."""

from __future__ import annotations

import pytest

from mindprobe.core.store import load_run, read_records
from mindprobe.testing import TestServer

TRAINED, HELD_OUT = 73017, 72963
TITLE = "Pomona"  # in every prompt about book 73017 (its title)


def _text(body: dict) -> str:
    return " ".join(str(m.get("content")) for m in body.get("messages", []))


def _always_a(body: dict) -> str:
    return "A"


def _b_on_the_trained_book(body: dict) -> str:
    return "B" if TITLE in _text(body) else "A"


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory, sort_data):
    from mindprobe.cli import main

    data = sort_data
    runs = tmp_path_factory.mktemp("runs")
    common = ["--data-dir", str(data), "--books", f"{TRAINED},{HELD_OUT}", "--excerpts", "5",
              "--runs-dir", str(runs), "--json"]
    with TestServer(models=("base-model",), responder=_always_a) as base, \
            TestServer(models=("tuned-model",), responder=_b_on_the_trained_book) as tuned:
        assert main(["run", "sort:250-20", "--model", f"openai:base-model@{base.base_url}",
                     "--condition", "no-context", *common]) == 0
        base_dir = next(runs.rglob("manifest.json")).parent
        label = load_run(base_dir).model_label  # what --base-model must name
        assert main(["run", "sort:250-20", "--model", f"openai:tuned-model@{tuned.base_url}",
                     "--condition", "long-term", "--base-model", label, *common]) == 0
    tuned_dir = next(p.parent for p in runs.rglob("manifest.json") if p.parent != base_dir)
    return base_dir, tuned_dir


def test_paired_difference_on_the_known_subset(two_runs, cli):
    base_dir, tuned_dir = two_runs
    base = {r["row_id"]: r for r in read_records(base_dir / "records.jsonl")}
    tuned = {r["row_id"]: r for r in read_records(tuned_dir / "records.jsonl")}
    assert base.keys() == tuned.keys() and len(base) == 40
    assert all(r["context"] == "long-term" for r in tuned.values())
    trained = [k for k, r in base.items() if r["book_idx"] == TRAINED]
    truth_b = sum(base[k]["ground_truth"] == "B" for k in trained)
    # The subset where the answers differ is exactly the trained book's rows.
    assert {k for k in base if base[k]["answer"] != tuned[k]["answer"]} == set(trained)
    # FINETUNED given first: the long-term run is still B
    code, doc, err = cli("analyse", "sort", "--run", tuned_dir, "--run", base_dir, "--json")
    assert code == 0, err
    paired = doc["paired"]
    rows = {r["rows"]: r for r in paired["tables"]["paired"]}
    main_row, control = rows["trained books"], rows[f"held-out control ({HELD_OUT})"]
    assert main_row["n"] == len(trained) == 20
    assert main_row["only_b_right"] == truth_b
    assert main_row["only_a_right"] == len(trained) - truth_b
    assert main_row["difference"] == pytest.approx((2 * truth_b - len(trained)) / len(trained))
    assert main_row["ci_low"] <= main_row["difference"] <= main_row["ci_high"]
    assert 0 < main_row["p_mcnemar"] <= 1
    assert control["n"] == 20 and control["difference"] == 0 and control["p_mcnemar"] == 1
    assert control["only_a_right"] == control["only_b_right"] == 0
    assert paired["headline"]["value"] == pytest.approx(main_row["difference"])
    assert paired["headline"]["ci_method"].startswith("paired bootstrap")
    base_label, tuned_label = load_run(base_dir).model_label, load_run(tuned_dir).model_label
    assert paired["a"]["label"] == f"{base_label} · no-context"
    assert paired["b"]["label"] == f"{tuned_label} · long-term"
    books = {r["book_idx"]: r for r in paired["tables"]["paired_by_book"]}
    assert books[HELD_OUT]["held_out"] and not books[TRAINED]["held_out"]
    assert {"paired_by_excerpt_length", "paired_by_distance_bin",
            "paired_by_distance_bin_control"} <= set(paired["tables"])
    assert sum(r["n"] for r in paired["tables"]["paired_by_distance_bin"]) == 20
    # side by side: the long-term run sits under its base model
    ctx = doc["tables"]["context"]
    assert len(ctx) == 1 and ctx[0]["model"] == base_label
    assert ctx[0]["long_term_gain"] == pytest.approx(
        ctx[0]["accuracy_long_term"] - ctx[0]["accuracy_no_context"])


def test_held_out_override_and_refusals(two_runs, cli):
    base_dir, tuned_dir = two_runs
    code, doc, err = cli("analyse", "sort", "--run", base_dir, "--run", tuned_dir,
                         "--held-out", str(TRAINED), "--json")
    assert code == 0, err
    rows = {r["rows"]: r for r in doc["paired"]["tables"]["paired"]}
    assert rows[f"held-out control ({TRAINED})"]["n"] == 20
    code, _, err = cli("analyse", "sort", "--run", base_dir, "--held-out", "1")
    assert code == 2 and "exactly two runs" in err
    code, _, err = cli("run", "sort:250-20", "--model", "random", "--base-model", "x")
    assert code == 2 and "--base-model" in err and "long-term" in err


def test_report_shows_the_memory_conditions_side_by_side(two_runs, tmp_path, cli):
    base_dir, tuned_dir = two_runs
    out = tmp_path / "r.html"
    code, _, err = cli("report", base_dir, tuned_dir, "--out", out)
    assert code == 0, err
    html = out.read_text()
    assert "memory conditions side by side" in html and "long term gain" in html  # headers: spaces, not underscores
    md = tmp_path / "r.md"
    code, _, err = cli("report", base_dir, tuned_dir, "--out", md)
    assert code == 0, err
    assert "sort · runs side by side" in md.read_text()
