"""MR-GSM8K (Zeng et al., arXiv 2312.17080): grading a solution's correctness, first error step
and error reason. Model-agnostic parts only: data, prompts (read from upstream's script),
parsing, metrics, upstream import.

Names are imported on first use (see `mindprobe.lazy`).
"""

from mindprobe.lazy import lazy_exports

_MODULES = {
    "dataset_file": [
        "FULL_N_CORRECT",
        "FULL_N_WRONG",
        "OFFICIAL_GIT_BLOB",
        "OFFICIAL_URL",
        "OFFICIAL_URL_LATEST",
        "check_full_counts",
        "counts",
        "git_blob_sha1",
        "load",
        "load_demos",
        "verify_git_blob",
    ],
    "metrics": ["aggregate", "mcc", "metrics_from_counts", "mr_score", "score_item"],
    "parse": [
        "PARSE_ERROR",
        "judge_verdict",
        "normalise_judgement",
        "normalise_step",
        "parse_judge",
        "parse_response",
        "reason_hit",
    ],
    "prompts": ["Prompts", "UPSTREAM_SCRIPT", "prompts_of", "sampling", "templates"],
    "upstream": ["UpstreamResults", "load_upstream_results", "rescore", "rescore_upstream"],
}
__getattr__ = lazy_exports(__name__, _MODULES)
__all__ = sorted(n for names in _MODULES.values() for n in names)
