"""The progress display: counts that survive a narrow terminal, requests that move inside long
chats, and plain lines where there is no terminal."""

from __future__ import annotations

import io
import time

from rich.console import Console

from mindprobe.core.progress import RunProgress


def test_narrow_terminal_keeps_the_counts():
    buf = io.StringIO()
    console = Console(file=buf, force_terminal=True, width=80)
    with RunProgress(console, "already_said_that:ambiguous-sentences", 20, 0) as bar:
        bar.tokens(2761, 0, 26)
        bar.advance(False)
        time.sleep(0.3)
    text = buf.getvalue()
    assert "1/20" in text and "1 req" in text and "already_said" in text


def test_without_a_terminal_plain_lines_report_progress():
    buf = io.StringIO()
    console = Console(file=buf, force_terminal=False, width=200)
    with RunProgress(console, "worldsense:fresh", 10, 2) as bar:
        bar._log_every = 0.0
        bar.tokens(100, 0, 5)
        time.sleep(0.06)
        bar.advance(True)
    lines = [x for x in buf.getvalue().splitlines() if x.startswith("worldsense:fresh")]
    assert lines and "1 req" in lines[0]
    assert lines[-1].startswith("worldsense:fresh: 3/10 items") and "1 errors" in lines[-1]
