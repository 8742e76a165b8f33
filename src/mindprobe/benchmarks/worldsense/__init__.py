"""WorldSense (Benchekroun et al. 2023): grounded-reasoning benchmark — data, scoring, report.

The Python API is imported lazily (PEP 562), so `mindprobe run worldsense --help` does not
import pandas just to read the benchmark's options.

Names are imported on first use (see `mindprobe.lazy`).
"""

from mindprobe.lazy import lazy_exports

_MODULES = {
    "data": ["load_testset", "load_trainset"],
    "metrics": [
        "WorldSenseAnalysis",
        "accuracy_by_group",
        "analyse",
        "bias_by_group",
        "compute_acc_table",
    ],
    "report": ["analyse_testset_dir", "pivot_pretty", "render_text", "to_json"],
    "upstream": ["load_results", "read_results_file", "results_from_pairs", "write_results_file"],
}
__getattr__ = lazy_exports(__name__, _MODULES)
__all__ = sorted(n for names in _MODULES.values() for n in names)
