"""The interaction loop: worked example (spec §12 A-E), determinism and stop rules (§5, §8)."""

from __future__ import annotations

import asyncio
import json
import math
import random

import pytest

from mindprobe.benchmarks.already_said_that import (
    Episode,
    Turn,
    aggregate,
    load_distractors,
    load_samples,
    run_episode,
    select_samples,
)

D1 = Turn.distractor("Is 2 kilograms of eggshells heavier than 1 kilogram of gold bars?", "yes")
D2 = Turn.distractor("Is 10 kilograms of granite slabs heavier than 20 kilograms of balloons?", "no")
M = Turn.main
SYSTEM = "the task description (its wording is tested in test_ast_upstream_requests)"

SCRIPTS = {
    "A": [
        (M("apple"), "[answer: no]"),
        (D1, "[answer: Yes]"),
        (M("gold"), "[answer: no]"),
        (D2, "I think yes"),
        (M("apple"), "[answer: yes]"),
        (M("kilograms"), "[answer: yes]"),
    ],
    "B": [(M("pear"), "[answer: no]"), (M("pear"), "[answer: no]")],
    "C": [(M("plum"), "[answer: maybe]")],
    "D": [(D2, "[answer:  NO ]"), (M("fig"), "[answer:no]")],
    "E": [(M(f"w{chr(97 + i // 26)}{chr(97 + i % 26)}"), "[answer: no]") for i in range(99)]
    + [(D1, "no idea")],
}
EXPECTED = {  # num_turns, num_distractors, FP, FN, violation, accuracy, end
    "A": (5, 2, True, False, False, 0.5, "false_positive"),
    "B": (1, 0, False, True, False, None, "false_negative"),
    "C": (0, 0, False, False, True, None, "violation"),
    "D": (1, 1, False, False, True, 1.0, "violation"),
    "E": (100, 1, False, False, True, 0.0, "survived"),
}


def play_script(name: str) -> tuple[dict, list[list[dict[str, str]]]]:
    """Run a §12 script through the real run_episode; also return every chat it was sent."""
    turns, replies = zip(*SCRIPTS[name], strict=True)
    seen_chats: list[list[dict[str, str]]] = []

    async def reply(messages):
        seen_chats.append(messages)
        return replies[len(seen_chats) - 1]

    record = asyncio.run(
        run_episode(
            variant="which-is-heavier", idx=0, seed=1, words=[], pool=[], system=SYSTEM,
            reply=reply, turns=turns,
        )
    )
    return record, seen_chats


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_worked_example(name):
    record, chats = play_script(name)
    got = tuple(
        record[k]
        for k in ("num_turns", "num_distractors", "was_false_pos", "was_false_neg",
                  "violation_occurred", "distractor_accuracy", "end")
    )
    assert got == EXPECTED[name]
    json.dumps(record)  # JSON-serialisable
    # Every scripted turn was asked (each script ends with the terminating turn).
    assert len(record["transcript"]) == len(SCRIPTS[name]) == len(chats)
    # The solver sees system first, then user/assistant alternating with the raw replies.
    last = chats[-1]
    assert last[0] == {"role": "system", "content": SYSTEM}
    assert [m["role"] for m in last[1:]] == ["user", "assistant"] * (len(chats) - 1) + ["user"]
    for i, (turn, raw) in enumerate(SCRIPTS[name][:-1]):
        assert last[1 + 2 * i]["content"] == turn.message
        assert last[2 + 2 * i]["content"] == raw


def test_worked_example_transcript_details():
    record, _ = play_script("A")
    rows = record["transcript"]
    assert [r["kind"] for r in rows] == ["main", "distractor", "main", "distractor", "main", "main"]
    assert [r["expected"] for r in rows] == ["no", "yes", "no", "no", "yes", "no"]
    assert [r["correct"] for r in rows] == [True, True, True, False, True, False]
    assert rows[3]["answer"] is None and rows[3]["reply"] == "I think yes"
    # The malformed distractor reply flags a violation that the next turn overwrites.
    assert [r["violation"] for r in rows] == [False, False, False, True, False, False]
    assert rows[1]["answer"] == "yes" and rows[5]["user"] == "MAIN TASK - kilograms"
    assert [r["turn"] for r in rows] == [1, 2, 3, 4, 5, 6]


def test_worked_example_aggregate():
    metrics = aggregate([play_script(n)[0] for n in "ABCD"])
    expected = {
        "avg_num_turns": 1.75,
        "stddev_num_turns": 1.920286436967152,
        "median_num_turns": 1.0,
        "max_num_turns": 5.0,
        "min_num_turns": 0.0,
        "false_positive_rate": 0.25,
        "false_negative_rate": 0.25,
        "avg_distractor_accuracy": 0.75,
        "violation_rate": 0.5,
        "avg_num_distractors": 0.75,
        "stddev_num_distractors": 0.82915619758885,
        "median_num_distractors": 0.5,
        "max_num_distractors": 2.0,
        "min_num_distractors": 0.0,
    }
    assert list(metrics) == list(expected)
    for key, value in expected.items():
        assert isinstance(metrics[key], float)
        assert metrics[key] == pytest.approx(value, abs=1e-12), key


