"""A third-party benchmark: the manual's "Writing a benchmark" example, as its own package with
entry-point metadata on sys.path, is listed, runs with `mindprobe run` and `evaluate()` against
the local OpenAI-compatible server, resumes after Ctrl-C, and shows in the report. A broken
plugin is one warning, never a crash."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import pytest

import mindprobe
from mindprobe.core.store import read_records
from mindprobe.registry import BENCHMARKS
from mindprobe.testing import TestServer

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "writing-a-benchmark.md"


def _readme_example() -> tuple[str, str]:
    """The example's Python module and its entry-point line, as the manual shows them."""
    text = GUIDE.read_text()
    code = re.search(r'```python title="add-bench/add_bench/task.py"\n(.*?)```', text, re.S)
    entry = re.search(r'```toml title="add-bench/pyproject.toml"\n.*?\n(add = .*?)\n```', text,
                      re.S)
    return code.group(1), entry.group(1)


@pytest.fixture
def site(tmp_path, monkeypatch):
    """A folder holding the plugin package `add_bench` and a broken one, each with its
    `*.dist-info/entry_points.txt`, put on sys.path (and on PYTHONPATH for subprocesses)."""
    code, toml_line = _readme_example()
    ((name, target),) = tomllib.loads(toml_line).items()
    entry = f"{name} = {target}"  # entry_points.txt, as pip writes it from pyproject.toml
    assert len(code.splitlines()) <= 45  # "a 30-line benchmark" (plus imports and blanks)
    root = tmp_path / "site"
    (root / "add_bench").mkdir(parents=True)
    (root / "add_bench" / "__init__.py").write_text("")
    (root / "add_bench" / "task.py").write_text(code)
    (root / "add_more").mkdir()
    (root / "add_more" / "__init__.py").write_text("")
    (root / "add_more" / "task.py").write_text(ADD_MORE)
    (root / "add_more" / "verbs.py").write_text(ADD_MORE_VERBS)
    for dist, ep in (("add_bench", entry), ("broken_bench", "broken = no_such_pkg.task:Nope"),
                     ("add_more", "addmore = add_more.task:AddMoreBenchmark")):
        info = root / f"{dist}-0.1.dist-info"
        info.mkdir()
        info.joinpath("METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\n"
                                             "Version: 0.1\n")
        info.joinpath("entry_points.txt").write_text(f"[mindprobe.benchmarks]\n{ep}\n")
    (root / "sum_model.py").write_text(SUM_MODEL)
    info = root / "sum_model-0.1.dist-info"
    info.mkdir()
    info.joinpath("METADATA").write_text("Metadata-Version: 2.1\nName: sum_model\nVersion: 0.1\n")
    info.joinpath("entry_points.txt").write_text("[mindprobe.models]\nsum = sum_model:build\n")
    monkeypatch.syspath_prepend(str(root))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        [str(root), *filter(None, [os.environ.get("PYTHONPATH")])]))
    BENCHMARKS.refresh()
    yield root
    monkeypatch.undo()
    BENCHMARKS.refresh()


#: A benchmark in its own package with everything optional a benchmark may bring: its own plot,
#: its own verb (`mindprobe tally addmore`, declared in its `verbs.py`), its paired score.
ADD_MORE = '''
from add_bench.task import AddBenchmark, AddOptions
from mindprobe.core.benchmark import PairedScore


class AddMoreBenchmark(AddBenchmark):
    name = "addmore"
    title = "arithmetic with a plot, a verb and a paired score"
    variants = {"small": "two numbers below 100"}
    default_variant = "small"
    verbs = {"tally": "count a run's right sums"}
    Options = AddOptions
    paired_score = PairedScore("correct", True, "right sum", describe=("answer",))
    plotted_tables = ("answers",)

    def plots(self, runs, results):
        from mindprobe.report.svg import Series, bar_chart

        series = [Series(run.model_label, [sum(r.get("correct") is True for r in run.records)])
                  for run in runs]
        return [bar_chart(["right"], series, title="Sums right per model")] if runs else []
'''
ADD_MORE_VERBS = '''
from mindprobe.core.verbs import Arg, Verb


def tally(args, err):
    from mindprobe.core.store import load_run

    run = load_run(args.run, "addmore")
    right = sum(r.get("correct") is True for r in run.records)
    print(f"{args.label}: {right} right of {len(run.records)}")
    return 0 if right else 1


VERBS = [Verb("tally", tally, (Arg("--run", required=True, help="the run to count"),
                                Arg("--label", default="sums", help="what to call them")))]
'''

