"""`mindprobe generate worldsense`: fresh test sets (official schema) or fine-tuning data."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.console import Console

from mindprobe.errors import UsageError


def _csv(text: str | None) -> list[str] | None:
    return [x.strip() for x in text.split(",") if x.strip()] if text else None


class GenerateCommand:
    def add_arguments(self, g: argparse._ArgumentGroup) -> None:
        g.add_argument("--seed", type=int, default=0, help="worldsense: generator seed (default 0)")
        g.add_argument("--n", type=int, default=100,
                       help="worldsense: tuples per (problem, size) cell (default 100)")
        g.add_argument("--sizes", default="3,4,5", help="worldsense: entity counts, e.g. 3,4,5,6")
        g.add_argument("--problems", help="worldsense: problem families (default: the 6 standard; "
                       "also Infer.extrema, Infer.parallel)")
        g.add_argument("--skins", help="worldsense: skins (default: the 18 test skins)")
        g.add_argument("--format", choices=["testset", "chat"], default="testset",
                       help="worldsense: testset = OUT/trials.jsonl.bz2 in the official schema; "
                       "chat = fine-tuning records (dialog_history, target_message) to file OUT")
        g.add_argument("--out", required=True, help="worldsense: output folder (testset) or file (chat)")

    def run(self, args: argparse.Namespace, err: Console) -> int:
        from mindprobe.benchmarks.worldsense.generate import (
            STANDARD_PROBLEMS,
            generate_trials,
            write_chat,
            write_testset,
        )
        from mindprobe.benchmarks.worldsense.skins import TEST_SKINS

        try:
            sizes = [int(s) for s in _csv(args.sizes) or []]
        except ValueError:
            raise UsageError(f"--sizes expects integers like 3,4,5, got {args.sizes!r}") from None
        try:
            trials = generate_trials(
                args.seed, args.n, sizes=sizes,
                problems=_csv(args.problems) or STANDARD_PROBLEMS,
                skins=_csv(args.skins) or TEST_SKINS,
            )
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        out = Path(args.out)
        path = write_chat(trials, out) if args.format == "chat" else write_testset(trials, out)
        err.print(f"wrote {len(trials)} trials to {path}")
        return 0
