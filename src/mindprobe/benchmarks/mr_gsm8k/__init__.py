"""MR-GSM8K (Zeng et al., arXiv 2312.17080): grading a solution's correctness, first error step
and error reason. Model-agnostic parts only: data, prompts, parsing, metrics, upstream import.
"""

from .data import (
    FULL_N_CORRECT,
    FULL_N_WRONG,
    OFFICIAL_GIT_BLOB,
    OFFICIAL_URL,
    OFFICIAL_URL_LATEST,
    check_full_counts,
    counts,
    git_blob_sha1,
    load,
    load_demos,
    verify_git_blob,
)
from .metrics import aggregate, mcc, metrics_from_counts, mr_score, score_item
from .parse import (
    PARSE_ERROR,
    judge_verdict,
    normalise_judgement,
    normalise_step,
    parse_judge,
    parse_response,
    reason_hit,
)
from .prompts import build_judge_prompt, build_prompt, demo_block, solution_text
from .upstream import UpstreamResults, load_upstream_results, rescore, rescore_upstream

__all__ = [
    "FULL_N_CORRECT",
    "FULL_N_WRONG",
    "OFFICIAL_GIT_BLOB",
    "OFFICIAL_URL",
    "OFFICIAL_URL_LATEST",
    "PARSE_ERROR",
    "UpstreamResults",
    "aggregate",
    "build_judge_prompt",
    "build_prompt",
    "check_full_counts",
    "counts",
    "demo_block",
    "git_blob_sha1",
    "judge_verdict",
    "load",
    "load_demos",
    "load_upstream_results",
    "mcc",
    "metrics_from_counts",
    "mr_score",
    "normalise_judgement",
    "normalise_step",
    "parse_judge",
    "parse_response",
    "reason_hit",
    "rescore",
    "rescore_upstream",
    "score_item",
    "solution_text",
    "verify_git_blob",
]
