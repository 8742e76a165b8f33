"""User mistakes found by trying the tool as a newcomer: each is one line and exit 2, and
nothing is created by accident; equivalent spellings of one endpoint resume one run."""

from __future__ import annotations

import json

import pytest

from mindprobe.testing import TestServer


def test_spellings_of_one_endpoint_resume_one_run(cli, tmp_path):
    with TestServer(reply="TRUE") as srv:
        host = srv.base_url.removeprefix("http://").removesuffix("/v1")
        args = ["run", "worldsense:fresh", "--limit", 10, "--runs-dir", tmp_path]
        assert cli(*args, "--model", f"openai:test-model@{host}")[0] == 0
        for spelling in (f"{host}/v1", f"http://{host}/v1/"):
            code, _, err = cli(*args, "--model", f"openai:test-model@{spelling}")
            assert code == 0, err
    assert len(list(tmp_path.rglob("manifest.json"))) == 1


@pytest.mark.parametrize("name", ["../../escape", "a/b", ".."])
def test_a_run_name_is_one_folder_name(cli, tmp_path, name):
    code, _, err = cli("run", "worldsense:fresh", "--model", "random", "--limit", 5,
                       "--runs-dir", tmp_path / "runs", "--name", name)
    assert code == 2 and "path component" in err
    assert not (tmp_path / "runs").exists()


def test_options_that_would_do_nothing_are_refused(cli, tmp_path):
    code, _, err = cli("run", "already_said_that", "--model", "random", "--price", "1,2",
                       "--runs-dir", tmp_path)
    assert code == 2 and "--price only applies with --estimate" in err
    code, _, err = cli("run", "worldsense:fresh", "--model", "random", "--role",
                       "judge=random", "--runs-dir", tmp_path)
    assert code == 2 and "worldsense has no role 'judge'" in err
    code, _, err = cli("run", "mr_gsm8k:sample", "--model", "random", "--role",
                       "critic=random", "--runs-dir", tmp_path)
    assert code == 2 and "its roles: judge" in err
    assert not any(tmp_path.iterdir())


def test_missing_parent_folders_are_not_created(cli, tmp_path):
    code, _, err = cli("run", "worldsense:fresh", "--model", "random", "--limit", 5,
                       "--runs-dir", tmp_path / "typo" / "runs")
    assert code == 2 and "does not exist" in err and not (tmp_path / "typo").exists()
    code, _, err = cli("run", "worldsense:fresh", "--model", "random", "--limit", 5,
                       "--runs-dir", tmp_path / "runs", "--cache", tmp_path / "nope" / "c.db")
    assert code == 2 and "--cache" in err and not (tmp_path / "nope").exists()


def test_a_refused_run_leaves_no_empty_folders(cli, tmp_path):
    with TestServer(reply="TRUE") as srv:  # it answers 404 for models it does not serve
        code, _, err = cli("run", "worldsense:fresh", "--model",
                           f"openai:other@{srv.base_url}", "--limit", 5,
                           "--runs-dir", tmp_path / "runs")
    assert code == 2 and "the server offers: test-model" in err
    assert not list((tmp_path / "runs").rglob("*"))


def test_export_of_a_run_whose_data_file_moved(cli, tmp_path):
    gen = tmp_path / "gen set"
    assert cli("generate", "worldsense", "--seed", 3, "--n", 2, "--out", gen)[0] == 0
    assert cli("run", "worldsense", "--model", "random", "--data-file",
               gen / "trials.jsonl.bz2", "--runs-dir", tmp_path / "runs")[0] == 0
    (gen / "trials.jsonl.bz2").unlink()
    run = next((tmp_path / "runs").rglob("manifest.json")).parent
    code, _, err = cli("export", "worldsense", "--run", run, "--out", tmp_path / "exp")
    assert code == 2 and "no longer there" in err and "Traceback" not in err
    assert not (tmp_path / "exp").exists()
    code, _, err = cli("export", "worldsense", "--run", run, "--out",
                       tmp_path / "missing" / "exp")
    assert code == 2 and "does not exist" in err and not (tmp_path / "missing").exists()


