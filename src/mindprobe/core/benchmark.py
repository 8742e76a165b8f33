"""The Benchmark contract: what the runner needs from a benchmark, with no-op optional parts.

A benchmark turns its typed options into a `RunPlan` (items + what identifies the experiment),
plays one item as an async episode through a `Session`, and turns records into `Results`.
It never talks HTTP (models and resources do) and never writes files (the store does); core
never knows what a benchmark measures. The planning types (`Item`, `RunPlan`, `PlanContext`,
`ModelFacts`) live in `core.plan`, and are importable from here too.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mindprobe.core.options import NoOptions
from mindprobe.core.plan import Item, ModelFacts, PlanContext, RunPlan
from mindprobe.core.prompt_file import PROMPT_FILE, PromptFile, read_prompt_file
from mindprobe.errors import UsageError

if TYPE_CHECKING:
    from mindprobe.core.model import Model
    from mindprobe.core.prompt_file import PromptFile
    from mindprobe.core.published import PublishedRow
    from mindprobe.core.results import Results
    from mindprobe.core.session import Session
    from mindprobe.core.stats import Precision
    from mindprobe.core.upstream_source import Template

__all__ = ["OUTCOMES", "PROFILE_SIZES", "Benchmark", "Item", "ItemFields", "ModelFacts",
           "PairedScore", "PlanContext", "ProfileSettings", "RunPlan", "prompt_file_for",
           "with_prompt_file"]

#: What an item came to, as the report filters it: right, wrong, no valid answer, or failed.
OUTCOMES = ("correct", "wrong", "invalid", "error")


@dataclass
class ProfileSettings:
    """How `mindprobe profile` runs a benchmark at one size (quick, standard, paper): the
    paper's default setting, cut to a seeded subset sized so its headline's 95% interval has
    a half-width stated before the run."""

    #: The variant (or variant group) that is the paper's default setting.
    variant: str
    #: The benchmark's own options (by name) that select the setting and the subset.
    options: dict[str, Any] = field(default_factory=dict)
    #: --limit, where the benchmark's limit already is the subset (None: no limit).
    limit: int | None = None
    #: Why these numbers (shown by `profile --help` and in the plan).
    rationale: str = ""
    #: What the plan says about this setting (e.g. why it is not the richer one).
    note: str = ""
    #: Items the setting means to run (None: all there are); the plan says when the data
    #: holds fewer, and states the wider half-width of what it holds (`Benchmark.precision`).
    items: int | None = None
    #: Without the official files: (option, file in the benchmark's data folder, what it is),
    #: e.g. ("data_file", "sample_records.jsonl", "the 40 sample records"); the plan names
    #: it as `-O BENCH.OPTION=PATH`, one line, where data is missing.
    offline: tuple[str, str, str] | None = None


@dataclass(frozen=True)
class PairedScore:
    """What two runs of a benchmark are compared on, item by item (the report's paired
    comparison): one number per record, and which record fields describe an item there."""

    #: The record field holding the item's score.
    field: str = "correct"
    #: True: the field is a right/wrong boolean (McNemar's test applies); False: a number.
    binary: bool = True
    #: What the score is called on the page.
    label: str = "correct"
    #: Record fields that describe an item in the list of items two runs disagree on.
    describe: tuple[str, ...] = ()
    #: Record fields holding the model's answer (the first one present is shown).
    answer: tuple[str, ...] = ("answer",)

    def score(self, record: dict[str, Any]) -> float | None:
        """The item's score (None: not scored)."""
        v = record.get(self.field)
        if self.binary:
            return float(v) if isinstance(v, bool) else None
        if isinstance(v, bool) or not isinstance(v, (int, float)) or v != v:  # NaN
            return None
        return float(v)

    def answer_of(self, record: dict[str, Any]) -> str:
        """The model's answer, or the item's error, as the disagreement list shows it."""
        if "error" in record:
            return f"error: {record['error']}"
        return next((str(record[k]) for k in self.answer if record.get(k) not in (None, "")),
                    "")


@dataclass(frozen=True)
class ItemFields:
    """The record fields the report's transcripts show an item by (the first one present of
    each): its group (what the page filters by), the model's answer and the expected one."""

    group: tuple[str, ...] = ("group", "category", "type")
    answer: tuple[str, ...] = ("answer",)
    gold: tuple[str, ...] = ("gold", "expected")


#: The sizes of `mindprobe profile`, smallest first.
PROFILE_SIZES = ("quick", "standard", "paper")


