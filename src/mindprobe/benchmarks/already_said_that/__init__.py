""""Already Said That" (openai/evals `already_said_that`): model-agnostic benchmark logic.

Spec: shared/specs/already_said_that.md. Data preparation lives in `data`, the system prompt
in `prompt`, one interaction in `episode`, aggregation in `metrics`, cost estimates in
`estimate`.
"""

from .data import (
    ALIASES,
    DATA_FILES,
    DISTRACTOR_FILES,
    DISTRACTORLESS_ITEM,
    SAMPLES_FILE,
    UPSTREAM_COMMIT,
    VARIANTS,
    DataFile,
    load_distractors,
    load_samples,
    parse_distractors,
    parse_samples,
    resolve_variant,
    select_indices,
    select_samples,
)
from .episode import (
    Episode,
    ReplyFn,
    Turn,
    Verdict,
    alpha_words,
    human_answer,
    judge_distractor,
    judge_main,
    parse_reply,
    random_baseline_reply,
    run_episode,
    sample_rng,
)
from .estimate import estimate_tokens
from .metrics import METRIC_NAMES, aggregate
from .prompt import MAIN_PREFIX, example_word, task_description

__all__ = [
    "ALIASES",
    "DATA_FILES",
    "DISTRACTOR_FILES",
    "DISTRACTORLESS_ITEM",
    "MAIN_PREFIX",
    "METRIC_NAMES",
    "SAMPLES_FILE",
    "UPSTREAM_COMMIT",
    "VARIANTS",
    "DataFile",
    "Episode",
    "ReplyFn",
    "Turn",
    "Verdict",
    "aggregate",
    "alpha_words",
    "estimate_tokens",
    "example_word",
    "human_answer",
    "judge_distractor",
    "judge_main",
    "load_distractors",
    "load_samples",
    "parse_distractors",
    "parse_reply",
    "parse_samples",
    "random_baseline_reply",
    "resolve_variant",
    "run_episode",
    "sample_rng",
    "select_indices",
    "select_samples",
    "task_description",
]
