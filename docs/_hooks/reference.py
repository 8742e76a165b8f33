"""MkDocs hook: the manual's reference parts are generated from the code, never typed by hand.

A page asks for a generated part with an HTML comment on a line of its own:

- `<!-- mindprobe:cli -->`: every command of the CLI, walked from its argparse tree (the same
  parsers `mindprobe` builds, so `run BENCH` and each benchmark's verbs list their own options);
- `<!-- mindprobe:benchmark NAME -->`: a benchmark's variants, what `--limit` counts, its options
  (from `mindprobe run NAME --help`) and the upstream files it pins (its `data_files`);
- `<!-- mindprobe:examples -->`: the examples of README.md and docs/ that CI does not run, with
  what each needs (tests/docs/examples.py finds them).

A flag without help text stops the build (`UndocumentedFlag`); tests/docs/test_reference.py
runs the same generator, so the test suite fails too.
"""

from __future__ import annotations

import argparse
import importlib.util
import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
MARKER = re.compile(r"^<!-- mindprobe:(\w+)(?: ([\w-]+))? -->$", re.M)


class UndocumentedFlag(Exception):
    """A CLI flag has no help text: the reference would have nothing to say about it."""


def _escape(text: str, table: bool = False) -> str:
    """Help text as Markdown text: angle brackets outside `code` shown, not taken for HTML (and
    in a table cell, `|` kept in its cell)."""
    parts = text.split("`")
    for i in range(0, len(parts), 2):
        parts[i] = parts[i].replace("<", "&lt;").replace(">", "&gt;")
    out = "`".join(parts)
    return out.replace("|", "\\|") if table else out


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """A parser's sub-commands, each once (aliases left out), in the order they were added."""
    out: dict[str, argparse.ArgumentParser] = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            seen: set[int] = set()
            for name, sub in action.choices.items():
                if id(sub) not in seen:
                    seen.add(id(sub))
                    out[name] = sub
    return out


def _flag(action: argparse.Action) -> str:
    if not action.option_strings:
        return action.metavar or action.dest
    flags = ", ".join(action.option_strings)
    if action.nargs == 0:
        return flags
    metavar = action.metavar or (
        "{" + ",".join(map(str, action.choices)) + "}" if action.choices else action.dest.upper())
    if isinstance(metavar, tuple):
        metavar = " ".join(metavar)
    return f"{flags} [{metavar}]" if action.nargs == "?" else f"{flags} {metavar}"


def _arguments(parser: argparse.ArgumentParser, where: str) -> list[str]:
    """One list per argument group: `flag`: help (required and default stated)."""
    formatter = parser._get_formatter()
    lines: list[str] = []
    for group in parser._action_groups:
        actions = [a for a in group._group_actions
                   if not isinstance(a, argparse._SubParsersAction | argparse._HelpAction)
                   and a.help is not argparse.SUPPRESS]
        if not actions:
            continue
        lines.append(f"**{_escape(group.title or 'options')}**\n")
        for a in actions:
            if not a.help:
                raise UndocumentedFlag(f"`{where}`: {_flag(a)} has no help text; give it one "
                                       "(src/mindprobe/cli.py or the benchmark's options)")
            text = formatter._expand_help(a)
            extra = " *(required)*" if a.required and a.option_strings else ""
            lines.append(f"- `{_flag(a)}`{extra}: {_escape(text)}")
        lines.append("")
    return lines


def _command(parser: argparse.ArgumentParser, title: str, level: int) -> list[str]:
    out = [f"{'#' * level} {title}", ""]
    if parser.description:
        out += [_escape(" ".join(parser.description.split())), ""]
    out += _arguments(parser, title)
    if parser.epilog:
        out += ["```text", parser.epilog.strip("\n"), "```", ""]
    return out


