"""Fresh MR-GSM8K items (`mr_gsm8k:fresh`): planted first errors whose labels hold, seeded and
byte-reproducible, scored like official items, exported in the official schema, and the paired
contamination signal against an official run of the same questions."""

from __future__ import annotations

import json
import re
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from mindprobe.benchmarks.mr_gsm8k.dataset_file import load
from mindprobe.benchmarks.mr_gsm8k.fresh import ERROR_KINDS, generate
from mindprobe.benchmarks.mr_gsm8k.fresh_check import check_item
from mindprobe.cli import main
from mindprobe.testing import TestServer

# GSM8K-style questions with annotated reference solutions, written for these tests.
QUESTIONS = [
    ("Ann has 12 red pens and 7 blue pens. She gives away 5 pens. Each pen costs $3. What are "
     "her remaining pens worth?",
     "Ann has 12 + 7 = <<12+7=19>>19 pens.\nAfter giving 5 away she has 19 - 5 = <<19-5=14>>14 "
     "pens.\nThey are worth 14 * 3 = $<<14*3=42>>42.\n#### 42"),
    ("A farm has 23 cows and 8 goats. Each cow gives 6 litres of milk a day. How much milk do "
     "the cows give in 4 days?",
     "Each day the cows give 23 * 6 = <<23*6=138>>138 litres.\nIn 4 days they give 138 * 4 = "
     "<<138*4=552>>552 litres.\n#### 552"),
    ("Tom reads 15 pages an hour for 9 hours, then 11 pages an hour for 2 hours. How many pages "
     "does he read?",
     "First he reads 15 * 9 = <<15*9=135>>135 pages.\nThen he reads 11 * 2 = <<11*2=22>>22 "
     "pages.\nIn all he reads 135 + 22 = <<135+22=157>>157 pages.\n#### 157"),
    ("A shop sells 36 apples in the morning and 17 in the afternoon. It started with 95 "
     "apples. How many are left?",
     "It sold 36 + 17 = <<36+17=53>>53 apples.\nIt has 95 - 53 = <<95-53=42>>42 apples left."
     "\n#### 42"),
    ("Maria earns $18 an hour and works 7 hours a day for 5 days. She spends $150. How much "
     "does she keep?",
     "Each day she earns 18 * 7 = <<18*7=126>>126 dollars.\nIn 5 days she earns 126 * 5 = "
     "<<126*5=630>>630 dollars.\nShe keeps 630 - 150 = <<630-150=480>>480 dollars.\n#### 480"),
    ("A box holds 24 eggs. A baker uses 3 eggs per cake and bakes 7 cakes. How many eggs are "
     "left?",
     "The cakes use 3 * 7 = <<3*7=21>>21 eggs.\nSo 24 - 21 = <<24-21=3>>3 eggs are left.\n#### 3"),
    ("Sam buys 4 shirts at $13 each and 2 hats at $9 each. How much does he spend?",
     "The shirts cost 4 * 13 = <<4*13=52>>52 dollars.\nThe hats cost 2 * 9 = <<2*9=18>>18 "
     "dollars.\nHe spends 52 + 18 = <<52+18=70>>70 dollars.\n#### 70"),
    ("A train travels 65 miles an hour for 6 hours and then 40 miles. How far does it go?",
     "At full speed it goes 65 * 6 = <<65*6=390>>390 miles.\nIn all it goes 390 + 40 = "
     "<<390+40=430>>430 miles.\n#### 430"),
    ("There are 48 students split into 6 equal groups. Each group gets 5 extra markers and "
     "each student 2 markers. How many markers does one group get?",
     "Each group has 48 / 6 = <<48/6=8>>8 students.\nThey need 8 * 2 = <<8*2=16>>16 markers."
     "\nWith the extra ones a group gets 16 + 5 = <<16+5=21>>21 markers.\n#### 21"),
    ("Lena saves $25 a week for 14 weeks and then buys a bike for $280. How much money is "
     "left?",
     "She saves 25 * 14 = <<25*14=350>>350 dollars.\nAfter the bike she has 350 - 280 = "
     "<<350-280=70>>70 dollars.\n#### 70"),
]


