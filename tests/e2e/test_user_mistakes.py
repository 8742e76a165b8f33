"""User mistakes found by trying the tool as a newcomer: each is one line and exit 2, and
nothing is created by accident; equivalent spellings of one endpoint resume one run."""

from __future__ import annotations

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
