"""Typed options: only the chosen benchmark's flags, -O for scripts, ranges refused."""

from __future__ import annotations

import pytest

from mindprobe.cli import main


def _run(capsys, *args):
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("flag", [["--question-type", "POT"], ["--judge", "random"],
                                  ["--n-samples", "7"],
                                  ["--estimate"], ["--max-turns", "3"]])
def test_a_flag_of_another_benchmark_is_refused(capsys, tmp_path, flag):
    code, _, err = _run(capsys, "run", "worldsense:fresh", "--model", "random", "--runs-dir",
                        tmp_path, *flag)
    assert code == 2 and "unrecognized arguments" in err and flag[0] in err
    assert not list(tmp_path.iterdir())  # nothing ran


def test_help_lists_only_that_benchmarks_options(capsys):
    with pytest.raises(SystemExit):
        main(["run", "worldsense", "--help"])
    out = capsys.readouterr().out
    assert "--reasks" in out and "--scoring" in out and "--question-type" not in out
    assert "--n-samples" not in out and "worldsense options" in out


@pytest.mark.parametrize("args, message", [
    (["-O", "bogus=1"], "unknown option 'bogus' of worldsense"),
    (["-O", "reasks"], "-O expects KEY=VALUE"),
    (["-O", "reasks=-1"], "--reasks must be at least 0"),
    (["--reasks", "x"], "--reasks expects a number"),
    (["--reasks", "1", "-O", "reasks=2"], "both as a flag and with -O"),
    (["--max-tokens", "0"], "--max-tokens must be a positive number"),
    (["--timeout", "0"], "--timeout must be a positive number"),
    (["--timeout", "nan"], "--timeout must be a positive number"),
    (["--timeout", "-1"], "--timeout must be a positive number"),
    (["--max-attempts", "0"], "--max-attempts must be a positive number"),
])
def test_bad_option_values_are_one_line_exit_2(capsys, tmp_path, args, message):
    code, _, err = _run(capsys, "run", "worldsense:fresh", "--model", "random", "--runs-dir",
                        tmp_path, *args)
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1, err


def test_generic_options_work_like_flags(capsys, tmp_path, shared_data):
    data = shared_data("already_said_that")
    common = ["run", "already_said_that:distractorless", "--model", "random", "--data-dir", data,
              "--json"]
    code, out_o, err = _run(capsys, *common, "--runs-dir", tmp_path / "a", "-O", "n_samples=3",
                            "-O", "max-turns=5")
    assert code == 0, err
    code, out_f, err = _run(capsys, *common, "--runs-dir", tmp_path / "b", "--n-samples", 3,
                            "--max-turns", 5)
    assert code == 0, err
    import json

    a, b = json.loads(out_o), json.loads(out_f)
    assert a["headline"] == b["headline"] and a["n_samples"] == b["n_samples"] == 3


@pytest.mark.parametrize("args, message", [
    (["--n-samples", "0"], "--n-samples must be at least 1"),
    (["--max-turns", "0"], "--max-turns must be at least 1"),
])
def test_ast_ranges(capsys, tmp_path, args, message):
    code, _, err = _run(capsys, "run", "already_said_that", "--model", "random", "--runs-dir",
                        tmp_path, *args)
    assert code == 2 and message in err


def test_list_and_models_json(capsys):
    import json

    code, out, _ = _run(capsys, "list", "--json")
    assert code == 0 and "worldsense" in json.loads(out)
    code, out, _ = _run(capsys, "models", "--json")
    assert code == 0 and any(m["spec"] == "local" for m in json.loads(out))


def test_limit_help_says_what_an_item_is_per_benchmark(capsys):
    from mindprobe.cli import main

    words = {"worldsense": "whole tuples", "already_said_that": "per variant",
             "mr_gsm8k": "solutions", "sort": "segment pairs", "fanoutqa": "questions"}
    for bench, phrase in words.items():
        with pytest.raises(SystemExit):
            main(["run", bench, "--help"])
        out = " ".join(capsys.readouterr().out.split())
        assert phrase in out.split("--limit N", 2)[2].split("--concurrency")[0], bench
