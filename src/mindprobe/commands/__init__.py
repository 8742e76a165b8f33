"""One module per CLI verb; `dispatch` routes a parsed command line to it."""

from __future__ import annotations

import argparse

from rich.console import Console

from mindprobe.commands.info import cmd_analyse, cmd_data, cmd_list, cmd_models, cmd_runs
from mindprobe.commands.run import cmd_run
from mindprobe.core.benchmark import get_benchmark


def dispatch(args: argparse.Namespace, err: Console) -> int:
    cmd = args.command
    if cmd == "run":
        return cmd_run(args, err)
    if cmd in ("analyse", "analyze"):
        return cmd_analyse(args, err)
    if cmd == "data":
        return cmd_data(args, err)
    if cmd == "list":
        return cmd_list(args, err)
    if cmd == "runs":
        return cmd_runs(args, err)
    if cmd == "models":
        return cmd_models(args, err)
    bench = get_benchmark(args.benchmark)
    return bench.commands[cmd].run(args, err)
