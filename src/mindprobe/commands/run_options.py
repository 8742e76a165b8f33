"""The flags of `mindprobe run` (and of every command that takes them: a sweep, the benchmark
verbs with run options), and the benchmark's typed options as flags: declared here, read back
into `RunSettings` by `commands.run.settings_from_args`."""

from __future__ import annotations

import argparse
from typing import Any


def add_common_run_options(r: argparse.ArgumentParser | argparse._ArgumentGroup,
                           bench: str | None = None) -> None:
    from mindprobe.registry import BENCHMARKS

    r.add_argument("--model", required=True, help="model spec, see `mindprobe models`")
    r.add_argument("--limit", type=int, metavar="N", help=(
        f"run only {BENCHMARKS[bench].limit}" if bench in BENCHMARKS else
        "run only N items; what an item is depends on the benchmark (`mindprobe run BENCH "
        "--help` says)"))
    r.add_argument("--concurrency", type=int,
                   help="items in flight (default per backend; the embedded model: 1, which is "
                   "reproducible)")
    r.add_argument("--seed", type=int, help="seed for sampling/generation (default per benchmark)")
    r.add_argument("--data-dir", help="folder with the official files (same layout as "
                   "shared/data/<bench>)")
    r.add_argument("--prompt-file", metavar="FILE", help="YAML/JSON replacing some of the "
                   "benchmark's prompt templates (same slot names) for a prompt-sensitivity "
                   "study; the run is labelled +prompts-<sha256>. `mindprobe data prompts "
                   "BENCH` prints upstream's templates to start from")
    r.add_argument("--runs-dir", default="runs", help="where runs are stored (default ./runs)")
    r.add_argument("--name", help="a tag added to the run's directory name, to keep variants of "
                   "one experiment apart (e.g. a sweep)")
    r.add_argument("--role", action="append", metavar="ROLE=SPEC",
                   help="another model taking part, e.g. --role judge=openai:gpt-4o")
    r.add_argument("-O", "--option", action="append", metavar="KEY=VALUE",
                   help="a benchmark option in generic form, e.g. -O shots=3 (for scripts)")
    r.add_argument("--no-cache", action="store_true", help="do not read or write the response cache")
    r.add_argument("--cache", help="response cache file (default $MINDPROBE_RESPONSE_CACHE, else "
                   "~/.cache/mindprobe/responses.sqlite)")
    r.add_argument("--retry-errors", action="store_true", help="re-run items that ended in errors")
    r.add_argument("--timeout", type=float, default=300.0, help="seconds per request (default 300)")
    r.add_argument("--max-tokens", type=int, help="cap on tokens per reply (default per benchmark)")
    r.add_argument("--max-attempts", type=int, default=6, help="attempts per request (default 6)")
    add_context_window(r)
    r.add_argument("--json", action="store_true", help="print only the results JSON on stdout")
    add_log_to(r)
    r.add_argument("--endpoints", metavar="FILE",
                   help="several servers of one model (--model openai:MODEL): one URL per line, "
                   "optionally `concurrency=N key_env=VAR`, `group = NAME`, # comments; each "
                   "item's turns stay on one server, a dead server's items move to a live one")
    r.add_argument("--replicas", type=int, metavar="N",
                   help="start N llama.cpp replicas of --model local[:PATH.gguf] with --ray")
    r.add_argument("--ray", nargs="?", const="", default=None, metavar="ADDRESS",
                   help="place the --replicas on a Ray cluster (ADDRESS, e.g. auto or "
                   "ray://head:10001); without ADDRESS a local Ray instance is started. Needs "
                   "`pip install 'mindprobe[ray]'`")
    r.add_argument("--threads", type=int, metavar="N",
                   help="CPU threads of the embedded llama.cpp engine (--model local[:PATH]; "
                   "default: half the CPUs this process may use, at least 1)")
    r.add_argument("--batch-size", type=int, metavar="N",
                   help="prompt tokens the embedded engine evaluates per step (default 512)")
    r.add_argument("--dry-run", action="store_true",
                   help="show how the items would be spread over the endpoints and how many "
                   "requests (and tokens, where the benchmark estimates them) the run takes; "
                   "sends nothing")
    r.add_argument("--reasoning-effort", choices=["low", "medium", "high"],
                   help="how hard a reasoning model thinks: sent as `reasoning_effort` (OpenAI, "
                   "vLLM); implies --reasoning. Also MINDPROBE_REASONING_EFFORT")
    r.add_argument("--reasoning", action="store_true",
                   help="the model thinks before answering: default --max-tokens leave room for "
                   "its thinking from the first request (without it, room is made once a reply "
                   "shows thinking). Also MINDPROBE_REASONING=1")


def add_context_window(p: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    """`--context-window N`, for `run` and `profile` alike."""
    p.add_argument("--context-window", type=int, metavar="N",
                   help="the model's context window in tokens, overriding what the backend "
                   "reports (llama.cpp's n_ctx, vLLM's max_model_len, the GGUF's); an item "
                   "whose prompt plus reply budget exceeds it is recorded as `does not fit` "
                   "and never sent")


def add_log_to(p: argparse.ArgumentParser, what: str = "the results") -> None:
    """`--log-to TRACKER`, for `run` and `profile` alike (tracking.parse_target reads it)."""
    p.add_argument("--log-to", action="append", metavar="TRACKER", default=[],
                   help=f"also log {what} to mlflow[:TRACKING_URI] or wandb[:PROJECT] "
                   "(repeatable; checked before the run starts); a resumed run updates the "
                   "same tracker run")
    add_verbose(p)


def add_verbose(p: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    """`-v`: the trackers' own INFO lines (MLflow's, W&B's), quiet without it."""
    p.add_argument("-v", "--verbose", action="store_true",
                   help="show the trackers' own messages (MLflow's and W&B's INFO lines)")


def add_benchmark_options(parser: argparse.ArgumentParser, bench: str) -> None:
    """The benchmark's typed options as flags (defaults and help from its dataclass)."""
    from mindprobe.core.options import option_specs
    from mindprobe.registry import options_class

    specs = option_specs(options_class(bench))
    if not specs:
        return
    g = parser.add_argument_group(f"{bench} options")
    for s in specs:
        default = "" if s.default is None else f" (default {s.default})"
        kw: dict = {"dest": f"bench__{s.name}", "default": None, "help": s.help + default}
        if s.kind is bool:
            g.add_argument(s.flag, action="store_const", const=True, **kw)
        else:
            g.add_argument(s.flag, metavar=s.metavar or s.name.upper(), choices=s.choices, **kw)


def ranged(flag: str, kind: type, minimum: float, maximum: float) -> Any:
    """argparse's `type` for a numeric flag with a declared range: the number, or one usage
    error naming the flag and its range."""
    from mindprobe.core.options import check_range

    def convert(text: str) -> Any:
        value = kind(text)  # a ValueError is argparse's "invalid int value"
        check_range(flag, value, minimum, maximum)
        return value
    convert.__name__ = kind.__name__
    return convert
