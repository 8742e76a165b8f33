"""The page's inline style and scripts, kept as package data beside this module: `report.css`
(screen and print CSS, one benchmark per printed page) and `report.js` (the transcript filter,
folded blocks opened for printing, the profile table reordered by a click on a column head)."""

from __future__ import annotations

from importlib.resources import files


def _read(name: str) -> str:
    return files("mindprobe.report").joinpath(name).read_text(encoding="utf-8")


CSS = _read("report.css")
JS = _read("report.js")