def _official(i: int, question: str, solution: str, qtype: str, label: str) -> dict[str, Any]:
    """An official-format record: a model's solution of the question, here a one-step one."""
    wrong = label == "wrong"
    return {
        "uuid": f"official-{i}-{qtype}-{label}",
        "question": question,
        "ground_truth_solution": solution if qtype == "original" else "",
        "ground_truth_answer": solution.rsplit("#### ", 1)[1],
        "model_output_steps": [f"Step 1: a {qtype} solution number {i} ({label})",
                               f"Step 2: The answer is: {i + (1 if wrong else 0)}"],
        "model_output_answer_correctness": label,
        "model_output_solution_correctness": label,
        "model_output_solution_first_error_step": 2 if wrong else "N/A",
        "model_output_solution_first_error_reason": "a slip" if wrong else "N/A",
        "question_type": qtype,
    }


@pytest.fixture
def official_file(tmp_path: Path) -> Path:
    """A synthetic official-format JSON array: each question twice (original, POT), one
    solution right and one wrong, as the official file holds several per question."""
    recs = []
    for i, (q, sol) in enumerate(QUESTIONS):
        recs.append(_official(i, q, sol, "original", "correct" if i % 2 else "wrong"))
        recs.append(_official(i, q, sol, "POT", "wrong" if i % 2 else "correct"))
    path = tmp_path / "official.json"
    path.write_text(json.dumps(recs))
    return path


def _records(path: Path) -> list[dict[str, Any]]:
    return load(path)


# -- an independent reading of a wrong item, by this test's own code -------------------------

def _marks(step: str) -> list[tuple[str, str]]:
    return re.findall(r"<<([^=]*)=([^>]*)>>", step)


def _exact(expr: str) -> Fraction:
    # eval over Fractions: the test's own arithmetic, not the generator's or the checker's
    return eval(re.sub(r"(\d+(?:\.\d+)?)", r"Fraction('\1')", expr), {"Fraction": Fraction})


def _verify_by_hand(item: dict[str, Any]) -> None:
    ref = [ln for ln in item["ground_truth_solution"].splitlines() if not ln.startswith("####")]
    steps = [s.split(": ", 1)[1] for s in item["model_output_steps"]]
    assert item["model_output_steps"][-1].startswith(f"Step {len(steps)}: The answer is: ")
    answer = steps[-1].rsplit(" ", 1)[1]
    if item["model_output_solution_correctness"] == "correct":
        assert steps[:-1] == ref and answer == str(item["ground_truth_answer"])
        assert item["model_output_solution_first_error_step"] == "N/A"
        return
    k = item["model_output_solution_first_error_step"]
    assert steps[:k - 1] == ref[:k - 1] and steps[k - 1] != ref[k - 1]
    planted = _marks(steps[k - 1])
    assert planted and planted != _marks(ref[k - 1])
    kind = item["fresh"]["kind"]
    exact_ok = all(_exact(e) == Fraction(r) for e, r in planted)
    assert exact_ok == (kind != "calculation"), kind
    for later in steps[k:-1]:
        assert all(_exact(e) == Fraction(r) for e, r in _marks(later))
    assert answer != str(item["ground_truth_answer"])
    assert f"Step {k}" in item["model_output_solution_first_error_reason"]


# -- the generator -------------------------------------------------------------------------

def test_every_item_is_confirmed_and_every_kind_appears(official_file):
    made = generate(_records(official_file), seed=7, share_correct=0.3)
    assert made.sources == len(QUESTIONS)
    assert len(made.items) + sum(made.skipped.values()) >= len(QUESTIONS)
    for item in made.items:
        assert check_item(item) is None
        _verify_by_hand(item)
    kinds = {it["fresh"]["kind"] for seed in range(6)
             for it in generate(_records(official_file), seed, share_correct=0.0).items}
    assert kinds == set(ERROR_KINDS)
    labels = [it["model_output_solution_correctness"] for it in made.items]
    assert labels.count("correct") == 3


