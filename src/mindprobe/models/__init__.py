"""Model specs on the command line -> backends (see `mindprobe models`)."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from mindprobe.core.model import (
    NO_REASONING,
    CallContext,
    Completion,
    Model,
    Reasoning,
    Request,
    TransientError,
    Usage,
)
from mindprobe.errors import ModelError

__all__ = [
    "CallContext", "Completion", "Model", "Request", "TransientError", "Usage",
    "MODEL_SPECS", "model_label", "parse_model_spec",
]

MODEL_SPECS = [
    ("random", "uniform over the item's allowed answers (seeded): the chance baseline"),
    ("local", "embedded Gemma 3 270M base model (Q4_K_M GGUF, Gemma Terms of Use) served "
     "in-process by llama.cpp; log-probability / completion protocol"),
    ("local:smollm2", "embedded instruct model: SmolLM2-135M-Instruct (Q4_1 GGUF, Apache-2.0), "
     "fetched from the package index into the data cache on first use; chat protocol"),
    ("local:PATH.gguf", "any GGUF file, same engine; a chat template in the GGUF gets the "
     "paper's chat protocol, none the base model's log-probability / completion"),
    ("openai:MODEL", "OpenAI API (key from OPENAI_API_KEY)"),
    ("openai:MODEL@URL", "any OpenAI-compatible server: vLLM, SGLang, Ollama, llama.cpp, TGI "
     "(key, if needed, from MINDPROBE_API_KEY)"),
    ("openai:MODEL@URL1,URL2,...", "one model on several servers: least-loaded routing, each "
     "item's turns on one server (prefix caches), failover; or --endpoints FILE"),
    ("local --replicas N --ray [ADDRESS]", "N llama.cpp replicas of a local GGUF placed on a Ray "
     "cluster (a local one without ADDRESS), routed like several servers"),
    ("human", "a person answering at the terminal"),
]


def _safe(label: str) -> str:
    """Make a label usable as one path component (runs/<bench>/<variant>/<prompting>___<label>)."""
    return re.sub(r"[^A-Za-z0-9._+-]+", "-", label).strip("-") or "model"


def model_label(spec: str) -> str:
    """The label a spec's runs and verdicts are filed under (e.g. a judge's), without starting
    anything."""
    return parse_model_spec(spec).label


def parse_model_spec(spec: str, *, timeout: float = 300.0, max_attempts: int = 6,
                     endpoints_file: str | Path | None = None, replicas: int | None = None,
                     ray_address: str | None = None, threads: int | None = None,
                     batch: int | None = None, reasoning_effort: str | None = None,
                     reasoning: bool = False) -> Model:
    """Build a backend from a spec string; raise ModelError with the accepted forms otherwise.

    Scale-out: `openai:MODEL@URL1,URL2` or `openai:MODEL` with `endpoints_file` (`--endpoints`)
    route one model over several servers; `local[:PATH]` with `replicas` and `ray_address`
    (`--replicas N --ray [ADDRESS]`; "" = a local Ray instance) starts replicas on Ray.
    `reasoning_effort` / `reasoning`: see `Reasoning` (only backends that send requests use it).
    """
    spec = spec.strip()
    if (threads or batch) and (spec != "local" and not spec.startswith("local:")
                               or replicas is not None or ray_address is not None):
        from mindprobe.errors import UsageError

        raise UsageError("--threads and --batch-size set the embedded llama.cpp engine: use them "
                         "with --model local or local:PATH.gguf (not with --replicas/--ray, "
                         f"whose replicas take their share of the CPUs); got {spec!r}")
    thinking = Reasoning.of(reasoning_effort, reasoning)
    if endpoints_file is not None or replicas is not None or ray_address is not None:
        return _scaled_model(spec, timeout=timeout, max_attempts=max_attempts,
                             endpoints_file=endpoints_file, replicas=replicas,
                             ray_address=ray_address, reasoning=thinking)
    prefix, _, rest = spec.partition(":")
    factory = BACKENDS.get(prefix) or _plugin_backend(prefix)
    if factory is not None:
        model = factory(spec, rest, BackendSettings(timeout, max_attempts, thinking, threads, batch))
        if model is not None:
            return model
    forms = ", ".join(s for s, _ in MODEL_SPECS)
    raise ModelError(f"unknown model spec {spec!r}; use one of: {forms}")


@dataclass(frozen=True)
class BackendSettings:
    """What every backend is built with besides its spec."""

    timeout: float = 300.0
    max_attempts: int = 6
    reasoning: Reasoning = NO_REASONING
    #: The embedded llama.cpp engine's threads and batch size (`--threads`, `--batch-size`).
    threads: int | None = None
    batch: int | None = None


#: A backend factory: (whole spec, what follows "PREFIX:", settings) -> the model, or None when
#: the spec is not one of its forms.
Factory = Callable[[str, str, BackendSettings], "Model | None"]


def _random(spec: str, rest: str, s: BackendSettings) -> Model | None:
    from mindprobe.models.random import RandomModel

    return RandomModel() if spec == "random" else None


def _human(spec: str, rest: str, s: BackendSettings) -> Model | None:
    from mindprobe.models.human import HumanModel

    return HumanModel() if spec == "human" else None


def _local(spec: str, rest: str, s: BackendSettings) -> Model | None:
    from mindprobe.models.embedded import EMBEDDED
    from mindprobe.models.local import LocalModel

    if spec == "local" or (rest in EMBEDDED and EMBEDDED[rest].spec == spec):
        return LocalModel(None, spec=spec, reasoning=s.reasoning, threads=s.threads,
                          batch=s.batch, embedded=EMBEDDED["gemma" if spec == "local" else rest])
    path = Path(rest).expanduser()
    if not path.is_file():
        raise ModelError(f"GGUF file not found: {path} (spec local:PATH needs an existing file)")
    return LocalModel(path, spec=spec, reasoning=s.reasoning, threads=s.threads,
                      batch=s.batch)


def _openai(spec: str, rest: str, s: BackendSettings) -> Model | None:
    from mindprobe.models.openai_compat import OPENAI_URL, OpenAICompatModel

    if not rest:
        return None
    if "@" in rest:
        name, url = rest.split("@", 1)
        if not name or not url:
            raise ModelError(f"bad model spec {spec!r}: expected openai:MODEL@URL")
        if "," in url:
            from mindprobe.models.endpoints import parse_endpoint_list

            return _router(name, parse_endpoint_list(url, what=f"--model {spec}"), None,
                           timeout=s.timeout, max_attempts=s.max_attempts,
                           reasoning=s.reasoning)
        from mindprobe.models.wire import normalise_base_url

        normalise_base_url(url)  # a malformed URL is one message, before anything is built
        # Labelled by the model, never the address: host and port change with every
        # rescheduled job; what the server serves is in identity() (checked on resume).
        return OpenAICompatModel(
            name, url, os.environ.get("MINDPROBE_API_KEY"), spec=spec,
            label=_safe(name), timeout=s.timeout, max_attempts=s.max_attempts,
            grammar="llama", reasoning=s.reasoning,
        )
    # the key is asked for when the model starts: a --dry-run sends nothing, needs none
    return OpenAICompatModel(
        rest, OPENAI_URL, os.environ.get("OPENAI_API_KEY"), spec=spec, label=_safe(rest),
        timeout=s.timeout, max_attempts=s.max_attempts, grammar="openai", reasoning=s.reasoning,
    )


#: Backends by spec prefix (`PREFIX` or `PREFIX:...`). A package adds one through the
#: entry-point group `mindprobe.models` (`PREFIX = "package.module:factory"`).
BACKENDS: dict[str, Factory] = {"random": _random, "human": _human, "local": _local,
                                "openai": _openai}
MODELS_GROUP = "mindprobe.models"


def _plugin_backend(prefix: str) -> Factory | None:
    """A backend registered by another package under `prefix` (looked up only for a prefix
    mindprobe does not know, so built-in specs never scan the installed packages)."""
    from importlib.metadata import entry_points

    for ep in entry_points(group=MODELS_GROUP, name=prefix):
        try:
            return ep.load()
        except Exception as exc:  # a broken plugin: one clear line, not a traceback
            raise ModelError(f"model backend {prefix!r} ({ep.value}) cannot be loaded: "
                             f"{type(exc).__name__}: {exc}") from None
    return None


def _router(name: str, endpoints: list, group: str | None, *, timeout: float,
            max_attempts: int, reasoning: Reasoning) -> Model:
    """One model over several servers; named by the group, never by the URLs (see router.py)."""
    from mindprobe.models.endpoints import DEFAULT_GROUP
    from mindprobe.models.router import RouterModel

    group = group or DEFAULT_GROUP
    return RouterModel(name, endpoints, spec=f"openai:{name}@{group}",
                       label=_safe(f"{name}@{group}"), group=group, timeout=timeout,
                       max_attempts=max_attempts, reasoning=reasoning)


def _scaled_model(spec: str, *, timeout: float, max_attempts: int,
                  endpoints_file: str | Path | None, replicas: int | None,
                  ray_address: str | None, reasoning: Reasoning) -> Model:
    """`--endpoints FILE`, `--replicas N --ray [ADDRESS]`: a router over several endpoints."""
    from mindprobe.errors import UsageError

    if endpoints_file is not None:
        if replicas is not None or ray_address is not None:
            raise UsageError("--endpoints lists servers you started; --replicas/--ray start "
                             "them for you: use one or the other")
        if not spec.startswith("openai:") or len(spec) == len("openai:") or "@" in spec:
            raise UsageError(f"--endpoints serves one model name: use --model openai:MODEL "
                             f"(without @URL), got {spec!r}")
        from mindprobe.models.endpoints import parse_endpoints_file

        endpoints, group = parse_endpoints_file(endpoints_file)
        return _router(spec[len("openai:"):], endpoints, group, timeout=timeout,
                       max_attempts=max_attempts, reasoning=reasoning)
    if spec != "local" and not spec.startswith("local:"):
        raise UsageError(f"--replicas/--ray start llama.cpp replicas of a local GGUF (--model "
                         f"local or local:PATH.gguf), got {spec!r}; for servers you started "
                         "yourself use openai:MODEL@URL1,URL2 or --endpoints FILE")
    if ray_address is None:
        raise UsageError("--replicas places llama.cpp replicas with Ray: add --ray (a local Ray "
                         "instance) or --ray ADDRESS (an existing cluster)")
    if replicas is None:
        raise UsageError("--ray needs --replicas N (how many llama.cpp servers to start)")
    if replicas < 1:
        raise UsageError(f"--replicas must be a positive number; got {replicas}")
    from mindprobe.models.embedded import EMBEDDED, ensure
    from mindprobe.models.local import DEFAULT_MODEL_NAME
    from mindprobe.models.ray_replicas import RayReplicas
    from mindprobe.models.router import RouterModel

    path = None
    rest = spec[len("local:"):]
    if spec.startswith("local:") and rest in EMBEDDED and EMBEDDED[rest].spec == spec:
        path = ensure(EMBEDDED[rest])  # fetched here, once: the replicas load it by path
    elif spec.startswith("local:"):
        path = Path(rest).expanduser()
        if not path.is_file():
            raise ModelError(f"GGUF file not found: {path} (spec local:PATH needs an existing file)")
    name = DEFAULT_MODEL_NAME if path is None else path.stem
    label = DEFAULT_MODEL_NAME if path is None else f"local-{name}"
    launcher = RayReplicas(path, replicas, ray_address or None, model=name)
    return RouterModel(name, None, spec=spec, label=label, group="ray-replicas",
                       timeout=timeout, max_attempts=max_attempts, launcher=launcher,
                       reasoning=reasoning)
