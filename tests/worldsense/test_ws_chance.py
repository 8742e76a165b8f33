"""Issue 22, observation 3: WorldSense's chance and bias come from its own scoring (1 and 2
both "decidable"), are stated once with their definition, and read the same in the terminal,
the JSON and the report."""

from __future__ import annotations

from mindprobe.benchmarks.worldsense.baselines import CHANCE_DEFINITION, chance_table
from mindprobe.report.formats import md_text


def _trial(problem: str, options: list[str], gold: str, resp: str, tuple_id: int = 0) -> dict:
    return {"problemname": problem, "expectedresp": options, "goldresp": gold, "resp": resp,
            "tuple_ID": tuple_id}


def test_compl_chance_and_bias_at_chance_follow_the_folding():
    opts = ["1", "2", "3"]
    rows = [_trial("Compl.trivial", opts, "1", "1"), _trial("Compl.trivial", opts, "2", "2"),
            _trial("Compl.trivial", opts, "3", "1")]  # one tuple: 1, 2 and 3 are gold once
    c = chance_table(rows)["Compl.trivial"]
    # decidable gold: 2 of 3 guesses right; undecidable: 1 of 3; weights balance the tuple
    assert abs(c["chance"] - 0.5) < 1e-9
    assert abs(c["bias_at_chance"] - 1 / 3) < 1e-9  # the +0.33 a uniform guess shows
    assert c["answers"] == {"1": 2 / 3, "2": 1 / 3, "3": 0.0, "invalid": 0.0}
    assert c["majority_baseline"] == 0.5  # always "1" (decidable): right on half the weight


def test_chance_table_does_not_depend_on_record_order():
    """Trials are counted by (gold, allowed answers) first: shuffled records, same digits."""
    import random

    rows = [_trial(p, opts, gold, resp, t)
            for t in range(40)
            for p, opts in (("Infer.normal", ["TRUE", "FALSE"]),
                            ("Compl.normal", ["1", "2", "3"]))
            for gold in opts for resp in (opts[t % len(opts)], "junk")]
    first = chance_table(rows)
    for seed in range(5):
        random.Random(seed).shuffle(rows)
        assert chance_table(rows) == first


def test_one_chance_line_in_terminal_json_and_report(cli, tmp_path):
    code, doc, err = cli("run", "worldsense:fresh", "--model", "random", "--runs-dir",
                         tmp_path / "runs", "--limit", 120, "--json")
    assert code == 0, err
    assert CHANCE_DEFINITION in " ".join(doc["notes"])
    assert "first option" not in " ".join(doc["notes"])  # the old, wrong explanation
    chance = {r["problem"]: r for r in doc["tables"]["chance"]}
    compl = next(v for k, v in chance.items() if k.startswith("Compl"))
    assert abs(compl["bias at chance"] - 1 / 3) < 1e-9 and abs(compl["chance"] - 0.5) < 1e-9
    assert doc["headline"]["chance"] == chance["ALL"]["chance"]
    assert {"TRUE", "FALSE", "invalid"} <= set(doc["tables"]["answers"][0])
    code, text, _ = cli("analyse", "worldsense", "--run",
                        next((tmp_path / "runs").rglob("manifest.json")).parent)
    assert code == 0 and "const best" in text and "chance" in text
    code, _, err = cli("report", "--runs-dir", tmp_path / "runs", "--format", "md", "--out",
                       tmp_path / "r.md")
    assert code == 0, err
    md = (tmp_path / "r.md").read_text()
    assert md_text(CHANCE_DEFINITION) in md and "chance 50.0%" in md  # as Markdown shows it