def test_sample_records_pass_the_checker(shared_data):
    recs = load(shared_data("mr_gsm8k") / "sample_records.jsonl")
    for seed in range(4):
        made = generate(recs, seed, share_correct=0.5)
        assert len(made.items) >= 12
        for item in made.items:
            assert check_item(item) is None
            _verify_by_hand(item)
        # Reversed items without a reference solution or annotations are counted, not used.
        assert made.skipped["no reference solution"] == 2


def test_a_fixed_seed_gives_byte_identical_items(official_file):
    recs = _records(official_file)
    dump = [json.dumps(generate(recs, s).items, sort_keys=True) for s in (3, 3, 4)]
    assert dump[0] == dump[1] != dump[2]


def test_first_error_steps_are_spread(official_file):
    steps = [it["model_output_solution_first_error_step"] / (len(it["model_output_steps"]) - 1)
             for s in range(8)
             for it in generate(_records(official_file), s, share_correct=0.0).items]
    assert min(steps) < 0.5 < max(steps) == 1.0


def test_the_checker_refuses_wrong_labels(official_file):
    made = generate(_records(official_file), seed=1, share_correct=0.5)
    wrong = next(it for it in made.items if it["model_output_solution_correctness"] == "wrong")
    right = next(it for it in made.items if it["model_output_solution_correctness"] == "correct")
    k = wrong["model_output_solution_first_error_step"]
    assert check_item({**wrong, "model_output_solution_first_error_step": k + 1}) is not None
    if k > 1:
        assert check_item({**wrong, "model_output_solution_first_error_step": k - 1}) is not None
    relabelled = {**wrong, "model_output_solution_correctness": "correct",
                  "model_output_solution_first_error_step": "N/A"}
    assert check_item(relabelled) is not None
    slipped = list(right["model_output_steps"])
    slipped[0] = re.sub(r"=(\d+)>>(\d+)", lambda m: f"={int(m[1]) + 1}>>{int(m[2]) + 1}",
                        slipped[0], count=1)
    assert check_item({**right, "model_output_steps": slipped}) is not None


# -- through the CLI -------------------------------------------------------------------------

def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def upstream_dir(shared_data, monkeypatch) -> Path:
    monkeypatch.setenv("MINDPROBE_DATA_DIR", str(shared_data("mr_gsm8k").parent))
    return shared_data("mr_gsm8k")


