"""The report in a real browser (headless Chromium): it renders (a non-blank screenshot), every
section is in the DOM after its script ran, no console error, and nothing is fetched from the
network (the page is loaded behind a dead proxy and its HTML names no external resource)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from report_helpers import report

CHROMIUM = Path("/usr/bin/chromium")
SECTIONS = ("profile", "bench-worldsense", "comparisons", "transcripts", "provenance")

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(),
                                reason="headless test needs /usr/bin/chromium "
                                       "(apt-get install -y chromium)")


def _chromium(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    profile = tmp_path / "chromium-profile"
    shutil.rmtree(profile, ignore_errors=True)
    cmd = [str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
           "--no-first-run", "--disable-background-networking", "--disable-component-update",
           "--disable-sync", "--disable-extensions", f"--user-data-dir={profile}",
           # any request that leaves the machine goes to a dead proxy and fails
           "--proxy-server=127.0.0.1:9", "--proxy-bypass-list=<-loopback>",
           "--enable-logging=stderr", "--v=0", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=90)


def page_requests(netlog: Path) -> list[str]:
    """URLs the page itself asked for over the network (the browser's own background traffic,
    e.g. update checks, has no file:// isolation key and is left out)."""
    events = json.loads(netlog.read_text())["events"]
    return sorted({p["url"] for e in events if (p := e.get("params") or {}).get("url")
                   and "file://" in str(p.get("network_isolation_key", ""))
                   and not p["url"].startswith("file:")})


def test_netlog_sees_page_requests(tmp_path):
    """The check above is able to see a request: a page with a remote image is caught."""
    bad = tmp_path / "bad.html"
    bad.write_text('<html><body><img src="http://example.invalid/x.png"></body></html>')
    netlog = tmp_path / "netlog.json"
    _chromium(tmp_path, f"--log-net-log={netlog}", "--dump-dom", bad.as_uri())
    assert page_requests(netlog) == ["http://example.invalid/x.png"]


def test_report_in_headless_chromium(cli, report_runs, tmp_path):
    html, _ = report(cli, "--runs-dir", report_runs.root / "runs", out=tmp_path / "report.html")
    url = (tmp_path / "report.html").resolve().as_uri()
    external = re.findall(r"""(?:src|href|action)\s*=\s*["']?\s*(?:https?:)?//""", html, re.I)
    assert not external, external
    assert "Content-Security-Policy" in html and "default-src 'none'" in html

    png = tmp_path / "shot.png"
    shot = _chromium(tmp_path, f"--screenshot={png}", "--window-size=1280,2000",
                     "--hide-scrollbars", url)
    assert png.exists(), shot.stderr[-2000:]
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert len(data) > 60_000, f"screenshot of {len(data)} bytes looks blank"  # blank: ~10 KB

    netlog = tmp_path / "netlog.json"
    dom = _chromium(tmp_path, f"--log-net-log={netlog}", "--dump-dom", url)
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert page_requests(netlog) == []
    for section in SECTIONS:
        assert f'id="{section}"' in dom.stdout
    assert "<svg" in dom.stdout
    # the filter script ran: it writes the number of items shown
    assert re.search(r'id="item-count">\d+ item\(s\)<', dom.stdout)
    for log in (shot.stderr, dom.stderr):
        assert "Uncaught" not in log and "Refused to" not in log, log[-2000:]
        assert "ERR_PROXY_CONNECTION_FAILED" not in log
