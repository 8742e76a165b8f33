"""`mindprobe report`: the page renders each run's Results (the numbers of `mindprobe analyse`),
the cognitive profile, paired comparisons, transcripts (escaped), provenance; md and latex."""

from __future__ import annotations

import json
import re
import shutil

import numpy as np
import pytest
from report_helpers import data_of, expanded, report, tables_of
from scipy import stats

from mindprobe.core.numbers import display
from mindprobe.core.results import Headline
from mindprobe.core.store import load_run
from mindprobe.report.collect import results_of
from mindprobe.report.profile import headline_cell
from mindprobe.testing import TestServer

SECTIONS = ("profile", "bench-worldsense", "comparisons", "transcripts", "provenance")


@pytest.fixture(scope="module")
def page(report_runs, tmp_path_factory):
    """The report of every session run (built once for the module)."""
    from mindprobe.cli import main

    out = tmp_path_factory.mktemp("page") / "report.html"
    code = main(["report", "--runs-dir", str(report_runs.root / "runs"), "--out", str(out),
                 "--price", "2.5,10"])
    assert code == 0
    return out.read_text(encoding="utf-8")


def _analyse(cli, run_dir) -> dict:
    bench = json.loads((run_dir / "manifest.json").read_text())["benchmark"]
    code, doc, err = cli("analyse", bench, "--run", run_dir, "--json")
    assert code == 0, err
    return doc


def test_numbers_equal_analyse_json(cli, page, report_runs):
    """Headline and every table of every run: the data block equals `analyse --json`, and
    every rendered cell is that number formatted as the terminal formats it."""
    data = data_of(page)
    tables = tables_of(page)
    by_dir = {r["dir"]: r for r in data["runs"]}
    assert len(by_dir) == len(report_runs.dirs)
    for run_dir in report_runs.dirs.values():
        doc = _analyse(cli, run_dir)
        key = str(run_dir.relative_to(report_runs.root))  # no path of this machine
        got = by_dir[key]["results"]
        assert got["headline"] == doc["headline"]
        assert got["tables"] == doc["tables"]
        assert doc["tables"], run_dir
        slug = by_dir[key]["slug"]
        res = results_of(load_run(run_dir))
        for name in doc["tables"]:
            shown = tables[f"{slug}/{name}"]
            header, cells, _ = display(res.tables[name])  # the terminal's very cells
            assert shown[0] == header, name
            assert shown[1:] == cells, name


def test_sections_profile_and_missing(page, report_runs):
    """The curated profile: one row per model (random last), one column per benchmark with its
    metric, chosen setting and baselines; a benchmark a model has not run is —, never 0."""
    for section in SECTIONS:
        assert f'id="{section}"' in page
    profile = tables_of(page)["profile"]
    header = profile[0]
    assert header[0] == "model"  # benchmarks in the registry's order: by name
    assert any(h.startswith("worldsense accuracy · fresh · basic") for h in header[1:])
    assert [h.split()[0] for h in header[1:]] == sorted(h.split()[0] for h in header[1:])
    # the published rows (#36) stand beside the runs, labelled; the runs come first
    ran = [r[0] for r in profile[1:] if not r[0].endswith(" published")]
    assert ran == [report_runs.label, "random"]
    assert [r[0] for r in profile[1:]][:2] == ran
    rows = {r[0]: r for r in profile[1:]}
    data = data_of(page)
    rand = next(r for r in data["runs"] if r["benchmark"] == "worldsense"
                and r["model"] == "random")["results"]["headline"]
    shown = headline_cell(Headline(**rand))
    ws = next(i for i, h in enumerate(header) if h.startswith("worldsense"))
    assert f"chance 50.0% · majority answer 50.0% · random run {shown.split(' [')[0]}" in header[ws]
    assert rows["random"][ws].startswith(f"{shown} n=")
    if report_runs.ast:  # the scripted model ran one Already Said That variant of five
        col = next(i for i, h in enumerate(header) if h.startswith("already_said_that"))
        assert rows[report_runs.label][col] != "—"
        assert "first-letters · direct" in rows[report_runs.label][col]
    assert "<svg" in page and "</svg>" in page