def test_random_runs_the_variant_and_export_matches(official_file, upstream_dir, tmp_path,
                                                     capsys):
    runs = str(tmp_path / "runs")
    code, out, err = _cli(capsys, "run", "mr_gsm8k:fresh", "--model", "random", "--seed", "5",
                          "--data-file", str(official_file), "--runs-dir", runs, "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["headline"]["name"].startswith("MR-Score")
    run_dir = Path(runs) / "mr_gsm8k" / "fresh" / "0shot___random"
    manifest = json.loads((run_dir / "manifest.json").read_text())
    fresh = manifest["config"]["fresh"]
    assert fresh["generator"] == 1 and fresh["seed"] == 5 and fresh["error_kinds"] == list(
        ERROR_KINDS)
    out_file = tmp_path / "fresh.jsonl"
    code, _, err = _cli(capsys, "export", "mr_gsm8k", "--fresh", "--seed", "5", "--data-file",
                        str(official_file), "--out", str(out_file))
    assert code == 0, err
    exported = load(out_file)  # the official loader reads it: the MR-GSM8K schema
    assert [r["uuid"] for r in exported] == sorted(
        json.loads(line)["uuid"] for line in (run_dir / "records.jsonl").read_text().splitlines())
    assert out_file.read_bytes() == b"".join(
        json.dumps(it, ensure_ascii=False).encode() + b"\n"
        for it in generate(_records(official_file), 5).items)
    code, out, _ = _cli(capsys, "report", "--runs-dir", runs, "--out", str(tmp_path / "r.html"))
    assert code == 0 and "MR-Score" in (tmp_path / "r.html").read_text()


def test_fresh_options_are_refused_elsewhere(official_file, upstream_dir, tmp_path, capsys):
    code, _, err = _cli(capsys, "run", "mr_gsm8k", "--model", "random", "--share-correct", "0.5",
                        "--data-file", str(official_file), "--runs-dir", str(tmp_path))
    assert code == 2 and "mr_gsm8k:fresh" in err
    code, _, err = _cli(capsys, "run", "mr_gsm8k:fresh", "--model", "random", "--error-kinds",
                        "typo", "--data-file", str(official_file), "--runs-dir", str(tmp_path))
    assert code == 2 and "calculation" in err


def _reply(judgement: str, step: str) -> str:
    return (f"Step-by-step Evaluation: ok\nFinal Judgement: {judgement}\n"
            f"First Error Step: {step}\nError Analysis: because")


def test_paired_contamination_signal(official_file, upstream_dir, tmp_path, capsys):
    """The 'official' server grades every published solution right; the 'fresh' server says
    every solution is correct. The signal must be exactly what that implies, per question."""
    records = _records(official_file)
    by_solution = {"\n".join(r["model_output_steps"]): r for r in records}

    def knows_them(body: dict[str, Any]) -> str:
        prompt = body["messages"][-1]["content"]
        rec = next(r for sol, r in by_solution.items() if sol in prompt)
        if rec["model_output_solution_correctness"] == "correct":
            return _reply("correct", "N/A")
        return _reply("wrong", str(rec["model_output_solution_first_error_step"]))

    runs = str(tmp_path / "runs")
    with TestServer(responder=knows_them) as a, TestServer(reply=_reply("correct", "N/A")) as b:
        for variant, url in (("mr_gsm8k", a.base_url), ("mr_gsm8k:fresh", b.base_url)):
            code, _, err = _cli(capsys, "run", variant, "--model", f"openai:test-model@{url}",
                                "--data-file", str(official_file), "--runs-dir", runs,
                                "--no-cache", "--seed", "2")
            assert code == 0, err
    official_dir = Path(runs) / "mr_gsm8k" / "full"
    fresh_dir = Path(runs) / "mr_gsm8k" / "fresh"
    official_run, fresh_run = next(official_dir.iterdir()), next(fresh_dir.iterdir())
    code, out, err = _cli(capsys, "analyse", "mr_gsm8k", "--run", str(official_run), "--run",
                          str(fresh_run), "--json")
    assert code == 0, err
    doc = json.loads(out)
    signal = next(v for k, v in doc.items() if k.startswith("contamination"))
    rows = {r["task"]: r for r in signal["tables"]["contamination"]}
    items = generate(records, 2).items
    n = len(items)
    n_wrong = sum(it["model_output_solution_correctness"] == "wrong" for it in items)
    t1 = rows["T1 accuracy"]
    assert t1["questions"] == n and t1["official %"] == 100.0
    assert t1["fresh %"] == pytest.approx(100 * (n - n_wrong) / n)
    assert t1["official - fresh"] == pytest.approx(100 * n_wrong / n)
    assert t1["ci_low"] > 0  # the official run is better on every differing question
    t2 = rows["T2 accuracy"]
    assert t2["questions"] == n_wrong and t2["official - fresh"] == pytest.approx(100.0)
    code, _, err = _cli(capsys, "report", "--runs-dir", runs, "--out", str(tmp_path / "r.html"))
    assert code == 0, err
    assert "contamination signal" in (tmp_path / "r.html").read_text()


def test_export_fresh_data_dir_may_be_the_data_root(tmp_path, capsys):
    """`export mr_gsm8k --fresh --data-dir ROOT` looks in ROOT/mr_gsm8k, as `run` does (it
    looked for ROOT/MR-GSM8K.json)."""
    (tmp_path / "mr_gsm8k").mkdir()
    code, _, err = _cli(capsys, "export", "mr_gsm8k", "--fresh", "--data-dir", str(tmp_path),
                        "--out", str(tmp_path / "fresh.jsonl"))
    assert code == 2
    assert f"{tmp_path / 'mr_gsm8k' / 'MR-GSM8K.json'}" in " ".join(err.split()), err
