"""Markdown and LaTeX reports escape every text that came from outside (a prompt file's name, a
model's name, a title), as the HTML page does: rendered with HTML enabled, the Markdown holds
no live element or link; the LaTeX typesets the text instead of running it."""

from __future__ import annotations

import json
import re

import pytest
from markdown_it import MarkdownIt

from mindprobe.report.formats import md_text, tex
from mindprobe.testing import TestServer

PAYLOADS = ("<img src=x onerror=alert(1)>", "[click](javascript:alert(2))",
            "![i](http://evil.invalid/x.png)", "[d]: javascript:alert(3)", "a|b", "*em* `code`",
            "\\input{/etc/passwd}", "50% & $x$ #1 ~^_{}")


def _live(markdown: str) -> str:
    """The HTML a Markdown renderer with raw HTML enabled makes of `markdown`."""
    return MarkdownIt("commonmark", {"html": True}).enable("table").render(markdown)


@pytest.mark.parametrize("payload", PAYLOADS)
def test_markdown_text_renders_as_itself(payload):
    html = _live(f"| {md_text(payload)} |\n|---|\n| {md_text(payload)} |\n\n> {md_text(payload)}")
    assert "<img" not in html and "<a " not in html and "<em>" not in html
    assert "<code>" not in html
    assert html.count("<td>") == 1  # a `|` in the text splits no cell
    from html import unescape

    assert unescape(html).count(payload) == 3 or payload.startswith("[d]"), html


def test_markdown_keeps_intervals_and_words_readable():
    assert md_text("52.0 [39.8, 64.0]") == "52.0 [39.8, 64.0]"
    assert md_text("avg_num_turns") == "avg_num_turns"
    assert md_text("two\nlines") == "two lines"


def test_latex_escapes_every_special():
    out = tex("\\input{/etc/passwd} <b> 50% & $x$ #1 ~^_{}")
    assert "\\input{" not in out and "<" not in out and ">" not in out
    bare = re.sub(r"\\text[a-z]+\{\}", "", out)  # \textbackslash{} and the like
    for ch in "%&$#_{}":
        assert bare.count(ch) == bare.count("\\" + ch), ch


def test_hostile_names_in_markdown_and_latex_reports(cli, shared_data, tmp_path, monkeypatch):
    """A prompt file named `<img src=x onerror=alert(1)>…`, a hostile model name and title:
    the .md shows them as text, the .tex on one comment line or escaped."""
    monkeypatch.setenv("MINDPROBE_CACHE_DIR", str(tmp_path / "cache"))
    root = shared_data("mr_gsm8k")
    name = "<img src=x onerror=alert(1)>[l](javascript:alert(2)) \\input{x}.json"
    pf = tmp_path / name
    pf.write_text(json.dumps({"eval_0shot": "Grade: {question}\n{sol_steps}"}))
    model = "<b>m</b>"
    with TestServer(reply="<script>alert(3)</script>", models=[model]) as srv:
        code, _, err = cli("run", "mr_gsm8k:sample", "--model", f"openai:{model}@{srv.base_url}",
                           "--data-dir", root, "--limit", 2, "--runs-dir", tmp_path / "runs",
                           "--prompt-file", pf, "--no-cache")
    assert code == 0, err
    title = "<svg onload=alert(4)>\n\\input{/etc/passwd}"
    code, _, err = cli("report", "--runs-dir", tmp_path / "runs", "--format", "md", "--title",
                       title, "--out", tmp_path / "r.md")
    assert code == 0, err
    md = (tmp_path / "r.md").read_text()
    assert "onerror" in md and "&lt;img src=x onerror=alert(1)&gt;" in md  # shown, escaped
    html = _live(md)
    for live in ("<img", "<b>", "<svg", "<script", "<a ", "href="):
        assert live not in html, live
    code, _, err = cli("report", "--runs-dir", tmp_path / "runs", "--format", "latex",
                       "--title", title, "--out", tmp_path / "r.tex")
    assert code == 0, err
    tex_out = (tmp_path / "r.tex").read_text()
    for line in tex_out.splitlines():
        if "\\input" in line or "<" in line:
            assert line.startswith("%"), line  # only inside a one-line comment
