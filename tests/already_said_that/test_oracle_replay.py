"""Already Said That's plan replays the always-correct solver's chats without `Episode`'s
transcript (`episode.oracle_turns`), and `Episode` draws from word lists kept sorted rather
than sorting its sets at every turn: the same turns, the same token counts as before (the
numbers below were computed by the code before the change), in a third of the time."""

from __future__ import annotations

import hashlib
import json
import random

import pytest

from mindprobe.benchmarks.already_said_that import (
    Episode,
    load_distractors,
    load_samples,
    select_samples,
)
from mindprobe.benchmarks.already_said_that.data import VARIANTS
from mindprobe.benchmarks.already_said_that.estimate import estimate_tokens
from mindprobe.benchmarks.already_said_that.turns import (
    _DISTRACTOR_WEIGHTS,
    SortedWords,
    _is_distractor,
    oracle_turns,
)

COT = {"reason": "Think it over.", "answer": "Now answer."}
#: (seed, samples, max turns, CoT, also_turns): a quick profile's setting and a CoT one.
SETTINGS = [(20220722, 20, 100, False, 20), (3, 7, 37, True, 5)]
#: `estimate_tokens` as the code before this change computed it, on the shared data.
BEFORE = {
    'ambiguous-sentences/20220722/20/100/False': {'completion_tokens': 6862, 'max_prompt_tokens': 2726, 'prefill_tokens': 49394, 'prompt_tokens': 2491272, 'requests': 2000, 'samples': 20, 'turns': 2000, 'within': {'completion_tokens': 1350, 'prefill_tokens': 9701, 'prompt_tokens': 103726, 'requests': 400, 'turns': 400}},
    'ambiguous-sentences/3/7/37/True': {'completion_tokens': 26797, 'max_prompt_tokens': 1209, 'prefill_tokens': 36586, 'prompt_tokens': 287337, 'reasoning_tokens': 25900, 'requests': 518, 'samples': 7, 'solver': 'cot', 'turns': 259, 'within': {'completion_tokens': 3614, 'prefill_tokens': 4787, 'prompt_tokens': 8825, 'requests': 70, 'turns': 35}},
    'distractorless/20220722/20/100/False': {'completion_tokens': 6000, 'max_prompt_tokens': 1581, 'prefill_tokens': 31004, 'prompt_tokens': 1563799, 'requests': 2000, 'samples': 20, 'turns': 2000, 'within': {'completion_tokens': 1200, 'prefill_tokens': 6182, 'prompt_tokens': 64983, 'requests': 400, 'turns': 400}},
    'distractorless/3/7/37/True': {'completion_tokens': 26677, 'max_prompt_tokens': 694, 'prefill_tokens': 33787, 'prompt_tokens': 184131, 'reasoning_tokens': 25900, 'requests': 518, 'samples': 7, 'solver': 'cot', 'turns': 259, 'within': {'completion_tokens': 3605, 'prefill_tokens': 4569, 'prompt_tokens': 7581, 'requests': 70, 'turns': 35}},
    'first-letters/20220722/20/100/False': {'completion_tokens': 6622, 'max_prompt_tokens': 2746, 'prefill_tokens': 51518, 'prompt_tokens': 2598295, 'requests': 2000, 'samples': 20, 'turns': 2000, 'within': {'completion_tokens': 1326, 'prefill_tokens': 10380, 'prompt_tokens': 109651, 'requests': 400, 'turns': 400}},
    'first-letters/3/7/37/True': {'completion_tokens': 26764, 'max_prompt_tokens': 1241, 'prefill_tokens': 36720, 'prompt_tokens': 289849, 'reasoning_tokens': 25900, 'requests': 518, 'samples': 7, 'solver': 'cot', 'turns': 259, 'within': {'completion_tokens': 3612, 'prefill_tokens': 4811, 'prompt_tokens': 9007, 'requests': 70, 'turns': 35}},
    'reverse-sort-words-eng/20220722/20/100/False': {'completion_tokens': 19884, 'max_prompt_tokens': 3829, 'prefill_tokens': 68418, 'prompt_tokens': 3492805, 'requests': 2000, 'samples': 20, 'turns': 2000, 'within': {'completion_tokens': 4235, 'prefill_tokens': 14194, 'prompt_tokens': 143365, 'requests': 400, 'turns': 400}},
    'reverse-sort-words-eng/3/7/37/True': {'completion_tokens': 28642, 'max_prompt_tokens': 1737, 'prefill_tokens': 39012, 'prompt_tokens': 379171, 'reasoning_tokens': 25900, 'requests': 518, 'samples': 7, 'solver': 'cot', 'turns': 259, 'within': {'completion_tokens': 3950, 'prefill_tokens': 5476, 'prompt_tokens': 12837, 'requests': 70, 'turns': 35}},
    'which-is-heavier/20220722/20/100/False': {'completion_tokens': 6000, 'max_prompt_tokens': 2007, 'prefill_tokens': 38629, 'prompt_tokens': 1950978, 'requests': 2000, 'samples': 20, 'turns': 2000, 'within': {'completion_tokens': 1200, 'prefill_tokens': 7654, 'prompt_tokens': 80954, 'requests': 400, 'turns': 400}},
    'which-is-heavier/3/7/37/True': {'completion_tokens': 26677, 'max_prompt_tokens': 884, 'prefill_tokens': 34754, 'prompt_tokens': 221307, 'reasoning_tokens': 25900, 'requests': 518, 'samples': 7, 'solver': 'cot', 'turns': 259, 'within': {'completion_tokens': 3605, 'prefill_tokens': 4670, 'prompt_tokens': 8145, 'requests': 70, 'turns': 35}},
}
#: The records of 150 chats answered at random (half driven to all turns), before the change.
TRANSCRIPTS_BEFORE = "65955abffd5f59bb2d8c1f5fc43dfe5801771baea5a581c2263156d7552706d7"


