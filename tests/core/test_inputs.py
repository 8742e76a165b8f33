"""Issue 41 (items 9, 14): the one reader for outside input. A FIFO, a device or a folder is
one message naming what it is (never "no such file", never a read that blocks); every kind of
file has a size cap; a JSON document's numbers are finite (the key is named); prices are
finite; a record whose field is out of range is left out as damaged, named file:line, instead
of moving a headline. The hostile matrix runs every file-taking surface through every kind of
hostile file, so a new surface that skips the reader fails here."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from mindprobe.core.inputs import (
    LIMITS,
    InputError,
    finite,
    inside,
    parse_json,
    parse_numbers,
    read_input,
    read_json,
)
from mindprobe.errors import DataError

DEV_ZERO = Path("/dev/zero")


def test_a_fifo_is_refused_at_once_naming_what_it_is(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[BaseException] = []
    reader = threading.Thread(target=lambda: _catch(got, read_input, fifo, "--prompt-file",
                                                    "prompt file"), daemon=True)
    reader.start()
    reader.join(5)  # nothing writes to the FIFO: a blocking open or read would never end
    assert not reader.is_alive(), "reading a FIFO blocked"
    assert isinstance(got[0], InputError)
    assert "is a FIFO" in str(got[0]) and str(fifo) in str(got[0])


def _catch(out: list[BaseException], fn, *args) -> None:
    try:
        fn(*args)
    except BaseException as exc:  # noqa: BLE001 (handed to the test thread)
        out.append(exc)


@pytest.mark.parametrize("kind", ["directory", "device", "missing", "big"])
def test_the_reader_says_what_a_file_is(tmp_path, kind):
    path = {"directory": tmp_path, "device": DEV_ZERO, "missing": tmp_path / "nope",
            "big": tmp_path / "big"}[kind]
    if kind == "device" and not DEV_ZERO.exists():
        pytest.skip("no /dev/zero here")
    if kind == "big":
        with open(path, "wb") as f:  # sparse: the cap is checked before a byte is read
            f.truncate(LIMITS["profile"] + 1)
    with pytest.raises(InputError) as caught:
        read_input(path, "the profile", "profile")
    want = {"directory": "is a directory", "device": "is a device", "missing": "no such file",
            "big": "larger than 16 MiB, the most a profile may hold"}[kind]
    assert want in str(caught.value) and str(path) in str(caught.value)


def test_a_large_cap_is_never_allocated_up_front(tmp_path):
    path = tmp_path / "texts.jsonl"
    path.write_bytes(b"x" * (3 << 20))  # several read pieces
    assert read_input(path, "texts", "records") == b"x" * (3 << 20)  # a 1 TiB cap


def test_json_numbers_are_finite_and_the_key_is_named(tmp_path):
    assert parse_json('{"a": [1, 2.5]}', "x") == {"a": [1, 2.5]}
    for text, key in [('{"n_items": NaN}', "n_items"),
                      ('{"benchmarks": {"ws": {"items": Infinity}}}', "benchmarks.ws.items"),
                      ('{"runs": [1, -1e999]}', "runs[1]")]:
        with pytest.raises(InputError) as caught:
            parse_json(text, "x")
        assert str(caught.value).startswith(f"x: {key} is not a finite number"), caught.value
    path = tmp_path / "manifest.json"
    path.write_text('{"n_items": NaN}')
    with pytest.raises(DataError, match="n_items is not a finite number"):
        read_json(path, "the run manifest", "manifest", DataError)


def test_numbers_and_paths_from_outside():
    assert finite(3, "x", 0, 10) == 3.0
    for bad in (float("nan"), float("inf"), -1, 11, "3", True, 10**400):
        with pytest.raises(InputError, match="^usage: "):
            finite(bad, "usage", 0, 10)
    assert parse_numbers("2.5, 10", "--price", (1, 2), "IN,OUT") == [2.5, 10.0]
    for text in ("nan,1", "1,inf", "-1,2", "1,2,3", "x"):
        with pytest.raises(InputError, match="--price expects IN,OUT"):
            parse_numbers(text, "--price", (1, 2), "IN,OUT")


def test_paths_a_file_holds_stay_inside_its_folder(tmp_path):
    (tmp_path / "runs" / "a").mkdir(parents=True)
    assert inside(tmp_path, "runs/a", "p") == tmp_path / "runs" / "a"
    for rel in ("../x", "runs/../../x", "/etc", "", None):
        with pytest.raises(InputError):
            inside(tmp_path, rel, "p")


@pytest.mark.parametrize("cmd", [
    ["run", "already_said_that", "--model", "random", "--estimate", "--price", "{p}"],
    ["report", "{runs}", "--price", "{p}"],
    ["profile", "--model", "random", "--price", "{p}", "--dry-run", "--runs-dir", "{runs}"],
])
@pytest.mark.parametrize("price", ["nan,1", "1,inf"])
def test_prices_are_finite_everywhere_they_are_taken(cli, tmp_path, cmd, price):
    runs = tmp_path / "runs"
    runs.mkdir()
    code, _, err = cli(*[a.format(p=price, runs=runs) for a in cmd])
    assert code == 2 and "--price expects" in err and "finite" in err, err
    assert "$nan" not in err and "Traceback" not in err


def _worldsense_run(cli, tmp_path) -> Path:
    code, _, err = cli("run", "worldsense:fresh", "--model", "random", "--limit", 60,
                       "--runs-dir", tmp_path / "runs")
    assert code == 0, err
    return next((tmp_path / "runs").rglob("records.jsonl")).parent


def test_a_record_out_of_range_is_left_out_as_damaged_not_a_moved_headline(cli, tmp_path):
    from mindprobe.core.store import load_run

    run = _worldsense_run(cli, tmp_path)
    records = run / "records.jsonl"
    lines = records.read_text().splitlines()
    at = 7
    edited = json.loads(lines[at - 1])
    without = tmp_path / "without"
    shutil.copytree(run, without)
    (without / "records.jsonl").write_text("\n".join(lines[:at - 1] + lines[at:]) + "\n")
    edited["problemsize"] = 1e308
    lines[at - 1] = json.dumps(edited)
    records.write_text("\n".join(lines) + "\n")

    damaged, clean = load_run(run), load_run(without)
    assert len(damaged.records) == len(lines) - 1
    assert [w for w in damaged.warnings if f"{records}:{at}:" in w and "problemsize" in w]
    # the headline is the one of the run without that record, labelled as over a subset
    assert damaged.results().headline.as_dict() == clean.results().headline.as_dict()
    assert "59 of 60" in (damaged.results().headline.subset or "")
    code, _, err = cli("analyse", "worldsense", "--run", run)
    assert code == 0 and f"{records}:{at}:" in err.replace("\n", ""), err
    # a resume asks the damaged item again; the damaged line no longer counts
    code, _, err = cli("run", "worldsense:fresh", "--model", "random", "--limit", 60,
                       "--runs-dir", tmp_path / "runs")
    assert code == 0, err
    assert len(load_run(run).records) == 60


def test_nan_in_a_manifest_is_refused_naming_file_and_key(cli, tmp_path):
    run = _worldsense_run(cli, tmp_path)
    manifest = run / "manifest.json"
    doc = json.loads(manifest.read_text())
    manifest.write_text(json.dumps({**doc, "n_items": float("nan")}))
    for cmd in (["analyse", "worldsense", "--run", run], ["report", run, "--out",
                                                          tmp_path / "r.html"]):
        code, _, err = cli(*cmd)
        text = err.replace("\n", " ")
        assert str(manifest) in text and "n_items is not a finite number" in text, err
        assert "of nan planned" not in text and "Traceback" not in text
    code, _, err = cli("run", "worldsense:fresh", "--model", "random", "--limit", 60,
                       "--runs-dir", tmp_path / "runs")
    assert code == 2 and "n_items is not a finite number" in err.replace("\n", " "), err


# -- the hostile matrix: every surface that takes a file, every kind of hostile file --------

#: surface -> (argv with {f} for the hostile path, what a NaN case writes there or None)
SURFACES = {
    "--prompt-file": (["run", "already_said_that", "--model", "random", "--prompt-file", "{f}",
                       "--runs-dir", "{runs}"], '{"task_description": NaN}'),
    "--endpoints": (["run", "worldsense:fresh", "--model", "openai:m", "--endpoints", "{f}",
                     "--runs-dir", "{runs}"], "http://127.0.0.1:9/v1 concurrency=nan\n"),
    "--data-file (worldsense)": (["run", "worldsense", "--model", "random", "--data-file",
                                  "{f}", "--runs-dir", "{runs}"], None),
    "--data-file (mr_gsm8k)": (["run", "mr_gsm8k", "--model", "random", "--data-file", "{f}",
                                "--runs-dir", "{runs}"], None),
    "--cache": (["run", "worldsense:fresh", "--model", "openai:m@http://127.0.0.1:9/v1",
                 "--cache", "{f}", "--runs-dir", "{runs}"], None),
    "profile.json": (["profile", "--compare", "{d}", "{d}"], '{"size": NaN}'),
    "manifest.json": (["analyse", "worldsense", "--run", "{d}"],
                      '{"benchmark": "worldsense", "n_items": NaN}'),
    "records.jsonl": (["analyse", "worldsense", "--run", "{d}"], None),
    "texts.jsonl": (["run", "worldsense:fresh", "--model", "random", "--limit", "5",
                     "--runs-dir", "{runs}"], None),  # a resume reads the run's texts
    "--chat-template": (["export", "sort", "--finetune-corpus", "--out", "{runs}.jsonl",
                         "--books", "{sort}", "--chat-template", "{f}"], None),
    "--text (sort build)": (["build", "sort", "--text", "{f}", "--out", "{runs}"], None),
    "--generations": (["analyse", "fanoutqa", "--generations", "{f}"], None),
    "--questions @FILE": (["analyse", "fanoutqa", "--generations", "{g}", "--questions",
                           "@{f}", "--data-dir", "{fanoutqa}"], None),
    "--upstream-results": (["analyse", "mr_gsm8k", "--upstream-results", "{f}"], None),
}
#: the cap each surface's file is held to (core.inputs.LIMITS)
CAPS = {"--prompt-file": "prompt file", "--endpoints": "endpoints file", "profile.json":
        "profile", "manifest.json": "manifest", "records.jsonl": "records", "texts.jsonl":
        "records", "--chat-template":
        "chat template", "--text (sort build)": "text", "--generations": "results file",
        "--questions @FILE": "id list", "--upstream-results": "results file"}
#: files named inside a folder the command is given (the folder is the argument)
IN_FOLDER = {"profile.json": "profile.json", "manifest.json": "manifest.json",
             "records.jsonl": "records.jsonl", "texts.jsonl": "texts.jsonl"}
WORDS = {"fifo": "is a FIFO", "directory": "is a directory", "device": "is a device",
         "oversized": "larger than", "nan": "not a finite number"}


def _hostile(tmp_path: Path, surface: str, kind: str, shared_data,
             cli) -> tuple[list[str], Path]:
    argv, nan_text = SURFACES[surface]
    folder = tmp_path / "given"
    folder.mkdir()
    name = IN_FOLDER.get(surface, "input.json")
    target = folder / name
    runs = tmp_path / "runs"
    if surface == "records.jsonl":
        (folder / "manifest.json").write_text(json.dumps(
            {"benchmark": "worldsense", "variant": "fresh", "status": "finished"}))
    if surface == "texts.jsonl":  # a run to resume, its texts file then made hostile
        code, _, err = cli(*[a.format(runs=runs) for a in argv])
        assert code == 0, err
        folder = next(runs.rglob("manifest.json")).parent
        target = folder / name
        target.unlink(missing_ok=True)
    if kind == "fifo":
        os.mkfifo(target)
    elif kind == "directory":
        target.mkdir()
    elif kind == "device":
        if not DEV_ZERO.exists():
            pytest.skip("no /dev/zero here")
        target.symlink_to(DEV_ZERO)
    elif kind == "oversized":
        if surface in ("--cache",):
            pytest.skip("a cache file of any size is the cache's own (SQLite)")
        with open(target, "wb") as f:
            f.truncate(LIMITS[CAPS.get(surface, "data file")] + 1)  # sparse
    elif kind == "nan":
        if nan_text is None:
            pytest.skip(f"{surface} holds no number a NaN could stand for")
        target.write_text(nan_text)
    generations = tmp_path / "generations.jsonl"
    generations.write_text('{"id": "x", "answer": "y"}\n')
    data = {"sort": "", "fanoutqa": ""}
    for bench in data:
        if "{" + bench + "}" in " ".join(argv):
            data[bench] = str(shared_data(bench))
    return [a.format(f=target, d=folder, runs=runs, g=generations, **data) for a in argv], target


@pytest.mark.parametrize("kind", list(WORDS))
@pytest.mark.parametrize("surface", list(SURFACES))
@pytest.mark.slow
def test_every_input_surface_refuses_hostile_files(cli, tmp_path, shared_data, surface, kind):
    argv, target = _hostile(tmp_path, surface, kind, shared_data, cli)
    if kind == "fifo":  # a process of its own: a read that blocks is a timeout, not a hang
        env = {**os.environ, "MINDPROBE_CACHE_DIR": str(tmp_path / "cache")}
        done = subprocess.run([sys.executable, "-m", "mindprobe.cli", *argv], env=env,
                              capture_output=True, text=True, timeout=120)
        code, err = done.returncode, done.stderr
    else:
        code, _, err = cli(*argv)
    text = " ".join(err.split())
    assert code == 2, (surface, kind, err)
    assert "Traceback" not in err and "no such file" not in text, err
    if kind == "nan" and surface == "--endpoints":
        assert "concurrency" in text, err
    elif kind == "nan" and surface == "--prompt-file":
        assert str(target) in text, err  # a template must be text: refused as such
    else:
        assert WORDS[kind] in text and target.name in text, (surface, kind, err)
