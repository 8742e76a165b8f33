"""Loading (spec section 2): real records, JSON array vs JSONL, tolerance and clear errors."""

from __future__ import annotations

import json

import pytest

from mindprobe.benchmarks.mr_gsm8k import (
    FULL_N_CORRECT,
    FULL_N_WRONG,
    OFFICIAL_GIT_BLOB,
    OFFICIAL_URL,
    check_full_counts,
    counts,
    git_blob_sha1,
    load,
    load_demos,
    parse_response,
    verify_git_blob,
)
from mindprobe.benchmarks.mr_gsm8k.dataset_file import DATASET_FIELDS, DEMOS_GIT_BLOB
from mindprobe.errors import DataError


def _jsonl(path, records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def test_real_sample_records(shared_data):
    items = load(shared_data("mr_gsm8k") / "sample_records.jsonl")
    c = counts(items)
    assert c["n"] == 40
    assert c["by_label"] == {"correct": 0, "wrong": 40}
    assert c["by_question_type"] == {
        "POT": {"n": 12, "correct": 0, "wrong": 12},
        "original": {"n": 16, "correct": 0, "wrong": 16},
        "reversed": {"n": 12, "correct": 0, "wrong": 12},
    }
    assert sum(isinstance(i["ground_truth_answer"], int) for i in items) == 5
    assert sum(i["ground_truth_solution"] == "" for i in items) == 2
    assert all(i["model_output_steps"][0].startswith("Step 1:") for i in items)
    assert {type(i["model_output_solution_first_error_step"]) for i in items} == {int}


def test_json_array_and_jsonl_load_identically(shared_data, tmp_path):
    items = load(shared_data("mr_gsm8k") / "sample_records.jsonl")
    array = tmp_path / "MR-GSM8K.json"
    array.write_text(json.dumps(items, indent=2), encoding="utf-8")
    assert load(array) == items
    compact = tmp_path / "compact.json"
    compact.write_text(json.dumps(items), encoding="utf-8")
    assert load(compact) == items


def test_tolerance(make_item, tmp_path):
    records = [
        make_item("correct", ground_truth_answer=24, extra_field={"x": 1}),
        make_item("Wrong", step="N/A"),  # wrong with a non-int step: loads, never matchable
        make_item("WRONG", step=2, ground_truth_solution=""),
    ]
    items = load(_jsonl(tmp_path / "r.jsonl", records))
    assert [i["model_output_solution_first_error_step"] for i in items] == ["N/A", "N/A", 2]
    assert items[0]["ground_truth_answer"] == 24
    assert "extra_field" not in items[0]
    assert set(items[0]) == set(DATASET_FIELDS)
    assert counts(items)["by_label"] == {"correct": 1, "wrong": 2}


def test_unused_fields_are_optional(make_item, tmp_path):
    record = make_item()
    del record["ground_truth_answer"], record["ground_truth_solution"]
    assert load(_jsonl(tmp_path / "r.jsonl", [record]))[0]["uuid"] == record["uuid"]


def test_missing_field_names_file_line_and_field(make_item, tmp_path):
    bad = make_item()
    del bad["question_type"]
    path = _jsonl(tmp_path / "r.jsonl", [make_item(), bad])
    with pytest.raises(DataError, match=r"r\.jsonl:2: field 'question_type' is missing\. Fix:"):
        load(path)


def test_missing_field_in_json_array_names_element_line(make_item, tmp_path):
    bad = make_item()
    del bad["model_output_steps"]
    path = tmp_path / "a.json"
    text = json.dumps([make_item(), bad], indent=1)
    path.write_text(text, encoding="utf-8")
    line = text[: text.index(bad["uuid"])].count("\n")  # the element's "{" is one line above
    with pytest.raises(DataError, match=rf"a\.json:{line}: field 'model_output_steps'"):
        load(path)


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("model_output_solution_correctness", "maybe", "must be 'correct' or 'wrong'"),
        ("model_output_solution_first_error_step", 3.0, "must be an int or a string"),
        ("model_output_solution_first_error_step", True, "must be an int or a string"),
        ("model_output_steps", "Step 1: x", "must be a list of strings"),
        ("uuid", 7, "must be a string"),
    ],
)
def test_bad_field_values(make_item, tmp_path, field, value, message):
    path = _jsonl(tmp_path / "r.jsonl", [make_item(**{field: value})])
    with pytest.raises(DataError, match=message):
        load(path)


def test_malformed_jsonl_line(make_item, tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_text(json.dumps(make_item()) + "\n\n{not json\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"r\.jsonl:3: invalid JSON line"):
        load(path)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "file is empty"),
        ("  \n", "file is empty"),
        ("[]", "no records found"),
        ("[1, 2]", r":1: expected a JSON object, got int"),
        ('[{"a": 1}\n', r":2: expected ',' or '\]'"),
        ('[{"a": 1}] x', r":1: extra data after the JSON array"),
        ('[\n{"a": 1},\n{"a": }]', r":3: invalid JSON"),
        ('"just a string"\n', r":1: expected a JSON object, got str"),
    ],
)
def test_corrupt_files(tmp_path, text, message):
    path = tmp_path / "bad.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(DataError, match=message):
        load(path)


def test_missing_file_names_the_download(tmp_path):
    with pytest.raises(DataError, match="file not found") as info:
        load(tmp_path / "MR-GSM8K.json")
    assert OFFICIAL_URL in str(info.value)


def test_duplicate_uuid(make_item, tmp_path):
    item = make_item()
    with pytest.raises(DataError, match=r":2: uuid .* already appears at line 1"):
        load(_jsonl(tmp_path / "r.jsonl", [item, item]))


def test_non_utf8(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_bytes(b"\xff\xfe{")
    with pytest.raises(DataError, match="not UTF-8"):
        load(path)


def test_check_full_counts(make_item):
    full = [{"model_output_solution_correctness": "correct", "question_type": "original"}] * (
        FULL_N_CORRECT
    ) + [{"model_output_solution_correctness": "wrong", "question_type": "POT"}] * FULL_N_WRONG
    warned = []
    assert check_full_counts(full, warned.append) is True and warned == []
    assert check_full_counts(full[1:], warned.append) is False
    assert "1426 correct + 1573 wrong" in warned[0]


def test_git_blob_sha1_known_values(shared_data, tmp_path):
    assert git_blob_sha1(b"") == "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"
    assert git_blob_sha1(b"hello\n") == "ce013625030ba8dba906f756967f9e9ca394464a"
    demos = shared_data("mr_gsm8k") / "k-shot-demos.json"
    assert git_blob_sha1(demos.read_bytes()) == DEMOS_GIT_BLOB
    verify_git_blob(demos, DEMOS_GIT_BLOB)
    with pytest.raises(DataError, match=OFFICIAL_GIT_BLOB):
        verify_git_blob(demos)


def test_demos(shared_data):
    demos = load_demos(shared_data("mr_gsm8k") / "k-shot-demos.json")
    assert len(demos) == 5
    verdicts = [parse_response(d["evaluation"])[:2] for d in demos]
    assert [(j.strip(), s.strip()) for j, s in verdicts] == [
        ("correct", "N/A"),
        ("wrong", "Step 1"),
        ("correct", "N/A"),
        ("wrong", "Step 3"),
        ("wrong", "Step 1"),
    ]


def test_bad_demos(tmp_path):
    path = tmp_path / "demos.json"
    path.write_text(json.dumps([{"question": "q", "evaluation": "e"}]), encoding="utf-8")
    with pytest.raises(DataError, match="output_steps"):
        load_demos(path)
