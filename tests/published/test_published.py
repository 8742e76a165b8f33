"""`mindprobe published`: every number of MR-GSM8K's README table and of FanOutQA's
leaderboard, exactly as upstream prints it (checked against the pinned files, parsed here
independently), what it was measured on, its source; the docs page made from the same rows."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from mindprobe.core.published import PublishedRow, beside, standing
from mindprobe.core.results import Headline

REPO = Path(__file__).resolve().parents[2]
SOURCE = re.compile(r"^[\w.-]+/[\w.-]+@[0-9a-f]{40}:[\w./+-]+$")


def _readme_numbers(path: Path) -> set[tuple[str, str, str, str]]:
    """(model, metric, k, cell) of the "Evaluation results" table, read line by line."""
    lines = path.read_text(encoding="utf-8").splitlines()
    at = lines.index("## Evaluation results")
    table = [ln for ln in lines[at:] if ln.startswith("|")]
    header = [c.strip() for c in table[0].strip("|").split("|")]
    out = set()
    for ln in table[2:]:
        cells = [c.strip() for c in ln.strip().strip("|").split("|")]
        if len(cells) != len(header):
            continue  # a group heading
        for name, cell in zip(header[1:], cells[1:], strict=True):
            metric, k = name.split(" k=")
            out.add((cells[0], metric, k, cell))
    return out


def test_mr_gsm8k_json_holds_every_number_of_the_readme_table(cli, shared_data):
    data = shared_data("mr_gsm8k")
    expected = _readme_numbers(data / "upstream" / "README.md")
    assert len(expected) == 14 * 8
    code, doc, err = cli("published", "mr_gsm8k", "--data-dir", data, "--json")
    assert code == 0, err
    rows = doc["mr_gsm8k"]["rows"]
    got = {(r["system"], r["metric"], r["setting"]["shots"], r["value"]) for r in rows}
    assert got == expected and len(rows) == len(expected)
    for r in rows:
        assert SOURCE.match(r["source"]) and r["source"].endswith(":README.md")
        assert r["split"] and r["release"] and r["definition"] and r["unit"] == "points"
        assert r["judge"] == ("gpt-4-turbo" if r["metric"] in ("Task3-Accy", "MR-Score")
                              else None)
    assert "Claude2" not in {r["system"] for r in rows}  # the seed README's legacy table


def _leaderboard_numbers(folder: Path) -> dict[tuple[str, str, str], float]:
    out = {}

    def walk(prefix: str, v, name: str, setting: str) -> None:
        if isinstance(v, dict):
            for k, x in v.items():
                walk(f"{prefix}{k}.", x, name, setting)
        else:
            out[(name, setting, prefix[:-1])] = v

    for path in sorted(folder.glob("*.json")):
        doc = json.loads(path.read_text(encoding="utf-8"))
        for setting in ("closedbook", "openbook", "evidenceprovided"):
            if doc.get(setting) is not None:
                walk("", doc[setting], doc["metadata"]["name"], setting)
    return out


def test_fanoutqa_json_holds_every_number_of_the_leaderboard(cli, shared_data):
    data = shared_data("fanoutqa")
    folder = data / "leaderboard" / "results"
    expected = _leaderboard_numbers(folder)
    assert len({k[0] for k in expected}) == 16
    code, doc, err = cli("published", "fanoutqa", "--data-dir", data, "--json")
    assert code == 0, err
    rows = doc["fanoutqa"]["rows"]
    got = {(r["system"], r["setting"]["setting"], r["metric"]): r for r in rows}
    assert set(got) == set(expected) and len(rows) == len(expected)
    texts = {p.read_text(encoding="utf-8") for p in folder.glob("*.json")}
    for key, value in expected.items():
        r = got[key]
        assert r["number"] == value and r["value"] == repr(value)
        assert any(r["value"] in t for t in texts)  # the digits upstream's file prints
        assert (r["split"], r["release"], r["n"]) == ("test", "nov23", 724)
        assert SOURCE.match(r["source"]) and "leaderboard-submissions/results/" in r["source"]
    late = {"GPT-OSS 120B", "GPT-OSS 20B", "Llama3.3 70b distilled DS - 32k ss"}
    for (system, _, metric), r in got.items():
        if metric == "gpt":
            assert r["judge"] == ("gpt-4o-2024-11-20" if system in late else "gpt-4-0613")
        else:
            assert r["judge"] is None


def test_terminal_tables_fit_80_columns_and_say_when_upstream_publishes_none(
        cli, shared_data, monkeypatch):
    monkeypatch.setenv("MINDPROBE_DATA_DIR", str(shared_data("fanoutqa").parent))
    for bench in ("mr_gsm8k", "fanoutqa"):
        code, out, err = cli("published", bench)
        assert code == 0, err
        assert max(len(ln) for ln in out.splitlines()) <= 80
        assert "source:" in out
    assert "GPT-4-Turbo" in out or "GPT-4-turbo" in out
    for bench in ("sort", "already_said_that"):
        code, out, err = cli("published", bench)
        assert code == 0 and "publishes no machine-readable results" in " ".join(out.split())


def test_missing_files_are_one_line_that_says_how_to_fetch(cli, tmp_path):
    code, _, err = cli("published", "mr_gsm8k", "--data-dir", tmp_path)
    assert code == 2 and "mindprobe data fetch mr_gsm8k" in err and "Traceback" not in err
    code, _, err = cli("published", "--data-dir", tmp_path)
    assert code == 2 and "mindprobe data fetch fanoutqa mr_gsm8k worldsense" in err


@pytest.mark.slow


def test_data_dir_is_a_benchmark_folder_or_the_data_root(cli, shared_data):
    """The one data-folder rule: `--data-dir ../shared/data` works as the benchmark's own."""
    root = shared_data("mr_gsm8k").parent
    own = cli("published", "mr_gsm8k", "--data-dir", root / "mr_gsm8k", "--json")
    assert own[0] == 0 and cli("published", "mr_gsm8k", "--data-dir", root, "--json") == own
    code, doc, err = cli("published", "--data-dir", root, "--json")
    assert code == 0, err
    assert doc["mr_gsm8k"] == own[1]["mr_gsm8k"] and doc["fanoutqa"]["rows"]


