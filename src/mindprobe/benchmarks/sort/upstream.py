"""SORT's wording as official data: upstream's prompt YAMLs and its evaluation script, read from
the files themselves (pinned, hash-verified; `mindprobe data fetch sort`), never typed here.

- `sort/evaluation/conf/prompts/prompt_{0..12}.yaml`: the 13 configurations (`system_prompt`,
  `pre_excerpt`, `post_excerpt`, `model_answer_prefix`), read with `yaml.safe_load`.
- `sort/evaluation/evaluation.py`: read with `ast` (`core.upstream_source`), never run, for
  the two pieces of wording that live in code: the segments f-string of `experiment()` (one
  per branch of `if present_seg1_first`) and the test sentence upstream tokenizes to decide
  whether a model needs a space after the answer prefix.

A configuration's fields are also offered as `--prompt-file` templates (`templates_of`): the
YAML's `<booktitle>`-style tags become `{booktitle}` slots (`<label_list[0]>` ->
`{label_list_0}`), and a prompt file's texts are turned back into tags (`with_texts`).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, replace
from pathlib import Path

from mindprobe.core.data import DataFile, data_dir_for, data_root, resolve
from mindprobe.core.upstream_source import PythonSource, Slot, Template
from mindprobe.errors import DataError, UsageError

REPO = "bridge-ai-neuro/SORT"
COMMIT = "ba136318b721f1bfe690927c41abb13f0c61f323"
RAW_URL = f"https://raw.githubusercontent.com/{REPO}/{COMMIT}/"
#: Where the upstream files sit inside SORT's data folder (paths below are upstream's).
FOLDER = "upstream/"
PROMPTS_DIR = "sort/evaluation/conf/prompts/"
EVALUATION = "sort/evaluation/evaluation.py"
PROMPT_NAMES = tuple(f"prompt_{i}" for i in range(13))
YAML_FIELDS = ("system_prompt", "pre_excerpt", "post_excerpt", "model_answer_prefix")

#: upstream path -> (sha256, git blob id) at COMMIT (see ../shared/data/sort/SOURCE.md).
_PINNED = {
    "prompt_0": ("60db499d27ec1100d692b7203c7631ea64a42692a541cbb7214cec015f64b3b8",
                 "4667135579934cf34d5eed68d4be6092a749e99d"),
    "prompt_1": ("337855fc7960a400821b3b8aff131076183bbb4d2e2ce092ce2791f573ef52cc",
                 "2049d8afecab73242436f927ce3d155423ccfac4"),
    "prompt_2": ("170ec2d08dc556dce694eebc61397cfdbff9b96949cc1f66a1a4376e410ab3cb",
                 "fa41c0b26400e7979047ab90e439899b4e303da4"),
    "prompt_3": ("05e216a5860765ef3ddb8df01eaabbd1ed32a39e43b4ce80b6de6ffe9efacbb1",
                 "388971bb47fae108a97f3a00d17a482cb49f35b4"),
    "prompt_4": ("ef6ea36b2f83be9cc294a19e97bd941bd690c0fdccae9d40c39ad23a400697ed",
                 "96313d9dae2252de692beb483d4c1ea9d2d8da49"),
    "prompt_5": ("8b9ec78280eb3ba06cd478ebd913d7d4444ace4c5328e87ec5dcc3414a57ea35",
                 "9178f67b444cb208fbcf3e0e86af3a8bcfc467e9"),
    "prompt_6": ("039f6951d61422519bf25ae09a563e18be24b331d1469b6584bc24b39f6b7e0e",
                 "1c91f33360271cae52df6bb812cad47b21121f71"),
    "prompt_7": ("e4ae7dea524f3a575b5a59c2c20274afb44b953e58ac4a2bffa59527f603a23b",
                 "d485f589b311ef3da8d5a1a3a216ac4e1c8d55e1"),
    "prompt_8": ("1c8840ffa1bface1edb363210f6bd736c6704f9a4dca3f8fe61191d56efabbce",
                 "f363feccb0d7f9f85fc31dfc502f44912f5510d6"),
    "prompt_9": ("bef255ee4e8c9e18a1f0111ddb2bf3cc7d0a85b72388a26ad4fcfdcc1aa3fba6",
                 "57848c023aaec4570602a55c2530ab888a67b300"),
    "prompt_10": ("587ceb55830ac7052085e09db1babc55afa749ad65abd9ea17e1a18e12cfd302",
                  "0d1facc4c113d5b3ac1f9baa2c9443ee1f2afe39"),
    "prompt_11": ("d9845cebcd5fa8bbfa7fbedf51bbdd3ae3e9fa2f3f8a15c28017ed3bb28d3121",
                  "6c84d76ca27703e90cf024c72184032d3ebe97a3"),
    "prompt_12": ("723097a7514e8e507c34204bc954d62115dfdc8e837bbb9cf30dde1f65e15ab6",
                  "233cfd1b3a9560328b7b15ab052432d785967d9b"),
    "evaluation": ("301284f7af82aff52ca00e3ccc12cabae7cb16e0ca02bc707eb6fdc0c444a573",
                   "0603f97ca04d077f8aa920fb2bd33f0bfb8490fb"),
}


def _upstream_path(key: str) -> str:
    return EVALUATION if key == "evaluation" else f"{PROMPTS_DIR}{key}.yaml"


DATA_FILES = [DataFile(FOLDER + _upstream_path(k), RAW_URL + _upstream_path(k), sha, blob)
              for k, (sha, blob) in _PINNED.items()]


def _official(key: str, data_dir: Path | None) -> Path:
    """An upstream file, verified: from --data-dir when it holds upstream/, else from the data
    cache (a --data-dir of Book-SORT tables needs no copy of the prompts); missing or altered,
    one DataError naming the file and `mindprobe data fetch sort`."""
    rel = FOLDER + _upstream_path(key)
    roots = [data_dir_for("sort", data_dir)]
    if data_dir is not None:
        roots.append(data_root() / "sort")
    for root in roots:
        if (root / rel).is_file():
            return resolve("sort", DATA_FILES, rel, root)
    if data_dir is None:
        return resolve("sort", DATA_FILES, rel, None)
    raise DataError(f"missing upstream file {rel} (SORT's prompt wording), neither in "
                    f"{roots[0]} nor in the data cache {roots[1]}: run `mindprobe data fetch "
                    "sort` (needs internet), or pass --data-dir DIR with a folder holding "
                    "upstream/ (as shared/data/sort)")


@dataclass(frozen=True)
class PromptConfig:
    """One upstream prompt configuration: the YAML's fields as upstream wrote them, plus the
    file it came from and that file's sha256 (recorded in the manifest)."""

    name: str
    system_prompt: str
    pre_excerpt: str
    post_excerpt: str
    model_answer_prefix: str
    path: str = ""
    sha256: str = ""