#: A model backend in its own package: `sum:BIAS` answers a + b + BIAS.
SUM_MODEL = '''
import re
from mindprobe.models.base import Completion, Model


class SumModel(Model):
    cacheable = False

    def __init__(self, spec, bias):
        self.spec, self.label, self.bias = spec, "sum", bias

    async def complete(self, request, ctx):
        a, b = map(int, re.findall(r"\\d+", request.messages[-1]["content"])[:2])
        return Completion(text=str(a + b + self.bias))


def build(spec, rest, settings):
    return SumModel(spec, int(rest or 0))
'''


def _adder(body: dict) -> str:
    """Right for even first numbers, wrong for odd ones: accuracy is neither 0 nor 1."""
    a, b = map(int, re.search(r"What is (\d+) \+ (\d+)", body["messages"][-1]["content"])
               .groups())
    return str(a + b if a % 2 == 0 else a + b + 1)


def _mindprobe(*args, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mindprobe.cli", *map(str, args)],
                          capture_output=True, text=True, timeout=120, **kw)


@pytest.mark.slow
def test_the_plugin_is_listed_and_a_broken_one_is_one_warning(site):
    out = _mindprobe("list", "--json")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["add"]["title"].startswith("arithmetic") and "worldsense" in doc
    assert out.stderr.count("warning") == 1 and "'broken'" in out.stderr
    assert "no_such_pkg" in out.stderr and "Traceback" not in out.stderr
    probe = ("import sys\nfrom mindprobe.cli import main\ntry:\n    main(['run', 'add', "
             "'--help'])\nexcept SystemExit:\n    pass\nprint('HEAVY', 'pandas' in sys.modules)")
    shown = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                           timeout=60).stdout
    assert "--n-items" in shown and "HEAVY False" in shown  # read without importing it
    bad = _mindprobe("run", "add:large", "--model", "random")
    assert bad.returncode == 2 and "unknown variant 'large' of add" in bad.stderr


