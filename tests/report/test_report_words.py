"""The report's words say what its numbers are (issue #43): each read from the rendered page."""

from __future__ import annotations

import html as html_module
import re
from pathlib import Path

from report_helpers import report


def rendered_text(page: str) -> str:
    """The page's text as a reader sees it: no tags, no scripts or styles, entities decoded."""
    page = re.sub(r"<(script|style)\b.*?</\1>", " ", page, flags=re.S)
    return " ".join(html_module.unescape(re.sub(r"<[^>]+>", " ", page)).split())


def test_worldsense_bias_is_defined_as_it_is_computed(cli, tmp_path: Path):
    """+1 for TRUE/POSSIBLE/1/2, −1 for FALSE/IMPOSSIBLE/3 (metrics._BIAS), not "first option
    minus others"."""
    runs = tmp_path / "runs"
    code, _, err = cli("run", "worldsense:fresh", "--model", "random", "--limit", 20,
                       "--runs-dir", runs)
    assert code == 0, err
    text = rendered_text(report(cli, runs, out=tmp_path / "r.html")[0])
    assert "first option" not in text and "first answer option" not in text
    assert ("b = +1 for TRUE, POSSIBLE, 1, 2 and −1 for FALSE, IMPOSSIBLE, 3 (0 for an invalid "
            "reply)") in text