def test_report_format_follows_the_file_name(cli, tmp_path):
    assert cli("run", "worldsense:fresh", "--model", "random", "--limit", 5,
               "--runs-dir", tmp_path / "runs")[0] == 0
    out = tmp_path / "rep.md"
    code, _, err = cli("report", "--runs-dir", tmp_path / "runs", "--out", out)
    assert code == 0, err
    assert not out.read_text().lstrip().startswith("<!DOCTYPE")
    code, _, err = cli("report", "--runs-dir", tmp_path / "runs", "--out", out,
                       "--format", "html")
    assert code == 2 and "make them agree" in err


def test_printed_commands_are_shell_quoted(cli, tmp_path):
    gen = tmp_path / "my runs" / "gen set"
    gen.parent.mkdir()
    code, _, err = cli("generate", "worldsense", "--seed", 3, "--n", 2, "--out", gen)
    assert code == 0, err
    assert f"--data-file '{gen}/trials.jsonl.bz2'" in err


def test_manifest_says_whether_the_run_repeats(cli, tmp_path):
    from mindprobe.models import parse_model_spec

    assert parse_model_spec("local").deterministic(1) is True
    assert parse_model_spec("local").deterministic(2) is False
    args = ["run", "worldsense:fresh", "--limit", 10, "--runs-dir", tmp_path]
    assert cli(*args, "--model", "random", "--concurrency", 3)[0] == 0
    manifest = json.loads(next(tmp_path.rglob("manifest.json")).read_text())
    assert manifest["deterministic"] is True and manifest["concurrency"] == 3
    with TestServer(reply="TRUE") as srv:
        assert cli(*args, "--model", f"openai:test-model@{srv.base_url}")[0] == 0
    served = [json.loads(p.read_text()) for p in tmp_path.rglob("manifest.json")]
    assert [m["deterministic"] for m in served if m["model_label"] != "random"] == [None]


def test_a_resumed_run_is_as_reproducible_as_its_worst_part(tmp_path):
    from mindprobe.core.store import RunStore, base_manifest

    def open_with(flag):
        store = RunStore(tmp_path / "run")
        store.open(base_manifest(benchmark="b", variant="v", model={}, config={}, data={},
                                 deterministic=flag))
        store.close("interrupted")
        return json.loads((tmp_path / "run" / "manifest.json").read_text())["deterministic"]

    assert open_with(True) is True
    assert open_with(False) is False
    assert open_with(True) is False


def test_a_verb_the_benchmark_lacks_is_named(cli):
    code, _, err = cli("sweep", "already_said_that", "--model", "random")
    assert code == 2 and "already_said_that has no `sweep`; benchmarks that do: sort" in err
    code, _, err = cli("export", "already_said_that", "--run", "R", "--out", "X")
    assert code == 2 and "benchmarks that do: fanoutqa, mr_gsm8k, sort, worldsense" in err
    # mr_gsm8k's own export writes fresh items: without --fresh it says so
    code, _, err = cli("export", "mr_gsm8k", "--run", "R", "--out", "X")
    assert code == 2 and "--fresh" in err and "mindprobe export mr_gsm8k --help" in err


