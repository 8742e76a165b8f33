"""What a profile is asked (`ProfileRequest`) and what it holds (`Profile`, its folder): plain
values apart from the lifecycle in `profiling.run`, so the API and commands read them alone."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mindprobe.core.benchmark import PROFILE_SIZES
from mindprobe.core.estimate import HEURISTIC
from mindprobe.core.paths import folder_name
from mindprobe.core.results import Results
from mindprobe.engine.settings import RunSettings
from mindprobe.errors import UsageError
from mindprobe.models import Model
from mindprobe.profiling.plan import MISSING, Entry


@dataclass
class ProfileRequest:
    """What `mindprobe profile` is asked (its flags; `mindprobe.profile()`'s arguments)."""

    run: RunSettings
    size: str = "quick"
    judge: str | None = None
    data_root: Path | None = None
    #: Benchmark options by benchmark (`-O BENCH.KEY=VALUE`).
    options: dict[str, dict[str, Any]] = field(default_factory=dict)
    out: Path | None = None
    price: str | None = None
    strict: bool = False

    def check(self) -> None:
        if self.size not in PROFILE_SIZES:
            raise UsageError(f"--size must be one of {', '.join(PROFILE_SIZES)}; got {self.size!r}")
        self.run.check()
        if self.price is not None:
            from mindprobe.report.provenance import parse_price

            parse_price(self.price)


@dataclass
class Profile:
    """A planned (and maybe finished) profile: its folder, entries and results."""

    dir: Path
    model: Model
    size: str
    entries: list[Entry]
    results: dict[str, dict[str, Results]] = field(default_factory=dict)
    report: Path | None = None
    code: int = 0
    #: How the plan's tokens were counted (the model's tokenizer, or the heuristic).
    counted: str = HEURISTIC
    #: The data root the benchmarks were looked for in (--data-dir, else the data cache).
    data_root: Path | None = None
    #: The engine speed the plan's times were estimated with (`profiling.timing`; None: no
    #: estimate).
    speed: Any = None

    @property
    def timing(self) -> str | None:
        return self.speed.describe() if self.speed is not None else None

    @property
    def plan(self) -> list[dict[str, Any]]:
        """The plan table's rows (what `mindprobe profile` prints before it starts)."""
        from mindprobe.profiling.tables import plan_rows

        return plan_rows(self.entries, None)

    @property
    def profile(self) -> list[dict[str, Any]]:
        """The profile's rows: one headline per benchmark and variant."""
        from mindprobe.profiling.tables import profile_rows

        return profile_rows(self.entries, self.results)

    @property
    def not_run(self) -> list[dict[str, Any]]:
        """The planned benchmarks without results: setting, status, reason and fix."""
        from mindprobe.profiling.tables import skipped_rows

        return skipped_rows(self.entries, self.results)

    @property
    def fetch_command(self) -> str | None:
        """The one `mindprobe data fetch` that fixes all missing data (None: none missing, or
        none to fetch)."""
        names = [e.name for e in self.entries
                 if e.status == MISSING and "data fetch" in e.enable]
        return f"mindprobe data fetch {' '.join(names)}" if names else None


def profile_dir(runs_dir: str | Path, label: str, size: str) -> Path:
    """<runs-dir>/profile-<size>___<model>: one folder per model and size."""
    return Path(runs_dir) / folder_name(f"profile-{size}___{label}")
