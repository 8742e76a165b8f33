"""The run store never loses or duplicates a record, whatever state a crash left it in."""

from __future__ import annotations

import json

import pytest

from mindprobe.core.store import RunStore, base_manifest, read_records
from mindprobe.errors import DataError, UsageError


def _manifest(**over):
    m = base_manifest(benchmark="b", variant="v", model={"model": "random"}, config={"seed": 1},
                      data={})
    m.update(over)
    return m


def test_append_and_resume(tmp_path):
    s = RunStore(tmp_path / "run")
    assert s.open(_manifest()) == {}
    s.append({"id": "a", "x": 1})
    s.append({"id": "b", "x": 2})
    s.close("interrupted")
    s2 = RunStore(tmp_path / "run")
    done = s2.open(_manifest())
    assert set(done) == {"a", "b"}
    assert s2.manifest["status"] == "running"


def test_torn_last_line_is_dropped_and_truncated(tmp_path):
    s = RunStore(tmp_path / "run")
    s.open(_manifest())
    s.append({"id": "a"})
    s.close("running")
    with open(s.records_path, "ab") as f:
        f.write(b'{"id": "b", "x"')  # a kill -9 in the middle of a write
    done = RunStore(tmp_path / "run").open(_manifest())
    assert set(done) == {"a"}
    assert s.records_path.read_bytes().endswith(b"}\n")
    assert len(read_records(s.records_path)) == 1


def test_malformed_middle_line_names_file_and_line(tmp_path):
    s = RunStore(tmp_path / "run")
    s.open(_manifest())
    s.append({"id": "a"})
    s.close("x")
    with open(s.records_path, "ab") as f:
        f.write(b"garbage\n")
    with pytest.raises(DataError, match=r"records.jsonl:2"):
        RunStore(tmp_path / "run").open(_manifest())


def test_retry_errors_removes_error_records_once(tmp_path):
    s = RunStore(tmp_path / "run")
    s.open(_manifest())
    s.append({"id": "a", "ok": True})
    s.append({"id": "b", "error": "boom"})
    s.close("finished_with_errors")
    s2 = RunStore(tmp_path / "run")
    done = s2.open(_manifest(), retry_errors=True)
    assert set(done) == {"a"}
    s2.append({"id": "b", "ok": True})
    s2.close("finished")
    ids = [r["id"] for r in read_records(s2.records_path)]
    assert sorted(ids) == ["a", "b"]  # b exactly once, without its error


def test_duplicate_ids_are_collapsed_on_open(tmp_path):
    s = RunStore(tmp_path / "run")
    s.open(_manifest())
    s.append({"id": "a", "v": 1})
    s.append({"id": "a", "v": 2})
    s.close("x")
    store = RunStore(tmp_path / "run")
    done = store.open(_manifest())
    assert done["a"]["v"] == 1 and store.duplicates_dropped == 1  # first record wins
    assert len(read_records(s.records_path)) == 1


def test_resume_with_other_config_is_refused(tmp_path):
    s = RunStore(tmp_path / "run")
    s.open(_manifest())
    s.close("x")
    with pytest.raises(UsageError, match="different config"):
        RunStore(tmp_path / "run").open(_manifest(config={"seed": 2}))


def test_manifest_is_valid_json_after_close(tmp_path):
    s = RunStore(tmp_path / "run")
    s.open(_manifest())
    s.close("finished", summary={"headline": {"acc": 0.5}})
    m = json.loads(s.manifest_path.read_text())
    assert m["status"] == "finished" and m["summary"]["headline"]["acc"] == 0.5