#: Upstream's tags, by the slot name a prompt file writes them with.
TAGS = {"booktitle": "<booktitle>", "tasktype": "<tasktype>", "excerpt": "<excerpt>",
        "segments": "<segments>", "label_list_0": "<label_list[0]>",
        "label_list_1": "<label_list[1]>"}
_TAG_RE = re.compile("|".join(re.escape(t) for t in TAGS.values()))
_SLOT_OF = {t: n for n, t in TAGS.items()}


def templates_of(config: PromptConfig) -> dict[str, Template]:
    """A configuration's fields as templates (tags as slots), for `--prompt-file`."""
    out = {}
    for field in YAML_FIELDS:
        text, parts, at = getattr(config, field), [], 0
        for m in _TAG_RE.finditer(text):
            parts += [text[at:m.start()], Slot(_SLOT_OF[m.group()], m.group())]
            at = m.end()
        parts.append(text[at:])
        out[field] = Template(tuple(p for p in parts if p != ""), f"{config.path}: {field}")
    return out


def with_texts(config: PromptConfig, templates: dict[str, Template]) -> PromptConfig:
    """`config` with some fields replaced by (prompt-file) templates, slots back as tags."""
    texts = {}
    for field, tpl in templates.items():
        bad = [p.name for p in tpl.parts if isinstance(p, Slot)
               and (p.conversion or p.format_spec)]
        if bad:
            raise UsageError(f"{tpl.origin}: slot {{{bad[0]}}} takes no conversion or format")
        texts[field] = "".join(p if isinstance(p, str) else TAGS[p.name] for p in tpl.parts)
    return replace(config, **texts)


