"""A run's records become the WorldSense tables column by column; records written by older
versions (a field missing) give what a None in that field gives."""

from __future__ import annotations

import copy
import json

from mindprobe.benchmarks.worldsense.runs import results_of_run
from mindprobe.core.store import read_records


def _records(cli, tmp_path) -> list[dict]:
    code, doc, err = cli("run", "worldsense:fresh", "--model", "random", "--limit", 60,
                         "--runs-dir", tmp_path / "runs", "--json")
    assert code == 0, err
    return read_records(next((tmp_path / "runs").rglob("records.jsonl")))


def _doc(records: list[dict]) -> str:
    return json.dumps(results_of_run(records, "basic", "random").to_json(), sort_keys=True,
                      default=str)


def test_a_missing_field_reads_as_none(cli, tmp_path):
    records = _records(cli, tmp_path)
    with_none, without = copy.deepcopy(records), copy.deepcopy(records)
    with_none[3]["skin"] = None
    del without[3]["skin"]
    assert _doc(without) == _doc(with_none)


def test_invalid_and_cut_off_counts(cli, tmp_path):
    records = _records(cli, tmp_path)
    records[0].update(resp="", truncated_in_reasoning=True)  # cut off while thinking
    records[1].update(resp="")  # an invalid answer
    records[2].update(resp="")
    records[4]["error"] = "gave up"  # not a finished trial
    res = results_of_run(records, "basic", "random")
    assert res.detail["n_trials"] == len(records) - 1
    assert res.detail["n_truncated_in_reasoning"] == 1
    invalid = sum(1 for r in records[5:] if not r["resp"]) + 2
    assert res.detail["n_invalid"] == invalid
    table = next(t.frame for name, t in res.tables.items() if name.startswith("accuracy/"))
    total = table.set_index("problem").loc["ALL"]
    parts = table[table["problem"] != "ALL"]
    assert total["invalid"] == parts["invalid"].sum() == invalid
    assert total["cut off thinking"] == parts["cut off thinking"].sum() == 1
