"""The fake MediaWiki server itself: API shapes, controls and its command line."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import urllib.error
import urllib.parse
import urllib.request

import pytest

from mindprobe.testing.mediawiki import MediaWikiServer, main, normalise_title


def api(srv: MediaWikiServer, **params: str) -> dict:
    url = srv.api_url + "?" + urllib.parse.urlencode({"format": "json", **params})
    try:
        with urllib.request.urlopen(url, timeout=5) as resp:
            return json.loads(resp.read())
    except urllib.error.HTTPError as err:
        err.close()  # an HTTPError holds the response (and its socket) open
        raise


def test_query_shapes_match_mediawiki(wiki):
    by_title = api(wiki, action="query", titles="zurich|Nowhere", redirects="1", prop="info")
    query = by_title["query"]
    assert query["normalized"] == [{"from": "zurich", "to": "Zurich"}]
    assert query["redirects"] == [{"from": "Zurich", "to": "Zürich"}]
    assert query["pages"]["37229"]["title"] == "Zürich"
    assert query["pages"]["-2"] == {"ns": 0, "title": "Nowhere", "missing": ""}

    by_id = api(
        wiki,
        action="query",
        prop="revisions",
        pageids="23862|999",
        rvlimit="1",
        rvstart="2023-11-20T00:00:00+00:00",
    )
    pages = by_id["query"]["pages"]
    assert pages["23862"]["revisions"][0]["revid"] == 1185000000
    assert pages["999"] == {"pageid": 999, "missing": ""}
    newer = api(
        wiki,
        action="query",
        prop="revisions",
        pageids="23862",
        rvlimit="1",
        rvdir="newer",
        rvstart="2023-11-20T00:00:00Z",
    )
    assert newer["query"]["pages"]["23862"]["revisions"][0]["revid"] == 1190000000

    no_redirect = api(wiki, action="query", titles="Zurich", prop="pageprops")
    assert "redirects" not in no_redirect["query"]


def test_search_and_parse_and_errors(wiki):
    found = api(wiki, action="query", list="search", srsearch="python", srlimit="2")
    assert [h["title"] for h in found["query"]["search"]] == ["Python", "Monty Python"]
    assert found["continue"]["sroffset"] == 2 and found["query"]["searchinfo"]["totalhits"] == 3
    parsed = api(wiki, action="parse", oldid="1184000001", prop="text")["parse"]
    assert parsed["pageid"] == 18942 and "comedy troupe" in parsed["text"]["*"]
    assert api(wiki, action="parse", oldid="7")["error"]["code"] == "nosuchrevid"
    assert api(wiki, action="frobnicate")["error"]["code"] == "badvalue"
    assert api(wiki, action="query", list="search", srsearch="")["error"]["code"] == "nosrsearch"
    bad = api(wiki, action="query", prop="revisions", pageids="23862", rvstart="yesterday")
    assert bad["error"]["code"] == "badvalue"
    assert api(wiki, action="query", list="search", srsearch="x", format="xml")["error"][
        "code"
    ] == ("badformat")


def test_request_log_and_fault_controls(wiki):
    api(wiki, action="parse", oldid="1184000001")
    assert wiki.requests(action="parse")[0]["params"]["oldid"] == "1184000001"
    assert wiki.requests(action="query") == []
    wiki.inject("429")
    with pytest.raises(urllib.error.HTTPError) as err:
        api(wiki, action="parse", oldid="1184000001")
    assert err.value.code == 429 and err.value.headers["Retry-After"] == "1"
    assert wiki.stats()["faults"] == {"429": 1}
    with pytest.raises(ValueError, match="unknown fault kinds"):
        wiki.inject("teapot")
    root = wiki.api_url.removesuffix("/w/api.php")
    req = urllib.request.Request(root + "/inject?faults=500", method="POST")
    with urllib.request.urlopen(req, timeout=5) as resp:
        assert json.loads(resp.read()) == {"queued": ["500"]}
    with pytest.raises(urllib.error.HTTPError) as err:
        api(wiki, action="query", list="search", srsearch="x")
    assert err.value.code == 500


def test_fail_first_n():
    with MediaWikiServer(fail_first_n=1) as srv:
        with pytest.raises(urllib.error.HTTPError):
            api(srv, action="parse", oldid="1184000001")
        assert "parse" in api(srv, action="parse", oldid="1184000001")


@pytest.mark.parametrize(
    "argv", [["--fault", "500"], ["--fault", "teapot=0.1"], ["--latency", "-1"]]
)
def test_cli_rejects_bad_flags(argv, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2 and "error:" in capsys.readouterr().err


def test_normalise_title():
    assert normalise_title("monty_python ") == "Monty python"
    assert normalise_title("Python  (programming_language)") == "Python (programming language)"


def test_cli_prints_its_url_and_stops_on_sigterm():
    proc = subprocess.Popen(
        [sys.executable, "-m", "mindprobe.testing.mediawiki", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = proc.stdout.readline().strip()
        assert line.startswith("READY http://127.0.0.1:") and line.endswith("/w/api.php")
        url = line.split()[1] + "?action=parse&oldid=1184000001&format=json"
        with urllib.request.urlopen(url, timeout=5) as resp:
            assert json.loads(resp.read())["parse"]["title"] == "Monty Python"
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 0
        proc.stdout.close()
        proc.stderr.close()