def cli_reference() -> str:
    """The whole CLI as Markdown, from the parsers `mindprobe` itself builds."""
    from mindprobe.cli import build_parser
    from mindprobe.commands.verb_parsers import declared_verbs
    from mindprobe.registry import BENCHMARKS

    top = build_parser([])
    out = ["`mindprobe [--version] [--debug] COMMAND ...`", "",
           _escape(" ".join((top.description or "").split())), ""]
    # the project's own CLI: a plugin installed where the manual is built adds nothing here
    own = [b for b, info in BENCHMARKS.items() if info.source == "mindprobe"]
    verbs = {verb: {b: text for b, text in by.items() if b in own}
             for verb, by in declared_verbs().items()}
    for name, sub in _subparsers(top).items():
        if name in verbs and not verbs[name]:  # a verb only plugins declare
            continue
        if name == "profile":  # its long form (the sizes table) is what --help prints
            sub = _subparsers(build_parser(["profile", "--help"]))["profile"]
        out += _command(sub, f"mindprobe {name}", 2)
        for child, parser in _subparsers(sub).items():
            out += _command(parser, f"mindprobe {name} {child}", 3)
        per_bench = [b for b in own if name in ("run", "analyse") or b in verbs.get(name, {})]
        if name == "analyze":
            continue
        for bench in per_bench:
            parser = _subparsers(build_parser([name, bench]))[name]
            if name == "run":  # the common options are listed once, under `mindprobe run`
                parser._action_groups = [g for g in parser._action_groups
                                         if g.title == f"{bench} options"]
            out += _command(parser, f"mindprobe {name} {bench}", 3)
    return "\n".join(out)


def _upstream_files(bench: str) -> list[str]:
    from mindprobe.registry import get_benchmark

    files = list(get_benchmark(bench).data_files)
    if not files:
        return []
    out = ["| file | fetched from | pinned by |", "|---|---|---|"]
    for f in files:
        pin = f"sha256 `{f.sha256[:12]}…`" if f.sha256 else (
            f"git blob `{f.git_blob[:12]}…`" if f.git_blob else "—")
        url = f"<{f.url}>" if f.url else "—"
        optional = " (with `--all`)" if f.optional else ""
        out.append(f"| `{f.relpath}`{optional} | {url} | {pin} |")
    return out


def benchmark_reference(bench: str) -> str:
    """A benchmark's variants, `--limit` unit, options and pinned files, from the code."""
    from mindprobe.cli import build_parser
    from mindprobe.registry import BENCHMARKS

    info = BENCHMARKS[bench]
    out = [f"**Variants** (`mindprobe run {bench}:VARIANT`; default `{info.default_variant}`)", ""]
    out += ["| variant | what it runs |", "|---|---|"]
    out += [f"| `{v}` | {_escape(text, table=True)} |" for v, text in info.variants.items()]
    out += [f"| `{g}` | every one of {', '.join(f'`{m}`' for m in members)} |"
            for g, members in info.variant_groups.items()]
    out += ["", f"`--limit N` runs only {_escape(info.limit)}.", ""]
    parser = _subparsers(build_parser(["run", bench]))["run"]
    parser._action_groups = [g for g in parser._action_groups if g.title == f"{bench} options"]
    out += _arguments(parser, f"mindprobe run {bench}")
    files = _upstream_files(bench)
    if files:
        out += ["**Pinned files** (`mindprobe data fetch " + bench + "`; each load is verified "
                "against its hash)", ""] + files + [""]
    return "\n".join(out)


def _examples_module() -> Any:
    path = ROOT / "tests" / "docs" / "examples.py"
    spec = importlib.util.spec_from_file_location("mindprobe_doc_examples", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def examples_listing() -> str:
    """The examples CI does not run, grouped by what they need."""
    ex = _examples_module()
    blocks = ex.collect(ROOT)
    run = [b for b in blocks if b.runs]
    unrun = [b for b in blocks if b.needs]
    out = [f"CI runs **{len(run)}** examples; **{len(unrun)}** need what CI lacks:", ""]
    out += ["| page | line | needs | first line |", "|---|---|---|---|"]
    for b in unrun:
        first = b.code.strip().splitlines()[0] if b.code.strip() else ""
        out.append(f"| `{b.page}` | {b.line} | {', '.join(b.needs)} | "
                   f"`{first[:60].replace('|', '¦')}` |")
    return "\n".join(out)


def render(kind: str, arg: str | None) -> str:
    if kind == "cli":
        return cli_reference()
    if kind == "benchmark" and arg:
        return benchmark_reference(arg)
    if kind == "examples":
        return examples_listing()
    raise ValueError(f"unknown generated part: {kind} {arg or ''}")


def expand(markdown: str) -> str:
    return MARKER.sub(lambda m: render(m.group(1), m.group(2)), markdown)


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    return expand(markdown)