def test_paired_comparison(page, report_runs):
    """WorldSense: the scripted model vs random on the same items, McNemar as scipy computes it
    from the records, a seeded bootstrap CI around the difference."""
    data = data_of(page)
    ws = next(c for c in data["comparisons"] if c["benchmark"] == "worldsense")
    recs = {}
    for key, d in report_runs.dirs.items():
        if key.startswith("worldsense/"):
            lines = (d / "records.jsonl").read_text().splitlines()
            recs[key.rsplit("/", 1)[1]] = {r["id"]: r["correct"] for r in map(json.loads, lines)}
    a, b = recs[report_runs.label], recs["random"]
    assert ws["n"] == len(a) == len(b)
    xa = np.array([a[i] for i in a], dtype=float)
    xb = np.array([b[i] for i in a], dtype=float)
    assert ws["diff"] == pytest.approx(xa.mean() - xb.mean())
    lo, hi = ws["ci"]
    assert lo <= ws["diff"] <= hi and hi - lo > 0
    n01, n10 = int(((xa == 1) & (xb == 0)).sum()), int(((xa == 0) & (xb == 1)).sum())
    assert ws["mcnemar_p_exact"] == pytest.approx(
        stats.binomtest(min(n01, n10), n01 + n10, 0.5).pvalue)
    assert ws["n_disagree"] == n01 + n10
    assert "item(s) where they disagree" in page
    if report_runs.mr:
        assert any(c["benchmark"] == "mr_gsm8k" for c in data["comparisons"])


def test_compare_flag_and_seeded(cli, report_runs, tmp_path):
    ws = report_runs.of("worldsense")
    args = [*ws, "--compare", "random", report_runs.label]
    first, _ = report(cli, *args, out=tmp_path / "a.html")
    again, _ = report(cli, *args, out=tmp_path / "b.html")
    c1, c2 = data_of(first)["comparisons"], data_of(again)["comparisons"]
    assert len(c1) == 1 and c1[0]["ci"] == c2[0]["ci"]  # seeded bootstrap
    assert c1[0]["a"].endswith("random")
    by_dirs, _ = report(cli, *ws, "--compare", ws[1], ws[0], out=tmp_path / "d.html")
    (c3,) = data_of(by_dirs)["comparisons"]
    assert c3["n"] == c1[0]["n"] and {c3["a"], c3["b"]} == {c1[0]["a"], c1[0]["b"]}
    code, _, err = cli("report", *ws, "--compare", "random", "nobody", "--out",
                       tmp_path / "c.html")
    assert code == 2 and "--compare nobody" in err


def test_transcripts_and_provenance(page, report_runs):
    assert 'data-filter="outcome"' in page and 'class="item"' in page
    assert re.search(r'data-outcome="(correct|wrong|invalid)"', page)
    if report_runs.ast:
        assert "MAIN TASK - " not in page  # packed: rendered when an item is opened
        assert "MAIN TASK - " in expanded(page)  # the chat of an Already Said That sample
    data = data_of(page)
    for run in data["runs"]:
        assert run["usage"]["model"]["requests"] > 0 and run["cost_usd"] is not None
    assert "mindprobe version" in page and "sampling / config" in page
    assert "$2.5 / $10 per M" in page
    for r in data["runs"]:
        if r["benchmark"] == "worldsense" and r["model"] == "random":
            manifest = json.loads((report_runs.root / "runs" / "worldsense" / "fresh" /
                                   "basic___random" / "manifest.json").read_text())
            assert json.dumps(manifest["data"], sort_keys=True) in page.replace("&quot;", '"')


def test_partial_run_says_how_partial(cli, report_runs, tmp_path):
    src = report_runs.dirs["worldsense/fresh/random"]
    part = tmp_path / "runs" / "worldsense" / "fresh" / "basic___random"
    shutil.copytree(src, part)
    lines = (part / "records.jsonl").read_text().splitlines(keepends=True)
    (part / "records.jsonl").write_text("".join(lines[:30]))
    html, _ = report(cli, part, out=tmp_path / "r.html")
    # the state `mindprobe runs` shows (`core.run_state`), and the headline's subset
    assert f"partial 30/{len(lines)}" in html and f"over 30 of {len(lines)} items" in html
    assert data_of(html)["runs"][0]["partial"] == f"partial 30/{len(lines)}"
    assert data_of(html)["runs"][0]["state"]["done"] == 30


def test_hostile_reply_is_escaped(cli, tmp_path):
    hostile = "<script>alert(1)</script><img src=x onerror=alert(2)>"
    with TestServer(reply=hostile) as srv:
        code, _, err = cli("run", "worldsense:fresh", "--model", f"openai:test-model@{srv.base_url}",
                           "--limit", 4, "--runs-dir", tmp_path / "runs", "--no-cache")
    assert code == 0, err
    html, _ = report(cli, "--runs-dir", tmp_path / "runs", out=tmp_path / "x.html")
    assert hostile not in expanded(html) and "<img src=x" not in expanded(html)
    assert ("&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(2)&gt;"
            in expanded(html))
    assert html.count("<script") == 3  # the data block, the transcripts, the page's script


