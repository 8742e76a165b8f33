"""`data fetch` and verified loads, against a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import hashlib
import socket

import pytest
from rich.console import Console

from mindprobe.cli import main
from mindprobe.core.data import DataFile, fetch, git_blob_sha1, resolve
from mindprobe.errors import DataError
from mindprobe.testing.files import serve_directory


def _files(base: str, payload: bytes) -> list[DataFile]:
    return [
        DataFile("a/one.txt", url=f"{base}/one.txt", sha256=hashlib.sha256(payload).hexdigest()),
        DataFile("two.txt", url=f"{base}/two.txt", git_blob=git_blob_sha1(b"two\n")),
    ]


def test_fetch_verifies_and_skips_valid_files(tmp_path):
    src = tmp_path / "srv"
    src.mkdir()
    (src / "one.txt").write_bytes(b"one\n")
    (src / "two.txt").write_bytes(b"two\n")
    console = Console(stderr=True, quiet=True)
    with serve_directory(src) as base:
        files = _files(base, b"one\n")
        got = fetch("x", files, tmp_path / "data", console)
        assert [p.read_bytes() for p in got] == [b"one\n", b"two\n"]
        (src / "one.txt").write_bytes(b"changed upstream\n")
        fetch("x", files, tmp_path / "data", console)  # present and valid: not re-downloaded
        assert (tmp_path / "data/a/one.txt").read_bytes() == b"one\n"
        (tmp_path / "data/a/one.txt").write_bytes(b"corrupt")
        with pytest.raises(DataError, match="does not match the official file"):
            fetch("x", files, tmp_path / "data", console)  # re-fetched, still wrong: refused
        assert not (tmp_path / "data/a/one.txt").exists()  # never left a bad file behind


def test_resolve_checks_every_load(tmp_path):
    f = DataFile("f.txt", sha256=hashlib.sha256(b"ok").hexdigest())
    with pytest.raises(DataError, match="mindprobe data fetch x"):
        resolve("x", [f], "f.txt", None)
    (tmp_path / "f.txt").write_bytes(b"ok")
    assert resolve("x", [f], "f.txt", tmp_path).read_bytes() == b"ok"
    (tmp_path / "f.txt").write_bytes(b"tampered")
    with pytest.raises(DataError, match="re-fetch"):
        resolve("x", [f], "f.txt", tmp_path)


def test_offline_download_is_one_clear_error(tmp_path):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    files = [DataFile("f.txt", url=f"http://127.0.0.1:{port}/f.txt", sha256="0" * 64)]
    with pytest.raises(DataError, match="could not download .* --data-dir"):
        fetch("x", files, tmp_path, Console(stderr=True, quiet=True))


def test_data_fetch_cli_on_present_files(shared_data, tmp_path, capsys):
    d = shared_data("sort")  # a folder holding every file SORT declares: nothing to download
    assert main(["data", "fetch", "sort", "--data-dir", str(d)]) == 0
    assert "23 file(s) ready" in capsys.readouterr().err
    assert main(["data", "fetch", "nosuch"]) == 2


def test_a_mirror_serves_what_the_first_url_does_not(tmp_path):
    """The first URL serves other bytes (or nothing): the mirror's verified bytes are kept;
    when no URL serves the pinned bytes the error says so and no file is left behind."""
    src = tmp_path / "srv"
    src.mkdir()
    (src / "old.txt").write_bytes(b"another version\n")
    (src / "good.txt").write_bytes(b"pinned\n")
    console = Console(stderr=True, quiet=True)
    pinned = hashlib.sha256(b"pinned\n").hexdigest()
    with serve_directory(src) as base:
        for first in ("old.txt", "gone.txt"):
            spec = DataFile(f"{first}.d/f.txt", url=f"{base}/{first}", sha256=pinned,
                            mirrors=(f"{base}/good.txt",))
            (got,) = fetch("x", [spec], tmp_path / "data", console)
            assert got.read_bytes() == b"pinned\n"
        bad = DataFile("bad/f.txt", url=f"{base}/old.txt", sha256=pinned,
                       mirrors=(f"{base}/old.txt",))
        with pytest.raises(DataError, match="does not match the official file"):
            fetch("x", [bad], tmp_path / "data", console)
        assert not (tmp_path / "data/bad/f.txt").exists()
