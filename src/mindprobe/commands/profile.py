"""`mindprobe profile`: flags -> a `ProfileRequest`; the plan and the profile printed here."""

from __future__ import annotations

import argparse
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mindprobe.commands.run_options import add_context_window, add_log_to
from mindprobe.errors import MindprobeError, UsageError

if TYPE_CHECKING:
    from rich.console import Console

SIZE_HELP = (
    "quick: seeded, stratified subsets sized for a 95% half-width of about ±5 points per "
    "headline (about 400 items where the headline is a proportion, worst case 98/sqrt(n)); "
    "standard: about ±2 points (about 2,400 items); paper: the full official sets and "
    "settings. Where the aim would cost about as much as the paper's set (a benchmark whose "
    "items are many requests each, or whose headline spreads widely), the benchmark trades "
    "precision for cost and says so below, with its worst-case half-width per size. The "
    "plan states each benchmark's half-width for its planned items before any completion is "
    "requested, and says where the data holds fewer items than the size runs")


DESCRIPTION = (
    "Run every benchmark in its paper's default setting against --model as one unit: a plan "
    "(items, requests, tokens, cost, stated 95% half-widths) first, the runs at once under "
    "one --concurrency budget in one profile folder (<runs-dir>/profile-<size>___<model>, with "
    "profile.json), then one report. Re-running resumes (items that ended in an error are "
    "asked again); a finished profile sends nothing. On the embedded model (--model local) "
    "--size quick takes tens of minutes on a 2-core machine (the manual's performance page "
    "gives the measured time). " + SIZE_HELP + ".")


def size_epilog() -> str:
    """Each profiled benchmark's setting per size and why (imports the benchmarks: only for
    `mindprobe profile --help`)."""
    from mindprobe.core.benchmark import PROFILE_SIZES
    from mindprobe.profiling.plan import Entry, profiled

    lines = ["sizes per benchmark:"]
    first = dict(profiled(PROFILE_SIZES[0]))
    for name, ps in first.items():
        by_size = {s: dict(profiled(s)).get(name) for s in PROFILE_SIZES}
        settings = "; ".join(f"{s}: {Entry(name, x).setting}" for s, x in by_size.items() if x)
        lines.append(textwrap.fill(f"{settings}. {ps.rationale}.", 92, initial_indent="  ",
                                   subsequent_indent="    "))
    return "\n".join(lines)


def add_profile_parser(sub: Any, detailed: bool = False) -> argparse.ArgumentParser:
    from mindprobe.core.benchmark import PROFILE_SIZES

    p = sub.add_parser(
        "profile", help="one model's whole cognitive profile: every benchmark, one report",
        description=textwrap.fill(DESCRIPTION, 92) if detailed else DESCRIPTION,
        epilog=size_epilog() if detailed else None,
        formatter_class=argparse.RawDescriptionHelpFormatter if detailed else
        argparse.HelpFormatter)
    p.add_argument("--model", help="model spec, see `mindprobe models`")
    p.add_argument("--size", choices=PROFILE_SIZES, default="quick", help="how many items "
                   "(default quick; see above)")
    p.add_argument("--judge", metavar="SPEC", help="judge model for the benchmarks that "
                   "grade with one (the plan names them)")
    p.add_argument("--runs-dir", default="runs", help="where the profile folder goes "
                   "(default ./runs)")
    p.add_argument("--out", help="the report file (default <profile folder>/report.html; "
                   ".md for Markdown tables)")
    p.add_argument("--data-dir", help="the data root: one folder of official files per "
                   "benchmark (the layout of shared/data); each run records its folder and "
                   "is scored from it")
    p.add_argument("-O", "--option", action="append", metavar="BENCH.KEY=VALUE",
                   help="a benchmark option, as `mindprobe run BENCH --help` lists them "
                   "(--some-flag is some_flag), e.g. -O BENCH.scoring=text or -O "
                   "BENCH.data_file=PATH (a benchmark whose official file is missing says "
                   "which)")
    p.add_argument("--concurrency", type=int, help="requests in flight over all benchmarks "
                   "(default per backend)")
    p.add_argument("--seed", type=int, help="seed of the subsets and sampling (default per "
                   "benchmark)")
    p.add_argument("--no-cache", action="store_true", help="do not read or write the response "
                   "cache")
    p.add_argument("--cache", help="response cache file")
    p.add_argument("--timeout", type=float, default=300.0, help="seconds per request")
    p.add_argument("--max-attempts", type=int, default=6, help="attempts per request")
    add_context_window(p)
    p.add_argument("--price", metavar="IN,OUT", help="USD per million prompt,completion "
                   "tokens: the plan shows the cost")
    p.add_argument("--dry-run", action="store_true", help="print the plan and stop (no "
                   "completion is requested; a model with a tokenizer, e.g. a llama.cpp or "
                   "vLLM server's /tokenize, counts a sample of the prompts)")
    p.add_argument("--strict", action="store_true", help="refuse to start when a benchmark "
                   "lacks data or cannot run for this model")
    p.add_argument("--json", action="store_true", help="print only JSON on stdout")
    add_log_to(p, "the profile (one parent run, one nested run per benchmark)")
    p.add_argument("--force", action="store_true", help="with --compare: replace an "
                   "existing --out file (the report of a profile is always regenerated)")
    p.add_argument("--compare", nargs="+", metavar="PROFILE",
                   help="profile folders to compare (no run): a leaderboard, one row per "
                   "model with each benchmark's headline and 95%% CI (written as CSV or JSON "
                   "to --out FILE.csv|.json); with two folders of one size also B − A, "
                   "benchmark by benchmark with paired intervals")
    return p


