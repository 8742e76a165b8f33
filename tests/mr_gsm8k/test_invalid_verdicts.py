"""Issue 22, observation 1: a reply that parrots the template's placeholder (or names both
labels, or neither) is invalid, counted with its kind and warned about; upstream's headline is
kept and the strict figures stand beside it."""

from __future__ import annotations

import pytest

from mindprobe.benchmarks.mr_gsm8k.metrics import aggregate, invalid_kind, score_item
from mindprobe.benchmarks.mr_gsm8k.prompts import braced, format_placeholders, templates
from mindprobe.benchmarks.mr_gsm8k.report import results_of_doc


@pytest.fixture
def placeholder(shared_data) -> str:
    """Upstream's placeholder, read from its script's templates (never typed here)."""
    return format_placeholders(braced(templates(shared_data("mr_gsm8k"))))["Final Judgement"]


def _reply(judgement: str) -> str:
    return (f"Step-by-step Evaluation: ok\nFinal Judgement: {judgement}\nFirst Error Step: 2\n"
            "Error Analysis: none")


def test_placeholder_is_read_from_the_template(placeholder):
    assert placeholder.startswith("[") and "correct" in placeholder and "wrong" in placeholder


def test_kinds_of_invalid_judgement(placeholder):
    assert invalid_kind(placeholder, [placeholder]) == "placeholder"
    assert invalid_kind(placeholder) == "both labels"  # without the template: still invalid
    assert invalid_kind("correct or wrong") == "both labels"
    assert invalid_kind("maybe") == "neither label"
    assert invalid_kind("PARSE_ERROR") == "unparsed"
    assert invalid_kind("Wrong") is None and invalid_kind("correct") is None


def test_parroted_placeholders_are_invalid_and_shown_beside_upstreams_score(placeholder):
    from mindprobe.benchmarks.mr_gsm8k.dataset_file import LABEL_FIELD, STEP_FIELD

    items = [{"uuid": f"u{i}", "question_type": "original", LABEL_FIELD: lab,
              STEP_FIELD: 2 if lab == "wrong" else "N/A"}
             for i, lab in enumerate(["wrong"] * 4 + ["correct"])]
    replies = [placeholder] * 4 + ["correct"]
    rows = [score_item(it, _reply(j)) for it, j in zip(items, replies, strict=True)]
    doc = {**aggregate(rows, placeholders=[placeholder]), "model": "m", "judge": None,
           "n_errors": 0, "n_unscored": 0}
    assert doc["tnr"] == 1.0  # upstream's substring rule: the placeholder "matches" wrong
    res = results_of_doc(doc)
    js = res.to_json()
    assert js["invalid"]["count"] == 4 and js["invalid"]["kinds"] == {"placeholder": 4}
    scopes = {r["scope"]: r for r in js["tables"]["metrics"]}
    assert scopes["all (upstream)"]["TNR"] == 100.0
    assert scopes["all (strict)"]["TNR"] == 0.0 and scopes["all (strict)"]["invalid"] == 4
    assert res.headline.value == doc["mr_score_lower_bound"]  # the headline stays upstream's
    assert any("placeholder 4" in w for w in res.warnings)
    assert doc["answers"] == {"correct": 1, "wrong": 0, "invalid": 4}
    assert any(n.startswith("majority-answer baseline: always 'wrong' is right on 80.0%")
               for n in res.notes)
    assert res.invalid_text() == "invalid answers: 4 of 5 (80.0%; placeholder 4)"
    from mindprobe.report.html import results_html

    assert "invalid answers: 4 of 5 (80.0%; placeholder 4)" in results_html(res, "k")


def test_a_run_whose_model_parrots_the_placeholder(cli, tmp_path, shared_data, placeholder):
    """The observed case: every reply is the template's own placeholder."""
    from mindprobe.testing import TestServer

    with TestServer(reply=_reply(placeholder)) as srv:
        code, doc, err = cli("run", "mr_gsm8k:sample", "--model",
                             f"openai:test-model@{srv.base_url}", "--data-dir",
                             shared_data("mr_gsm8k"), "--runs-dir", tmp_path, "--limit", 8,
                             "--json")
    assert code == 0, err
    assert doc["invalid"]["kinds"] == {"placeholder": 8} and doc["invalid"]["count"] == 8
    assert any("placeholder 8" in w for w in doc["warnings"])
    strict = next(r for r in doc["tables"]["metrics"] if r["scope"] == "all (strict)")
    assert strict["TPR"] == 0.0 and strict["TNR"] == 0.0
    code, rows, _ = cli("runs", "--runs-dir", tmp_path, "--json")
    assert rows[0]["invalid"]["kinds"] == {"placeholder": 8}