def test_the_distractor_draw_is_random_choices():
    for seed in range(50):
        a, b = random.Random(seed), random.Random(seed)
        for _ in range(200):
            assert _is_distractor(a) == b.choices([True, False], weights=_DISTRACTOR_WEIGHTS,
                                                   k=1)[0]
        assert a.random() == b.random()  # the same state afterwards: one draw each


def test_sorted_words_stay_a_sorted_set():
    rng = random.Random(1)
    words, ref = SortedWords(["b", "a", "b"]), {"a", "b"}
    for _ in range(500):
        w = rng.choice("abcdefgh")
        if rng.random() < 0.5:
            words.add(w)
            ref.add(w)
        else:
            words.discard(w)
            ref.discard(w)
        assert words.items == sorted(ref) and len(words) == len(ref)
        assert all(x in words for x in ref) and "z" not in words


def _episode_turns(variant, idx, seed, words, pool, max_turns):
    """The chat as `Episode` plays it for the always-correct solver (the plan's old way)."""
    ep = Episode(variant=variant, idx=idx, seed=seed, words=words, pool=pool, system="S",
                 max_turns=max_turns)
    out = []
    while not ep.finished:
        message = ep.next_user_message()
        reply = f"[answer: {ep.expected}]"
        out.append((message, reply))
        ep.observe(reply)
    return out


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_oracle_turns_are_the_episodes(shared_data, variant):
    root = shared_data("already_said_that")
    pool, _ = load_distractors(root, variant)
    for idx, words in enumerate(select_samples(load_samples(root), 4, 11)):
        assert list(oracle_turns(variant, idx, 11, words, pool, 60)) == _episode_turns(
            variant, idx, 11, words, pool, 60)


def test_estimates_as_before(shared_data):
    root = shared_data("already_said_that")
    samples = load_samples(root)
    got = {}
    for variant in sorted(VARIANTS):
        pool, _ = load_distractors(root, variant)
        for seed, n, max_turns, cot, also in SETTINGS:
            got[f"{variant}/{seed}/{n}/{max_turns}/{cot}"] = estimate_tokens(
                variant, select_samples(samples, n, seed), pool, "SYSTEM text", seed,
                max_turns=max_turns, cot_messages=COT if cot else None, also_turns=also)
    assert got == BEFORE


def test_texts_counted_in_the_same_order(shared_data):
    """A measured counter samples the texts counted: the same texts, in the same order."""
    root = shared_data("already_said_that")
    pool, _ = load_distractors(root, "first-letters")
    samples = select_samples(load_samples(root), 3, 5)
    texts: list[str] = []
    estimate_tokens("first-letters", samples, pool, "SYS", 5, lambda t: texts.append(t) or 1,
                    max_turns=30)
    want = []
    for idx, words in enumerate(samples):
        want.append("SYS")
        want += [t for turn in _episode_turns("first-letters", idx, 5, words, pool, 30)
                 for t in turn]
    assert texts == want


def test_episodes_play_as_before(shared_data):
    root = shared_data("already_said_that")
    samples = load_samples(root)
    digest = hashlib.sha256()
    for variant in sorted(VARIANTS):
        pool, _ = load_distractors(root, variant)
        for idx, words in enumerate(select_samples(samples, 30, 5)):
            rng = random.Random(idx)
            ep = Episode(variant=variant, idx=idx, seed=5, words=words, pool=pool, system="S",
                         drive_all_turns=idx % 2 == 0)
            while not ep.finished:
                ep.next_user_message()
                r = rng.random()
                ep.observe("[answer: yes]" if r < 0.4 else "[answer: no]" if r < 0.8
                           else f"[answer: {ep.expected}]" if r < 0.95 else "[answer: cold]")
            digest.update(json.dumps(ep.record(), sort_keys=True).encode())
    assert digest.hexdigest() == TRANSCRIPTS_BEFORE