def config_name(name: str) -> str:
    """`prompt_3` or `prompt_3.yaml` -> `prompt_3`; an unknown name is a UsageError."""
    key = name.removesuffix(".yaml")
    if key not in PROMPT_NAMES:
        raise UsageError(f"unknown SORT prompt {name!r}; known: {', '.join(PROMPT_NAMES)}")
    return key


def load_config(name: str, data_dir: Path | None = None) -> PromptConfig:
    """Upstream's configuration `name` (`prompt_0` … `prompt_12`), read from its YAML."""
    key = config_name(name)
    path = _official(key, data_dir)
    return _read_config(str(path), key)


@functools.lru_cache(maxsize=64)
def _read_config(path: str, key: str) -> PromptConfig:
    import yaml

    try:
        doc = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise DataError(f"{path}: not valid YAML ({exc}); re-fetch it with "
                        "`mindprobe data fetch sort`") from None
    if not isinstance(doc, dict):
        raise DataError(f"{path}: expected a mapping with {', '.join(YAML_FIELDS)}")
    bad = [f for f in YAML_FIELDS if not isinstance(doc.get(f), str)]
    if bad:
        raise DataError(f"{path}: field(s) {', '.join(bad)} missing or not text; re-fetch it "
                        "with `mindprobe data fetch sort`")
    return PromptConfig(key, *(doc[f] for f in YAML_FIELDS), path=path, sha256=_PINNED[key][0])


# --------------------------------------------------------------------- evaluation.py (ast)
@dataclass(frozen=True)
class EvaluationCode:
    """What SORT's rendering takes from `evaluation.py`'s `experiment()`: the segments f-string
    of each branch of `if present_seg1_first` (slots `cfg_label_list_0`, `cfg_label_list_1`,
    `segment_1`, `segment_2`), and the test sentence tokenized to decide the answer's space."""

    segments_first: Template
    segments_swapped: Template
    whitespace_probe: str


def evaluation_code(data_dir: Path | None = None) -> EvaluationCode:
    return _read_evaluation(str(_official("evaluation", data_dir)))


@functools.lru_cache(maxsize=4)
def _read_evaluation(path: str) -> EvaluationCode:
    src = PythonSource(Path(path).read_text(encoding="utf-8"), path,
                       "re-fetch it with `mindprobe data fetch sort`")
    found = src.function_strings("experiment")
    segments = [a.template for a in found if a.target == "segments_prompt"]
    probe = [a.template for a in found if a.target == "test_string"]
    slots = {"cfg_label_list_0", "cfg_label_list_1", "segment_1", "segment_2"}
    if len(segments) != 2 or any(set(t.slots) != slots for t in segments):
        raise src.error("experiment() no longer builds segments_prompt as two f-strings of "
                        "the labels and the two segments")
    first, swapped = segments  # source order: `if present_seg1_first:` branch, then `else:`
    if first.slots.index("segment_1") > first.slots.index("segment_2"):
        raise src.error("the present_seg1_first branch of segments_prompt is not first")
    if len(probe) != 1 or probe[0].slots:
        raise src.error("experiment() has no constant test_string")
    return EvaluationCode(first, swapped, probe[0].text)