def test_data_dir_must_exist(cli, tmp_path):
    code, _, err = cli("published", "--data-dir", tmp_path / "nope")
    assert code == 2 and "no such folder" in err


def test_data_dir_may_be_the_data_root_for_every_benchmark(cli, shared_data):
    """`--data-dir ../shared/data` works as for `run` and `report` (it was refused without a
    benchmark named, and read nothing with one)."""
    root = shared_data("mr_gsm8k").parent
    code, out, err = cli("published", "--data-dir", root)
    assert code == 0, err
    assert "mr_gsm8k: published results" in out and "not available" not in out
    code, out, err = cli("published", "worldsense", "--data-dir", root)
    assert code == 0 and "GPT4" in out, err


def _row(system: str, value: str, setting: str = "closedbook") -> PublishedRow:
    return PublishedRow("b", system, "m", value, {"setting": setting}, "test", "nov23", "d",
                        "o/r@c:p", percent=True, headline=True, data_label="test split")


def test_rows_stand_beside_runs_of_their_setting_only_and_the_run_is_placed():
    rows = [_row("A", "0.6"), _row("B", "0.4"), _row("C", "0.45"), _row("D", "0.9", "openbook")]
    near = beside(rows, {"setting": "closedbook", "split": "dev", "release": "jul26"})
    assert [r.system for r, _ in near] == ["A", "B", "C"]
    assert {lab for _, lab in near} == {"test split"}
    same = beside(rows, {"setting": "closedbook", "split": "test", "release": "nov23"})
    assert {lab for _, lab in same} == {""}
    text = standing(Headline("m", 0.5, 0.43, 0.57, n=100), [r for r, _ in near])
    assert text is not None
    assert "rank 2 of 4" in text and "between A (60.0%) and C (45.0%)" in text
    assert "indistinguishable from C at n=100" in text


def test_docs_page_is_made_from_the_same_rows(shared_data):
    from mindprobe.commands.published import published_markdown

    root = shared_data("mr_gsm8k").parent
    page = (REPO / "docs" / "published.md").read_text(encoding="utf-8")
    assert page == published_markdown(root), (
        "docs/published.md is stale: regenerate it with "
        "`python -m mindprobe.commands.published ../shared/data`")