class Benchmark(abc.ABC):
    """Base class: subclasses declare who they are (`name`, `title`, `variants`,
    `default_variant`, `Options`) and implement plan / run_item / results.

    The declarations are read without importing the benchmark's module when they are plain
    literals in the class body (`mindprobe list` and `run NAME --help` stay fast; see
    `mindprobe.registry`). Optional capabilities have safe defaults here, so callers never
    probe with hasattr.
    """

    #: What `mindprobe run NAME` calls it (also its folder under runs/).
    name: str = ""
    #: One line: what it probes.
    title: str = ""
    #: Variant name -> one-line description; `default_variant` runs when none is named.
    variants: dict[str, str] = {}
    default_variant: str = ""
    #: Names that run several variants, e.g. {"all": [...]}.
    variant_groups: dict[str, list[str]] = {}
    #: Its own CLI verbs besides run/analyse/data, with one line of help each (a literal: the
    #: CLI lists them without importing the benchmark); declared in `verbs.py` beside the
    #: class (`mindprobe.core.verbs`).
    verbs: dict[str, str] = {}
    #: What `--limit N` keeps, in the words of this benchmark (shown in `run NAME --help`).
    limit: str = "the first N items"
    Options: type = NoOptions
    #: Official files (`mindprobe data fetch`); empty when items are generated or packaged.
    data_files: list[Any] = []
    #: Other models it can use by role (`--role judge=SPEC`); any other role is refused.
    roles: tuple[str, ...] = ()
    #: Numeric record fields its metrics group or weigh by -> (lowest, highest) value: a
    #: record holding another (an edited `problemsize 1e308`) is left out as damaged, with a
    #: warning naming file:line, instead of moving the headline (a literal: read unimported).
    record_ranges: dict[str, tuple[float, float]] = {}

    @abc.abstractmethod
    def plan(self, ctx: PlanContext, opts: Any) -> RunPlan:
        """Load or generate the items (verifying files) before any model is started."""

    @abc.abstractmethod
    async def run_item(self, item: Item, session: Session) -> dict[str, Any]:
        """Play one item; return its record fields (answers, scores, transcript). The run's
        typed options are `session.options`, what it derived `session.config`."""

    @abc.abstractmethod
    def results(self, records: list[dict[str, Any]], plan: RunPlan) -> Results:
        """The benchmark's results from finished records alone (errored ones are passed too);
        `plan.options` are the run's typed options (rebuilt from its manifest by `Run.plan`)."""

    # -- optional capabilities ---------------------------------------------------------------
    async def prepare(self, plan: RunPlan, model: Model) -> None:
        """Settings that need the started model under test (e.g. what its tokenizer does),
        put into `plan.config`, which the manifest records and episodes read (default:
        none)."""
        return None

    def combine(self, by_variant: dict[str, Results]) -> Results | None:
        """One view over several variants of one run command (None: show each on its own)."""
        return None

    def precision(self, plan: RunPlan) -> Precision:
        """The 95% half-width the headline's own interval will have for the plan's items,
        stated by every plan (`profile`, `run --dry-run`) before a completion is requested;
        default: a share over the items at 50%, the widest."""
        from mindprobe.core.stats import proportion_precision

        return proportion_precision(len(plan.items))

    def profile_settings(self, size: str) -> ProfileSettings | None:
        """The setting `mindprobe profile --size SIZE` runs (None: not part of the profile)."""
        return None

    def compare_runs(self, runs: list[Any]) -> Results | None:
        """One view across several runs of this benchmark, e.g. the same rows under different
        conditions or models side by side (runs: `core.store.Run`; None: nothing to add)."""
        return None

    def estimate(self, plan: RunPlan, opts: Any) -> Results:
        """Tokens (and cost) a run would take, without sending anything."""
        raise UsageError(f"{self.name} has no --estimate")

    def judge_items(self, records: list[dict[str, Any]], plan: RunPlan) -> list[Item]:
        """Items of a judge pass over a finished run's records (none by default)."""
        raise UsageError(f"{self.name} has no judge pass")

    async def judge_item(self, item: Item, session: Session) -> dict[str, Any]:
        raise UsageError(f"{self.name} has no judge pass")

    def prompt_templates(self, data_dir: Path | None) -> dict[str, Template]:
        """The templates its requests are made of, by name: upstream's wording, read from
        upstream's files (`core.upstream_source`). Empty: it has none, and `--prompt-file`
        (which replaces them, see `core.prompt_file`) does not apply."""
        return {}

    def results_with_judgements(
        self, records: list[dict[str, Any]], plan: RunPlan,
        judgements: dict[str, list[dict[str, Any]]], primary: str | None,
    ) -> Results:
        """Results when extra judges' verdicts exist (default: they do not change anything)."""
        return self.results(records, plan)

    # -- the report (optional; every default is neutral) -------------------------------------
    #: The rule that picks a model's headline run for the profile, in words (shown on the page).
    setting_rule: str = "the paper's default prompting (basic); other settings below it"

    def setting(self, variant: str, plan: RunPlan) -> dict[str, str]:
        """What, beside variant and dataset version, must match for two runs to be compared
        item by item: the prompting / solver and options that change what is sent (`plan`:
        the stored run's, from `Run.plan()`, typed options included)."""
        return {"prompting": plan.prompting}

    def setting_rank(self, variant: str, setting: dict[str, str]) -> int | None:
        """0 for the paper's default setting, more for others; None for a run that is never
        a headline (e.g. a prompt sweep's validation run)."""
        return 0 if setting.get("prompting") == "basic" else 1

    def metric_definitions(self) -> dict[str, str]:
        """Metric name -> one sentence and its formula, shown where the metric first appears;
        "chance" explains the baseline."""
        return {}

    #: Said where published rows would stand when upstream publishes none in a form a program
    #: reads (the report and `mindprobe published` show it instead of an empty column).
    published_note: str = ""

    def published(self, data_dirs: list[Path | None], warn: Callable[[str], None]
                  ) -> list[PublishedRow]:
        """Upstream's published results, read as data from its pinned files in the first of
        these data folders holding them (None: the data cache; none by default); a missing
        file is a DataError saying how to fetch it."""
        return []

    def published_coords(self, variant: str, plan: RunPlan) -> dict[str, str]:
        """A run in its published rows' words: the keys of their `setting`, and the `split`
        and `release` of its data (a row of other data is labelled beside it)."""
        return {**self.setting(variant, plan), "split": variant, "release": ""}

    def published_tables(self, data_dirs: list[Path], warn: Callable[[str], None]
                         ) -> dict[str, Results]:
        """A paper's or upstream's full published tables found in these folders, by title."""
        return {}

    #: The per-item score of the report's paired comparison (default: a boolean `correct`).
    paired_score: PairedScore = PairedScore()
    #: The record fields the report shows an item by (default: `group`, `answer`, `gold`).
    item_fields: ItemFields = ItemFields()
    #: Tables its `plots` already draw (exact names, or prefixes ending in "/"): the report's
    #: generic bar chart skips them.
    plotted_tables: tuple[str, ...] = ()

    def plots(self, runs: Sequence[Any], results: Sequence[Results | None]) -> list[str]:
        """Its own charts (SVG) of these runs (`core.store.Run`) and their Results (same
        order; None where a run could not be analysed), drawn with `mindprobe.report.svg`;
        the report adds a generic chart of every other table (default: none of its own)."""
        return []

    def item_outcome(self, record: dict[str, Any]) -> str:
        """One of OUTCOMES for a finished record (or a word of the benchmark's own, e.g. how a
        chat ended); the default reads a boolean `correct`."""
        if "error" in record:
            return "error"
        ok = record.get("correct")
        return "unscored" if not isinstance(ok, bool) else ("correct" if ok else "wrong")

    def item_scores(self, record: dict[str, Any]) -> dict[str, Any]:
        """The item's scores by name (shown with its transcript and exported)."""
        ok = record.get("correct")
        return {"correct": ok} if isinstance(ok, bool) else {}


def prompt_file_for(bench: Benchmark, path: str | Path | None) -> PromptFile | None:
    """`--prompt-file`, read and hashed once per command; refused (before any data is loaded)
    for a benchmark without templates."""
    if not path:
        return None
    if type(bench).prompt_templates is Benchmark.prompt_templates:
        raise UsageError(f"{bench.name} has no prompt templates; --prompt-file does not apply")
    return read_prompt_file(path)


def with_prompt_file(bench: Benchmark, plan: RunPlan, prompt_file: PromptFile | None) -> RunPlan:
    """A plan whose wording comes from a prompt file, labelled as such: its prompting label
    (run directory, `runs`, report) and its config (manifest) say so."""
    if prompt_file is None:
        return plan
    if not prompt_file.used:  # a benchmark that has templates but did not apply the file
        raise UsageError(f"{bench.name} did not apply --prompt-file to this setting")
    plan.prompting += prompt_file.label
    plan.config[PROMPT_FILE] = prompt_file.manifest(list(prompt_file.texts))
    return plan