def test_aggregate_nan_and_empty():
    record, _ = play_script("B")
    metrics = aggregate([record, {**record, "distractor_accuracy": float("nan")}])
    assert math.isnan(metrics["avg_distractor_accuracy"])
    with pytest.raises(ValueError, match="empty"):
        aggregate([])


def oracle_episode(data_dir, variant: str, idx: int, seed: int, **kwargs) -> Episode:
    samples = select_samples(load_samples(data_dir), 250, seed)
    pool, _ = load_distractors(data_dir, variant)
    return Episode(variant=variant, idx=idx, seed=seed, words=samples[idx], pool=pool,
                   system=SYSTEM, **kwargs)


def test_determinism_check(shared_data):
    episode = oracle_episode(shared_data("already_said_that"), "which-is-heavier", 0, 20220722)
    messages = []
    for _ in range(10):
        messages.append(episode.next_user_message())
        episode.observe(f"[answer: {episode.expected}]")
    assert messages == [
        "MAIN TASK - tightlipped",
        "Is 15 pounds of marshmallows heavier than 10 pounds of concrete blocks?",
        "MAIN TASK - concrete",
        "MAIN TASK - concrete",
        "Is 20 pounds of eyelashes heavier than 5 pounds of bronze?",
        "Is 20 kilograms of popcorn heavier than 5 kilograms of large rocks?",
        "Is 4 pounds of marshmallows heavier than 1 pound of rebar?",
        "MAIN TASK - eyelashes",
        "Is 12 pounds of feathers heavier than 10 pounds of bricks?",
        "Is 8 pounds of soap foam heavier than 5 pounds of cannonballs?",
    ]
    assert [r["expected"] for r in episode.transcript[2:4]] == ["no", "yes"]


def _oracle_run(data_dir, variant, idx, seed):
    episode = oracle_episode(data_dir, variant, idx, seed)
    while not episode.finished:
        episode.next_user_message()
        episode.observe(f"[answer: {episode.expected}]")
    return episode.record()


@pytest.mark.parametrize("variant", ["reverse-sort-words-eng", "distractorless"])
def test_always_correct_solver_survives(shared_data, variant):
    record = _oracle_run(shared_data("already_said_that"), variant, 3, 20220722)
    assert record["end"] == "survived" and record["num_turns"] == 100
    assert len(record["transcript"]) == 100
    assert not record["violation_occurred"] and not record["was_false_pos"]
    rows = record["transcript"]
    assert rows[0]["kind"] == "main" and rows[0]["expected"] == "no"
    if variant == "distractorless":
        assert record["num_distractors"] == 0 and record["distractor_accuracy"] is None
    else:
        # Pool of 24 cycles in its shuffled order; distractors are answered right.
        asked = [r["user"] for r in rows if r["kind"] == "distractor"]
        assert record["num_distractors"] == len(asked) > 24
        assert asked[24:] == asked[: len(asked) - 24]
        assert record["distractor_accuracy"] == 1.0
    # A word is "yes" exactly when it was shown before as a main-task word.
    shown: set[str] = set()
    for r in rows:
        if r["kind"] == "main":
            word = r["user"].removeprefix("MAIN TASK - ")
            assert r["expected"] == ("yes" if word in shown else "no")
            shown.add(word)


def _chat_of(data_dir, variant, idx, seed, reply_seq):
    pool, _ = load_distractors(data_dir, variant)
    words = select_samples(load_samples(data_dir), 250, seed)[idx]
    replies = iter(reply_seq)

    async def reply(messages):
        return next(replies)

    record = asyncio.run(run_episode(variant=variant, idx=idx, seed=seed, words=words,
                                     pool=pool, system=SYSTEM, reply=reply))
    return record["transcript"]


def test_same_seed_same_transcript(shared_data):
    root = shared_data("already_said_that")
    replies = ["[answer: no]", "[answer: yes]", "[answer: maybe]"] * 40
    first = _chat_of(root, "which-is-heavier", 5, 3, ["[answer: no]"] * 120)
    assert first == _chat_of(root, "which-is-heavier", 5, 3, ["[answer: no]"] * 120)
    assert first != _chat_of(root, "which-is-heavier", 5, 4, ["[answer: no]"] * 120)
    assert _chat_of(root, "first-letters", 1, 2, replies) == _chat_of(
        root, "first-letters", 1, 2, replies
    )


