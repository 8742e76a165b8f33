"""The FanOutQA releases: which files, pinned how, found where (spec fanoutqa.md §1).

``jul26`` (upstream's July 2026 corrected answers, the default: what upstream asks everyone to
evaluate on) and ``nov23`` (the original release the paper and the leaderboard's first years
used), both pinned by git blob id and SHA-256 at one upstream commit and fetched by ``mindprobe
data fetch fanoutqa`` into the data folder (``--data-dir``, else $MINDPROBE_DATA_DIR/fanoutqa,
else ~/.cache/mindprobe/data/fanoutqa). The nov23 files may also come from the
``fanoutqa==1.1.1`` wheel, located without importing it (the import has side effects).
"""

from __future__ import annotations

import importlib.util
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from mindprobe.core.data import DataFile, data_dir_for, verify
from mindprobe.core.data import file_sha256 as sha256_file  # noqa: F401 (re-exported)
from mindprobe.errors import DataError

Split = Literal["dev", "test"]

BENCHMARK = "fanoutqa"
PACKAGE = "fanoutqa"
PACKAGE_VERSION = "1.1.1"
UPSTREAM_REPO = "zhudotexe/fanoutqa"
UPSTREAM_COMMIT = "989f4c40d9deea1ecb0897d7a17a9c0fe20d5c33"
RAW_BASE = f"https://raw.githubusercontent.com/{UPSTREAM_REPO}/{UPSTREAM_COMMIT}/fanoutqa/data/"
VERSIONS = ("jul26", "nov23")
DEFAULT_VERSION = "jul26"
#: What a run made before versions were recorded used (the only release mindprobe knew then).
LEGACY_VERSION = "nov23"


@dataclass(frozen=True)
class Release:
    """One release of the questions: its files in the data folder and what they hold."""

    version: str
    files: dict[str, str]  # split -> file name in the data folder (and upstream's data/)
    n_questions: dict[str, int]
    about: str


RELEASES = {
    "jul26": Release("jul26", {"dev": "fanout-final-dev.json", "test": "fanout-final-test.json"},
                     {"dev": 310, "test": 724},
                     "upstream's July 2026 corrected release (commit 1d59846)"),
    "nov23": Release("nov23", {"dev": "fanout-final-dev-nov23.json",
                               "test": "fanout-final-test-nov23.json"},
                     {"dev": 310, "test": 725},
                     f"the original release (paper, {PACKAGE}=={PACKAGE_VERSION})"),
}
#: (git blob id, sha256) of every file at UPSTREAM_COMMIT, as SOURCE.md lists them.
PINS = {
    "fanout-final-dev.json": ("dfe79d9ec6949e8f81f16f2853f580abc6dfca1e",
                              "b62a9797732c716e6b17ba4086f277d154d747ce2fa01614cb76a3372e7fb88c"),
    "fanout-final-test.json": ("758081bccbc58986a3cc4f20ac800b758c0dadc8",
                               "e823838ab00d4fe875e0f9921ce07a7abe8806e8b380ffee17438d4bf76a68c5"),
    "fanout-final-dev-nov23.json": (
        "76ad1feb689b754bfe4e5e24d3ea371b647efa67",
        "359300b029c6891567816f351bf8786e9b018d7af8a1a44b7da9ba5ef4651288"),
    "fanout-final-test-nov23.json": (
        "9a58b71208bfe82dd3beb919ffb5af6f7a01b48e",
        "bb98b76d196842ac239682e4b85bf23470f2351c4f439a08aacf8c2a2ac76b78"),
    "LICENSE": ("0e6076b5aa9c17c4621136c3d0307279711015cc",
                "4e0fd171b79f997e1fb13111149135af19fb91028388746eda82cfee615b553c"),
}
DATA_FILES = [DataFile(name, url=RAW_BASE + name, sha256=sha, git_blob=blob)
              for name, (blob, sha) in PINS.items()]
#: The nov23 files under the names the 1.1.1 wheel ships them.
WHEEL_FILES = {"fanout-final-dev-nov23.json": "fanout-final-dev.json",
               "fanout-final-test-nov23.json": "fanout-final-test.json"}
SHA256 = {name: sha for name, (_, sha) in PINS.items()}
INSTALL_HINT = f"pip install {PACKAGE}=={PACKAGE_VERSION}"


def check_version(version: str) -> Release:
    """The release named ``version``; anything else is a usage mistake naming the choices."""
    release = RELEASES.get(version)
    if release is None:
        raise DataError(f"unknown FanOutQA dataset version {version!r}; expected one of "
                        f"{', '.join(VERSIONS)} (default {DEFAULT_VERSION})")
    return release


def version_of(config: Mapping[str, Any]) -> str:
    """A run's release: recorded in its config; a run from before versions existed is nov23."""
    return str(config.get("dataset_version") or LEGACY_VERSION)


def wheel_dir() -> Path | None:
    """The 1.1.1 wheel's data folder, found without importing ``fanoutqa`` (side effects)."""
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))) / "data"




def data_path(split: Split, version: str = DEFAULT_VERSION, data_dir: Path | None = None,
              verify_hash: bool = True) -> Path:
    """Path of one split's JSON file of one release, checked against its pinned hash.

    The data folder first; for nov23, the ``fanoutqa==1.1.1`` wheel as well (same bytes)."""
    release = check_version(version)
    if split not in release.files:
        raise DataError(f"unknown FanOutQA split {split!r}; expected one of "
                        f"{sorted(release.files)}")
    name = release.files[split]
    spec = next(f for f in DATA_FILES if f.relpath == name)
    root = data_dir_for(BENCHMARK, data_dir)
    candidates = [root / name]
    wheel = wheel_dir()
    if name in WHEEL_FILES and wheel is not None:
        candidates.append(wheel / WHEEL_FILES[name])
    for path in candidates:
        if path.is_file():
            if verify_hash:
                verify(path, spec, BENCHMARK)
            return path
    where = f"--data-dir {data_dir}" if data_dir else f"the data folder {root}"
    also = f", or {INSTALL_HINT} for the nov23 files" if name in WHEEL_FILES else ""
    raise DataError(
        f"FanOutQA {version} {split} file {name} is not in {where}: run `mindprobe data fetch "
        f"fanoutqa` (needs internet; from {UPSTREAM_REPO} at {UPSTREAM_COMMIT[:12]}) or pass "
        f"--data-dir DIR with the files (e.g. a copy of shared/data/fanoutqa){also}"
    )


def data_provenance(version: str, split: str) -> dict[str, Any]:
    """What identifies a run's questions (part of its identity: stable across machines and
    folders, so a run resumes wherever its files are). nov23 keeps the exact form runs
    recorded before releases were told apart, so those runs resume as they were."""
    name = RELEASES[version].files[split]
    if version == LEGACY_VERSION:
        wheel_name = WHEEL_FILES[name]
        return {"dataset": "FanOutQA", "dataset_version": version,
                "package": f"{PACKAGE}=={PACKAGE_VERSION}", "file": wheel_name,
                "sha256": PINS[name][1], "split": split}
    return {"dataset": "FanOutQA", "dataset_version": version,
            "release": RELEASES[version].about, "upstream": f"{UPSTREAM_REPO}@{UPSTREAM_COMMIT}",
            "file": name, "git_blob": PINS[name][0], "sha256": PINS[name][1], "split": split}
