"""The Benchmark protocol and registry: what the runner needs from a benchmark, and no more.

A benchmark loads items, plays one item as an async episode through a `Session`, and turns
records into metrics. It never talks HTTP and never writes files; the runner never knows what
a benchmark measures.
"""

from __future__ import annotations

import argparse
import importlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from rich.console import Console

from mindprobe.core.session import Session
from mindprobe.errors import UsageError


@dataclass
class RunOptions:
    """Everything a benchmark may read from the command line (benchmark options in `extra`)."""

    variant: str
    seed: int | None = None
    data_dir: Path | None = None
    limit: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    supports_grammar: bool = False


@dataclass
class Item:
    id: str
    data: Any


@dataclass
class Prepared:
    """A benchmark ready to run: its items and what identifies this experiment."""

    items: list[Item]
    prompting: str = "basic"
    config: dict[str, Any] = field(default_factory=dict)
    data: dict[str, Any] = field(default_factory=dict)
    #: Models besides the one under test, by role (e.g. {"judge": "openai:gpt-4o"}).
    extra_models: dict[str, str] = field(default_factory=dict)
    #: True when the benchmark already applied --limit (e.g. rounding up to whole tuples).
    limit_applied: bool = False
    #: Label of the model under test (set by the runner; used in tables and exports).
    model_label: str = "model"


class Benchmark(Protocol):
    name: str
    title: str
    #: variant name -> one-line description.
    variants: dict[str, str]
    default_variant: str
    #: groups that run several variants, e.g. {"all": [...]}.
    variant_groups: dict[str, list[str]]

    def add_arguments(self, group: argparse._ArgumentGroup) -> None:
        """Benchmark-specific `run` options (names must not clash with other benchmarks)."""

    def prepare(self, opts: RunOptions) -> Prepared:
        """Load or generate the items (verifying files), before any model is started."""

    async def run_item(self, item: Item, session: Session) -> dict[str, Any]:
        """Play one item; return its record fields (answers, scores, transcript)."""

    def metrics(self, records: list[dict[str, Any]], prepared: Prepared) -> dict[str, Any]:
        """Benchmark metrics from finished records alone (errored records are passed too)."""

    def render(self, metrics: dict[str, Any], console: Console) -> None:
        """Print the metrics as terminal tables."""


_REGISTRY = {
    "worldsense": "mindprobe.benchmarks.worldsense.task:WorldSenseBenchmark",
    "already_said_that": "mindprobe.benchmarks.already_said_that.task:AlreadySaidThatBenchmark",
    "mr_gsm8k": "mindprobe.benchmarks.mr_gsm8k.task:MRGSM8KBenchmark",
}


def benchmark_names() -> list[str]:
    return list(_REGISTRY)


def get_benchmark(name: str) -> Benchmark:
    """Instantiate a registered benchmark; unknown names get the list of known ones."""
    target = _REGISTRY.get(name)
    if target is None:
        raise UsageError(f"unknown benchmark {name!r}; known: {', '.join(_REGISTRY)}")
    module, cls = target.split(":")
    return getattr(importlib.import_module(module), cls)()


def split_bench_spec(spec: str) -> tuple[str, str | None]:
    """`worldsense:ood-size` -> ("worldsense", "ood-size"); a bare name -> (name, None)."""
    name, _, variant = spec.partition(":")
    return name, (variant or None)


def resolve_variants(bench: Benchmark, variant: str | None) -> list[str]:
    """A variant, a group of variants, or the default; unknown ones list what exists."""
    if variant is None:
        return [bench.default_variant]
    if variant in bench.variant_groups:
        return list(bench.variant_groups[variant])
    if variant in bench.variants:
        return [variant]
    known = ", ".join([*bench.variants, *bench.variant_groups])
    raise UsageError(f"unknown variant {variant!r} of {bench.name}; known: {known}")
