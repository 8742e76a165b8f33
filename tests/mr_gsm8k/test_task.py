"""The task's small parts: canned replies, human shorthands, option checks, the judge store."""

from __future__ import annotations

import json

import pytest

from mindprobe.benchmarks.mr_gsm8k import parse_judge, parse_response, score_item
from mindprobe.benchmarks.mr_gsm8k.data import OFFICIAL_FILE
from mindprobe.benchmarks.mr_gsm8k.judging import JUDGE_CHOICES, human_verdict
from mindprobe.benchmarks.mr_gsm8k.task import baseline_choices, human_reply
from mindprobe.cli import main
from mindprobe.core.paths import path_component
from mindprobe.core.store import base_manifest, judgement_store, read_judgements
from mindprobe.errors import UsageError


def test_baseline_choices_are_balanced_and_parse(make_item):
    choices = baseline_choices(4)
    assert len(choices) == 8 and sum("Final Judgement: correct" in c for c in choices) == 4
    steps = [parse_response(c)[1] for c in choices[4:]]
    assert steps == ["1", "2", "3", "4"]
    item = make_item(step=3)
    assert [score_item(item, c)["t2_hit"] for c in choices[4:]] == [False, False, True, False]
    assert {parse_judge(c)[2] for c in JUDGE_CHOICES} == {"Correct", "Wrong"}


@pytest.mark.parametrize(
    "typed, expected",
    [("c", ("correct", "N/A", "N/A")), ("3 adds instead", ("wrong", "3", "adds instead")),
     ("12", ("wrong", "12", "N/A")), ("Step 2: x", ("PARSE_ERROR",) * 3)],
)
def test_human_shorthand(typed, expected):
    assert parse_response(human_reply(typed)) == expected


def test_human_judge_shorthand():
    assert parse_judge(human_verdict("c"))[2] == "Correct"
    assert parse_judge(human_verdict(" W "))[2] == "Wrong"


def test_official_file_is_declared_for_fetch():
    assert OFFICIAL_FILE.relpath == "MR-GSM8K.json"
    assert OFFICIAL_FILE.git_blob == "c373b203c9cf66081ce2b782bfdec22aecb51226"
    assert OFFICIAL_FILE.url.endswith(
        "/3f666d60dd5f2fe31d619c528076bac54f4a13b7/dataset/MR-GSM8K.json")


@pytest.mark.parametrize(
    "extra, message",
    [(["--shots", "6"], "--shots"), (["--question-type", "algebra"], "unknown --question-type"),
     (["--data-file", "x.json"], "--data-file replaces the full file")],
)
def test_bad_options_exit_2(tmp_path, capsys, shared_data, extra, message):
    code = main(["run", "mr_gsm8k:sample", "--model", "random", "--data-dir",
                 str(shared_data("mr_gsm8k")), "--runs-dir", str(tmp_path), *extra])
    assert code == 2 and message in " ".join(capsys.readouterr().err.split())


def test_judge_store_resume_and_identity(tmp_path):
    def meta(spec, model):
        return base_manifest(label="j1", spec=spec, identity={"model": model})

    store = judgement_store(tmp_path, "j1")
    assert store.open(meta("openai:a", "a")) == {}
    store.append({"id": "u1", "verdict": True})
    store.append({"id": "u2", "verdict": False})
    store.close("finished")
    with open(store.records_path, "ab") as f:
        f.write(b'{"id": "u3", "verd')  # torn by a kill
    assert {e["id"] for e in read_judgements(tmp_path)["j1"][1]} == {"u1", "u2"}
    again = judgement_store(tmp_path, "j1")
    assert set(again.open(meta("openai:a", "a"))) == {"u1", "u2"}
    again.append({"id": "u3", "verdict": True})
    again.close("finished")
    lines = [json.loads(x) for x in store.records_path.read_text().splitlines()]
    assert [e["id"] for e in lines] == ["u1", "u2", "u3"]
    with pytest.raises(UsageError, match="--judge-label"):
        judgement_store(tmp_path, "j1").open(meta("openai:b", "b"))
    with pytest.raises(UsageError, match="path component"):
        path_component("../evil", "judge label")
    with pytest.raises(UsageError, match="path component"):
        path_component("..", "--name")
