"""FanOutQA metrics: spec §7 worked examples and aggregate, judge parsing, §6.7 edge cases."""

from __future__ import annotations

import pytest

from mindprobe.benchmarks.fanoutqa import judge
from mindprobe.benchmarks.fanoutqa.data import Generation, parse_questions
from mindprobe.benchmarks.fanoutqa.metrics import (
    answer_in_text,
    evaluate,
    rouge_scores,
    str_answer,
)
from mindprobe.benchmarks.fanoutqa.normalize import Normalizer
from mindprobe.errors import DataError

EX1 = (
    "563b95ed6141123c",
    "Macau: 680,000\nMaldives: 521,000\nSingapore: 5.9 million\nBahrain: 1,463,000",
)
EX2 = ("daaf58facccf012d", "2006, 2012 and 1996")
EX3 = ("cfe8f23b3e45113c", "No, he lost the match 4-1.")
EX4 = ("b81092db71078ade", "About 1,604,898 employees in total.")
EX5 = (
    "258f06111ca64e70",
    "India: +91\nChina: +86\nUnited States: +1\nIndonesia: +62\nPakistan: +92",
)
EX6 = ("2120afba8009bad3", "")

# (loose, strict, missing, rouge1, rouge2, rougeL) as (P, R, F)
EXPECTED = {
    EX1[0]: (
        0.7,
        False,
        ["hong kong", "5917000", "7498000"],
        (4 / 14, 4 / 11, 0.32),
        (0, 0, 0),
        (4 / 14, 4 / 11, 0.32),
    ),
    EX2[0]: (0.75, False, ["1995"], (0.5, 0.5, 0.5), (1 / 3, 1 / 3, 1 / 3), (0.5, 0.5, 0.5)),
    EX3[0]: (1.0, True, [], (1 / 7, 1, 0.25), (0, 0, 0), (1 / 7, 1, 0.25)),
    EX4[0]: (1.0, True, [], (0, 0, 0), (0, 0, 0), (0, 0, 0)),
    EX5[0]: (0.5, False, ["+91", "+86", "+1", "+62", "+92"], (1, 1, 1), (1, 1, 1), (1, 1, 1)),
    EX6[0]: (0.0, False, None, (0, 0, 0), (0, 0, 0), (0, 0, 0)),
}


def _prf(d):
    return (d["precision"], d["recall"], d["fscore"])


def test_str_answer(dev_by_id):
    assert str_answer(dev_by_id[EX1[0]].answer) == (
        "Macau - 680000\nMaldives - 521000\nSingapore - 5917000\nBahrain - 1463000\n"
        "Hong Kong - 7498000"
    )
    assert str_answer([1, True, None, 61.6, "x"]) == "1\nyes\n\n61.6\nx"
    assert str_answer({"a": False, "b": 1604898}) == "a - no\nb - 1604898"
    assert str_answer("free text\n") == "free text\n"


def test_worked_examples_only_answered(dev, any_lemmatizer):
    gens = [Generation(i, a, n) for n, (i, a) in enumerate([EX1, EX2, EX3, EX4, EX5, EX6], 1)]
    ev = evaluate(dev, gens, only_score_answered=True, normalizer=Normalizer(any_lemmatizer))
    assert ev.n == 6
    for rec in ev.records:
        loose, strict, missing, r1, r2, rl = EXPECTED[rec["question_id"]]
        assert rec["acc"] == pytest.approx(loose) and rec["strict"] is strict
        if missing is not None:
            assert rec["missing"] == missing
        for name, want in (("rouge1", r1), ("rouge2", r2), ("rougeL", rl)):
            assert _prf(rec["rouge"][name]) == pytest.approx(want, abs=1e-9), name
    assert ev.meta["lemmatizer"]["backend"] == any_lemmatizer.name
    assert ev.meta["dataset_version"] == "nov23"


