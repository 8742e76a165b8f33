"""Model specs on the command line -> backends (see `mindprobe models`)."""

from __future__ import annotations

import os
import re
from pathlib import Path
from urllib.parse import urlsplit

from mindprobe.errors import ModelError
from mindprobe.models.base import CallContext, Completion, Model, Request, TransientError, Usage

__all__ = [
    "CallContext", "Completion", "Model", "Request", "TransientError", "Usage",
    "MODEL_SPECS", "parse_model_spec",
]

MODEL_SPECS = [
    ("random", "uniform over the item's allowed answers (seeded): the chance baseline"),
    ("local", "embedded Gemma 3 270M (Q4_K_M GGUF) served in-process by llama.cpp"),
    ("local:PATH.gguf", "any GGUF file, same engine"),
    ("openai:MODEL", "OpenAI API (key from OPENAI_API_KEY)"),
    ("openai:MODEL@URL", "any OpenAI-compatible server: vLLM, SGLang, Ollama, llama.cpp, TGI "
     "(key, if needed, from MINDPROBE_API_KEY)"),
    ("human", "a person answering at the terminal"),
]


def _safe(label: str) -> str:
    """Make a label usable as one path component (runs/<bench>/<variant>/<prompting>___<label>)."""
    return re.sub(r"[^A-Za-z0-9._+-]+", "-", label).strip("-") or "model"


def parse_model_spec(spec: str, *, timeout: float = 300.0, max_attempts: int = 6) -> Model:
    """Build a backend from a spec string; raise ModelError with the accepted forms otherwise."""
    from mindprobe.models.human import HumanModel
    from mindprobe.models.local import LocalModel
    from mindprobe.models.openai_compat import OPENAI_URL, OpenAICompatModel
    from mindprobe.models.random import RandomModel

    spec = spec.strip()
    if spec == "random":
        return RandomModel()
    if spec == "human":
        return HumanModel()
    if spec == "local":
        return LocalModel(None, spec=spec)
    if spec.startswith("local:"):
        path = Path(spec[len("local:"):]).expanduser()
        if not path.is_file():
            raise ModelError(f"GGUF file not found: {path} (spec local:PATH needs an existing file)")
        return LocalModel(path, spec=spec)
    if spec.startswith("openai:") and len(spec) > len("openai:"):
        rest = spec[len("openai:"):]
        if "@" in rest:
            name, url = rest.split("@", 1)
            if not name or not url:
                raise ModelError(f"bad model spec {spec!r}: expected openai:MODEL@URL")
            host = urlsplit(url if "://" in url else "http://" + url).netloc
            return OpenAICompatModel(
                name, url, os.environ.get("MINDPROBE_API_KEY"), spec=spec,
                label=_safe(f"{name}@{host}"), timeout=timeout, max_attempts=max_attempts,
                grammar="llama",
            )
        key = os.environ.get("OPENAI_API_KEY")
        if not key:
            raise ModelError(f"{spec} needs an API key: set OPENAI_API_KEY")
        return OpenAICompatModel(
            rest, OPENAI_URL, key, spec=spec, label=_safe(rest), timeout=timeout,
            max_attempts=max_attempts, grammar="openai",
        )
    forms = ", ".join(s for s, _ in MODEL_SPECS)
    raise ModelError(f"unknown model spec {spec!r}; use one of: {forms}")
