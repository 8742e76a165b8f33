"""WorldSense verbs through the CLI: analyse (-t / --run), export round trip, generate."""

from __future__ import annotations

import json

from mindprobe.cli import main


def _cli(capsys, *args):
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def test_analyse_testset_prints_the_seed_tables(shared_data, capsys):
    testset = shared_data("worldsense") / "test_set"
    code, out, err = _cli(capsys, "analyse", "worldsense", "-t", testset, "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["benchmark"] == "worldsense" and doc["testset"] == str(testset)
    assert isinstance(doc["warnings"], list)
    gpt4 = doc["accuracy"]["basic/GPT4"]
    assert round(100 * gpt4["ALL"]["mean"], 1) == 75.6
    assert round(100 * gpt4["ALL"]["conf95"], 1) == 0.4
    assert round(doc["bias"]["basic/Llama2-chat"]["Consist.normal"]["mean"], 2) == 0.79
    assert "AVERAGE ACCURACY ACROSS ALL PROBLEMS" in err  # tables on stderr under --json
    assert "Llama2-FT+1M    79.7 (0.9)   80.6 (0.5)" in err


def test_run_export_analyse_round_trip(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("MINDPROBE_CACHE_DIR", str(tmp_path / "cache"))
    code, out, err = _cli(capsys, "run", "worldsense:fresh", "--model", "random",
                          "--runs-dir", tmp_path / "runs", "--json")
    assert code == 0, err
    run_doc = json.loads(out)
    run = next((tmp_path / "runs").glob("worldsense/fresh/basic___random"))
    code, _, err = _cli(capsys, "export", "worldsense", "--run", run, "--out", tmp_path / "set")
    assert code == 0, err
    assert (tmp_path / "set/results/basic___random___results.jsonl").exists()
    assert (tmp_path / "set/trials.jsonl.bz2").exists()  # regenerated from the run's seed
    code, out, _ = _cli(capsys, "analyse", "worldsense", "-t", tmp_path / "set", "--json")
    assert code == 0
    assert json.loads(out)["accuracy"] == run_doc["accuracy"]
    # the same labels twice would silently double every tuple: refused with one message
    code, out, err = _cli(capsys, "analyse", "worldsense", "-t", tmp_path / "set", "--run", run)
    assert code == 2 and "same prompting/model labels" in err


def test_generate_is_deterministic_and_analysable(tmp_path, capsys):
    for d in ("a", "b"):
        code, _, err = _cli(capsys, "generate", "worldsense", "--seed", 7, "--n", 3,
                            "--sizes", "3,6", "--problems", "Infer.normal,Infer.extrema,Compl.normal",
                            "--out", tmp_path / d)
        assert code == 0, err
    a = (tmp_path / "a/trials.jsonl.bz2").read_bytes()
    assert a == (tmp_path / "b/trials.jsonl.bz2").read_bytes()
    code, _, err = _cli(capsys, "generate", "worldsense", "--seed", 7, "--n", 2, "--format",
                        "chat", "--out", tmp_path / "train.jsonl")
    assert code == 0, err
    first = json.loads((tmp_path / "train.jsonl").read_text().splitlines()[0])
    assert first["dialog_history"]["messages"][0]["role"] == "user"
    assert first["target_message"] in {"TRUE", "FALSE", "POSSIBLE", "IMPOSSIBLE", "1", "2", "3"}
    code, _, err = _cli(capsys, "generate", "worldsense", "--sizes", "2", "--out", tmp_path / "x")
    assert code == 2 and "size" in err.lower()
