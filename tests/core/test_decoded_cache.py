"""The decoded-data cache is keyed by the source's bytes: never stale, never required."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from mindprobe.core import decoded as decoded_module
from mindprobe.core.data import Grouped, decoded, decoded_groups
from mindprobe.core.decoded import finish_writes


@pytest.fixture
def source(tmp_path, monkeypatch):
    """(source file, decode_with(records_of_path) -> counting decoder, calls) in a fresh cache."""
    monkeypatch.setenv("MINDPROBE_CACHE_DIR", str(tmp_path / "cache"))
    src = tmp_path / "data.txt"
    calls: list[Path] = []

    def decode_with(make: Callable[[Path], Any]) -> Callable[[Path], Any]:
        def decode(path: Path) -> Any:
            calls.append(path)
            return make(path)

        return decode

    return src, decode_with, calls


def test_decoded_cache_follows_the_source(tmp_path, source):
    src, decode_with, calls = source
    src.write_text("a\nb\n")
    decode = decode_with(lambda path: {"lines": path.read_text().split()})

    assert decoded(src, None, "t", decode) == {"lines": ["a", "b"]}
    assert decoded(src, None, "t", decode) == {"lines": ["a", "b"]} and len(calls) == 1
    src.write_text("c\n")  # edited: decoded again, not served stale
    assert decoded(src, None, "t", decode) == {"lines": ["c"]} and len(calls) == 2
    for f in (tmp_path / "cache" / "decoded").iterdir():
        f.write_bytes(b"garbage")  # a corrupt cache entry is ignored and rewritten
    assert decoded(src, None, "t", decode) == {"lines": ["c"]} and len(calls) == 3
    for f in (tmp_path / "cache" / "decoded").iterdir():
        f.write_bytes(b"mindprobe-decoded-v1\n\xff")  # corrupt behind a good magic: the same
    assert decoded(src, None, "t", decode) == {"lines": ["c"]} and len(calls) == 4
    assert decoded(src, None, "t", decode) == {"lines": ["c"]} and len(calls) == 4


def _records(n_groups: int, per: int) -> list[dict]:
    return [{"g": f"t{g:03d}", "i": g * per + i} for g in range(n_groups) for i in range(per)]


def test_grouped_cache_decodes_only_the_groups_asked_for(tmp_path, source):
    """A run of 200 items out of 87,000 unmarshals its tuples only; keys and sizes come free."""
    src, decode_with, calls = source
    src.write_text("v1")
    recs = _records(5, 3)
    # a group's records need not be adjacent in the file
    decode = decode_with(lambda path: recs[::2] + recs[1::2])

    g = decoded_groups(src, None, "g", decode, lambda r: r["g"])
    assert g.keys == [f"t{k:03d}" for k in (0, 1, 2, 3, 4)] and g.sizes == [3] * 5
    again = decoded_groups(src, None, "g", decode, lambda r: r["g"])
    assert len(calls) == 1
    # group after group, each in file order
    assert [r["i"] for r in again.load(["t003", "t001"])] == [10, 9, 11, 4, 3, 5]
    assert sorted(r["i"] for r in again.all()) == list(range(15))
    assert decoded(src, None, "g", lambda p: "plain") == "plain"  # its own cache entry
    for f in (tmp_path / "cache" / "decoded").glob("g-grouped-*"):
        f.write_bytes(b"mindprobe-grouped-v1\n" + b"\x00" * 5)  # corrupt behind a good magic
    assert decoded_groups(src, None, "g", decode, lambda r: r["g"]).sizes == [3] * 5
    assert decoded_groups(src, None, "g", decode, lambda r: r["g"]).sizes == [3] * 5
    assert len(calls) == 2  # decoded again once, and the entry rewritten
    src.write_text("v2")  # edited source: decoded again
    decoded_groups(src, None, "g", decode, lambda r: r["g"])
    assert len(calls) == 3


def test_grouped_in_memory_matches_the_cached_form():
    recs = _records(4, 2)
    g = Grouped.of(recs, lambda r: r["g"])
    assert g.all() == recs and g.load(["t002"]) == recs[4:6]


def test_damage_inside_a_group_is_repaired_on_load(tmp_path, source):
    """A cached entry whose header is fine but a group's bytes are not: rebuilt from the source
    when the group is loaded, rewritten, and the records are right."""
    src, decode_with, calls = source
    src.write_text("v1")
    decode = decode_with(lambda path: _records(3, 2))

    decoded_groups(src, None, "d", decode, lambda r: r["g"])
    finish_writes()  # the memo is written behind the first caller
    (entry,) = (tmp_path / "cache" / "decoded").glob("d-grouped-*")
    blob = bytearray(entry.read_bytes())
    blob[-3:] = b"\xff\xff\xff"  # the last group's bytes, the header untouched
    entry.write_bytes(bytes(blob))
    g = decoded_groups(src, None, "d", decode, lambda r: r["g"])
    assert len(calls) == 1 and g.load(["t000"]) == _records(3, 2)[:2]
    assert g.load(["t002"]) == _records(3, 2)[4:] and len(calls) == 2
    assert decoded_groups(src, None, "d", decode, lambda r: r["g"]).all() == _records(3, 2)
    assert len(calls) == 2


def test_a_flipped_byte_is_never_read_as_data(tmp_path, source):
    """Issue 33.1: `marshal` reads a changed letter as another string, silently; every stored
    body and group carries a digest, so damage anywhere is decoded anew, never served."""
    src, decode_with, calls = source
    src.write_text("v1")
    recs = [{"g": f"t{g}", "text": f"answer-{g}-{i}"} for g in range(3) for i in range(2)]
    decode = decode_with(lambda path: recs)
    assert decoded(src, None, "f", decode) == recs
    decoded_groups(src, None, "f", decode, lambda r: r["g"])
    finish_writes()
    assert len(calls) == 2
    entries = sorted((tmp_path / "cache" / "decoded").iterdir())
    for entry in entries:
        data = entry.read_bytes()
        at = data.rindex(b"answer-1-1")
        entry.write_bytes(data[:at] + b"ANSWER" + data[at + 6:])  # same length, same shape
    assert decoded(src, None, "f", decode) == recs
    assert decoded_groups(src, None, "f", decode, lambda r: r["g"]).all() == recs
    assert len(calls) == 4  # each decoded again once, and its entry rewritten
    assert decoded(src, None, "f", decode) == recs and len(calls) == 4


def test_a_first_load_does_not_wait_for_its_memo(tmp_path, source, monkeypatch):
    """A miss hands out its groups as soon as they are marshalled; the memo is written behind
    it (a 70 MB write is off a first run's way to its first request). What it hands out are
    fresh objects, so a caller changing a record changes neither the memo nor a later load."""
    src, decode_with, calls = source
    src.write_text("v1")
    decode = decode_with(lambda path: _records(4, 2))
    release, real_write = threading.Event(), decoded_module.write_file

    def slow_write(*args, **kwargs):
        assert release.wait(30)
        return real_write(*args, **kwargs)

    monkeypatch.setattr(decoded_module, "write_file", slow_write)
    g = decoded_groups(src, None, "w", decode, lambda r: r["g"])  # returns, the write blocked
    assert not list((tmp_path / "cache" / "decoded").glob("w-grouped-*"))
    first = g.load(["t001"])
    assert first == _records(4, 2)[2:4]
    first[0]["i"] = "changed"
    assert g.load(["t001"]) == _records(4, 2)[2:4]
    release.set()
    again = decoded_groups(src, None, "w", decode, lambda r: r["g"])  # waits for the writer
    assert again.all() == _records(4, 2) and len(calls) == 1
    assert list((tmp_path / "cache" / "decoded").glob("w-grouped-*"))


def test_a_memo_begun_in_a_daemon_thread_is_whole_before_the_process_ends(tmp_path):
    """A profile plans its benchmarks in daemon threads; a thread they start is a daemon too
    unless told otherwise, and the interpreter does not wait for daemons: the memo written
    behind such a plan was lost at exit, so every "warm" plan decoded again."""
    import subprocess
    import sys
    import textwrap

    src = tmp_path / "data.txt"
    src.write_text("x")
    code = textwrap.dedent(f"""
        import threading, time
        from pathlib import Path
        from mindprobe.core import decoded as d
        real = d.write_file
        def slow(*a, **k):
            time.sleep(0.5)
            return real(*a, **k)
        d.write_file = slow
        def plan():
            d.decoded_groups(Path({str(src)!r}), None, "w",
                             lambda p: [{{"g": i % 3, "i": i}} for i in range(30)],
                             lambda r: r["g"])
        t = threading.Thread(target=plan, daemon=True)
        t.start()
        t.join()
    """)
    env = {"MINDPROBE_CACHE_DIR": str(tmp_path / "cache"), "PATH": "/usr/bin:/bin",
           "HOME": str(tmp_path)}
    subprocess.run([sys.executable, "-c", code], env=env, check=True, timeout=60)
    assert list((tmp_path / "cache" / "decoded").glob("w-grouped-*"))
