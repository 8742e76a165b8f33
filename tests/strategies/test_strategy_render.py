"""Every WorldSense prompting strategy rendered on fixed trials, checked against golden files
(`MINDPROBE_UPDATE_GOLDEN=1` rewrites them after a deliberate wording change), and the
strategies' labels, options and recorded wording."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from mindprobe.benchmarks.worldsense import strategies as st
from mindprobe.benchmarks.worldsense.data import PROMPTING_ORDER
from mindprobe.benchmarks.worldsense.options import PROMPTINGS

GOLDEN = Path(__file__).parent / "golden"

# Three trials of the official test set's shapes (spec §5.7), one per answer format.
TRIALS = {
    "tf": {
        "Key": 1, "tuple_ID": "t-tf", "expectedresp": ["TRUE", "FALSE"], "goldresp": "FALSE",
        "text": ("There are 3 people waiting in a line: Frank is behind Linda and Linda is "
                 "behind Grace.\nIs the following sentence 'Grace is behind Frank' TRUE or "
                 "FALSE ?\nOnly respond with one of these 2 options: 'TRUE', 'FALSE' without "
                 "any explanation."),
    },
    "pi": {
        "Key": 2, "tuple_ID": "t-pi", "expectedresp": ["POSSIBLE", "IMPOSSIBLE"],
        "goldresp": "IMPOSSIBLE",
        "text": ("The Smith's had 3 children. If I say 'Frank is older than Grace, Grace is "
                 "older than Linda and Linda is older than Frank.', is the situation I just "
                 "described possible or impossible ? Only respond with 'POSSIBLE' or "
                 "'IMPOSSIBLE' without any explanation. "),
    },
    "123": {
        "Key": 3, "tuple_ID": "t-123", "expectedresp": ["1", "2", "3"], "goldresp": "1",
        "text": ("The Smith's had 3 children: Emily is older than David and David is older "
                 "than William. \n(1) is Emily older than William, (2) is Emily younger than "
                 "William, or (3) is it impossible to decide ?\nOnly respond with one of these "
                 "options: (1), (2), or (3) without any explanation."),
    },
}
EXAMPLES = [
    st.Example("train:1", "Example question one?\nOnly respond with 'TRUE' or 'FALSE'.", "TRUE"),
    st.Example("train:2", "Example question two?\n(1) a, (2) b, or (3) undecidable", "3"),
]


def _rendered() -> dict:
    out = {}
    for name in st.NAMES:
        examples = EXAMPLES if name in st.INCONTEXT else ()
        out[name] = {key: st.render(name, trial, examples) for key, trial in TRIALS.items()}
    return out


@pytest.mark.parametrize("name", st.NAMES)
def test_render_matches_golden(name):
    path = GOLDEN / f"worldsense_{name}.json"
    got = _rendered()[name]
    if os.environ.get("MINDPROBE_UPDATE_GOLDEN"):
        path.write_text(json.dumps(got, indent=1, ensure_ascii=False) + "\n")
    assert got == json.loads(path.read_text())


def test_basic_and_constrained_send_the_text_verbatim():
    for name in ("basic", "constrained"):
        for trial in TRIALS.values():
            assert st.render(name, trial) == [{"role": "user", "content": trial["text"]}]


def test_every_strategy_keeps_the_trial_text_and_names_the_options():
    for name in st.NAMES:
        for trial in TRIALS.values():
            last = st.render(name, trial)[-1]["content"]
            assert last.startswith(trial["text"])
            if name in ("direct", "clarified", "cot"):
                assert st.options_text(trial["expectedresp"]) in last


def test_incontext_examples_are_earlier_turns_with_gold_answers():
    msgs = st.render("incontext-iid", TRIALS["tf"], EXAMPLES)
    assert [m["role"] for m in msgs] == ["user", "assistant", "user", "assistant", "user"]
    assert msgs[1]["content"] == "TRUE" and msgs[3]["content"] == "3"
    assert msgs[-1]["content"] == TRIALS["tf"]["text"]


def test_labels_are_the_analysis_labels_in_its_order():
    labels = [st.label_of(n) for n in st.NAMES]
    assert labels[:6] == list(PROMPTING_ORDER)
    assert PROMPTINGS == st.NAMES  # the light options module lists the same strategies


def test_describe_records_the_full_wording():
    cot = st.describe("cot")
    assert cot["template"] == st.COT_TEMPLATE and "Answer: X" in cot["template"]
    assert cot["label"] == "COT" and "last line" in cot["answer"]
    clar = st.describe("clarified")
    assert clar["clarification"] == st.CLARIFICATIONS and "{clarification}" in clar["template"]
    inc = st.describe("incontext-diffcat", 4, {"source": "x"})
    assert inc["shots"] == 4 and inc["examples"] == {"source": "x"}
    assert "4 worked examples" in inc["layout"]
    assert st.describe("direct")["template"] == st.DIRECT_TEMPLATE
    json.dumps([st.describe(n, 3) for n in st.NAMES])  # all of it goes into the manifest