def bench_options(pairs: list[str] | None) -> dict[str, dict[str, Any]]:
    from mindprobe.core.options import parse_assignments

    out: dict[str, dict[str, Any]] = {}
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        bench, dot, name = key.partition(".")
        if not sep or not dot or not bench or not name:
            raise UsageError(f"-O expects BENCH.KEY=VALUE (e.g. BENCH.shots=3), got {pair!r}")
        out.setdefault(bench, {}).update(parse_assignments([f"{name}={value}"]))
    return out


def cmd_profile(args: argparse.Namespace, err: Console) -> int:
    from mindprobe.core.output import emit_json
    from mindprobe.core.secrets import command_line
    from mindprobe.engine.settings import Reporter, RunSettings
    from mindprobe.profiling import run as prun
    from mindprobe.profiling.tables import plan_rows, profile_rows, skipped_rows
    from mindprobe.report.provenance import parse_price

    if args.force and not (args.compare and args.out):
        raise UsageError("--force replaces an existing leaderboard file: it goes with "
                         "--compare … --out FILE (a profile's report is always regenerated)")
    if args.compare:
        return _compare(args, err)
    if not args.model:
        raise UsageError("--model is required (or --compare A B)")
    if args.out:  # refused before the profile runs, not after
        from mindprobe.core.files import check_target

        check_target(Path(args.out), replace=True, flag="--out")
    targets: list[Any] = []
    if args.log_to:  # the trackers' modules only where one is named (~35 ms of a plan)
        from mindprobe.tracking import parse_target

        targets = [parse_target(t) for t in args.log_to]
    if not args.dry_run:
        from mindprobe.tracking import check_targets

        check_targets(targets)  # before the profile starts: exit 2, nothing run
    run = RunSettings(model=args.model, concurrency=args.concurrency, seed=args.seed,
                      runs_dir=args.runs_dir, cache=not args.no_cache, cache_file=args.cache,
                      timeout=args.timeout, max_attempts=args.max_attempts, debug=args.debug,
                      context_window=args.context_window, command=command_line(),
                      dry_run=args.dry_run)
    req = prun.ProfileRequest(run=run, size=args.size, judge=args.judge,
                              data_root=Path(args.data_dir) if args.data_dir else None,
                              options=bench_options(args.option),
                              out=Path(args.out) if args.out else None, price=args.price,
                              strict=args.strict)
    reporter = Reporter(err)
    prof = prun.plan(req, reporter)
    price = parse_price(args.price)
    rows = plan_rows(prof.entries, (price.prompt, price.completion) if price else None)
    print_plan(err, prof, rows)
    if args.dry_run:
        doc = {"profile": str(prof.dir), "size": prof.size, "dry_run": True,
               "tokens counted": prof.counted, "timing": prof.timing,
               "engine speed": prof.speed and prof.speed.__dict__, "plan": rows,
               "fetch": prof.fetch_command}
        try:
            prun.nothing_runs(prof)  # exit 2, as the run itself would
        except MindprobeError as exc:
            if not args.json:
                raise
            err.print(f"error: {exc}", markup=False, highlight=False)
            emit_json(True, {**doc, "error": str(exc), "exit_code": 2})  # one document
            return 2
        emit_json(args.json, doc)
        return 0
    prun.execute(prof, req, reporter)
    if targets:
        from mindprobe.tracking import log_profile

        for key in log_profile(prof.dir, targets, reporter.warn, args.verbose):
            err.print(f"logged {prof.dir} to {key}", soft_wrap=True, markup=False,
                      highlight=False)
    prows = profile_rows(prof.entries, prof.results)
    skipped = skipped_rows(prof.entries, prof.results)
    print_profile(err if args.json else None, prof, prows, skipped)
    err.print(f"wrote {prof.report}", highlight=False)
    emit_json(args.json, {"profile": str(prof.dir), "size": prof.size, "plan": rows,
                          "results": prows, "not_run": skipped, "report": str(prof.report)})
    return prof.code