def test_dry_run_needs_no_api_key_and_a_real_run_asks_for_one(cli, tmp_path, shared_data,
                                                              monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    data = shared_data("mr_gsm8k")
    args = ["run", "mr_gsm8k:sample", "--model", "openai:gpt-4o-mini", "--data-dir", data,
            "--limit", 3, "--runs-dir", tmp_path / "runs"]
    code, _, err = cli(*args, "--dry-run")
    assert code == 0, err
    code, _, err = cli(*args)
    assert code == 2 and "needs an API key: set OPENAI_API_KEY" in err
    assert not (tmp_path / "runs").exists()


def test_judge_refuses_a_zero_timeout(cli, tmp_path, shared_data):
    data = shared_data("mr_gsm8k")
    assert cli("run", "mr_gsm8k:sample", "--model", "random", "--data-dir", data, "--limit", 2,
               "--runs-dir", tmp_path)[0] == 0
    run = next(tmp_path.rglob("manifest.json")).parent
    code, _, err = cli("judge", "mr_gsm8k", "--run", run, "--judge", "random", "--timeout", 0)
    assert code == 2 and "--timeout must be between 0.001 and" in err


def test_runs_of_a_folder_that_is_not_there(cli, tmp_path):
    code, _, err = cli("runs", "--runs-dir", tmp_path / "typo")
    assert code == 2 and "does not exist" in err
    (tmp_path / "afile").write_text("")
    code, _, err = cli("runs", "--runs-dir", tmp_path / "afile")
    assert code == 2 and "is a file" in err


def test_json_mode_prints_one_document_on_an_error_too(cli, tmp_path):
    code, doc, err = cli("run", "worldsense:fresh", "--model", "openai:m@127.0.0.1:9",
                         "--limit", 5, "--runs-dir", tmp_path, "--json")
    assert code == 2 and doc["exit_code"] == 2 and "cannot reach" in doc["error"]


def test_a_plain_jsonl_data_file_runs_like_its_bz2(cli, tmp_path):
    import bz2

    gen = tmp_path / "gen"
    assert cli("generate", "worldsense", "--seed", 3, "--n", 2, "--out", gen)[0] == 0
    plain = tmp_path / "trials.jsonl"
    plain.write_bytes(bz2.decompress((gen / "trials.jsonl.bz2").read_bytes()))
    docs = [cli("run", "worldsense", "--model", "random", "--data-file", path, "--runs-dir",
                tmp_path / name, "--json")[1] for name, path in
            (("a", gen / "trials.jsonl.bz2"), ("b", plain))]
    assert docs[0]["accuracy"] == docs[1]["accuracy"] and docs[1]["n_trials"] > 0


def test_analyse_of_several_runs_keeps_the_envelope(cli, tmp_path):
    for tag in ("a", "b"):
        assert cli("run", "worldsense:fresh", "--model", "random", "--limit", 10,
                   "--runs-dir", tmp_path, "--name", tag)[0] == 0
    runs = sorted(p.parent for p in tmp_path.rglob("manifest.json"))
    code, doc, err = cli("analyse", "worldsense", "--run", runs[0], "--run", runs[1], "--json")
    assert code == 0, err
    assert doc["benchmark"] == "worldsense" and set(doc["runs"]) == {str(r) for r in runs}
    assert all(d["headline"]["name"] == "accuracy" for d in doc["runs"].values())


def test_options_of_another_setting_are_refused(cli, tmp_path):
    code, _, err = cli("run", "worldsense:fresh", "--model", "random", "--shots", 5,
                       "--runs-dir", tmp_path)
    assert code == 2 and "--shots only applies with --prompting incontext-iid" in err
    code, _, err = cli("run", "sort", "--model", "random", "--retrieval-k", 5,
                       "--runs-dir", tmp_path)
    assert code == 2 and "--retrieval-k only applies with --condition retrieval" in err


def test_a_bad_flag_value_points_at_the_benchmarks_own_help(cli):
    code, _, err = cli("run", "worldsense", "--model", "random", "--prompting", "nonsense")
    assert code == 2 and "(see `mindprobe run worldsense --help`)" in err
    # every benchmark verb, not only run: its own help lists the benchmark's options
    code, _, err = cli("export", "sort", "--out", "x")
    assert code == 2 and "(see `mindprobe export sort --help`)" in err, err
    code, _, err = cli("analyse", "worldsense", "--bogus")
    assert code == 2 and "(see `mindprobe analyse worldsense --help`)" in err, err


def test_invalid_answers_share_one_name_in_json_and_runs(cli, tmp_path):
    with TestServer(reply="hello") as srv:
        code, doc, err = cli("run", "worldsense:fresh", "--model",
                             f"openai:test-model@{srv.base_url}", "--limit", 10,
                             "--runs-dir", tmp_path, "--json")
    assert code == 0, err
    n = doc["n_trials"]
    assert doc["invalid"] == {"count": n, "of": n, "rate": 1.0}
    code, rows, _ = cli("runs", "--runs-dir", tmp_path, "--json")
    assert rows[0]["invalid"]["count"] == n
    code, text, _ = cli("runs", "--runs-dir", tmp_path)
    assert f"{n}/{n}" in text


def test_a_data_file_in_another_compression_is_one_line(cli, tmp_path):
    import gzip

    path = tmp_path / "trials.jsonl.gz"
    path.write_bytes(gzip.compress(b'{"Key": 1}\n'))
    code, _, err = cli("run", "worldsense", "--model", "random", "--data-file", path,
                       "--runs-dir", tmp_path / "runs")
    assert code == 2 and "neither bzip2 nor UTF-8" in err and "Traceback" not in err
