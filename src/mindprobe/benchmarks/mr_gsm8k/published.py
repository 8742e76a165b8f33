"""MR-GSM8K's published results: the "Evaluation results" table of upstream's README at the
pinned commit (14 models; Task1-MCC, Task2-Accy, Task3-Accy and MR-Score at k=0 and k=3, in
points), parsed from the file as data. The seed README's older table (other prompts, the legacy
DiagGSM8K protocol, MR-Score without the max(0, MCC) cut-off) is not read: it does not belong
to the prompts mindprobe sends."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from mindprobe.core.data import DataFile
from mindprobe.core.published import PublishedRow, pinned_file
from mindprobe.errors import DataError

from .dataset_file import OFFICIAL_GIT_BLOB, UPSTREAM_COMMIT

BENCH = "mr_gsm8k"
REPO = "dvlab-research/MR-GSM8K"
README = DataFile(
    "upstream/README.md",
    url=f"https://raw.githubusercontent.com/{REPO}/{UPSTREAM_COMMIT}/README.md",
    sha256="9bd6c54ca318e8b70796143c943def698ede9530c804bb4824996ea11faea1e5",
    git_blob="ff9670fe5baa2cff2ba7608ab101a2fcce1ca6bb")
SECTION = "## Evaluation results"
#: The scorer of error reasons upstream's README recommends (`--score_model_name`).
JUDGE = "gpt-4-turbo"
N_SOLUTIONS = 3000
#: The data the table was measured on, as a run's coordinates name it.
RELEASE = f"MR-GSM8K.json (blob {OFFICIAL_GIT_BLOB[:7]})"
#: Upstream's column names -> one sentence each (our words; the numbers are upstream's).
DEFINITIONS = {
    "Task1-MCC": "Matthews correlation of the model's correct/wrong verdicts on the solutions "
    "with the labels (×100).",
    "Task2-Accy": "Share of wrong solutions whose first wrong step the model names (×100).",
    "Task3-Accy": "Share of wrong solutions whose first wrong step and error reason the model "
    "gets right, the reason graded by a judge model (×100).",
    "MR-Score": "0.2 × max(0, MCC) + 0.3 × Task2 accuracy + 0.5 × Task3 accuracy (×100).",
}
_HEAD = re.compile(r"^(.+?) k=(\d+)$")


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def parse_readme(text: str, where: str) -> list[PublishedRow]:
    """Every number of the README's "Evaluation results" table, with its model, shots and
    upstream's group heading; a table of another shape is an error naming the file."""
    lines = text.splitlines()
    try:
        start = next(i for i, ln in enumerate(lines) if ln.strip().lower() == SECTION.lower())
        head = next(i for i in range(start, len(lines)) if lines[i].lstrip().startswith("|"))
    except StopIteration:
        raise DataError(f"{where}: no '{SECTION}' table; is it upstream's README at "
                        f"{UPSTREAM_COMMIT[:7]}?") from None
    columns = _cells(lines[head])[1:]
    parsed = [_HEAD.match(c) for c in columns]
    if not columns or not all(parsed):
        raise DataError(f"{where}:{head + 1}: table header {columns} is not '<metric> k=<shots>'")
    source = f"{REPO}@{UPSTREAM_COMMIT}:README.md"
    rows, group = [], ""
    for i in range(head + 2, len(lines)):
        line = lines[i].strip()
        if not line.startswith("|"):
            break
        cells = _cells(line)
        if len(cells) == 1 or all(not c for c in cells[1:]):
            group = cells[0].strip("*").strip()
            continue
        if len(cells) != len(columns) + 1:
            raise DataError(f"{where}:{i + 1}: {len(cells)} cells, expected {len(columns) + 1}")
        for m, value in zip(parsed, cells[1:], strict=True):
            assert m is not None
            metric, shots = m.group(1), m.group(2)
            try:
                float(value)
            except ValueError:
                raise DataError(f"{where}:{i + 1}: {value!r} is not a number") from None
            rows.append(PublishedRow(
                BENCH, cells[0], metric, value, {"shots": shots}, "full", RELEASE,
                DEFINITIONS.get(metric, metric), source,
                judge=JUDGE if metric in ("Task3-Accy", "MR-Score") else None,
                unit="points", scale=0.01, percent=True, n=N_SOLUTIONS,
                headline=metric == "MR-Score", group=group,
                data_label="the official 3,000 solutions"))
    if not rows:
        raise DataError(f"{where}: the '{SECTION}' table has no rows")
    return rows


def published(dirs: Sequence[Path]) -> list[PublishedRow]:
    """The README's table, from the first data folder holding the pinned README."""
    path = pinned_file(BENCH, [README], README.relpath, dirs)
    return parse_readme(path.read_text(encoding="utf-8"), f"{BENCH}:{README.relpath}")
