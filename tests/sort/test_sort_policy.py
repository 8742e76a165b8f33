"""Issue 22, observations 4 and 8 (SORT): chance beside the majority-answer baseline and the
answers given; `analyse --run IN --run NO` with a paired interval and test; sweeps that state
their rule, report ties and the winner's margin; `sweep sort:VARIANT` and `--dry-run`."""

from __future__ import annotations

from mindprobe.benchmarks.sort.sweep import choose


def _run(cli, tmp_path, data, *extra):
    return cli("run", "sort:250-20", "--model", "random", "--data-dir", data, "--books",
               "73017", "--runs-dir", tmp_path / "runs", "--json", *extra)


def test_baseline_line_names_majority_answer_and_distribution(cli, tmp_path, sort_data):
    code, doc, err = _run(cli, tmp_path, sort_data, "--limit", 40)
    assert code == 0, err
    line = next(n for n in doc["notes"] if n.startswith("chance "))
    assert "majority-answer baseline" in line and "(always " in line
    assert "answers given: A " in line and "%, B " in line


def test_analyse_in_vs_no_context_gives_paired_interval_and_test(cli, tmp_path, sort_data):
    for ctx in ("in-context", "no-context"):
        code, _, err = _run(cli, tmp_path, sort_data, "--limit", 30, "--condition", ctx)
        assert code == 0, err
    runs = sorted((tmp_path / "runs" / "sort" / "250-20").iterdir())
    code, doc, err = cli("analyse", "sort", *[a for r in runs for a in ("--run", r)], "--json")
    assert code == 0, err
    (d,) = doc["paired"]["tables"]["paired"]  # issue 27's table, on core's paired machinery
    assert d["n"] == 30 and d["ci_low"] <= d["difference"] <= d["ci_high"]
    assert 0 <= d["p_mcnemar"] <= 1 and "bootstrap" in doc["paired"]["headline"]["ci_method"]


def test_sweep_reports_a_tie_and_picks_by_the_stated_rule():
    rows = [{"prompt": p, "accuracy": 0.5, "n": 4, "run": None}
            for p in ("prompt_0", "prompt_1", "prompt_2")]
    recs = {p: [{"row_id": i, "correct": i % 2 == 0} for i in range(4)] for p in
            ("prompt_0", "prompt_1", "prompt_2")}
    best, res = choose(rows, recs)
    assert best == "prompt_0" and res.detail["tied"] == ["prompt_0", "prompt_1", "prompt_2"]
    assert any("3 prompts tie at 50.0%" in w for w in res.warnings)
    assert any(n.startswith("rule: highest validation accuracy") for n in res.notes)
    margin = res.detail["margin"]
    assert margin["diff"] == 0.0 and margin["low"] <= 0 <= margin["high"]


def test_sweep_with_variant_and_dry_run(cli, tmp_path, sort_data):
    code, doc, err = cli("sweep", "sort:250-20", "--model", "random", "--data-dir", sort_data,
                         "--books", "73017", "--prompts", "prompt_0,prompt_5", "--limit", 4,
                         "--runs-dir", tmp_path, "--dry-run", "--json")
    assert code == 0, err
    assert "Traceback" not in err and doc["dry_run"] is True
    assert doc["prompts"] == ["prompt_0", "prompt_5"]
    code, doc, err = cli("sweep", "sort:250-20", "--model", "random", "--data-dir", sort_data,
                         "--books", "73017", "--prompts", "prompt_0,prompt_5", "--limit", 6,
                         "--runs-dir", tmp_path, "--json")
    assert code == 0, err
    assert doc["rule"].startswith("highest validation accuracy") and doc["margin"] is not None


def test_rows_without_answer_are_invalid_with_their_kind():
    from mindprobe.benchmarks.sort.report import invalid_kinds

    rows = [{"answer": "X", "raw_answer": "A or B", "method": "text"},
            {"answer": "X", "raw_answer": "no idea", "method": "text"},
            {"answer": "X", "raw_answer": "", "method": "logprobs"},
            {"answer": "A", "raw_answer": "A", "method": "text"}]
    assert invalid_kinds(rows) == {"both labels": 1, "neither label": 1,
                                   "neither label in the top-20": 1}
