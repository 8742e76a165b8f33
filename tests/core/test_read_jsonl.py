"""JSON Lines data files, bz2 or plain, read whole and parsed by orjson, with json for the
lines orjson refuses: the same records as a line-by-line json read, and one message per bad
file or line."""

from __future__ import annotations

import bz2

import pytest

from mindprobe.core.data import read_jsonl_bz2
from mindprobe.errors import DataError


def test_records_bz2_multistream_and_plain(tmp_path):
    lines = [b'{"a": 1, "t": "caf\\u00e9 \xc3\xa9"}', b"", b'{"a": 18446744073709551616}',
             b'{"a": NaN}']
    packed = tmp_path / "x.jsonl.bz2"
    packed.write_bytes(bz2.compress(b"\n".join(lines[:2]) + b"\n")
                       + bz2.compress(b"\n".join(lines[2:]) + b"\n"))  # two streams
    plain = tmp_path / "x.jsonl"
    plain.write_bytes(b"\n".join(lines))
    for path in (packed, plain):
        got = read_jsonl_bz2(path, "record", lambda r: r["a"])
        assert got[:2] == [1, 2 ** 64] and got[2] != got[2]  # NaN, as json reads it


def test_bad_line_and_bad_file(tmp_path):
    path = tmp_path / "x.jsonl"
    path.write_bytes(b'{"a": 1}\n{"a": \n')
    with pytest.raises(DataError, match=r"x.jsonl:2: malformed record"):
        read_jsonl_bz2(path, "record", lambda r: r["a"])
    path.write_bytes(b'{"b": 1}\n')
    with pytest.raises(DataError, match=r"x.jsonl:1: malformed record"):
        read_jsonl_bz2(path, "record", lambda r: r["a"])
    path.write_bytes(b"\xff\xfe{}\n")
    with pytest.raises(DataError, match="neither bzip2 nor UTF-8"):
        read_jsonl_bz2(path, "record", lambda r: r)
    bad = tmp_path / "y.jsonl.bz2"
    bad.write_bytes(b"BZh9 not really")
    with pytest.raises(DataError, match="neither bzip2 nor UTF-8"):
        read_jsonl_bz2(bad, "record", lambda r: r)
