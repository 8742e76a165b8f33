"""`--prompt-file`: a benchmark's requests with other wording, for prompt-sensitivity studies.

A benchmark's wording is upstream's, read from upstream's files (`upstream_source`) as named
templates with named slots. A prompt file (YAML or JSON: template name -> text) replaces some
or all of them; each replacement must use exactly the slots of the template it replaces, so it
receives the same item fields. Such a run is labelled everywhere: its prompting label (and so
its run directory, the `runs` list and the report) gets `+prompts-<sha256[:8]>`, and the
manifest records the file's name, sha256 and the templates it replaced.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mindprobe.core.inputs import read_input
from mindprobe.core.upstream_source import Template
from mindprobe.errors import UsageError

#: Config key under which a run records deviations from upstream (shown as result notes).
DEVIATIONS = "deviations"
PROMPT_FILE = "prompt_file"


@dataclass
class PromptFile:
    """A prompt file as read: its texts by template name and its sha256. `used` is set by the
    benchmark that applied it (a benchmark without templates leaves it unset: refused)."""

    path: Path
    sha256: str
    texts: dict[str, str]
    used: bool = field(default=False, compare=False)

    @property
    def label(self) -> str:
        """What a run with this file adds to its prompting label."""
        return f"+prompts-{self.sha256[:8]}"

    def manifest(self, replaced: list[str]) -> dict[str, Any]:
        return {"name": self.path.name, "sha256": self.sha256, "replaced": replaced}


def read_prompt_file(path: str | Path) -> PromptFile:
    """Read a YAML (`.yaml`/`.yml`) or JSON file mapping template names to texts."""
    path = Path(path).expanduser()
    data = read_input(path, "--prompt-file", "prompt file")
    try:
        text = data.decode("utf-8")
        if path.suffix.lower() in (".yaml", ".yml"):
            import yaml

            doc = yaml.safe_load(text)
        else:
            doc = json.loads(text)
    except UnicodeDecodeError:
        raise UsageError(f"--prompt-file {path}: not UTF-8 text") from None
    except ValueError as exc:  # JSONDecodeError
        raise UsageError(f"--prompt-file {path}: not valid JSON ({exc}); a .yaml/.yml file "
                         "is read as YAML") from None
    except Exception as exc:  # yaml.YAMLError (yaml imported lazily)
        raise UsageError(f"--prompt-file {path}: not valid YAML ({exc})") from None
    if not isinstance(doc, dict) or not doc or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in doc.items()):
        raise UsageError(f"--prompt-file {path}: expected a mapping of template names to texts "
                         "(e.g. task_description: \"... {slot} ...\")")
    return PromptFile(path, hashlib.sha256(data).hexdigest(), dict(doc))


@dataclass(frozen=True)
class Wording:
    """The templates a run uses: upstream's, or a prompt file's where it replaces them."""

    templates: dict[str, Template]
    prompt_file: PromptFile | None = None
    replaced: tuple[str, ...] = ()

    def __getitem__(self, name: str) -> Template:
        return self.templates[name]


def apply_prompt_file(
    upstream: Mapping[str, Template],
    prompt_file: PromptFile | None,
    parse: Callable[[str, str], Template] = Template.from_braced,
) -> Wording:
    """Upstream's templates with the prompt file's replacing those it names. Unknown names and
    a slot added or missing are refused with the valid ones. `parse` reads a text into a
    template (`{slot}` syntax by default; a benchmark whose upstream uses another passes its own)."""
    if prompt_file is None:
        return Wording(dict(upstream))
    where = f"--prompt-file {prompt_file.path}"
    unknown = sorted(set(prompt_file.texts) - set(upstream))
    if unknown:
        raise UsageError(f"{where}: no template named {unknown[0]!r}; this benchmark's "
                         f"templates: {', '.join(upstream)}")
    templates = dict(upstream)
    for name, text in prompt_file.texts.items():
        tpl = parse(text, f"{where}: {name}")
        want, got = set(upstream[name].slots), set(tpl.slots)
        if want != got:
            extra, missing = sorted(got - want), sorted(want - got)
            problem = "; ".join(
                [f"unknown slot(s) {', '.join(extra)}"] * bool(extra)
                + [f"missing slot(s) {', '.join(missing)}"] * bool(missing))
            slots = ", ".join("{" + s + "}" for s in upstream[name].slots) or "none"
            raise UsageError(f"{where}: template {name!r}: {problem}; its slots: {slots}")
        templates[name] = tpl
    prompt_file.used = True
    return Wording(templates, prompt_file, tuple(prompt_file.texts))


def template_file(templates: Mapping[str, Template]) -> str:
    """The templates as a YAML prompt file (upstream's wording, ready to be edited)."""
    import yaml

    class Dumper(yaml.SafeDumper):
        pass

    def text(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
        style = "|" if "\n" in value else None  # PyYAML quotes it where a block cannot hold it
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)

    Dumper.add_representer(str, text)
    return yaml.dump({n: t.braced() for n, t in templates.items()}, Dumper=Dumper,
                     allow_unicode=True, sort_keys=False, width=10**9)


def wording_notes(config: Mapping[str, Any]) -> list[str]:
    """Result notes for a run whose requests are not upstream's (other wording, deviations)."""
    notes = []
    pf = config.get(PROMPT_FILE)
    if pf:
        notes.append(f"wording from --prompt-file {pf['name']} (sha256 {pf['sha256'][:12]}…, "
                     f"replaces {', '.join(pf['replaced'])}), not the benchmark's own")
    notes += [f"deviation from upstream: {d}" for d in config.get(DEVIATIONS) or []]
    return notes
