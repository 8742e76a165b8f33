"""What a run is asked to do besides the benchmark's own options, and where it says things.

`RunSettings` is the library form of `mindprobe run`'s common flags (the CLI fills it from
argparse, `mindprobe.evaluate()` from its arguments), so both check the same values with the
same messages. A `Reporter` is where the lifecycle speaks: warnings, notes, the progress bar's
console, the summary of a finished run, the resume hint of an interrupted one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console

from mindprobe.core.inputs import check_new_or_regular
from mindprobe.core.options import check_range
from mindprobe.core.paths import check_parent, path_component, refuse_empty
from mindprobe.core.secrets import command_line, redact
from mindprobe.errors import UsageError

if TYPE_CHECKING:
    from mindprobe.core.runner import RunResult


#: The valid range of every numeric run setting (inclusive), checked before anything starts:
#: a value past it would fail on every item instead (a max_tokens beyond 64 bits cannot even
#: be encoded). Int32 where servers take an int32 (llama.cpp's n_predict, seeds).
RANGES: dict[str, tuple[float, float]] = {
    "limit": (1, 100_000_000),
    "concurrency": (1, 100_000),
    "seed": (0, 2**32 - 1),
    "max_tokens": (1, 2**31 - 1),
    "max_attempts": (1, 1000),
    "timeout": (0.001, 7 * 24 * 3600.0),
    "replicas": (1, 10_000),
    "threads": (1, 4096),
    "batch": (1, 1_048_576),
    "context_window": (16, 2**31 - 1),
}
#: The flag of a setting whose name differs.
FLAGS = {"batch": "--batch-size"}


def check_counts(settings: Any, names: tuple[str, ...]) -> None:
    """The named numeric settings within their `RANGES` (NaN and infinity refused)."""
    for name in names:
        check_range(FLAGS.get(name, "--" + name.replace("_", "-")), getattr(settings, name),
                    *RANGES[name])


@dataclass
class RunSettings:
    """The common settings of a run (every `mindprobe run` flag that is not a benchmark's)."""

    model: str
    limit: int | None = None
    concurrency: int | None = None
    seed: int | None = None
    data_dir: str | Path | None = None
    #: `--prompt-file`: other wording for the benchmark's templates (the run is labelled).
    prompt_file: str | Path | None = None
    runs_dir: str | Path = "runs"
    #: A tag added to the run directory's name (`--name`).
    name: str | None = None
    #: Other models taking part, by role (`--role judge=SPEC`).
    roles: dict[str, str] = field(default_factory=dict)
    #: Read and write the response cache; `cache_file` overrides where it lives.
    cache: bool = True
    cache_file: str | Path | None = None
    retry_errors: bool = False
    timeout: float = 300.0
    max_tokens: int | None = None
    max_attempts: int = 6
    endpoints: str | Path | None = None
    replicas: int | None = None
    ray: str | None = None
    #: The embedded llama.cpp engine's threads and batch size (`--threads`, `--batch-size`).
    threads: int | None = None
    batch: int | None = None
    #: `--context-window N`: the model's window in tokens, whatever the backend says (None:
    #: what the backend knows, if anything). Items that cannot fit it are never sent.
    context_window: int | None = None
    #: `reasoning_effort` sent with every request, and "the model thinks" (room for thinking).
    reasoning_effort: str | None = None
    reasoning: bool = False
    debug: bool = False
    #: The command that resumes this run, recorded in the manifest and shown on interrupt.
    command: str | None = None
    #: Plans only (`--dry-run`): benchmarks may estimate what a run would prepare first
    #: (`PlanContext.dry_run`).
    dry_run: bool = False

    def check(self) -> None:
        """Counts, the timeout, paths and --name, before anything is loaded or started."""
        check_counts(self, tuple(RANGES))
        for field_, flag in (("runs_dir", "--runs-dir"), ("data_dir", "--data-dir"),
                             ("prompt_file", "--prompt-file"), ("cache_file", "--cache"),
                             ("endpoints", "--endpoints")):
            refuse_empty(getattr(self, field_), flag)
        runs = Path(self.runs_dir)
        if runs.exists() and not runs.is_dir():
            raise UsageError(f"--runs-dir {runs} is a file; give a folder")
        check_parent(runs, "--runs-dir")
        if self.cache and self.cache_file:
            check_cache_file(self.cache_file)
        if self.name:
            path_component(self.name, "--name")
        if "model" in self.roles:
            raise UsageError("--role model=... is --model")

    def equivalent_command(self, task: str, options: dict[str, Any]) -> str:
        """The `mindprobe run` command line that resumes the same run (for a library call)."""
        argv = ["run", task, "--model", self.model]
        for flag in ("limit", "concurrency", "seed", "data_dir", "prompt_file", "name",
                     "max_tokens", "context_window"):
            value = getattr(self, flag)
            if value is not None:
                argv += [f"--{flag.replace('_', '-')}", str(value)]
        if str(self.runs_dir) != "runs":
            argv += ["--runs-dir", str(self.runs_dir)]
        for role, spec in self.roles.items():
            argv += ["--role", f"{role}={spec}"]
        for key, value in options.items():
            argv += ["-O", f"{key}={value}"]
        if self.reasoning_effort:
            argv += ["--reasoning-effort", self.reasoning_effort]
        elif self.reasoning:
            argv.append("--reasoning")
        return command_line(argv)


class Reporter:
    """Where the lifecycle speaks; the default prints to stderr (nothing but errors when
    `progress` is off). The CLI's reporter adds its summary box."""

    def __init__(self, console: Console | None = None, progress: bool = True) -> None:
        self.console = console or Console(stderr=True, highlight=False, quiet=not progress)

    def warn(self, message: str) -> None:
        # The message is text, never markup: `[x]` and `:x:` (in a URL, a project name) stay
        from rich.text import Text

        self.console.print(Text.assemble(("warning", "yellow"), ": ", redact(message)),
                           highlight=False)

    def note(self, message: str) -> None:
        self.console.print(redact(message), markup=False, highlight=False)

    def loading(self, what: str) -> None:
        if self.console.is_terminal:
            self.note(f"{what}: loading data…")

    def repaired(self, records_path: Path, dropped: int) -> None:
        self.console.print(f"[yellow]repaired[/yellow] {records_path}: dropped {dropped} "
                           "duplicated record(s), first of each kept")

    def interrupted(self, run_dirs: list[Path], planning: bool, command: str) -> None:
        """Ctrl-C or SIGTERM at any moment (loading data, starting the model, mid-run): every
        run of this call is left `interrupted` (not `running`) and the resume line is shown."""
        from mindprobe.core.store import settle_interrupted

        lines = []
        for run_dir in run_dirs:
            n = settle_interrupted(run_dir)
            lines.append(f"{run_dir}: nothing recorded yet" if n is None
                         else f"{n} item(s) recorded in {run_dir}")
        if planning:
            lines.append("interrupted while loading the data: nothing was started")
        self.console.print("\n[yellow]Interrupted[/yellow]: " + "; ".join(lines)
                           + f".\nResume with: [bold]{command}[/bold]", soft_wrap=True)

    def kept(self, run_dir: Path, command: str) -> None:
        self.console.print(f"Finished records are kept in {run_dir}; resume with: {command}",
                           soft_wrap=True, markup=False)

    def finished(self, run_dir: Path, result: RunResult, records: list[dict[str, Any]],
                 elapsed: float, endpoints: list[dict[str, Any]] | None,
                 usage: dict[str, int]) -> None:
        """A run is over: its summary (what was done, errors, tokens, where it lies)."""
        from mindprobe.engine.summary import print_summary

        print_summary(self.console, run_dir, result, records, elapsed, endpoints, usage)


def check_cache_file(cache_file: str | Path) -> None:
    """`--cache FILE` before a run: absent or a regular file, in an existing folder (a folder
    given for FILE would otherwise open as a read-only cache that never fills)."""
    cache = Path(cache_file)
    check_new_or_regular(cache, "--cache", "--cache names the cache's file (e.g. "
                         f"{cache / 'responses.sqlite'}), made where it does not exist")
    check_parent(cache, "--cache")
