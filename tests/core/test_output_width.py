"""Tables printed to a pipe or log are wide (160 columns) unless the user set COLUMNS."""

from __future__ import annotations


def _table_width(text: str) -> int:
    """The widest line (a narrow table may drop its box: core/terminal.py)."""
    return max(len(ln) for ln in text.splitlines())


def test_columns_set_by_the_user_is_kept_when_piped(cli, tmp_path, monkeypatch):
    runs = tmp_path / "runs"
    code, _, err = cli("run", "worldsense:fresh", "--model", "random", "--limit", "40",
                       "--runs-dir", runs)
    assert code == 0, err
    code, out, err = cli("runs", "--runs-dir", runs)
    assert code == 0, err
    assert _table_width(out) > 80  # the piped default: wide, nothing wrapped
    monkeypatch.setenv("COLUMNS", "80")
    code, out, err = cli("runs", "--runs-dir", runs)
    assert code == 0, err
    assert _table_width(out) <= 80, out
