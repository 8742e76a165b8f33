"""Typed options: only the chosen benchmark's flags, -O for scripts, ranges refused."""

from __future__ import annotations

from pathlib import Path

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


def test_every_numeric_verb_flag_declares_a_range_and_refuses_values_outside_it(capsys,
                                                                                tmp_path):
    """The same for the benchmarks' own verbs (judge, sort build/export, worldsense generate):
    each numeric flag declares its range, and a value outside is refused as it is parsed."""
    flags = _numeric_verb_flags()
    assert len(flags) >= 8
    for command, flag, kind, bounds in flags:
        assert bounds is not None, f"{command} {flag} declares no range"
        for value in _out_of_range(kind, *bounds):
            code, _, err = _run(capsys, *command, f"{flag}={value}")
            assert code == 2 and len(err.strip().splitlines()) == 1, (command, flag, err)
            assert f"{flag} must be between" in err and value in err, (command, flag, err)


def test_help_lists_only_that_benchmarks_options(capsys):
    with pytest.raises(SystemExit):
        main(["run", "worldsense", "--help"])
    out = capsys.readouterr().out
    assert "--reasks" in out and "--scoring" in out and "--question-type" not in out
    assert "--n-samples" not in out and "worldsense options" in out


@pytest.mark.parametrize("args, message", [
    (["-O", "bogus=1"], "unknown option 'bogus' of worldsense"),
    (["-O", "reasks"], "-O expects KEY=VALUE"),
    (["-O", "reasks=-1"], "--reasks must be between 0 and 10"),
    (["--reasks", "x"], "--reasks expects a number"),
    (["--reasks", "1", "-O", "reasks=2"], "both as a flag and with -O"),
    (["--max-tokens", "0"], "--max-tokens must be between 1 and 2147483647"),
    (["--max-tokens", "99999999999999999999"], "--max-tokens must be between 1 and"),
    (["--timeout", "0"], "--timeout must be between 0.001 and 604800"),
    (["--timeout", "nan"], "--timeout must be between"),
    (["--timeout", "-1"], "--timeout must be between"),
    (["--max-attempts", "0"], "--max-attempts must be between 1 and 1000"),
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
    (["--n-samples", "0"], "--n-samples must be between 1 and 500"),
    (["--max-turns", "0"], "--max-turns must be between 1 and 100"),
    (["--max-turns", "100000"], "--max-turns must be between 1 and 100"),
    (["--temperature", "nan"], "--temperature must be between 0 and 2; got nan"),
    (["--temperature", "inf"], "--temperature must be between 0 and 2; got inf"),
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


def _numeric_options() -> list[tuple[str, str, type, float | None, float | None]]:
    """(task, flag, type, minimum, maximum) of every numeric option a run takes: the common
    run settings' (engine/settings.py RANGES) and every benchmark's typed options."""
    import typing

    from mindprobe.core.options import _kind, option_specs
    from mindprobe.engine.settings import FLAGS, RANGES, RunSettings
    from mindprobe.registry import BENCHMARKS, options_class

    hints = typing.get_type_hints(RunSettings)
    out = [("worldsense:fresh", FLAGS.get(name, "--" + name.replace("_", "-")),
            _kind(hints[name])[0], lo, hi) for name, (lo, hi) in RANGES.items()]
    for bench in BENCHMARKS:
        out += [(bench, s.flag, s.kind, s.minimum, s.maximum)
                for s in option_specs(options_class(bench)) if s.kind in (int, float)]
    return out


def _numeric_verb_flags() -> list[tuple[list[str], str, type, tuple | None]]:
    """([verb, bench], flag, type, range) of every numeric flag a benchmark's verbs declare."""
    from mindprobe.commands import verbs_of
    from mindprobe.registry import BENCHMARKS

    return [([name, bench], arg.flags[0], arg.options["type"], arg.range)
            for bench in BENCHMARKS for name, verb in verbs_of(bench).items()
            for arg in verb.arguments if arg.options.get("type") in (int, float)]


def _out_of_range(kind: type, lo: float, hi: float) -> list[str]:
    if kind is int:
        return [str(int(lo) - 1), str(int(hi) + 1), "99999999999999999999"]
    return [repr(lo - 1), repr(hi * 2), "nan", "inf", "-inf"]


def test_every_numeric_option_declares_a_range_and_refuses_values_outside_it(capsys, tmp_path):
    """Walks every numeric option (run settings and each benchmark's): each declares both
    bounds, and every value outside them (NaN and infinity too) is one usage line naming the
    option and its range, exit 2, before anything is loaded, sent or written."""
    options = _numeric_options()
    assert len(options) > 20
    for task, flag, kind, lo, hi in options:
        assert lo is not None and hi is not None, f"{task} {flag} declares no full range"
        for value in _out_of_range(kind, lo, hi):
            code, _, err = _run(capsys, "run", task, "--model", "random", "--runs-dir",
                                tmp_path, f"{flag}={value}")
            assert code == 2, (task, flag, value, err)
            assert len(err.strip().splitlines()) == 1, err
            assert f"{flag} must be between" in err and value in err, (task, flag, value, err)
    assert not list(tmp_path.iterdir())  # nothing ran


@pytest.mark.parametrize("flag, task, model", [("--prompt-file", "already_said_that", "random"),
                                               ("--endpoints", "worldsense:fresh", "openai:m")])
@pytest.mark.parametrize("source", ["/dev/zero", "big"])
def test_input_files_have_a_size_limit(capsys, tmp_path, flag, task, model, source):
    """An endless (/dev/zero) or huge file given where a small one belongs is one usage line,
    not a read until memory runs out."""
    from mindprobe.core.inputs import LIMITS

    big = source == "big"
    if big:
        source = tmp_path / "big.json"
        source.write_text('{"a": "' + "x" * LIMITS["prompt file"] + '"}')
    elif not Path(source).exists():
        pytest.skip("no /dev/zero here")
    code, _, err = _run(capsys, "run", task, "--model", model, "--runs-dir", tmp_path / "runs",
                        flag, source)
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert flag in err and ("larger than 4 MiB" if big else "is a device") in err
