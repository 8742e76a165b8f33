"""The turns of one "Already Said That" chat: what a user turn is, how a reply is parsed
(spec §7), and the generator that draws the turns (spec §5) from the word sets the chat has
shown so far (updated as spec §8 says). `Episode` plays a chat with a model; `oracle_turns`
replays the always-correct solver's chat, which a plan counts tokens on.
"""

from __future__ import annotations

import random
import re
from bisect import bisect, bisect_left, insort
from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import accumulate

from .data import resolve_variant
from .upstream import MAIN_PREFIX

#: Upstream's reply parser (spec §7): the first match is the answer.
ANSWER_RE = re.compile(r"\[answer: ([^\]]+)\]")
_WORD_RE = re.compile(r"[A-Za-z]+(?:['`][A-Za-z]+)*")
_DISTRACTOR_WEIGHTS = [1 / 3, 2 / 3]
#: What `rng.choices([True, False], weights=_DISTRACTOR_WEIGHTS)` computes at every call (its
#: cumulative weights and their float total), made once: `_is_distractor` then draws exactly as
#: it does, one `random()` placed among them (tests/already_said_that/test_oracle_replay.py
#: holds the two equal).
_CUM_WEIGHTS = list(accumulate(_DISTRACTOR_WEIGHTS))
_TOTAL_WEIGHT = _CUM_WEIGHTS[-1] + 0.0
_COIN = (True, False)


def alpha_words(text: str) -> list[str]:
    """ASCII words of `text`, lowercased; words joined by an apostrophe/backtick are dropped."""
    return [m.lower() for m in _WORD_RE.findall(text) if "'" not in m and "`" not in m]


def parse_reply(reply: str) -> str | None:
    """The first `[answer: ...]` payload, stripped and lowercased; None when there is none."""
    match = ANSWER_RE.search(reply)
    return match.group(1).strip().lower() if match else None


@dataclass(frozen=True)
class Turn:
    """One user turn: its message, the words it shows, and the ideal for a distractor."""

    kind: str  # "main" or "distractor"
    message: str
    words: tuple[str, ...]
    ideal: str | None = None

    @classmethod
    def main(cls, word: str) -> Turn:
        word = word.lower()
        return cls("main", MAIN_PREFIX + word, (word,))

    @classmethod
    def distractor(cls, question: str, ideal: str) -> Turn:
        return cls("distractor", question, tuple(alpha_words(question)), ideal)


def _is_distractor(rng: random.Random) -> bool:
    """`rng.choices([True, False], weights=_DISTRACTOR_WEIGHTS, k=1)[0]`, the same draw."""
    return bisect(_CUM_WEIGHTS, rng.random() * _TOTAL_WEIGHT, 0, 1) == 0


class SortedWords:
    """A set of words also kept in sorted order: the generator picks by position in the
    sorted set (spec §5), and sorting the sets anew at every turn was most of a plan's 10,000
    oracle turns."""

    __slots__ = ("_set", "items")

    def __init__(self, words: Iterable[str] = ()) -> None:
        self._set = set(words)
        self.items = sorted(self._set)

    def __contains__(self, word: object) -> bool:
        return word in self._set

    def __len__(self) -> int:
        return len(self.items)

    def add(self, word: str) -> None:
        if word not in self._set:
            self._set.add(word)
            insort(self.items, word)

    def update(self, words: Iterable[str]) -> None:
        for word in words:
            self.add(word)

    def discard(self, word: str) -> None:
        if word in self._set:
            self._set.remove(word)
            del self.items[bisect_left(self.items, word)]


@lru_cache(maxsize=4096)
def _distractor_turn(question: str, ideal: str) -> Turn:
    """The turn of a pool item (frozen, so shared): its words are parsed once, not at every
    time the cycling pool asks it again."""
    return Turn.distractor(question, ideal)


def sample_rng(variant: str, idx: int, seed: int) -> random.Random:
    """The per-sample RNG of spec §3, seeded with the UTF-8 bytes of its name."""
    return random.Random(f"already_said_that.{variant}.{idx}:{seed}".encode())


def _check_words(idx: int, words: Sequence[str], max_turns: int) -> None:
    if len(set(words)) < max_turns:
        raise ValueError(
            f"sample {idx} has {len(set(words))} distinct words; at least max_turns="
            f"{max_turns} are needed so that a new word can always be shown"
        )


class Draws:
    """The turn generator of one chat (spec §5) and the word sets it draws from (updated as
    spec §8 says): what `Episode` plays and `oracle_turns` replays."""

    def __init__(self, variant: str, idx: int, seed: int, words: Sequence[str],
                 pool: Sequence[tuple[str, str]]) -> None:
        self.rng = sample_rng(variant, idx, seed)
        # First RNG call of every sample (spec §4): the distractor queue order.
        self.queue = deque(self.rng.sample(list(pool), k=len(pool)))
        self.unseen = SortedWords(words)
        self.seen = SortedWords()
        #: The solver's words and the distractors' (spec §5: the two sets' union).
        self.distracting = SortedWords()

    def draw(self) -> Turn:
        rng = self.rng
        if _is_distractor(rng) and self.queue:
            question, ideal = self.queue[0]
            self.queue.rotate(-1)  # asked items move to the tail: the pool cycles
            return _distractor_turn(question, ideal)
        if rng.choice(_COIN) and self.distracting:
            return Turn.main(rng.choice(self.distracting.items))
        chosen = rng.choice([self.unseen, self.seen])
        return Turn.main(rng.choice((chosen or self.unseen).items))

    def expected(self, turn: Turn) -> str:
        """The correct answer to `turn`, drawn last (what an always-correct solver says)."""
        if turn.kind == "distractor":
            return (turn.ideal or "").strip().lower()
        return "yes" if turn.words[0] in self.seen else "no"

    def update(self, turn: Turn, answer: str | None) -> None:
        """`turn` was shown and answered `answer` (the parsed reply, None without one)."""
        if turn.kind == "distractor":
            self.distracting.update(turn.words)
        else:
            self.seen.add(turn.words[0])
            self.unseen.discard(turn.words[0])
        if answer is not None:
            self.distracting.update(_answer_words(answer))


@lru_cache(maxsize=4096)
def _parsed(reply: str) -> str | None:
    return parse_reply(reply)


@lru_cache(maxsize=4096)
def _answer_words(answer: str) -> tuple[str, ...]:
    return tuple(alpha_words(answer))


def oracle_turns(variant: str, idx: int, seed: int, words: Sequence[str],
                 pool: Sequence[tuple[str, str]], max_turns: int
                 ) -> Iterator[tuple[str, str]]:
    """(user message, reply) of each turn of the chat an always-correct solver plays, which
    lasts all `max_turns` turns: what `Episode` gives for replies `[answer: <expected>]`,
    without the chat, transcript and scoring a plan's token count does not need (a quick
    plan replays 10,000 such turns)."""
    _check_words(idx, words, max_turns)
    draws = Draws(resolve_variant(variant), idx, seed, words, pool)
    for _ in range(max_turns):
        turn = draws.draw()
        reply = f"[answer: {draws.expected(turn)}]"
        yield turn.message, reply
        draws.update(turn, _parsed(reply))
