"""WorldSense (Benchekroun et al. 2023): grounded-reasoning benchmark — data, scoring, report."""

from mindprobe.benchmarks.worldsense.data import (
    load_results,
    load_testset,
    load_trainset,
    read_results_file,
    results_from_pairs,
    write_results_file,
)
from mindprobe.benchmarks.worldsense.metrics import (
    WorldSenseAnalysis,
    accuracy_by_group,
    analyse,
    bias_by_group,
    compute_acc_table,
)
from mindprobe.benchmarks.worldsense.report import (
    analyse_testset_dir,
    pivot_pretty,
    render_text,
    to_json,
)

__all__ = [
    "WorldSenseAnalysis",
    "accuracy_by_group",
    "analyse",
    "analyse_testset_dir",
    "bias_by_group",
    "compute_acc_table",
    "load_results",
    "load_testset",
    "load_trainset",
    "pivot_pretty",
    "read_results_file",
    "render_text",
    "results_from_pairs",
    "to_json",
    "write_results_file",
]
