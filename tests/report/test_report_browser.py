"""The report in a real browser (headless Chromium): it renders (a non-blank screenshot), every
section is in the DOM after its script ran, no console error, nothing is fetched from the
network (the page is loaded behind a dead proxy and its HTML names no external resource), and
the layout holds at 1280 px (measured: chart text inside its chart, no overlaps, no sideways
scrolling)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from report_helpers import report

CHROMIUM = Path("/usr/bin/chromium")
SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "data"
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


@pytest.mark.slow
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


LAYOUT_JS = (Path(__file__).with_name("layout_check.js")).read_text(encoding="utf-8")


#: Headless Chromium's window is at least 500 px wide: a narrower viewport is an iframe that
#: wide, whose check posts its report up to this page.
PHONE_FRAME = """<!DOCTYPE html><html><body style="margin:0"><iframe src="measured.html"
style="border:0;width:{width}px;height:2000px"></iframe><pre id="layout-report"></pre><script>
window.addEventListener('message', function(e){{
  document.getElementById('layout-report').textContent = e.data; }});</script></body></html>"""


def measure_layout(tmp_path: Path, html: str, width: int = 1280) -> dict:
    """The page measured in Chromium at `width` px with every folded block open."""
    page = tmp_path / "measured.html"
    page.write_text(html.replace("</body>", f"<script>{LAYOUT_JS}</script></body>"),
                    encoding="utf-8")
    shown = page
    if width < 500:
        shown = tmp_path / "phone.html"
        shown.write_text(PHONE_FRAME.format(width=width), encoding="utf-8")
    dom = _chromium(tmp_path, f"--window-size={max(width, 500)},2000", "--hide-scrollbars",
                    "--allow-file-access-from-files", "--virtual-time-budget=10000",
                    "--dump-dom", shown.as_uri())
    found = re.search(r'<pre id="layout-report">(.+?)</pre>', dom.stdout, re.S)
    assert found, dom.stderr[-2000:]
    import html as html_module

    return json.loads(html_module.unescape(found.group(1)))


def test_layout_check_sees_clipped_text_and_wide_tables(tmp_path):
    """The measurement can fail: a label past its chart's edge, two labels on top of each
    other and a table wider than the page are all reported."""
    cells = "".join(f"<td>{'x' * 30}{i}</td>" for i in range(80))
    bad = ("<html><body><svg class=\"chart\" viewBox=\"0 0 100 50\" width=\"100\" height=\"50\">"
           "<text x=\"90\" y=\"20\">a long label</text><text x=\"5\" y=\"40\">over</text>"
           "<text x=\"8\" y=\"40\">lap</text></svg>"
           f"<div class=\"tablewrap\" style=\"overflow-x:auto\"><table><tr>{cells}</tr></table>"
           f"</div><div style=\"width:2000px\">wide</div></body></html>")
    got = measure_layout(tmp_path, bad)
    kinds = {p["kind"] for p in got["problems"]}
    assert kinds == {"clipped", "overlap", "table scrolls"}, got
    assert got["scrollWidth"] > got["innerWidth"]


@pytest.mark.slow
def test_report_layout_holds_at_1280(cli, report_runs, shared_data, tmp_path):
    """Every chart's text inside its chart and not overlapping, every table inside its box, and
    no sideways scrolling at 1280 px, with folded runs and transcripts open; the paper's
    WorldSense models are there as published rows when the test set is."""
    args: list[object] = ["--runs-dir", report_runs.root / "runs"]
    testset = SHARED / "worldsense" / "test_set"
    if (testset / "results").is_dir():
        args += ["--references", testset]
    html, _ = report(cli, *args, out=tmp_path / "report.html")
    got = measure_layout(tmp_path, html)
    assert got["charts"] >= 3 and got["texts"] > 50, got
    assert got["problems"] == [], got["problems"][:10]
    assert got["scrollWidth"] == got["innerWidth"] == 1280


@pytest.mark.slow
def test_report_fits_a_phone(cli, report_runs, shared_data, tmp_path):
    """At 390 px (a phone) the report does not scroll sideways: wide tables scroll inside their
    own box, charts scale to the width, and column heads break between words
    (`already_said_that` as already_/said_/that), never inside one."""
    args: list[object] = ["--runs-dir", report_runs.root / "runs"]
    testset = SHARED / "worldsense" / "test_set"
    if (testset / "results").is_dir():
        args += ["--references", testset]
    html, _ = report(cli, *args, out=tmp_path / "report.html")
    got = measure_layout(tmp_path, html, width=390)
    assert got["innerWidth"] == 390 and got["charts"] >= 3, got
    assert got["scrollWidth"] == 390, got
    kinds = {p["kind"] for p in got["problems"]}
    assert not kinds - {"table scrolls"}, [p for p in got["problems"]
                                          if p["kind"] != "table scrolls"][:10]


def test_layout_check_sees_a_head_broken_inside_a_word(tmp_path):
    """The head check can fail: a head that may break anywhere, in a narrow column, is caught."""
    bad = ('<html><body><table><thead><tr><th style="width:40px;overflow-wrap:anywhere">'
           "already_said_that</th></tr></thead></table></body></html>")
    got = measure_layout(tmp_path, bad)
    assert {p["kind"] for p in got["problems"]} == {"head broken inside a word"}, got
