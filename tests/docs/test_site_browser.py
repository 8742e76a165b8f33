"""The manual as a reader sees it: `mkdocs build --strict` passes, the site names no resource on
another host, and in headless Chromium (behind a dead proxy, so nothing outside 127.0.0.1 can
load) at 1280 px and 390 px no page scrolls sideways, code blocks stay in the viewport and
scroll inside their box, every asset the pages ask for exists, and search finds a word."""

from __future__ import annotations

import functools
import http.server
import json
import re
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # a module-wide fixture costs tens of seconds

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")
CHECK = (Path(__file__).parent / "site_check.js").read_text()
PAGES = ("index.html", "getting-started/index.html", "cli/index.html", "benchmarks/sort/index.html",
         "writing-a-benchmark/index.html", "python-api/index.html", "report/index.html",
         "tracking/index.html", "architecture/index.html", "published/index.html")
WIDTHS = (1280, 390)
needs_chromium = pytest.mark.skipif(not CHROMIUM.exists(), reason="headless test needs "
                                    "/usr/bin/chromium (apt-get install -y chromium)")


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site") / "site"
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return out


#: Headless Chromium's window is at least 500 px wide: narrower viewports are a frame that
#: wide. The page's check posts its report to /__report; the image /__wait holds this page's
#: load event (and so Chromium's --dump-dom) until it has (search runs in a web worker, which
#: virtual time does not drive).
FRAME = """<!DOCTYPE html><html><head><link rel="icon" href="data:,"></head><body style="margin:0">
<iframe src="/{page}" style="border:0;width:{width}px;height:900px"></iframe>
<img src="/__wait" alt=""></body></html>"""


class _Handler(http.server.SimpleHTTPRequestHandler):
    """Serves the built site, with the layout check injected into every page, and remembers
    every path it could not serve."""

    missing: list[str]
    reports: list[dict]
    posted: threading.Event

    def log_message(self, *args):  # quiet
        pass

    def send_error(self, code, message=None, explain=None):
        self.missing.append(f"{code} {self.path}")
        super().send_error(code, message, explain)

    def do_POST(self):
        if self.path == "/__report":
            self.reports.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
            self.posted.set()
        self.send_response(204)
        self.end_headers()

    def do_GET(self):
        if self.path == "/__wait":
            self.posted.wait(60)
            self.send_response(204)
            self.end_headers()
            return
        if self.path.startswith("/__frame/"):  # /__frame/WIDTH/PAGE: PAGE in a WIDTH-px frame
            width, page = self.path.split("/", 3)[2:]
            return self._send(FRAME.format(width=int(width), page=page))
        path = Path(self.translate_path(self.path))
        if path.is_dir():
            path = path / "index.html"
        if path.suffix == ".html" and path.is_file():
            return self._send(path.read_text().replace("</body>",
                                                        f"<script>{CHECK}</script></body>"))
        super().do_GET()

    def _send(self, html: str) -> None:
        body = html.encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture(scope="module")
def served(site):
    handler = type("Handler", (_Handler,), {"missing": [], "reports": [],
                                            "posted": threading.Event()})
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(handler, directory=str(site)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield Served(f"http://127.0.0.1:{server.server_address[1]}/", handler)
    server.shutdown()


class Served:
    def __init__(self, base: str, handler: type[_Handler]) -> None:
        self.base, self.handler = base, handler

    @property
    def missing(self) -> list[str]:
        return self.handler.missing

    def open(self, tmp_path: Path, width: int, page: str, netlog: Path) -> dict:
        """The layout report of PAGE shown WIDTH px wide (the request log in NETLOG)."""
        self.handler.reports.clear()
        self.handler.posted.clear()
        _chromium(tmp_path, f"{self.base}__frame/{width}/{page}", netlog)
        assert self.handler.reports, f"the check did not run on {page}"
        return self.handler.reports[-1]


def _chromium(tmp_path: Path, url: str, netlog: Path) -> str:
    profile = tmp_path / "chromium"
    shutil.rmtree(profile, ignore_errors=True)
    cmd = [str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
           "--disable-background-networking", "--disable-component-update", "--disable-sync",
           "--disable-extensions", f"--user-data-dir={profile}", "--hide-scrollbars",
           "--disable-features=AutofillServerCommunication,OptimizationHints,MediaRouter",
           "--proxy-server=127.0.0.1:9",  # loopback bypasses it: nothing else loads
           f"--log-net-log={netlog}", "--window-size=1280,900", "--dump-dom", url]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


def _remote_requests(netlog: Path) -> list[str]:
    """URLs off 127.0.0.1 that the page asked for (the browser's own background traffic, e.g.
    update checks, has no isolation key of the served site and is left out)."""
    events = json.loads(netlog.read_text())["events"]
    urls = {p["url"] for e in events if (p := e.get("params") or {}).get("url")
            and "127.0.0.1" in str(p.get("network_isolation_key", ""))}
    return sorted(u for u in urls if u.startswith("http")
                  and not re.match(r"https?://127\.0\.0\.1[:/]", u))


@needs_chromium
@pytest.mark.slow
def test_the_check_sees_a_remote_request(site, served, tmp_path):
    """The netlog check above can fail: a page with a remote image is caught."""
    (site / "probe.html").write_text('<html><body><img src="http://example.invalid/x.png">'
                                     "</body></html>")
    netlog = tmp_path / "netlog.json"
    _chromium(tmp_path, served.base + "probe.html", netlog)
    (site / "probe.html").unlink()
    served.missing.clear()  # the probe page's own favicon request is not the site's    assert _remote_requests(netlog) == ["http://example.invalid/x.png"]


def test_the_site_names_no_remote_asset(site):
    """No stylesheet, script, font or image from another host (links to other sites are fine)."""
    for page in site.rglob("*.html"):
        html = page.read_text()
        remote = re.findall(r"<(?:script|link|img|iframe)\b[^>]*?(?:src|href)=\"?(?:https?:)?//",
                            html, re.I)
        assert not remote, f"{page.relative_to(site)} loads {remote}"
        assert "fonts.googleapis" not in html and "fonts.gstatic" not in html


@needs_chromium
@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.slow
def test_pages_fit_and_load_everything(served, tmp_path, width):
    for page in PAGES:
        netlog = tmp_path / "netlog.json"
        report = served.open(tmp_path, width, page, netlog)
        assert report["innerWidth"] == width, report
        assert report["scrollWidth"] <= width, f"{page} at {width} px scrolls sideways: {report}"
        assert report["problems"] == [], f"{page} at {width} px: {report['problems']}"
        assert _remote_requests(netlog) == [], page
    assert served.missing == [], f"assets the pages asked for, missing: {served.missing}"


@needs_chromium
def test_search_finds_a_word(served, tmp_path):
    report = served.open(tmp_path, 1280, "index.html?search=resume", tmp_path / "netlog.json")
    assert report["results"] > 0 and report["search"] == "resume", report
