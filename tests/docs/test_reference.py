"""The manual's generated parts (docs/_hooks/reference.py) and the facts pages state about the
repository: the CLI reference covers every command and flag and refuses a flag without help,
each benchmark's reference comes from its code, `run BENCH --help` puts the benchmark's own
options first, and every script and test a page names exists."""

from __future__ import annotations

import argparse
import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

from mindprobe.cli import build_parser
from mindprobe.registry import BENCHMARKS

ROOT = Path(__file__).resolve().parents[2]


def _hooks():
    spec = importlib.util.spec_from_file_location("mindprobe_doc_hooks",
                                                  ROOT / "docs" / "_hooks" / "reference.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


HOOKS = _hooks()


def test_cli_reference_covers_every_command_and_flag():
    text = HOOKS.cli_reference()
    top = build_parser([])
    for name in HOOKS._subparsers(top):
        assert f"## mindprobe {name}\n" in text, name
    for bench in BENCHMARKS:
        section = text.split(f"### mindprobe run {bench}\n", 1)[1].split("\n#", 1)[0]
        parser = HOOKS._subparsers(build_parser(["run", bench]))["run"]
        own = [a for g in parser._action_groups if g.title == f"{bench} options"
               for a in g._group_actions]
        assert own, bench
        for action in own:
            assert f"`{HOOKS._flag(action)}`" in section, (bench, action.option_strings)
    for flag in ("--model", "--limit", "--data-dir", "--dry-run"):  # common options, once
        assert text.count(f"`{flag}") >= 1
    assert "### mindprobe sweep sort" in text and "### mindprobe data fetch" in text


def test_a_flag_without_help_fails_the_reference():
    parser = argparse.ArgumentParser(prog="x")
    parser.add_argument("--documented", help="says what it does")
    parser.add_argument("--silent")
    with pytest.raises(HOOKS.UndocumentedFlag, match="--silent"):
        HOOKS._command(parser, "x", 2)


def test_benchmark_reference_comes_from_the_code():
    for bench, info in BENCHMARKS.items():
        text = HOOKS.benchmark_reference(bench)
        for variant in info.variants:
            assert f"| `{variant}` |" in text
        assert f"{bench} options" in text
    assert "sha256" in HOOKS.benchmark_reference("worldsense")


def test_every_generated_marker_is_known():
    for page in (ROOT / "docs").rglob("*.md"):
        for m in HOOKS.MARKER.finditer(page.read_text()):
            assert HOOKS.render(m.group(1), m.group(2)), page


def test_run_help_lists_the_benchmarks_own_options_first():
    out = subprocess.run([sys.executable, "-m", "mindprobe.cli", "run", "worldsense", "--help"],
                         capture_output=True, text=True, timeout=60).stdout
    own, common = out.index("worldsense options:"), out.index("common options:")
    assert own < common
    assert own < out.index("\n  --prompting", own) < common < out.index("\n  --model MODEL", own)


def test_performance_names_every_bench_script():
    page = (ROOT / "docs" / "performance.md").read_text()
    named = set(re.findall(r"bench/(\w+\.py)", page))
    scripts = {p.name for p in (ROOT / "bench").glob("*.py")}
    assert named == scripts, (named ^ scripts)


def test_tests_and_files_named_by_the_pages_exist():
    for page in [ROOT / "README.md", *(ROOT / "docs").rglob("*.md")]:
        for path in re.findall(r"`(tests/[\w/]+\.py)`", page.read_text()):
            assert (ROOT / path).is_file(), f"{page.name} names {path}"
        for short in re.findall(r"`(test_\w+\.py)`", page.read_text()):
            assert list((ROOT / "tests").rglob(short)), f"{page.name} names {short}"
