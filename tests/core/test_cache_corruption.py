"""Issue 33.1: a damaged response cache never answers a request with another request's reply,
and never fails an item: random bytes flipped in a cache populated by real runs, many times
over (seeded), and every recorded reply compared with the one the test server gives for that
exact request."""

from __future__ import annotations

import hashlib
import json
import random
import shutil
from pathlib import Path
from typing import Any

import pytest

from mindprobe.core.requests import TEXTS, expand_calls, read_texts, replies_of
from mindprobe.core.store import read_records
from mindprobe.testing import TestServer


def reply_for(body: dict[str, Any]) -> str:
    """The server's one reply to a request: a digest of everything it was sent, so a reply
    served for another request is seen at once."""
    sent = [[m.get("role"), m.get("content")] for m in body.get("messages", [])]
    return "R" + hashlib.sha256(json.dumps(sent).encode()).hexdigest()[:12]


def _run(cli, url: str, runs: Path, cache: Path, seed: int, *more: str) -> tuple[int, str]:
    code, _, err = cli("run", "worldsense:fresh", "--model", f"openai:test-model@{url}",
                       "--runs-dir", runs, "--cache", cache, "--limit", 16, "--seed", seed,
                       *more)
    return code, err


def _check_replies(run_dir: Path) -> int:
    """Every call of every record got the reply its own request gets; returns the count."""
    texts = read_texts(run_dir / TEXTS)
    n = 0
    for rec in read_records(run_dir / "records.jsonl"):
        assert "error" not in rec, rec["error"]
        for call in expand_calls(rec["request"], texts, replies_of(rec)):
            assert call["reply"] == reply_for(call), (rec["id"], call)
            n += 1
    return n


def _flip(path: Path, rng: random.Random, count: int) -> None:
    data = bytearray(path.read_bytes())
    for _ in range(count):
        data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
    path.write_bytes(bytes(data))


@pytest.mark.slow
def test_flipped_bytes_never_give_a_wrong_reply(cli, tmp_path):
    pristine = tmp_path / "pristine.sqlite"
    with TestServer(responder=reply_for) as srv:
        for seed in (1, 2, 3):  # a cache of ~150 entries
            code, err = _run(cli, srv.base_url, tmp_path / f"populate{seed}", pristine, seed)
            assert code == 0, err
        rng = random.Random(33)
        warned = 0
        for round_ in range(50):
            cache = tmp_path / f"c{round_}" / "responses.sqlite"
            cache.parent.mkdir()
            shutil.copy(pristine, cache)
            _flip(cache, rng, rng.choice([1, 5, 20, 200]))
            runs = tmp_path / f"r{round_}"
            seed = rng.choice((1, 2, 3))
            code, err = _run(cli, srv.base_url, runs, cache, seed)
            assert code == 0 and "Traceback" not in err, (round_, err)
            run_dir = next(runs.glob("worldsense/fresh/*"))
            assert _check_replies(run_dir) > 0
            warned += "response cache" in err
            if round_ % 5:
                shutil.rmtree(cache.parent)
                continue
            # a second run over what the first left (a set-aside file, a rebuilt one) is clean
            code, err = _run(cli, srv.base_url, tmp_path / f"again{round_}", cache, seed)
            assert code == 0, (round_, err)
            _check_replies(next((tmp_path / f"again{round_}").glob("worldsense/fresh/*")))
            shutil.rmtree(cache.parent)
    assert warned >= 8  # damage was found, and said so (not merely never read)


def test_retry_errors_after_the_cache_file_was_damaged(cli, tmp_path):
    """A cache file damaged beyond reading is set aside (named) and rebuilt: the items that
    had failed are retried with --retry-errors and every item ends with its own reply."""
    cache, runs = tmp_path / "responses.sqlite", tmp_path / "runs"
    with TestServer(responder=reply_for, fault_500=0.3, seed=4) as srv:
        code, err = _run(cli, srv.base_url, runs, cache, 1, "--max-attempts", 1)
    assert code == 1, err  # some items failed on the server's errors
    data = bytearray(cache.read_bytes())
    data[0:100] = b"\xff" * 100  # the header: no longer a database at all
    cache.write_bytes(bytes(data))
    with TestServer(responder=reply_for) as srv:
        code, err = _run(cli, srv.base_url, runs, cache, 1, "--retry-errors")
    assert code == 0, err
    aside = list(cache.parent.glob("responses.sqlite.damaged-*"))
    assert len(aside) == 1 and aside[0].name in err.replace("\n", "")
    assert _check_replies(next(runs.glob("worldsense/fresh/*"))) > 0