def test_aggregate_check(dev, exact_normalizer):
    gens = [Generation(*EX1, 1), Generation(*EX2, 2), Generation("0000000000000000", "x", 3)]
    ev = evaluate(
        [q for q in dev if q.id in {EX1[0], EX2[0], "7dcbbbdc7f1120cd"}],
        gens,
        normalizer=exact_normalizer,
    )
    d = ev.to_dict()
    assert d["n"] == 3 and "raw" not in d
    assert d["acc"] == {"loose": pytest.approx(0.4833333333), "strict": 0.0}
    assert _prf(d["rouge"]["rouge1"]) == pytest.approx((0.261905, 0.287879, 0.273333), abs=1e-6)
    assert _prf(d["rouge"]["rouge2"]) == pytest.approx((1 / 9, 1 / 9, 1 / 9))
    assert d["rouge"]["rougeL"] == d["rouge"]["rouge1"]
    assert d["bleurt"] is None and "BLEURT" in d["meta"]["bleurt_reason"]
    assert d["gpt"] is None and d["meta"]["gpt_reason"]
    assert d["meta"]["n_unknown_ids_ignored"] == 1 and d["meta"]["n_unanswered"] == 1
    # the extra unknown id changes nothing
    same = evaluate(
        [q for q in dev if q.id in {EX1[0], EX2[0], "7dcbbbdc7f1120cd"}],
        gens[:2],
        normalizer=exact_normalizer,
    )
    assert same.to_dict()["acc"] == d["acc"] and same.rouge == ev.rouge
    raw = ev.to_dict(include_raw=True)["raw"]
    assert [r["question_id"] for r in raw] == [
        q.id for q in dev if q.id in {EX1[0], EX2[0], "7dcbbbdc7f1120cd"}
    ]
    assert set(raw[0]) == {"question_id", "acc", "rouge", "bleurt", "gpt"}


def test_unknown_id_with_only_score_answered(dev, exact_normalizer):
    gens = [Generation(*EX1, 1), Generation("0000000000000000", "x", 2)]
    with pytest.raises(DataError, match=r"'0000000000000000' \(line 2\)"):
        evaluate(dev, gens, only_score_answered=True, normalizer=exact_normalizer)
    with pytest.raises(DataError, match="nothing to score"):
        evaluate(dev, [], only_score_answered=True, normalizer=exact_normalizer)


def test_duplicates(dev, exact_normalizer):
    gens = [Generation(EX2[0], "1995", 1), Generation(*EX2, 2)]
    ev = evaluate([q for q in dev if q.id == EX2[0]], gens, normalizer=exact_normalizer)
    assert ev.n == 1 and ev.acc["loose"] == 0.75  # later duplicate wins
    ev = evaluate(dev, gens, only_score_answered=True, normalizer=exact_normalizer)
    assert ev.n == 2 and ev.acc["loose"] == pytest.approx((0.25 + 0.75) / 2)


def test_empty_gold_and_test_questions(exact_normalizer, testset):
    with pytest.raises(DataError, match="empty gold answer list"):
        answer_in_text([], "x", exact_normalizer)
    with pytest.raises(DataError, match="empty gold answer dict"):
        answer_in_text({}, "x", exact_normalizer)
    q = parse_questions(
        [{"id": "e", "question": "q", "decomposition": [], "categories": [], "answer": []}], "dev"
    )
    with pytest.raises(DataError, match="empty gold"):
        evaluate(q, [Generation("e", "x", 1)], normalizer=exact_normalizer)
    with pytest.raises(DataError, match="maintainers"):
        evaluate(testset[:2], [], normalizer=exact_normalizer)


def test_bool_gold_and_boundaries(exact_normalizer):
    assert answer_in_text(False, "No.", exact_normalizer).found
    assert not answer_in_text(True, "No.", exact_normalizer).found
    # trailing-space quirk: "washington dc " only matches before a word character
    assert answer_in_text(
        "Washington, D.C.", "I live in Washington, D.C.", exact_normalizer
    ).missing == ["washington dc "]
    assert answer_in_text("Washington, D.C.", "Washington, D.C. 1", exact_normalizer).found
    assert rouge_scores(1604898, "About 1,604,898")["rouge1"]["fscore"] == 0.0


class FakeBleurt:
    name = "fake"

    def __init__(self):
        self.calls = []

    def score(self, references, candidates):
        self.calls.append((list(references), list(candidates)))
        return [0.5 if c else 0.1 for c in candidates]


def test_bleurt_backend_hook(dev, exact_normalizer):
    qs = [q for q in dev if q.id in {EX1[0], EX2[0]}]
    fake = FakeBleurt()
    ev = evaluate(qs, [Generation(*EX2, 1)], bleurt=fake, normalizer=exact_normalizer)
    assert len(fake.calls) == 1  # one batched call, evaluation order, "" when unanswered
    refs, cands = fake.calls[0]
    assert refs == [str_answer(q.answer) for q in qs]
    assert cands == ["" if q.id == EX1[0] else EX2[1] for q in qs]
    assert ev.bleurt == pytest.approx(0.3) and ev.meta["bleurt_backend"] == "fake"


# ---------------------------------------------------------------- judge


@pytest.mark.parametrize(
    "reply, verdict",
    [
        ("Reasoning...\nB\nB", True),
        ("...\nC\nc  \n", True),
        ("E", True),
        ("...\nA\nA", False),
        ("...\nD\nD", False),
        ("...\nF\nF", False),
        ("The answer is B.", False),  # last character rule: "." is not a passing letter
        ("B then A", False),
        ("", None),
        ("   \n", None),
        (None, None),
    ],
)
def test_parse_judge(reply, verdict):
    assert judge.parse_judge(reply) is verdict