def _num(v: Any, digits: int = 0) -> str:
    if v is None:
        return "–"
    return f"{v:,.{digits}f}" if isinstance(v, float) else f"{v:,}"


def _tokens(v: Any) -> str:
    """A token count in three significant digits, `74.2k`, `1.03M` (exact below 10,000)."""
    if v is None:
        return "–"
    for scale, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(v) >= max(scale, 10_000):
            x = v / scale
            return f"{x:.{max(0, 2 - len(str(int(abs(x)))) + 1)}f}{suffix}"
    return f"{v:,}"


def _duration(seconds: float | None) -> str:
    """`45 s`, `12 min`, `3.4 h`."""
    if seconds is None:
        return "–"
    if seconds < 120:
        return f"{seconds:.0f} s"
    return f"{seconds / 60:.0f} min" if seconds < 7200 else f"{seconds / 3600:.1f} h"


def _pair(bound: Any, expected: Any, fmt: Any = _num) -> str:
    """`12,000` when bound and expected agree, else `~3,000 ≤12,000`."""
    if bound is None or expected is None or bound == expected:
        return fmt(bound)
    return f"~{fmt(expected)} ≤{fmt(bound)}"


def print_plan(err: Console, prof: Any, rows: list[dict[str, Any]]) -> None:
    """The plan as one table (core/terminal.py fits it to the terminal) and its notes."""
    from mindprobe.core.terminal import print_lines, print_table

    cols = ["setting", "items", "requests", "tokens: prompt, prefill, reply", "±95% stated"]
    timed = any(r.get("expected seconds") is not None for r in rows)
    if timed:
        cols.append("time ~")
    priced = any("cost (USD)" in r for r in rows)
    if priced:
        cols.append("cost USD")
    cols.append("status")
    cells = []
    for r in rows:
        items = _num(r["items"]) + (f" ({_num(r['done'])} done)" if r["done"] else "")
        hw = f"±{r['±95% stated']:.1f} {r['unit']}" if r["±95% stated"] is not None else "–"
        tokens = "\n".join(_pair(r[b], r[e], _tokens) for b, e in (
            ("prompt tokens", "expected prompt"), ("prefill (prefix reuse)", "expected prefill"),
            ("completion tokens", "expected completion")))
        row = [r["setting"], items, _pair(r["requests"], r["expected requests"]),
               tokens if r["prompt tokens"] is not None else "–", hw]
        if timed:
            row.append(_duration(r.get("expected seconds")))
        if priced:
            cost = r.get("cost (USD)")
            row.append("–" if cost is None else f"{cost:,.2f} ≤{r['cost bound (USD)']:,.2f}")
        cells.append([*row, r["status"]])
    print_table(err, f"profile plan: {prof.model.label}, {prof.size} ({prof.dir})", cols, cells,
                [c not in ("setting", "status") for c in cols])
    lines = []
    for r in rows:
        if (r["assumes"] or r["tokens counted"]) and r["status"] != "done":
            how = [f"counted with {r['tokens counted']}"] if r["tokens counted"] else []
            lines.append(f"  {r['benchmark']}: tokens: " + "; ".join(how + [r["assumes"] or ""]))
        if r["reason"]:
            lines.append(f"  {r['benchmark']}: {r['status']}: {r['reason']}"
                         + (f" — fix: {r['enable']}" if r["enable"] else ""))
        if r.get("precision"):
            lines.append(f"  {r['benchmark']}: ±95% stated: {r['precision']}")
        lines += [f"  {r['benchmark']}: {note}" for note in r["notes"]]
    if any(r["status"] == "missing data" for r in rows):
        fetch = f"`{prof.fetch_command}` (needs internet), or " if prof.fetch_command else ""
        lines.append(f"  missing data: {fetch}--data-dir DIR, a folder holding one folder per "
                     f"benchmark as shared/data (looked in {prof.data_root})")
    if timed:
        total = sum(r.get("expected seconds") or 0 for r in rows)
        lines.append(f"  time ~ {_duration(total)} in all, expected: {prof.timing}")
    lines.append(f"  ~ expected, ≤ upper bound (items still to run; tokens: {prof.counted}; k "
                 "thousand, M million; completions (reply): the expected value is the "
                 "assumption stated above, the bound the reply cap); prompt: re-sent every "
                 "request (what an API bills), prefill: with prefix reuse; ±95% stated: the "
                 "half-width the headline's own 95% interval will have for these items")
    print_lines(err, lines)