def test_drive_all_turns_keeps_first_error(shared_data):
    root = shared_data("already_said_that")
    always_no = ["[answer: no]"] * 100
    normal = asyncio.run(_run_fixed(root, always_no, drive_all_turns=False))
    driven = asyncio.run(_run_fixed(root, always_no, drive_all_turns=True))
    assert normal["end"] == "false_negative"
    assert len(driven["transcript"]) == 100
    assert driven["transcript"][: len(normal["transcript"])] == normal["transcript"]
    assert {k: v for k, v in driven.items() if k != "transcript"} == {
        k: v for k, v in normal.items() if k != "transcript"
    }
    assert not any(r["scored"] for r in driven["transcript"][len(normal["transcript"]):])


async def _run_fixed(root, replies, drive_all_turns):
    pool, _ = load_distractors(root, "which-is-heavier")
    words = load_samples(root)[0]
    it = iter(replies)

    async def reply(messages):
        return next(it)

    return await run_episode(variant="which-is-heavier", idx=0, seed=9, words=words, pool=pool,
                             system=SYSTEM, reply=reply, drive_all_turns=drive_all_turns)


def test_episode_guards():
    ep = Episode(variant="distractorless", idx=0, seed=0, words=["a", "b"], pool=[],
                 system=SYSTEM, max_turns=2)
    with pytest.raises(RuntimeError):
        ep.observe("[answer: no]")
    assert ep.next_user_message() in ("MAIN TASK - a", "MAIN TASK - b")
    with pytest.raises(RuntimeError):
        ep.next_user_message()
    with pytest.raises(ValueError, match="distinct words"):
        Episode(variant="distractorless", idx=0, seed=0, words=["a"], pool=[],
                system=SYSTEM, max_turns=2)
    with pytest.raises(ValueError, match="ran out"):
        asyncio.run(run_episode(variant="distractorless", idx=0, seed=0, words=[], pool=[],
                                system=SYSTEM, reply=_yes, turns=[M("x")]))


async def _yes(messages):
    return "[answer: no]"


def test_rng_call_order_with_empty_pool():
    """Spec §5 by hand for distractorless: `is_distractor` is drawn although no pool exists."""
    words = [f"w{i:03d}" for i in range(100)]
    ep = Episode(variant="distractorless", idx=7, seed=11, words=words, pool=[],
                 system=SYSTEM)
    rng = random.Random(b"already_said_that.distractorless.7:11")
    rng.sample([], k=0)
    # Turn 1: nothing distracting, nothing seen -> a new word.
    rng.choices([True, False], weights=[1 / 3, 2 / 3], k=1)
    rng.choice([True, False])
    rng.choice([set(words), set()])
    first = rng.choice(sorted(words))
    assert ep.next_user_message() == f"MAIN TASK - {first}"
    ep.observe("[answer: no]")
    # Turn 2: the solver's own "no" is now a distracting word.
    rng.choices([True, False], weights=[1 / 3, 2 / 3], k=1)
    if rng.choice([True, False]):
        expected = rng.choice(["no"])
    else:
        unseen = sorted(set(words) - {first})
        chosen = rng.choice([unseen, [first]])
        expected = rng.choice(chosen)
    assert ep.next_user_message() == f"MAIN TASK - {expected}"


@pytest.mark.parametrize("drive_all", [False, True])
def test_a_turn_that_does_not_fit_ends_the_chat_unsent(drive_all):
    from mindprobe.core.fit import DoesNotFit

    turns = [M(f"w{i}") for i in range(10)]
    sent: list[int] = []

    async def reply(messages):
        n = sum(m["role"] == "user" for m in messages)
        if n == 5:
            raise DoesNotFit(2000, 512, 2048, "--context-window", "counted")
        sent.append(n)
        return "[answer: yes]" if drive_all and n == 2 else "[answer: no]"

    rec = asyncio.run(run_episode(variant="which-is-heavier", idx=0, seed=0, words=[], pool=[],
                                  system=SYSTEM, reply=reply, max_turns=10, turns=turns,
                                  drive_all_turns=drive_all))
    assert sent == [1, 2, 3, 4] and len(rec["transcript"]) == 4
    assert "2,048 (--context-window)" in rec["ended_by_context_window"]
    if drive_all:  # the first error is what the record keeps
        assert rec["end"] == "false_positive" and rec["num_turns"] == 1
    else:
        assert rec["end"] == "does_not_fit" and rec["num_turns"] == 4


def test_a_chat_whose_first_turn_does_not_fit_raises():
    from mindprobe.core.fit import DoesNotFit

    async def reply(messages):
        raise DoesNotFit(3000, 512, 2048, "x", "counted")

    with pytest.raises(DoesNotFit):
        asyncio.run(run_episode(variant="which-is-heavier", idx=0, seed=0, words=[], pool=[],
                                system=SYSTEM, reply=reply, max_turns=10,
                                turns=[M("a"), M("b")]))
