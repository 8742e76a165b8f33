""" "Already Said That" (openai/evals `already_said_that`): model-agnostic benchmark logic.

Spec: shared/specs/already_said_that.md; where it paraphrases upstream's wording, upstream's
files are the authority. Data preparation lives in `data`, the wording and solvers (read
from upstream's files) in `upstream`, the turns and their generator in `turns`, one
interaction in `episode`, aggregation in `metrics`, cost estimates in `estimate`.

Names are imported on first use (see `mindprobe.lazy`).
"""

from mindprobe.lazy import lazy_exports

_MODULES = {
    "data": [
        "ALIASES",
        "BASE_MODEL_FILES",
        "DATA_FILES",
        "DISTRACTOR_FILES",
        "DISTRACTORLESS_ITEM",
        "SAMPLES_FILE",
        "UPSTREAM_COMMIT",
        "UPSTREAM_FILES",
        "VARIANTS",
        "DataFile",
        "load_distractors",
        "load_samples",
        "parse_distractors",
        "parse_samples",
        "resolve_variant",
        "select_indices",
        "select_samples",
    ],
    "episode": [
        "Episode",
        "ReplyFn",
        "Verdict",
        "human_answer",
        "judge_distractor",
        "judge_main",
        "random_baseline_reply",
        "run_episode",
    ],
    "turns": ["Turn", "alpha_words", "oracle_turns", "parse_reply", "sample_rng"],
    "estimate": ["estimate_results", "estimate_tokens"],
    "metrics": ["METRIC_NAMES", "aggregate"],
    "upstream": ["MAIN_PREFIX", "TextFormat", "example_word", "solver", "task_description",
                 "templates", "text_format"],
}
__getattr__ = lazy_exports(__name__, _MODULES)
__all__ = sorted(n for names in _MODULES.values() for n in names)
