"""mindprobe: faithful, resumable runs of published LLM cognition benchmarks.

The Python API (imported on first use, so `mindprobe --version` stays instant)::

    import mindprobe
    res = mindprobe.evaluate("worldsense:fresh", "openai:my-model@http://localhost:8000/v1",
                             options={"prompting": "basic"}, limit=100)
    res.headline, res.tables["accuracy"].frame
    run = mindprobe.load_run(res.run_dir)   # manifest, records (a DataFrame), results()

and what a benchmark author needs: `Benchmark, Item, RunPlan, Results, Headline, Request,
Session, option` (see README, "Writing a benchmark").
"""

from mindprobe.lazy import lazy_exports
from mindprobe.version import __version__

__all__ = [
    "__version__",
    "Benchmark", "Headline", "Item", "PlanContext", "Request", "Results", "Run", "RunPlan",
    "Session", "evaluate", "judge", "list_benchmarks", "load_run", "option", "profile",
]

__getattr__ = lazy_exports("mindprobe", {
    "api": ["evaluate", "judge", "list_benchmarks", "load_run", "profile", "Run"],
    "core.benchmark": ["Benchmark"],
    "core.plan": ["Item", "PlanContext", "RunPlan"],
    "core.results": ["Headline", "Results"],
    "core.session": ["Session"],
    "core.options": ["option"],
    "core.model": ["Request"],
})
del lazy_exports  # dir(mindprobe) lists the public names (and none of the machinery)
