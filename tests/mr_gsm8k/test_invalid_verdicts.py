"""Issue 22, observation 1: a reply that parrots the template's placeholder (or names both
labels, or neither) is invalid, counted with its kind and warned about; upstream's headline is
kept and the strict figures stand beside it."""

from __future__ import annotations

from mindprobe.benchmarks.mr_gsm8k.metrics import aggregate, invalid_kind, score_item
from mindprobe.benchmarks.mr_gsm8k.prompts import format_placeholders
from mindprobe.benchmarks.mr_gsm8k.tables import results_of_doc

PLACEHOLDER = format_placeholders()["Final Judgement"]  # from the template, not typed here


def _reply(judgement: str) -> str:
    return (f"Step-by-step Evaluation: ok\nFinal Judgement: {judgement}\nFirst Error Step: 2\n"
            "Error Analysis: none")


def test_placeholder_is_read_from_the_template():
    assert PLACEHOLDER.startswith("[") and "correct" in PLACEHOLDER and "wrong" in PLACEHOLDER


def test_kinds_of_invalid_judgement():
    assert invalid_kind(PLACEHOLDER) == "placeholder"
    assert invalid_kind("correct or wrong") == "both labels"
    assert invalid_kind("maybe") == "neither label"
    assert invalid_kind("PARSE_ERROR") == "unparsed"
    assert invalid_kind("Wrong") is None and invalid_kind("correct") is None


def test_parroted_placeholders_are_invalid_and_shown_beside_upstreams_score():
    from mindprobe.benchmarks.mr_gsm8k.dataset_file import LABEL_FIELD, STEP_FIELD

    items = [{"uuid": f"u{i}", "question_type": "original", LABEL_FIELD: lab,
              STEP_FIELD: 2 if lab == "wrong" else "N/A"}
             for i, lab in enumerate(["wrong"] * 4 + ["correct"])]
    replies = [PLACEHOLDER] * 4 + ["correct"]
    rows = [score_item(it, _reply(j)) for it, j in zip(items, replies, strict=True)]
    doc = {**aggregate(rows), "model": "m", "judge": None, "n_errors": 0, "n_unscored": 0}
    assert doc["tnr"] == 1.0  # upstream's substring rule: the placeholder "matches" wrong
    res = results_of_doc(doc)
    js = res.to_json()
    assert js["invalid"]["count"] == 4 and js["invalid"]["kinds"] == {"placeholder": 4}
    scopes = {r["scope"]: r for r in js["tables"]["metrics"]}
    assert scopes["all (upstream)"]["TNR"] == 100.0
    assert scopes["all (strict)"]["TNR"] == 0.0 and scopes["all (strict)"]["invalid"] == 4
    assert res.headline.value == doc["mr_score_lower_bound"]  # the headline stays upstream's
    assert any("placeholder 4" in w for w in res.warnings)
    assert res.invalid_text() == "invalid answers: 4 of 5 (80.0%; placeholder 4)"
    from mindprobe.report.html import results_html

    assert "invalid answers: 4 of 5 (80.0%; placeholder 4)" in results_html(res, "k")
