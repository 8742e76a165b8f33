"""The decoded-data cache is keyed by the source's bytes: never stale, never required."""

from __future__ import annotations

from mindprobe.core.data import decoded


def test_decoded_cache_follows_the_source(tmp_path, monkeypatch):
    monkeypatch.setenv("MINDPROBE_CACHE_DIR", str(tmp_path / "cache"))
    src = tmp_path / "data.txt"
    src.write_text("a\nb\n")
    calls = []

    def decode(path):
        calls.append(path)
        return {"lines": path.read_text().split()}

    assert decoded(src, None, "t", decode) == {"lines": ["a", "b"]}
    assert decoded(src, None, "t", decode) == {"lines": ["a", "b"]} and len(calls) == 1
    src.write_text("c\n")  # edited: decoded again, not served stale
    assert decoded(src, None, "t", decode) == {"lines": ["c"]} and len(calls) == 2
    for f in (tmp_path / "cache" / "decoded").iterdir():
        f.write_bytes(b"garbage")  # a corrupt cache entry is ignored and rewritten
    assert decoded(src, None, "t", decode) == {"lines": ["c"]} and len(calls) == 3
