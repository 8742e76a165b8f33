"""Issue 33.8: an empty value (`--runs-dir "$UNSET"`) is a usage error, exit 2, naming the
flag: never the current folder."""

from __future__ import annotations

import os

import pytest

import mindprobe
from mindprobe.errors import UsageError

MODEL = "openai:test-model@http://127.0.0.1:9/v1"


@pytest.mark.parametrize("args, flag", [
    (["run", "worldsense:fresh", "--model", MODEL, "--runs-dir", ""], "--runs-dir"),
    (["run", "worldsense:fresh", "--model", MODEL, "--cache", "  "], "--cache"),
    (["run", "worldsense:fresh", "--model", MODEL, "--data-dir", ""], "--data-dir"),
    (["run", "worldsense:fresh", "--model", MODEL, "--prompt-file", ""], "--prompt-file"),
    (["run", "worldsense:fresh", "--model", ""], "--model"),
    (["runs", "--runs-dir", ""], "--runs-dir"),
    (["report", "--out", ""], "--out"),
    (["report", ""], "RUN_DIR"),
    (["profile", "--model", MODEL, "--runs-dir", ""], "--runs-dir"),
    (["export", "fanoutqa", "--run", "", "--out", "x.jsonl"], "--run"),
    (["build", "sort", "--text", "book.txt", "--out", ""], "--out"),
    (["data", "fetch", ""], "benchmark"),
])
def test_an_empty_value_is_a_usage_error(cli, tmp_path, monkeypatch, args, flag):
    monkeypatch.chdir(tmp_path)
    code, _, err = cli(*args)
    assert code == 2, err
    assert f"{flag} is empty" in err and "Traceback" not in err
    assert os.listdir(tmp_path) == ["cache"] or not os.listdir(tmp_path)  # nothing written here


def test_the_library_refuses_an_empty_runs_dir_too(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UsageError, match="--runs-dir is empty"):
        mindprobe.evaluate("worldsense:fresh", MODEL, runs_dir="", limit=2)
    assert not list(tmp_path.iterdir())
