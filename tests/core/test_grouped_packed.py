"""Grouped memos with compressed groups (`packed`): the same records back, a much smaller
file for repeated long texts, and a damaged group still found out."""

from __future__ import annotations

from mindprobe.core.data import decoded_groups
from mindprobe.core.decoded import finish_writes


def test_packed_groups_round_trip_and_shrink(tmp_path, monkeypatch):
    monkeypatch.setenv("MINDPROBE_CACHE_DIR", str(tmp_path / "cache"))
    src = tmp_path / "src.txt"
    src.write_text("x")
    text = "a long excerpt " * 5000
    records = [{"g": i % 7, "i": i, "text": text} for i in range(70)]
    plain = decoded_groups(src, "0" * 64, "plain", lambda _: records, lambda r: r["g"])
    packed = decoded_groups(src, "0" * 64, "packed", lambda _: records, lambda r: r["g"],
                            packed=True)
    assert packed.load([1]) == [r for r in records if r["g"] == 1]  # as made
    again = decoded_groups(src, "0" * 64, "packed", lambda _: [], lambda r: r["g"], packed=True)
    assert again.keys == plain.keys == list(range(7))
    assert again.load([3, 5]) == plain.load([3, 5]) == [r for g in (3, 5) for r in records
                                                         if r["g"] == g]
    finish_writes()  # memos are written behind their first load
    sizes = {p.name.split("-")[0]: p.stat().st_size
             for p in (tmp_path / "cache" / "decoded").iterdir()}
    assert sizes["packed"] * 20 < sizes["plain"]
