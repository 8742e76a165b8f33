"""Rendering chat messages with a model's own Jinja chat template, as trainers consume them.

The template comes from a file: a bare Jinja template, or a Hugging Face
``tokenizer_config.json`` (its ``chat_template`` plus the special tokens it names, e.g.
``bos_token``). It is rendered the way Hugging Face tokenizers render it (a sandboxed,
immutable Jinja environment with ``trim_blocks``/``lstrip_blocks``, ``raise_exception`` and
``loopcontrols``), so the strings match ``apply_chat_template(..., tokenize=False)``.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mindprobe.core.inputs import read_input
from mindprobe.errors import DataError, UsageError

SPECIAL_TOKENS = ("bos_token", "eos_token", "unk_token", "pad_token", "sep_token", "cls_token",
                  "mask_token")


@dataclass
class ChatTemplate:
    """A loaded template and the special tokens it may refer to."""

    source: str
    path: Path
    tokens: dict[str, str] = field(default_factory=dict)
    _compiled: Any = None

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.source.encode("utf-8")).hexdigest()

    def describe(self) -> dict[str, Any]:
        """What the provenance records about the template."""
        return {"file": str(self.path), "sha256": self.sha256, "special_tokens": self.tokens}

    def render(self, messages: list[dict[str, str]], add_generation_prompt: bool = False) -> str:
        """The conversation as one string (no generation prompt: a training text)."""
        import jinja2

        if self._compiled is None:
            self._compiled = _environment().from_string(self.source)
        try:
            return self._compiled.render(messages=messages, tools=None, documents=None,
                                         add_generation_prompt=add_generation_prompt,
                                         **self.tokens)
        except jinja2.UndefinedError as exc:
            raise DataError(f"{self.path}: the chat template needs {exc.message}; give the "
                            "model's tokenizer_config.json (it defines the special tokens) "
                            "instead of the bare template") from None
        except jinja2.TemplateError as exc:
            raise DataError(f"{self.path}: the chat template failed: {exc}") from None


def _environment() -> Any:
    import jinja2
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    def raise_exception(message: str) -> None:
        raise jinja2.TemplateError(message)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                        undefined=jinja2.StrictUndefined,
                                        extensions=["jinja2.ext.loopcontrols"])
    env.globals["raise_exception"] = raise_exception
    env.filters["tojson"] = lambda x, indent=None, **_: json.dumps(x, ensure_ascii=False,
                                                                   indent=indent)
    return env


def _token(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and isinstance(value.get("content"), str):
        return value["content"]  # an AddedToken written out as a dict
    return None


def load_chat_template(path: str | Path) -> ChatTemplate:
    """A Jinja template file, or a tokenizer_config.json with a ``chat_template``."""
    try:
        import jinja2
    except ImportError:
        raise UsageError("--chat-template needs jinja2: pip install 'mindprobe[jinja]'") from None
    p = Path(path).expanduser()
    if not p.exists() and not p.is_symlink():
        raise UsageError(f"--chat-template {path}: no such file; give a Jinja chat template "
                         "or a model's tokenizer_config.json")
    try:
        text = read_input(p, "--chat-template", "chat template").decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DataError(f"{p}: cannot read the chat template ({exc})") from None
    tokens: dict[str, str] = {}
    if p.suffix == ".json":
        try:
            config = json.loads(text)
        except ValueError as exc:
            raise DataError(f"{p}: not valid JSON ({exc})") from None
        template = config.get("chat_template") if isinstance(config, dict) else None
        if isinstance(template, list):  # named templates: the default one
            template = next((t.get("template") for t in template if isinstance(t, dict)
                             and t.get("name") == "default"), None)
        if not isinstance(template, str):
            raise DataError(f"{p}: has no 'chat_template' string; give the template itself")
        tokens = {k: v for k in SPECIAL_TOKENS if (v := _token(config.get(k))) is not None}
        text = template
    out = ChatTemplate(text, p, tokens)
    try:
        out._compiled = _environment().from_string(text)
    except jinja2.TemplateSyntaxError as exc:
        raise DataError(f"{p}, line {exc.lineno}: not a valid Jinja template ({exc.message})"
                        ) from None
    return out