def test_judge_prompt_and_metric(dev_by_id, caplog):
    q = dev_by_id[EX2[0]]
    msgs = judge.judge_prompt(q.question, q.answer, "x" * 5000)
    assert [m["role"] for m in msgs] == ["system", "user"]
    assert msgs[0]["content"] == judge.SYSTEM
    user = msgs[1]["content"]
    assert user.startswith("[BEGIN DATA]\n************\n[Question]: " + q.question)
    assert (
        "[Expert]: 2006\n2012\n2006\n1995\n************\n[Submission]: " + "x" * 4000 + "\n*"
        in user
    )
    assert "x" * 4001 not in user and "cut" in caplog.text
    assert "Determine which case applies. First, write out" in user
    assert user.endswith(
        "(F) The submitted answer does not answer the question or is otherwise invalid."
    )
    assert user.count("\n(") == 6
    m = judge.judge_metric([True, None, False, True], [True, True, True, False])
    assert m.raw == [1, 0, 0, 0] and m.value == 0.25 and m.n_no_verdict == 1 and m.n_unanswered == 1
    jobs = judge.judge_jobs([(q, "2006"), (q, None)], cache_key="run1")
    assert len(jobs) == 1 and jobs[0].index == 0
    assert jobs[0].cache_name.startswith(f"llmcache/factual-run1@gpt-4-0613-{q.id}-")
    assert judge.judge_enabled({})[0] is False
    assert judge.judge_enabled({judge.API_KEY_ENV: "k"}) == (True, None)


def test_judge_verdicts_in_evaluate(dev, exact_normalizer):
    qs = [q for q in dev if q.id in {EX1[0], EX2[0]}]
    gens = [Generation(*EX2, 1)]
    by_id = evaluate(
        qs,
        gens,
        judge_verdicts={EX2[0]: True, EX1[0]: True},
        normalizer=exact_normalizer,
        judge_model="gpt-4-0613",
    )
    assert by_id.gpt == 0.5  # the unanswered question scores 0 whatever its verdict
    as_list = evaluate(
        qs,
        gens,
        judge_verdicts=[None, True] if qs[0].id == EX1[0] else [True, None],
        normalizer=exact_normalizer,
    )
    assert as_list.gpt == 0.5
    with pytest.raises(DataError, match="2 scored answers"):
        evaluate(qs, gens, judge_verdicts=[True], normalizer=exact_normalizer)


def test_leaderboard_result(dev, exact_normalizer):
    from mindprobe.benchmarks.fanoutqa.metrics import leaderboard_result

    ev = evaluate(dev[:2], [], normalizer=exact_normalizer)
    meta = {
        "name": "m",
        "authors": "a",
        "url": None,
        "citation": None,
        "type": "FOUNDATION",
        "context": 4096,
        "is_trained_for_function_calling": False,
        "details": None,
    }
    out = leaderboard_result(meta, closedbook=ev)
    assert out["openbook"] is None and out["evidenceprovided"] is None
    assert set(out["closedbook"]) == {"acc", "rouge", "bleurt", "gpt"}
    assert out["closedbook"]["acc"] == {"loose": 0.0, "strict": 0.0}
    with pytest.raises(DataError, match="FOUNDATION"):
        leaderboard_result({**meta, "type": "BIG"}, closedbook=ev)


def test_a_runaway_reply_is_bounded_before_it_is_lemmatised(dev, any_lemmatizer, monkeypatch):
    """An answer longer than the lemmatiser takes (spaCy's max_length: 10 MB once stopped
    every score with error E088) is scored on its first max_length characters, and the
    results say how many answers were cut; the gold answer found early still counts."""
    from mindprobe.benchmarks.fanoutqa.report import evaluation_results

    monkeypatch.setattr(any_lemmatizer.nlp, "max_length", 5_000)  # 10 MB, made small
    q = next(q for q in dev if q.id == EX2[0])
    runaway = EX2[1] + " and so on" * 20_000
    ev = evaluate([q], [Generation(q.id, runaway, 1)], normalizer=Normalizer(any_lemmatizer))
    assert ev.meta["n_truncated"] == 1 and ev.meta["lemmatized_chars"] == 5_000
    short = evaluate([q], [Generation(*EX2, 1)], normalizer=Normalizer(any_lemmatizer))
    assert ev.acc == short.acc and short.meta["n_truncated"] == 0
    res = evaluation_results(ev, title="t")
    assert any("1 answer(s) longer than 5,000 characters" in w for w in res.warnings)