@pytest.mark.slow
def test_the_plugin_runs_resumes_and_reports(site, cli, tmp_path):
    runs = tmp_path / "runs"
    with TestServer(responder=_adder, latency=0.05) as srv:
        model = f"openai:test-model@{srv.base_url}"
        args = ["run", "add", "--n-items", 60, "--model", model, "--runs-dir", runs,
                "--concurrency", 2, "--no-cache"]
        proc = subprocess.Popen([sys.executable, "-m", "mindprobe.cli", *map(str, args)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env={**os.environ, "MINDPROBE_CACHE_DIR": str(tmp_path / "c")})
        records = runs / "add" / "small" / "basic___test-model" / "records.jsonl"
        deadline = time.time() + 60
        while time.time() < deadline and not (records.is_file()
                                              and records.read_bytes().count(b"\n") >= 5):
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
        assert proc.returncode == 130 and "Resume with:" in err, err
        assert 5 <= len(read_records(records)) < 60
        code, doc, err = cli(*args, "--json")
        assert code == 0, err
        assert len(read_records(records)) == 60
        head = doc["headline"]
        assert head["name"] == "accuracy" and head["n"] == 60 and 0 < head["value"] < 1
        res = mindprobe.evaluate("add", model, options={"n_items": 60}, runs_dir=tmp_path / "api",
                                 cache=False, progress=False)
    assert res.to_json()["headline"] == head
    assert res.tables["answers"].frame.shape == (60, 3)
    assert mindprobe.load_run(res.run_dir).results().to_json()["headline"] == head
    code, _, err = cli("report", runs, "--out", tmp_path / "report.html")
    assert code == 0, err
    html = (tmp_path / "report.html").read_text()
    assert "arithmetic: the sum of two numbers" in html and "add" in html


def test_a_model_backend_from_a_plugin(site, tmp_path):
    from mindprobe.errors import ModelError
    from mindprobe.models import parse_model_spec

    res = mindprobe.evaluate("add", "sum:0", options={"n_items": 4}, runs_dir=tmp_path,
                             progress=False)
    assert res.headline.value == 1.0 and res.run_dir.name == "basic___sum"
    wrong = mindprobe.evaluate("add", "sum:1", options={"n_items": 4}, runs_dir=tmp_path / "b",
                               progress=False)
    assert wrong.headline.value == 0.0
    with pytest.raises(ModelError, match="unknown model spec 'nosuch:x'"):
        parse_model_spec("nosuch:x")



def test_a_plugin_brings_its_verb_plot_and_paired_score(site, cli, tmp_path):
    """What a benchmark declares (a verb, a plot, a paired score) reaches the CLI and the
    report without mindprobe naming it anywhere."""
    top = _mindprobe("--help")
    assert re.search(r"tally\s+count a run's right sums \(addmore\)", top.stdout), top.stdout
    shown = _mindprobe("tally", "addmore", "--help")
    assert shown.returncode == 0 and "--run RUN" in shown.stdout and "--label" in shown.stdout
    refused = _mindprobe("tally", "add", "--run", tmp_path)
    assert refused.returncode == 2 and "add has no `tally`" in refused.stderr
    runs = tmp_path / "runs"
    right = mindprobe.evaluate("addmore", "sum:0", options={"n_items": 6}, runs_dir=runs,
                               progress=False)
    with TestServer(responder=_adder) as srv:
        mindprobe.evaluate("addmore", f"openai:test-model@{srv.base_url}", options={"n_items": 6},
                           runs_dir=runs, cache=False, progress=False)
    code, out, err = cli("tally", "addmore", "--run", right.run_dir, "--label", "sums")
    assert code == 0 and "sums: 6 right of 6" in out, err
    code, _, err = cli("report", runs, "--out", tmp_path / "report.html")
    assert code == 0, err
    html = (tmp_path / "report.html").read_text()
    assert "Sums right per model" in html  # its own plot
    assert "(right sum)" in html  # its paired score, on the comparison of the two models


def test_the_manuals_cli_reference_is_mindprobes_own(site):
    """Building the manual where a plugin is installed adds none of its verbs or benchmarks to
    the project's CLI reference (docs/_hooks/reference.py)."""
    import importlib.util

    hooks = Path(__file__).resolve().parents[2] / "docs" / "_hooks" / "reference.py"
    spec = importlib.util.spec_from_file_location("mindprobe_doc_hooks_plugin", hooks)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert "addmore" in BENCHMARKS and _mindprobe("tally", "addmore", "--help").returncode == 0
    text = module.cli_reference()
    assert "## mindprobe tally" not in text and "tally" not in text
    assert "mindprobe run add\n" not in text and "mindprobe run addmore" not in text
    assert "### mindprobe run worldsense\n" in text and "### mindprobe sweep sort\n" in text


def test_a_plugins_run_prints_its_headline(site, cli, tmp_path):
    """As a built-in benchmark's does: the one number the run is read by."""
    code, out, err = cli("run", "add", "--n-items", 6, "--model", "sum:0", "--runs-dir",
                         tmp_path / "runs")
    assert code == 0, err
    assert "headline: accuracy 100.0%" in out + err and "(n=6)" in out + err


def test_a_data_less_plugin_is_never_named_among_what_to_fetch(site, cli, tmp_path,
                                                               monkeypatch):
    monkeypatch.setenv("MINDPROBE_DATA_DIR", str(tmp_path / "cache"))
    code, _, err = cli("published")
    assert code == 2 and "--data-dir" in err, err
    fetch = " ".join(err.split()).split("`mindprobe data fetch ", 1)[1].split("`")[0].split()
    assert fetch == ["fanoutqa", "mr_gsm8k", "worldsense"]  # not add, addmore
