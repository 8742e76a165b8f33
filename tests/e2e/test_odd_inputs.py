"""Issue 41 (items 13, 16): odd values a user types. A malformed server URL is one message
(exit 2), not a traceback; a 3,000-character model name runs (its folder name bounded, the
manifest keeping the whole name); `--cache` given a folder is refused before the run, not
quietly opened as a read-only cache that never fills."""

from __future__ import annotations

import json

import pytest

from mindprobe.testing import TestServer


@pytest.mark.parametrize("spec", ["openai:m@http://[::1", "openai:m@http://[::1,http://h:1",
                                  "openai:m@http://u:pw@[::1/v1", "openai:m@http://h:99999"])
@pytest.mark.parametrize("command", ["run", "profile"])
def test_a_malformed_server_url_is_one_message(cli, tmp_path, spec, command):
    argv = (["run", "worldsense:fresh", "--limit", 5] if command == "run" else
            ["profile", "--dry-run"])
    code, _, err = cli(*argv, "--model", spec, "--runs-dir", tmp_path)
    assert code == 2 and "bad server URL" in err, err
    assert "Traceback" not in err and "pw" not in err  # the password stays masked


def test_a_very_long_model_name_runs_in_a_bounded_folder(cli, tmp_path):
    name = "m" * 3000
    with TestServer(models=[name]) as srv:
        code, _, err = cli("run", "worldsense:fresh", "--model", f"openai:{name}@{srv.base_url}",
                           "--limit", 5, "--runs-dir", tmp_path / "runs", "--no-cache")
        assert code == 0, err
        (manifest,) = (tmp_path / "runs").rglob("manifest.json")
        assert len(manifest.parent.name) <= 120
        assert json.loads(manifest.read_text())["model_label"] == name
        # two long names that share their first 120 characters get two folders
        other = name[:-1] + "n"
        with TestServer(models=[other]) as srv2:
            code, _, err = cli("run", "worldsense:fresh", "--model",
                               f"openai:{other}@{srv2.base_url}", "--limit", 5,
                               "--runs-dir", tmp_path / "runs", "--no-cache")
        assert code == 0, err
        assert len(list((tmp_path / "runs").rglob("manifest.json"))) == 2
        # the runs listing and the report find the run under its full label
        code, doc, err = cli("runs", "--runs-dir", tmp_path / "runs", "--json")
        assert code == 0 and name in json.dumps(doc), err


def test_cache_given_a_folder_is_refused_before_the_run(cli, tmp_path):
    folder = tmp_path / "cache-folder"
    folder.mkdir()
    with TestServer() as srv:
        code, _, err = cli("run", "worldsense:fresh", "--model", f"openai:test-model@"
                           f"{srv.base_url}", "--limit", 5, "--runs-dir", tmp_path / "runs",
                           "--cache", folder)
    text = " ".join(err.split())
    assert code == 2 and f"--cache {folder}: is a directory" in text, err
    assert str(folder / "responses.sqlite") in text  # what to give instead
    assert not (tmp_path / "runs").exists()  # refused before anything ran


def test_a_run_name_too_long_for_a_folder_is_one_message(cli, tmp_path):
    code, _, err = cli("run", "worldsense:fresh", "--model", "random", "--limit", 5,
                       "--runs-dir", tmp_path, "--name", "n" * 3000)
    assert code == 2 and "--name" in err and "3,000 characters" in err, err
    assert "File name too long" not in err
