"""Transcripts are packed (each paragraph once, deflated) and rendered when an item is opened:
in headless Chromium an opened item shows its conversation (the same text Python packed), a
link to an item opens it, the text filter searches the packed texts, and a hostile reply stays
text. A reply longer than the page shows is cut, saying so; records.jsonl keeps it whole."""

from __future__ import annotations

import html as html_module
import json
import re
from pathlib import Path

import pytest
from report_helpers import PACKED_RE, expanded, report, transcripts_of
from test_report_browser import CHROMIUM, _chromium

from mindprobe.report.textstore import TEXT_CHARS, Shown, TextStore, unpack
from mindprobe.testing import TestServer

CHECK_JS = Path(__file__).with_name("transcript_check.js").read_text(encoding="utf-8")
ITEM_RE = re.compile(r'<details class="item" id="([^"]+)"[^>]* data-b="(\d+)">')
needs_chromium = pytest.mark.skipif(not CHROMIUM.exists(), reason="needs /usr/bin/chromium "
                                    "(apt-get install -y chromium)")


def _text(body_html: str) -> str:
    return html_module.unescape(re.sub(r"<[^>]+>", "", body_html))


def probe(tmp_path: Path, page: str, open_ids: list[str], search: list[str]) -> dict:
    """The page in Chromium with `open_ids` opened and each of `search` typed in the filter."""
    test = tmp_path / "probed.html"
    cfg = json.dumps({"open": open_ids, "search": search})
    test.write_text(page.replace("</body>", f"<script>window.PROBE={cfg};{CHECK_JS}</script>"
                                            "</body>"), encoding="utf-8")
    dom = _chromium(tmp_path, "--virtual-time-budget=20000", "--dump-dom", test.as_uri())
    found = re.search(r'<pre id="transcript-report">(.*?)</pre>', dom.stdout, re.S)
    assert found, dom.stderr[-2000:]
    assert "Uncaught" not in dom.stderr, dom.stderr[-2000:]
    return json.loads(html_module.unescape(found.group(1)))


@needs_chromium
@pytest.mark.slow
def test_an_opened_item_shows_its_conversation(cli, report_runs, tmp_path):
    page, _ = report(cli, "--runs-dir", report_runs.root / "runs", out=tmp_path / "r.html")
    items = ITEM_RE.findall(page)
    bodies = transcripts_of(page)
    assert len(items) == len(bodies) > 0
    chosen = [items[0], items[-1]]  # the first run's first item, the last run's last
    said = re.findall(r'<div class="msg [^"]*"><div class="who">[^<]*</div><pre>(.*?)</pre>',
                      bodies[int(chosen[0][1])], re.S)
    words = [w for w in html_module.unescape(" ".join(said)).split() if w not in page]
    word = max(words, key=len)  # in the first item's conversation, nowhere else in the HTML
    got = probe(tmp_path, page, [i for i, _ in chosen], [word, "no-such-text-anywhere"])
    assert got["first_open"]
    for anchor, b in chosen:
        shown = got["items"][anchor]
        assert shown["open"] and shown["live"] == 0
        assert shown["text"] == _text(bodies[int(b)]) and shown["text"].strip()
    if report_runs.ast:
        assert any("MAIN TASK - " in _text(b) for b in bodies)
    assert got["counts"]["no-such-text-anywhere"] == "0 item(s)"
    assert got["counts"][word] != "0 item(s)", (word, got)


@needs_chromium
def test_a_hostile_reply_renders_as_text(cli, tmp_path):
    hostile = "<script>alert(1)</script><img src=x onerror=alert(2)>"
    with TestServer(reply=hostile) as srv:
        code, _, err = cli("run", "worldsense:fresh", "--model",
                           f"openai:test-model@{srv.base_url}", "--limit", 2, "--runs-dir",
                           tmp_path / "runs", "--no-cache")
    assert code == 0, err
    page, _ = report(cli, "--runs-dir", tmp_path / "runs", out=tmp_path / "x.html")
    anchor = ITEM_RE.findall(page)[0][0]
    got = probe(tmp_path, page, [anchor], [])
    assert got["items"][anchor]["live"] == 0 and hostile in got["items"][anchor]["text"]


def test_long_replies_are_cut_in_the_page_and_whole_in_the_records(cli, tmp_path):
    """A 1 MB reply: the page shows its first TEXT_CHARS characters and says where the rest
    is; the report stays small (it was the replies' size)."""
    reply = "Let me see:\n" + "x" * 1_000_000  # three of the test server's tokens
    with TestServer(reply=reply) as srv:
        code, _, err = cli("run", "worldsense:fresh", "--model",
                           f"openai:test-model@{srv.base_url}", "--limit", 3, "--runs-dir",
                           tmp_path / "runs", "--no-cache")
    assert code == 0, err
    records = [json.loads(x) for x in next((tmp_path / "runs").rglob("records.jsonl"))
               .read_text().splitlines()]
    assert all(r["reply"] == reply for r in records)  # whole in the records
    page, _ = report(cli, "--runs-dir", tmp_path / "runs", out=tmp_path / "r.html")
    assert len(page.encode()) < 300_000, len(page.encode())
    text = expanded(page)
    assert text.count(f"more of its {len(reply):,} characters are not shown") >= len(records)
    assert f"each text up to {TEXT_CHARS:,} characters" in page


def test_each_shared_paragraph_is_stored_once():
    store = TextStore()
    head = "You are a careful reader.\n\nExample 1: …\n\n"
    refs = [Shown(store).pre(head + f"Question {i}?") for i in range(50)]
    assert sum(p == head.split("\n\n")[0] + "\n\n" for p in store.pieces) == 1
    assert len(store.pieces) == 2 + 50
    doc = unpack(store.blob())
    for i, r in enumerate(refs):
        ids = re.search(r'data-s="([^"]*)"', r).group(1)
        assert "".join(doc["s"][int(k)] for k in ids.split(",")) == head + f"Question {i}?"
    assert PACKED_RE.pattern  # the page's block is what report_helpers reads


def test_the_item_budget_cuts_later_texts():
    shown = Shown(text_chars=10, item_chars=15)
    assert "more of its 12 characters" in shown.pre("a" * 12)
    assert "<pre>aaaaa</pre>" in shown.pre("a" * 8)
    assert shown.pre("b") .startswith("<pre></pre>")
