"""A benchmark's own CLI verbs, declared as data: the CLI (the only place that knows argparse)
builds their sub-commands from these declarations, so a benchmark never imports argparse.

A benchmark names its verbs, with one line of help each, in its class (`verbs = {"export":
"…"}`, a literal the CLI reads without importing the benchmark) and declares them in the
module `verbs` beside its class (`benchmarks/<name>/verbs.py`) as `VERBS: list[Verb]`. That
module stays light (no pandas at import): `mindprobe BENCH-VERB --help` imports it. A verb
named like a built-in one (`analyse`, `export`) adds its flags to it, and its `run` returns
None to leave the rest to the built-in.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

#: What `Arg` passes on to argparse's `add_argument` (anything else is a mistake).
ARG_KEYS = frozenset({"help", "type", "nargs", "choices", "default", "action", "metavar",
                      "dest", "required", "const"})


class Arg:
    """One flag or positional: its names and argparse's keywords (help, type, nargs, choices,
    default, action, metavar, dest, required, const). `one_of` names a group of flags of which
    at most one may be given (`Verb.required_one_of`: exactly one). A numeric flag (`type` int
    or float) declares its `range` (minimum, maximum): a value outside is refused as it is
    parsed."""

    def __init__(self, *flags: str, one_of: str | None = None,
                 range: tuple[float, float] | None = None,  # noqa: A002 (its natural name)
                 **options: Any) -> None:
        unknown = sorted(set(options) - ARG_KEYS)
        if not flags or unknown:
            raise TypeError(f"Arg{flags}: unknown keyword(s) {unknown}" if unknown
                            else "Arg needs a flag or a name")
        if options.get("type") in (int, float) and range is None:
            raise TypeError(f"Arg{flags}: a numeric flag declares its range=(min, max)")
        self.flags, self.one_of, self.options, self.range = flags, one_of, options, range

    def __repr__(self) -> str:
        return f"Arg{self.flags}"


#: A verb's body: (the parsed flags by their dest, as attributes; a rich Console on stderr)
#: -> exit code, or None (a verb extending a built-in one: let the built-in run).
VerbRun = Callable[[Any, Any], "int | None"]


@dataclass(frozen=True)
class Verb:
    """`mindprobe NAME BENCH [flags]`: the flags it takes and what it does.

    `run_options`: the verb also takes `mindprobe run`'s flags and the benchmark's own options
    (e.g. a sweep of runs); its `run` then finds on its arguments `bench_options` (the options
    given, by name) and `run_benchmark(options) -> (exit code, JSON documents by variant)`,
    which runs or resumes the benchmark with the command's flags and these options exactly as
    `mindprobe run` would, printing its tables but not its JSON."""

    name: str
    run: VerbRun
    arguments: tuple[Arg, ...] = ()
    required_one_of: tuple[str, ...] = ()
    run_options: bool = False


def verbs_module(task: str) -> str:
    """Where the Verb declarations of the benchmark class at `task` ("pkg.task:Class") live:
    the module `verbs` of its package (the class's own module when it has no package)."""
    module = task.partition(":")[0]
    package, dot, _ = module.rpartition(".")
    return f"{package}.verbs" if dot else module