def test_markdown_and_latex(cli, report_runs, tmp_path):
    ws = report_runs.of("worldsense")
    md, _ = report(cli, *ws, "--format", "md", out=tmp_path / "r.md")
    tex, _ = report(cli, *ws, "--format", "latex", out=tmp_path / "r.tex")
    assert md.startswith("# mindprobe report") and "## Cognitive profile" in md
    # the same curated profile table as the page: models as rows, benchmarks as columns
    assert "| model | worldsense: accuracy |" in md
    assert f"\n| {report_runs.label} | " in md and "\n| random | " in md
    assert "\n| baselines | chance 50.0% · majority answer 50.0% · random run " in md
    assert r"model & worldsense: accuracy \\" in tex
    assert r"\begin{tabular}" in tex and r"\toprule" in tex and r"\section*{worldsense}" in tex
    res = results_of(load_run(ws[0]))
    cells = display(next(iter(res.tables.values())))[1][0]
    assert "| " + " | ".join(cells) + " |" in md
    assert " & ".join(c.replace("_", r"\_").replace("–", "--") for c in cells) + r" \\" in tex
    assert "<" not in tex


@pytest.mark.parametrize("args, message", [
    (["--runs-dir", "{tmp}/empty"], "no runs found"),
    (["{ws}", "--out", "{tmp}"], "is a directory"),
    (["{ws}", "--out", "{tmp}/missing/r.html"], "does not exist"),
    (["{ws}", "--price", "cheap"], "--price expects IN,OUT"),
    (["{tmp}/nothing-here"], "no such run directory"),
])
def test_usage_errors(cli, report_runs, tmp_path, args, message):
    (tmp_path / "empty").mkdir()
    ws = str(report_runs.of("worldsense")[0])
    argv = [a.format(tmp=tmp_path, ws=ws) for a in args]
    if "--out" not in argv:
        argv += ["--out", str(tmp_path / "r.html")]
    code, _, err = cli("report", *argv)
    assert code == 2 and message in err, err
    assert "Traceback" not in err


@pytest.mark.slow
def test_worldsense_published_models(cli, report_runs, shared_data, tmp_path):
    """The paper's tables (the same numbers as `mindprobe analyse worldsense -t DIR --json`)
    and its models as labelled "published" rows of the profile, their headline computed by
    our own analysis and their source cited."""
    testset = shared_data("worldsense") / "test_set"
    if not (testset / "results").is_dir():
        pytest.skip(f"no upstream results files in {testset}")
    code, expected, err = cli("analyse", "worldsense", "-t", testset, "--json")
    assert code == 0, err
    html, _ = report(cli, *report_runs.of("worldsense"), "--references", testset,
                     out=tmp_path / "t.html")
    extra = data_of(html)["extra"]
    (name, doc), = extra.items()
    assert "published" in name
    assert doc["accuracy"] == expected["accuracy"] and doc["bias"] == expected["bias"]
    overall = {r["model"]: r for r in doc["tables"]["overall"]}
    gpt4 = expected["accuracy"]["basic/GPT4"]["ALL"]
    assert overall["GPT4"]["accuracy"] == pytest.approx(100 * gpt4["mean"])
    cells = {c for rows in tables_of(html).values() for row in rows for c in row}
    assert "90.3 (0.7)" in cells  # GPT4 on Infer.trivial, as the paper prints it
    profile = tables_of(html)["profile"]
    rows = {row[0]: row for row in profile[1:]}
    for model, paper in (("GPT3.5", "55.6"), ("GPT4", "75.6"), ("Llama2-chat", "56.2"),
                         ("Llama2-FT+1M", "77.4")):
        row = rows[f"{model} published"]  # the name, then its "published" badge
        assert row[1].startswith(f"{paper}%"), row  # as the paper's README prints it
        assert "basic___" + model + "___results.jsonl" in html  # the source, cited
    md = cli("report", *report_runs.of("worldsense"), "--references", testset, "--format",
             "md", "--out", tmp_path / "t.md")
    text = (tmp_path / "t.md").read_text()
    assert md[0] == 0 and "| GPT4 (published, worldsense) | 75.6% [" in text
