"""Upstream's SORT prompt configurations, read as data from its own YAML files.

The wording of a benchmark is part of the benchmark, so it is never retyped here: the files are
byte copies of ``sort/evaluation/conf/prompts/prompt_*.yaml`` at the pinned upstream commit
(``shared/data/sort/upstream/``, or fetched by ``mindprobe data fetch sort``), each verified by
sha256 before it is parsed with ``yaml.safe_load``. Rendering follows upstream's
``evaluation.py``: ``<booktitle>``, ``<tasktype>`` then ``<excerpt>`` in the pre-excerpt text,
labels last.

The names (``PromptConfig``, ``load_config``, ``render_pre_excerpt``, ``fill_labels``) are those
of the fuller reader of upstream's files being written beside this one (issue 20), so that one
can replace this module by changing an import.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from mindprobe.core.data import DataFile, resolve
from mindprobe.errors import DataError, UsageError

UPSTREAM_REPO = "bridge-ai-neuro/SORT"
UPSTREAM_COMMIT = "ba136318b721f1bfe690927c41abb13f0c61f323"
PROMPTS_DIR = "sort/evaluation/conf/prompts"
_RAW = f"https://raw.githubusercontent.com/{UPSTREAM_REPO}/{UPSTREAM_COMMIT}/"
#: sha256 of each upstream prompt file (shared/data/sort/SOURCE.md, "Upstream prompt
#: configurations").
PROMPT_SHA256: dict[str, str] = {
    "prompt_0": "60db499d27ec1100d692b7203c7631ea64a42692a541cbb7214cec015f64b3b8",
    "prompt_1": "337855fc7960a400821b3b8aff131076183bbb4d2e2ce092ce2791f573ef52cc",
    "prompt_2": "170ec2d08dc556dce694eebc61397cfdbff9b96949cc1f66a1a4376e410ab3cb",
    "prompt_3": "05e216a5860765ef3ddb8df01eaabbd1ed32a39e43b4ce80b6de6ffe9efacbb1",
    "prompt_4": "ef6ea36b2f83be9cc294a19e97bd941bd690c0fdccae9d40c39ad23a400697ed",
    "prompt_5": "8b9ec78280eb3ba06cd478ebd913d7d4444ace4c5328e87ec5dcc3414a57ea35",
    "prompt_6": "039f6951d61422519bf25ae09a563e18be24b331d1469b6584bc24b39f6b7e0e",
    "prompt_7": "e4ae7dea524f3a575b5a59c2c20274afb44b953e58ac4a2bffa59527f603a23b",
    "prompt_8": "1c8840ffa1bface1edb363210f6bd736c6704f9a4dca3f8fe61191d56efabbce",
    "prompt_9": "bef255ee4e8c9e18a1f0111ddb2bf3cc7d0a85b72388a26ad4fcfdcc1aa3fba6",
    "prompt_10": "587ceb55830ac7052085e09db1babc55afa749ad65abd9ea17e1a18e12cfd302",
    "prompt_11": "d9845cebcd5fa8bbfa7fbedf51bbdd3ae3e9fa2f3f8a15c28017ed3bb28d3121",
    "prompt_12": "723097a7514e8e507c34204bc954d62115dfdc8e837bbb9cf30dde1f65e15ab6",
}
FIELDS = ("name", "system_prompt", "pre_excerpt", "post_excerpt", "model_answer_prefix")
LABELS: tuple[str, str] = ("A", "B")


def relpath(name: str) -> str:
    """Where a config lives inside the SORT data folder (the upstream path under upstream/)."""
    return f"upstream/{PROMPTS_DIR}/{name}.yaml"


PROMPT_FILES: list[DataFile] = [DataFile(relpath(n), _RAW + f"{PROMPTS_DIR}/{n}.yaml", sha)
                                for n, sha in PROMPT_SHA256.items()]


@dataclass(frozen=True)
class PromptConfig:
    """One upstream prompt configuration, its fields exactly as the YAML holds them, plus the
    file it came from and that file's sha256."""

    name: str
    system_prompt: str
    pre_excerpt: str
    post_excerpt: str
    model_answer_prefix: str
    path: str = ""
    sha256: str = ""


def load_config(name: str, data_dir: Path | None = None) -> PromptConfig:
    """The verified upstream config ``name`` (``prompt_0`` … ``prompt_12``) from the data
    folder."""
    import yaml

    key = name.removesuffix(".yaml")
    if key not in PROMPT_SHA256:
        raise UsageError(f"unknown SORT prompt {name!r}; known: {', '.join(PROMPT_SHA256)}")
    path = resolve("sort", PROMPT_FILES, relpath(key), data_dir)
    try:
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise DataError(f"{path}: cannot read the upstream prompt YAML ({exc})") from None
    if not isinstance(doc, dict) or any(not isinstance(doc.get(f), str) for f in FIELDS):
        raise DataError(f"{path}: expected the string fields {', '.join(FIELDS)}")
    return PromptConfig(**{f: doc[f] for f in FIELDS[1:]}, name=key, path=str(path),
                        sha256=PROMPT_SHA256[key])


def fill_labels(text: str, labels: Sequence[str] = LABELS) -> str:
    """Upstream's last step: ``<label_list[0]>``/``<label_list[1]>`` become the labels."""
    return text.replace("<label_list[0]>", labels[0]).replace("<label_list[1]>", labels[1])


def render_pre_excerpt(config: PromptConfig, book_title: str, excerpt: str,
                       task_type: str = "first") -> str:
    """A configuration's pre-excerpt for one excerpt, in upstream's order (labels not filled)."""
    return (config.pre_excerpt.replace("<booktitle>", book_title)
            .replace("<tasktype>", task_type).replace("<excerpt>", excerpt))
