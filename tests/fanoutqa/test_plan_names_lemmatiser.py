"""Planning FanOutQA names its lemmatiser without loading it: spaCy and a trained pipeline take
seconds (a profile's dry run waited for them), and only scoring needs them."""

from __future__ import annotations

import pytest

from mindprobe.benchmarks.fanoutqa import lemma
from mindprobe.benchmarks.fanoutqa.options import FanOutQAOptions
from mindprobe.benchmarks.fanoutqa.task import FanOutQABenchmark
from mindprobe.core.plan import PlanContext
from mindprobe.errors import MindprobeError


def test_plan_names_the_lemmatiser_it_does_not_load(shared_data, monkeypatch):
    monkeypatch.setattr(lemma, "_LOADED", {})
    monkeypatch.delenv(lemma.ENV_VAR, raising=False)
    said: list[str] = []
    plan = FanOutQABenchmark().plan(
        PlanContext(variant="closedbook", data_dir=shared_data("fanoutqa"), info=said.append),
        FanOutQAOptions())
    assert len(plan.items) == 310
    assert lemma._LOADED == {}  # nothing loaded
    name, exact = lemma.resolve_backend()
    assert any(f"lemmatiser {name}" in s for s in said)
    first = lemma.available_backends()[:1]
    if first in ([lemma.OFFICIAL], [lemma.REUPLOAD]):  # what `auto` loads for scoring
        assert exact and name == f"spacy:{first[0]}"


def test_a_missing_pipeline_still_fails_the_plan(monkeypatch):
    with pytest.raises(MindprobeError, match="not installed"):
        lemma.resolve_backend("no_such_spacy_pipeline_pkg")
