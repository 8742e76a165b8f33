"""bzip2 decoded block by block in threads (`core.bzip2`): the same bytes as `bz2.decompress`
for every level and kind of content, several blocks at once, and `bz2.decompress`'s own
behaviour (its errors, multi-stream files) wherever the blocks cannot be framed."""

from __future__ import annotations

import bz2
import json
import random

import pytest

from mindprobe.core import bzip2
from mindprobe.core.data import read_jsonl_bz2
from mindprobe.errors import DataError


def _content(kind: str, level: int, seed: int) -> bytes:
    """About 2.5 blocks of `level` (its block holds level × 100 kB before compression)."""
    rng = random.Random(seed)
    size = int(level * 100_000 * 2.5) + rng.randrange(50_000)
    if kind == "random":
        return rng.randbytes(size)
    words = [rng.choice(["Alice", "Bob", "é", "\u65e5", "before", "after", "\n", "  "])
             for _ in range(size // 4)]
    return " ".join(words).encode()[:size]


def _check(data: bytes, level: int) -> None:
    packed = bz2.compress(data, level)
    blocks = bzip2.one_block_streams(packed)
    assert blocks is not None and len(blocks) >= 2
    assert [bz2.decompress(b) for b in blocks] == list(bzip2.decompress_pieces(packed, 1))
    for threads in (1, 2, 3):
        pieces = list(bzip2.decompress_pieces(packed, threads))
        assert len(pieces) == len(blocks) and b"".join(pieces) == data


@pytest.mark.parametrize("level", [1, 2])
@pytest.mark.parametrize("kind", ["random", "text"])
def test_same_bytes_as_bz2_in_blocks(kind, level):
    _check(_content(kind, level, seed=level), level)


@pytest.mark.slow
@pytest.mark.parametrize("level", range(1, 10))
@pytest.mark.parametrize("kind", ["random", "text"])
def test_same_bytes_every_level(kind, level):
    _check(_content(kind, level, seed=100 + level), level)


def test_magic_found_at_every_bit_offset():
    rng = random.Random(7)
    for shift in range(8):
        for at in (0, 5, 1000):
            bits = rng.getrandbits(8 * 1100)
            span = 8 * 1100 - 48 - (8 * at + shift)
            bits = bits & ~(((1 << 48) - 1) << span) | bzip2._BLOCK_MAGIC << span
            found = bzip2._find_magic(bits.to_bytes(1100, "big"), bzip2._BLOCK_MAGIC)
            assert 8 * at + shift in found


def test_unusual_files_are_bz2_decompress(monkeypatch):
    data = _content("text", 1, seed=3)
    packed = bz2.compress(data, 1)
    two = packed + bz2.compress(b"more", 9)
    assert bzip2.one_block_streams(two) is None  # multi-stream: the plain way, whole
    assert list(bzip2.decompress_pieces(two)) == [data + b"more"]
    assert list(bzip2.decompress_pieces(bz2.compress(b"x" * 10))) == [b"x" * 10]  # one block
    assert bzip2.one_block_streams(packed + b"junk") is None
    with pytest.raises(ValueError, match="end-of-stream"):
        list(bzip2.decompress_pieces(packed[:-40]))  # truncated: as bz2.decompress says
    damaged = bytearray(packed)
    damaged[len(packed) // 2] ^= 0x40  # inside a block: its CRC fails, then the plain way
    with pytest.raises(OSError):
        bz2.decompress(bytes(damaged))
    with pytest.raises(OSError):
        list(bzip2.decompress_pieces(bytes(damaged)))
    # a magic found inside the compressed data (or one missed) breaks the combined CRC
    real = bzip2._find_magic

    def spurious(data: bytes, magic: int) -> list[int]:
        hits = real(data, magic)
        return sorted({*hits, hits[0] + 4001}) if magic == bzip2._BLOCK_MAGIC else hits

    monkeypatch.setattr(bzip2, "_find_magic", spurious)
    assert bzip2.one_block_streams(packed) is None
    assert b"".join(bzip2.decompress_pieces(packed)) == data


def test_no_threads_to_be_had_is_the_plain_way(monkeypatch):
    data = _content("text", 1, seed=5)

    class NoThreads(bzip2.ThreadPoolExecutor):
        def map(self, *args, **kwargs):
            raise RuntimeError("can't start new thread")

    monkeypatch.setattr(bzip2, "ThreadPoolExecutor", NoThreads)
    assert b"".join(bzip2.decompress_pieces(bz2.compress(data, 1))) == data


def test_jsonl_across_blocks_keeps_line_numbers(tmp_path):
    rng = random.Random(11)
    records = [{"i": i, "t": "é\u65e5" * rng.randrange(1, 40), "n": rng.random()}
               for i in range(3_000)]
    lines = [json.dumps(r, ensure_ascii=False).encode() for r in records]
    path = tmp_path / "t.jsonl.bz2"
    path.write_bytes(bz2.compress(b"\n".join(lines) + b"\n", 1))
    assert len(bzip2.one_block_streams(path.read_bytes()) or ()) >= 2
    assert read_jsonl_bz2(path, "record", lambda r: r) == records
    lines[2_345] = b'{"i": '
    path.write_bytes(bz2.compress(b"\n".join(lines), 1))
    with pytest.raises(DataError, match=r"t.jsonl.bz2:2346: malformed record"):
        read_jsonl_bz2(path, "record", lambda r: r)
    path.write_bytes(path.read_bytes()[:-100])  # a cut download: one message, no traceback
    with pytest.raises(DataError, match="cannot read the record file.*end-of-stream"):
        read_jsonl_bz2(path, "record", lambda r: r)


@pytest.mark.slow
def test_official_worldsense_file(shared_data):
    path = shared_data("worldsense") / "test_set" / "trials.jsonl.bz2"  # skips when absent
    packed = path.read_bytes()
    blocks = bzip2.one_block_streams(packed)
    assert blocks is not None and len(blocks) > 50
    assert b"".join(bzip2.decompress_pieces(packed)) == bz2.decompress(packed)
