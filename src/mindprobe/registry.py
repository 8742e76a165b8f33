"""Which benchmarks exist, what they are called, and where their code lives.

Plain data, importable in milliseconds: `mindprobe list`, `--help` and variant checks read it
without importing any benchmark (or pandas). The benchmark class and its typed options are
imported only when a command needs them.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any

from mindprobe.errors import UsageError


@dataclass(frozen=True)
class BenchmarkInfo:
    name: str
    title: str
    #: variant name -> one-line description.
    variants: dict[str, str]
    default_variant: str
    #: "module:Class" of the Benchmark and of its Options dataclass.
    task: str
    options: str
    #: groups that run several variants, e.g. {"all": [...]}.
    variant_groups: dict[str, list[str]] = field(default_factory=dict)
    #: verbs besides run/analyse/data that this benchmark offers (see `mindprobe.commands`).
    verbs: tuple[str, ...] = ()
    #: What `--limit N` keeps, in the words of this benchmark (shown in `run BENCH --help`).
    limit: str = "the first N items"


_AST_VARIANTS = ["which-is-heavier", "first-letters", "ambiguous-sentences",
                 "reverse-sort-words-eng", "distractorless"]

BENCHMARKS: dict[str, BenchmarkInfo] = {
    "worldsense": BenchmarkInfo(
        name="worldsense",
        title="grounded reasoning over orderings: accuracy and bias with 95% CIs",
        variants={
            "test_set": "the official test set (87,048 trials)",
            "memorisation": "texts from the training set (11,232)",
            "ood-size": "standard problems with 6 entities (9,360)",
            "ood-query": "Infer.extrema: first/last questions (6,480)",
            "ood-problem": "Infer.parallel: 2-D reasoning (5,400)",
            "fresh": "freshly generated problems (seeded; offline)",
        },
        default_variant="test_set",
        task="mindprobe.benchmarks.worldsense.task:WorldSenseBenchmark",
        options="mindprobe.benchmarks.worldsense.options:WorldSenseOptions",
        verbs=("export", "generate"),
        limit="a seeded random sample of whole tuples, about N trials (rounded up to the "
        "tuple that reaches N: the analysis drops incomplete tuples)",
    ),
    "already_said_that": BenchmarkInfo(
        name="already_said_that",
        title="working memory under distractors: turns survived in a 100-turn chat",
        variants={
            **{v: f"distractors: {v}" for v in _AST_VARIANTS[:4]},
            "distractorless": "no distractor questions",
        },
        default_variant="reverse-sort-words-eng",
        variant_groups={"all": list(_AST_VARIANTS)},
        task="mindprobe.benchmarks.already_said_that.task:AlreadySaidThatBenchmark",
        options="mindprobe.benchmarks.already_said_that.options:AlreadySaidThatOptions",
        limit="the first N of the --n-samples chats, per variant (so `:all` runs N per "
        "task)",
    ),
    "mr_gsm8k": BenchmarkInfo(
        name="mr_gsm8k",
        title="meta-reasoning: is a math solution right, where is its first error, why (MR-Score)",
        variants={
            "full": "the official MR-GSM8K.json, 3000 solutions (`mindprobe data fetch "
            "mr_gsm8k` or --data-file)",
            "sample": "the 40 sample records of shared/data/mr_gsm8k (offline; all `wrong`)",
        },
        default_variant="full",
        task="mindprobe.benchmarks.mr_gsm8k.task:MRGSM8KBenchmark",
        options="mindprobe.benchmarks.mr_gsm8k.options:MRGSM8KOptions",
        verbs=("judge",),
        limit="the first N solutions of the data file",
    ),
}


_SORT_CONDITIONS = [f"{le}-{ls}" for le in (250, 1000, 2500, 10000, 20000) for ls in (20, 50)]
BENCHMARKS["sort"] = BenchmarkInfo(
    name="sort",
    title="episodic memory: which of two segments of a book came first (Book-SORT)",
    variants={"all": "every condition that fits the model's context window (default)",
              **{c: f"excerpt {c.split('-')[0]} words, segments {c.split('-')[1]} words"
                 for c in _SORT_CONDITIONS}},
    default_variant="all",
    task="mindprobe.benchmarks.sort.task:SortBenchmark",
    options="mindprobe.benchmarks.sort.options:SortOptions",
    verbs=("build", "sweep", "export"),
    limit="the first N test rows (segment pairs) in total, over all conditions run",
)


def benchmark_names() -> list[str]:
    return list(BENCHMARKS)


def info(name: str) -> BenchmarkInfo:
    """The registry entry; an unknown name gets the list of known ones."""
    found = BENCHMARKS.get(name)
    if found is None:
        raise UsageError(f"unknown benchmark {name!r}; known: {', '.join(BENCHMARKS)}")
    return found


def _load(target: str) -> Any:
    module, attr = target.split(":")
    return getattr(importlib.import_module(module), attr)


def options_class(name: str) -> type:
    """The benchmark's Options dataclass (a light module: no pandas)."""
    return _load(info(name).options)


def get_benchmark(name: str) -> Any:
    """Instantiate a registered benchmark (imports its code)."""
    return _load(info(name).task)()


def split_bench_spec(spec: str) -> tuple[str, str | None]:
    """`worldsense:ood-size` -> ("worldsense", "ood-size"); a bare name -> (name, None)."""
    name, _, variant = spec.partition(":")
    return name, (variant or None)


def resolve_variants(bench: BenchmarkInfo, variant: str | None) -> list[str]:
    """A variant, a group of variants, or the default; unknown ones list what exists."""
    if variant is None:
        return [bench.default_variant]
    if variant in bench.variant_groups:
        return list(bench.variant_groups[variant])
    if variant in bench.variants:
        return [variant]
    known = ", ".join([*bench.variants, *bench.variant_groups])
    raise UsageError(f"unknown variant {variant!r} of {bench.name}; known: {known}")


BENCHMARKS["fanoutqa"] = BenchmarkInfo(
    name="fanoutqa",
    title="fan-out multi-hop QA over Wikipedia (FanOutQA jul26 or nov23): loose accuracy, ROUGE, "
          "judge",
    variants={
        "closedbook": "the question alone (default)",
        "evidenceprovided": "the question's evidence pages, BM25+-ranked chunks filling the "
                            "context (dated Wikipedia)",
        "openbook": "the model searches Wikipedia (<search>…</search>), 600 s per question",
    },
    default_variant="closedbook",
    task="mindprobe.benchmarks.fanoutqa.task:FanOutQABenchmark",
    options="mindprobe.benchmarks.fanoutqa.options:FanOutQAOptions",
    verbs=("export", "judge"),
    limit="the first N questions of the split",
)
