"""What a benchmark plans with and what it plans: the model's facts and the run-wide settings it
is given (`ModelFacts`, `PlanContext`), and the items and identity of the experiment it returns
(`RunPlan` of `Item`s), which the runner, the store and the report read without the benchmark.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mindprobe.core.model import FREE_TEXT
from mindprobe.core.options import NoOptions

if TYPE_CHECKING:
    from mindprobe.core.prompt_file import PromptFile


@dataclass
class Item:
    """One unit of work: an id unique within the run and what the episode needs to play it.

    `prefix_group`: items whose prompts share a long prefix (SORT's questions on one excerpt,
    MR-GSM8K's k-shot demo block) name the same group; the runner plays a group's items back
    to back on one KV slot / endpoint, so the engine prefills the shared part once. It never
    changes what an item asks or what is recorded. None: the item is a group of its own (a
    chat's turns always share one slot)."""

    id: str
    payload: Any
    prefix_group: str | None = None
    #: What the item is, where its id alone does not say (an id that is a position in a
    #: seeded sample): recorded with it, so a run extended to a larger sample never pairs a
    #: record with another item under the same id (`core.resume.check_planned`).
    key: str | None = None


@dataclass
class ModelFacts:
    """What a benchmark may know about the model under test while planning (never the model)."""

    spec: str = "random"
    label: str = "model"
    capabilities: frozenset[str] = frozenset()
    context_window: int | None = None
    #: How the model's `score_choices` asks (its `Model.score_requests`): "one" request per
    #: question, or "per-token" (one per candidate token, the prompt re-read from the cache).
    score_requests: str = "one"
    #: The model answers uniformly among the allowed answers (the chance baseline): its
    #: spread is known before it runs, so a plan states the half-width it will have.
    at_chance: bool = False
    #: Base or chat model, and why (`Model.protocol`): what a benchmark says when it picks
    #: log-probability or the paper's chat protocol by the capabilities.
    protocol: dict[str, str] = field(default_factory=lambda: {"kind": "chat", "why": ""})

    @classmethod
    def of(cls, model: Any) -> ModelFacts:
        """The facts of a built model (planning never holds the model itself)."""
        caps = frozenset(model.capabilities) | ({FREE_TEXT} if model.can(FREE_TEXT) else set())
        return cls(model.spec, model.label, caps, model.context_window,
                   getattr(model, "score_requests", "one"),
                   getattr(model, "at_chance", False), model.protocol())


@dataclass
class PlanContext:
    """The run-wide settings a benchmark plans with (its own options come separately)."""

    variant: str
    seed: int | None = None
    data_dir: Path | None = None
    limit: int | None = None
    max_tokens: int | None = None
    model: ModelFacts = field(default_factory=ModelFacts)
    #: Other models by role, e.g. {"judge": "openai:gpt-4o"} (from --role / --judge).
    roles: dict[str, str] = field(default_factory=dict)
    warn: Callable[[str], None] = print
    info: Callable[[str], None] = print
    #: `--prompt-file`: other wording for the benchmark's templates (`apply_prompt_file`).
    prompt_file: PromptFile | None = None
    #: The plan is for a dry run (`run --dry-run`, `profile --dry-run`, `--estimate`): a
    #: benchmark may estimate what a run would first have to prepare (a dataset it builds,
    #: say) instead of preparing it, and must say so in `RunPlan.estimated`.
    dry_run: bool = False


@dataclass(frozen=True)
class Estimated:
    """Why a dry run's plan is not exactly the run's (what the run prepares first was
    estimated, not prepared) and which of its numbers that makes estimates: keys of the
    dry run's JSON document (`run --dry-run --json`), e.g. ("prompt_tokens",)."""

    why: str
    what: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {"why": self.why, "what": list(self.what)}


@dataclass
class RunPlan:
    """A benchmark ready to run: its items and what identifies this experiment."""

    items: list[Item]
    prompting: str = "basic"
    #: What the benchmark derives while planning (upstream's sampling, its templates, the
    #: reply budget ...) and at `prepare` (what the model's tokenizer does): recorded in the
    #: manifest as the run's `config`, part of its identity. The user's choices are `options`.
    config: dict[str, Any] = field(default_factory=dict)
    #: The benchmark's typed options (an instance of its `Options`), as the episodes and
    #: `results` read them; recorded in the manifest and rebuilt by `Run.plan()`.
    options: Any = field(default_factory=NoOptions)
    #: Where the items came from (files and their sha256, generator seed, version).
    provenance: dict[str, Any] = field(default_factory=dict)
    #: Models besides the one under test, by role (e.g. {"judge": "openai:gpt-4o"}).
    roles: dict[str, str] = field(default_factory=dict)
    #: Shared services the episodes use (started and closed by core), by name.
    resources: dict[str, Any] = field(default_factory=dict)
    #: True when the benchmark already applied --limit (e.g. rounding up to whole tuples).
    limit_applied: bool = False
    #: Label of the model under test (from the manifest; used in tables and exports).
    model_label: str = "model"
    #: Replaces the variant in the run's directory and manifest when the items are not the
    #: variant's (e.g. a `--data-file`), so such a run never collides with an official one.
    variant_label: str | None = None
    #: Seconds one item may take (None: no limit).
    item_time_limit: float | None = None
    #: Model capabilities the episodes rely on, checked once the model has started (a server's
    #: real abilities are only known then), e.g. {"grammar"} or {"logprobs"}.
    requires: dict[str, str] = field(default_factory=dict)
    #: The model the plan was made for: estimates follow the request path it takes.
    model_facts: ModelFacts | None = None
    #: Config keys that only say how many items the run has (e.g. a sample size): a larger
    #: value extends a recorded run, as a larger --limit does (`core.resume`).
    sizes: tuple[str, ...] = ()
    #: The benchmark's data folder the run reads (a --data-dir resolved to it, see
    #: `core.data.benchmark_folder`; None: the data cache). Recorded in the manifest, so the
    #: run is scored, analysed and reported from the same files.
    data_dir: Path | None = None
    #: Set only by a plan for a dry run (`PlanContext.dry_run`) whose numbers are estimates
    #: (None: exact): the dry run's JSON (`run --dry-run --json`, the profile's plan) says
    #: so, and the benchmark refuses to run such a plan (in `prepare`).
    estimated: Estimated | None = None