def _table(out: Console, title: str, columns: tuple[str, ...],
           cells: list[list[str]]) -> None:
    """A left-titled table: the first three columns text, the rest numbers."""
    from mindprobe.core.terminal import print_table

    print_table(out, title, columns, cells, [i >= 3 for i in range(len(columns))])


def _ci(lo: float | None, hi: float | None, fmt: str = ".1f") -> str:
    return "–" if lo is None or hi is None else f"[{lo:{fmt}}, {hi:{fmt}}]"


def print_profile(console: Console | None, prof: Any, rows: list[dict[str, Any]],
                  skipped: list[dict[str, Any]] | None = None) -> None:
    """The profile: every planned benchmark, a row each; one that did not run says so, and
    a line under the table gives its reason and its fix."""
    from rich.console import Console as RichConsole

    from mindprobe.core.terminal import print_lines
    from mindprobe.profiling.plan import CANNOT, MISSING

    def value(r: dict[str, Any]) -> str:
        if r["value"] is None:
            return "–"
        return f"{r['value']:.1f}" + ("%" if r["unit"] == "%" else f" {r['unit']}")

    out = console or RichConsole(highlight=False)
    order = [e.name for e in prof.entries]
    cells = [(r["benchmark"], [r["benchmark"], r["variant"], r["metric"], value(r),
                               _ci(r["ci_low"], r["ci_high"]), _num(r["±95%"], 1),
                               _num(r["±95% stated"], 1), _num(r["n"])]) for r in rows]
    cells += [(s["benchmark"], [s["benchmark"], s["setting"].split(" ")[0].partition(":")[2],
                                "not run" if s["status"] in (MISSING, CANNOT) else s["status"],
                                "–", "–", "–", "–", "–"])
              for s in skipped or []]
    cells = sorted(cells, key=lambda c: order.index(c[0]) if c[0] in order else len(order))
    _table(out, f"cognitive profile: {prof.model.label} ({prof.size})",
           ("benchmark", "variant", "headline", "value", "95% CI", "±95%", "stated", "n"),
           [c for _, c in cells])
    print_lines(out, [f"  {s['benchmark']}: not run ({s['status']}): {s['reason']}"
                      + (f" — fix: {s['fix']}" if s["fix"] else "") for s in skipped or []])


def _compare(args: argparse.Namespace, err: Console) -> int:
    from rich.console import Console as RichConsole

    from mindprobe.core.output import emit_json
    from mindprobe.core.paths import check_out_file
    from mindprobe.profiling.compare import compare_profiles
    from mindprobe.profiling.leaderboard import leaderboard, write_leaderboard

    if len(args.compare) < 2:
        raise UsageError("--compare needs at least two profile folders")
    if args.model:
        raise UsageError("--model runs a profile; --compare compares finished ones and runs "
                         "nothing: give one or the other")
    if args.out:  # before anything is printed: a typo costs one line, not the comparison
        from mindprobe.profiling.leaderboard import check_leaderboard_out

        check_out_file(Path(args.out), "--out", (".csv", ".json"))
        check_leaderboard_out(Path(args.out), args.force)
    out = RichConsole(highlight=False) if not args.json else err
    board = leaderboard([Path(f) for f in args.compare])
    heads = sorted({k for row in board for k in row} - {"model", "size", "profile"})
    values = [k for k in heads if not k.endswith((" ci_low", " ci_high"))]
    _table(out, "leaderboard: each benchmark's headline [95% CI]", ("model", "size", "", *values),
           [[str(r["model"]), str(r["size"]), "",
             *[f"{_num(r.get(k), 1)} {_ci(r.get(k + ' ci_low'), r.get(k + ' ci_high'))}"
               for k in values]] for r in board])
    doc: dict[str, Any] = {"compare": list(args.compare), "leaderboard": board}
    if len(args.compare) == 2:
        rows = compare_profiles(Path(args.compare[0]), Path(args.compare[1]))
        _table(out, f"profile comparison: B − A (A {args.compare[0]}, B {args.compare[1]})",
               ("benchmark", "variant", "metric", "A", "B", "B − A", "95% CI (paired)",
                "n paired"),
               [[r["benchmark"], r["variant"], r["metric"], _num(r["a"], 1), _num(r["b"], 1),
                 "–" if r["difference"] is None else f"{r['difference']:+.1f}",
                 _ci(r["ci_low"], r["ci_high"], "+.1f"), _num(r["n"])] for r in rows])
        from mindprobe.core.terminal import print_lines

        print_lines(out, [f"  {r['benchmark']} {r['variant']}: {r['note']}"
                          for r in rows if r["note"]])
        doc["rows"] = rows
    if args.out:
        write_leaderboard(board, Path(args.out), replace=args.force)
        err.print(f"wrote {args.out}", highlight=False)
    emit_json(args.json, doc)
    return 0
