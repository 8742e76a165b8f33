"""MR-GSM8K's prompts, read from upstream's own script (dvlab-research/MR-GSM8K, MIT).

Nothing here is typed from upstream: `scripts/eval_mr_gsm8k.py` is official data (fetched by
`mindprobe data fetch mr_gsm8k`, sha256-verified) and is read, never run. Its f-strings are the
templates, literal parts byte for byte and fields as named slots (`core.upstream_source`):
`get_eval_outputs` builds the 0-shot and the k-shot evaluation prompt, `construct_k_shot_demos`
the demo block, `grade_eval_outputs` the judge's prompt; the sampling settings are the defaults
of `request_openai` (temperature 0, max_token 1024), which the script never overrides. Each is
rendered as the script renders it: the solution steps joined by newlines, the judge's solution
as the Python list itself (its repr), the demo block used only when k > 0. Where the spec
paraphrases a template, the script is the authority.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

from mindprobe.core.data import DataFile
from mindprobe.core.upstream_source import PythonSource, Template
from mindprobe.errors import DataError, UsageError

from .dataset_file import STEP_FIELD, UPSTREAM_COMMIT

BENCH = "mr_gsm8k"
SCRIPT_PATH = "scripts/eval_mr_gsm8k.py"
UPSTREAM_SCRIPT = DataFile(
    f"upstream/{SCRIPT_PATH}",
    url=f"https://raw.githubusercontent.com/dvlab-research/MR-GSM8K/{UPSTREAM_COMMIT}/{SCRIPT_PATH}",
    sha256="962cd34962c4982f82ada3a799a40170d3f236e21a5cda194474169741521c3a",
)

#: Template name -> (function, assignment target, its n-th such assignment, slots).
_WHERE = {
    "eval_0shot": ("get_eval_outputs", "data['eval_prompt']", 0, {"question", "sol_steps"}),
    "eval_kshot": ("get_eval_outputs", "data['eval_prompt']", 1,
                   {"k_shot_demos", "question", "sol_steps"}),
    "demo_intro": ("construct_k_shot_demos", "demo_str", 0, set()),
    "demo": ("construct_k_shot_demos", "demo_str", 1, {"question", "sol_steps", "evaluation"}),
    "grade": ("grade_eval_outputs", "data['grade_prompt']", 0,
              {"question", "model_output_steps", STEP_FIELD,
               "model_output_solution_first_error_reason", "error_reason"}),
}


def _script(data_dir: Path | None) -> PythonSource:
    return PythonSource.official(BENCH, [UPSTREAM_SCRIPT], UPSTREAM_SCRIPT.relpath, data_dir)


def templates(data_dir: Path | None) -> dict[str, Template]:
    """The script's five templates by name, checked to have the slots this module fills."""
    script = _script(data_dir)
    out = {}
    for name, (function, target, nth, slots) in _WHERE.items():
        found = [a.template for a in script.function_strings(function) if a.target == target]
        if len(found) <= nth or set(found[nth].slots) != slots:
            raise script.error(f"{function}() has no {target} template with slots "
                               f"{', '.join(sorted(slots)) or 'none'} (template {name})")
        out[name] = found[nth]
    return out


def sampling(data_dir: Path | None) -> dict[str, Any]:
    """temperature and max_tokens of every request (defaults of the script's request_openai)."""
    script = _script(data_dir)
    defaults = script.defaults("request_openai")
    try:
        return {"temperature": defaults["temperature"], "max_tokens": defaults["max_token"]}
    except KeyError as exc:
        raise script.error(f"request_openai() has no literal default for {exc}") from None


def braced(templates: Mapping[str, Template]) -> dict[str, str]:
    """The templates as text (kept in the run's config: judge passes render from it)."""
    return {name: t.braced() for name, t in templates.items()}


class Prompts:
    """Renders the requests of one run from its templates (upstream's or a prompt file's)."""

    def __init__(self, texts: Mapping[str, str]) -> None:
        missing = [n for n in _WHERE if n not in texts]
        if missing:
            raise DataError(f"the run's config lacks the template(s) {', '.join(missing)} (made "
                            "by an older mindprobe?); run it again")
        self.t = {n: Template.from_braced(texts[n], n) for n in _WHERE}

    def demo_block(self, demos: Sequence[dict[str, Any]], k: int) -> str:
        """The first k demos as the script's construct_k_shot_demos writes them ('' for k=0)."""
        if k == 0:
            return ""
        return self.t["demo_intro"].render() + "".join(
            self.t["demo"].render(question=d["question"], sol_steps="\n".join(d["output_steps"]),
                                  evaluation=d["evaluation"]) for d in demos[:k])

    def prompt(self, item: dict[str, Any], demos: Sequence[dict[str, Any]] | None = None,
               k: int = 0) -> str:
        """The single user message for one item: 0-shot, or k-shot with the question last."""
        if k < 0:
            raise UsageError(f"MR-GSM8K shots must be >= 0, got {k}")
        if k and demos is None:
            raise UsageError(f"MR-GSM8K {k}-shot prompting needs the demo file: pass "
                             "k-shot-demos.json or use k=0")
        if k > len(demos or ()):
            raise UsageError(f"MR-GSM8K {k}-shot prompting asked, but only "
                             f"{len(demos or ())} demos exist")
        fields = {"question": item["question"], "sol_steps": "\n".join(item["model_output_steps"])}
        block = self.demo_block(demos or (), k)
        if not block:
            return self.t["eval_0shot"].render(fields)
        return self.t["eval_kshot"].render(fields, k_shot_demos=block)

    def judge(self, item: dict[str, Any], error_text: str) -> str:
        """The judge's user message: the item's labels and the graded model's error analysis."""
        return self.t["grade"].render(
            {k: item[k] for k in ("question", "model_output_steps", STEP_FIELD,
                                  "model_output_solution_first_error_reason")},
            error_reason=error_text)


def prompts_of(config: Mapping[str, Any]) -> Prompts:
    """The Prompts of a run's config (parsed once per run, not per item)."""
    return _prompts(tuple(sorted((config.get("templates") or {}).items())))


@lru_cache(maxsize=8)
def _prompts(texts: tuple[tuple[str, str], ...]) -> Prompts:
    return Prompts(dict(texts))


_PLACEHOLDER = re.compile(r"^[ \t]*([^:\[\n]+):[ \t]*(\[[^\]\n]*\])[ \t]*$", re.MULTILINE)


def format_placeholders(texts: Mapping[str, str] | None) -> dict[str, str]:
    """Header -> the bracketed placeholder the reply format shows under it (upstream's
    `Final Judgement: [Insert only **correct** or **wrong** here]`), read from the run's own
    templates (upstream's script, or a prompt file), so a reply that parrots one is recognised
    whatever the template says; empty without templates."""
    out: dict[str, str] = {}
    for name, text in (texts or {}).items():
        literal = "".join(p for p in Template.from_braced(text, name).parts
                          if isinstance(p, str))  # the template's own words, slots left out
        for m in _PLACEHOLDER.finditer(literal):
            out.setdefault(m.group(1).strip(), m.group(2))
    return out


def upstream_placeholders(data_dir: Path | None = None) -> dict[str, str]:
    """The placeholders of upstream's own script (for rescoring upstream's result files); empty
    where the script is not at hand."""
    try:
        return format_placeholders(braced(templates(data_dir)))
    except DataError:
        return {}
