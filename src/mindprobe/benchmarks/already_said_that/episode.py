"""One "Already Said That" interaction: turn generation, reply scoring and the stop rules.

Spec: shared/specs/already_said_that.md §5 (RNG call order), §7 (parsing), §8 (state update
and ending), §11 (custom solvers). The generator is separate from the model loop (`Episode`)
so that it can be driven and tested without a model.
"""

from __future__ import annotations

import random
import re
from bisect import bisect, bisect_left, insort
from collections import deque
from collections.abc import Awaitable, Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import accumulate
from typing import Any

from mindprobe.core.fit import ENDED_UNFIT, DoesNotFit

from .data import resolve_variant
from .upstream import MAIN_PREFIX


@dataclass(frozen=True)
class Reply:
    """A solver's reply to one turn, when it is more than the scored text.

    `text` is scored (spec §7) and enters the chat for later turns, as upstream's eval appends
    the solver's output; a chain-of-thought solver's `cot_reasoning` (its first call's reply)
    does not (upstream's `persistent_memory=False`). `reasoning` (a reasoning model's
    thinking) and `completion_tokens` are only recorded. `request` is what the turn sent
    (`Session.take_request`: only the turn's new messages, the history being the turns before
    it), stored with the turn."""

    text: str
    cot_reasoning: str | None = None
    reasoning: str | None = None
    truncated_in_reasoning: bool = False
    completion_tokens: int | None = None
    request: Any = None


ReplyFn = Callable[[list[dict[str, str]]], Awaitable["str | Reply"]]

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
#: `end` of a chat whose next turn could not fit the model's context window (not sent).
DOES_NOT_FIT = "does_not_fit"


def alpha_words(text: str) -> list[str]:
    """ASCII words of `text`, lowercased; words joined by an apostrophe/backtick are dropped."""
    return [m.lower() for m in _WORD_RE.findall(text) if "'" not in m and "`" not in m]


def parse_reply(reply: str) -> str | None:
    """The first `[answer: ...]` payload, stripped and lowercased; None when there is none."""
    match = ANSWER_RE.search(reply)
    return match.group(1).strip().lower() if match else None


@dataclass(frozen=True)
class Verdict:
    """How one reply was scored (spec §7)."""

    answer: str | None
    correct: bool
    violation: bool
    false_pos: bool = False
    false_neg: bool = False


def judge_main(reply: str, already_shown: bool) -> Verdict:
    """Score a reply to `MAIN TASK - <word>`; `already_shown`: the word is in `seen`."""
    answer = parse_reply(reply)
    if answer not in ("yes", "no"):
        return Verdict(answer, correct=False, violation=True)
    false_pos = answer == "yes" and not already_shown
    false_neg = answer == "no" and already_shown
    return Verdict(answer, not (false_pos or false_neg), False, false_pos, false_neg)


def judge_distractor(reply: str, ideal: str) -> Verdict:
    """Exact comparison after strip+lower; only a missing answer tag is a violation here.

    The violation flag does not end the sample, but it is what `violation_occurred` keeps
    if this is the last turn (spec §8).
    """
    answer = parse_reply(reply)
    return Verdict(answer, correct=answer == ideal.strip().lower(), violation=answer is None)


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


class Episode:
    """State machine of one sample: call `next_user_message()`, then `observe(reply)`, until
    `finished`. `turns` replaces the generator with scripted turns (no RNG draws then).

    With `drive_all_turns` the chat continues to `max_turns` asked turns after the first
    main-task error (for benchmarking throughput); the record still reflects that first error.
    """

    def __init__(
        self,
        *,
        variant: str,
        idx: int,
        seed: int,
        words: Sequence[str],
        pool: Sequence[tuple[str, str]],
        system: str,
        max_turns: int = 100,
        drive_all_turns: bool = False,
        turns: Iterable[Turn] | None = None,
    ) -> None:
        self.variant = resolve_variant(variant)
        if max_turns < 1:
            raise ValueError(f"max_turns must be at least 1, got {max_turns}")
        self.idx, self.seed, self.max_turns = idx, seed, max_turns
        self._drive_all = drive_all_turns
        self._script = iter(turns) if turns is not None else None
        if self._script is None:
            _check_words(idx, words, max_turns)
        self._draws = Draws(self.variant, idx, seed, words, pool)
        self._messages: list[dict[str, str]] = [{"role": "system", "content": system}]
        self._pending: Turn | None = None
        self.transcript: list[dict[str, Any]] = []
        self.num_turns = 0
        self.num_distractors = 0
        self._distractors_correct = 0
        self.was_false_pos = self.was_false_neg = self.violation_occurred = False
        self.end: str | None = None
        #: Why the chat stopped before its turns were played out (`stop_unfit`).
        self.unfit: str | None = None

    @property
    def finished(self) -> bool:
        if self.end == DOES_NOT_FIT:
            return True
        if self._drive_all:
            return len(self.transcript) >= self.max_turns
        return self.end is not None

    @property
    def messages(self) -> list[dict[str, str]]:
        """The chat so far (system prompt first, raw replies as assistant turns); a copy."""
        return [dict(m) for m in self._messages]

    @property
    def pending(self) -> Turn:
        """The turn whose reply is awaited."""
        if self._pending is None:
            raise RuntimeError("no turn is awaiting a reply; call next_user_message() first")
        return self._pending

    @property
    def expected(self) -> str:
        """The correct answer to the pending turn (what an always-correct solver says)."""
        return self._draws.expected(self.pending)

    def next_user_message(self) -> str:
        """Draw the next turn (spec §5), append it to the chat and return its text."""
        if self._pending is not None:
            raise RuntimeError("observe() the reply to the previous message first")
        if self.finished:
            raise RuntimeError("the episode is finished")
        script = self._script
        self._pending = self._draws.draw() if script is None else self._scripted_turn(script)
        self._messages.append({"role": "user", "content": self._pending.message})
        return self._pending.message

    @staticmethod
    def _scripted_turn(script: Iterator[Turn]) -> Turn:
        try:
            return next(script)
        except StopIteration:
            raise ValueError("the scripted turns ran out before the episode ended") from None

    def observe(self, reply: str | Reply) -> dict[str, Any]:
        """Score the reply to the pending turn, update the state (spec §8); the transcript row."""
        r = reply if isinstance(reply, Reply) else Reply(reply)
        text = r.text
        turn, expected = self.pending, self.expected
        self._pending = None
        if turn.kind == "distractor":
            verdict = judge_distractor(text, turn.ideal or "")
        else:
            verdict = judge_main(text, turn.words[0] in self._draws.seen)
        self._messages.append({"role": "assistant", "content": text})
        scored = self.end is None
        entry = {
            "turn": len(self.transcript) + 1,
            "kind": turn.kind,
            "user": turn.message,
            "reply": text,
            "answer": verdict.answer,
            "expected": expected,
            "correct": verdict.correct,
            "violation": verdict.violation,
            "scored": scored,
        }
        if r.cot_reasoning is not None:
            entry["cot_reasoning"] = r.cot_reasoning
        if r.request is not None:
            entry["request"] = r.request
        if r.reasoning is not None:
            entry["reasoning"] = r.reasoning
        if r.truncated_in_reasoning:
            entry["truncated_in_reasoning"] = True
        if r.completion_tokens is not None:
            entry["completion_tokens"] = r.completion_tokens
        self.transcript.append(entry)
        if scored:
            self._score(turn, verdict)
        # After a scored error this only matters with drive_all_turns; the shown word is then
        # "seen" as well, so that later expected answers stay truthful.
        self._draws.update(turn, verdict.answer)
        return entry

    def stop_unfit(self, reason: str) -> None:
        """The pending turn cannot fit the model's context window and was not sent: the chat
        ends here, its turns so far scored as played (a chat cut by the window is censored
        as one cut by --max-turns is: the model made no mistake in it)."""
        self.pending  # noqa: B018 (raises when no turn is pending)
        self._pending = None
        self._messages.pop()
        if self.end is None:
            self.end = DOES_NOT_FIT
        else:  # after a scored error (drive_all_turns): the record keeps that error
            self._drive_all = False
        self.unfit = reason

    def _score(self, turn: Turn, verdict: Verdict) -> None:
        self.violation_occurred = verdict.violation
        if turn.kind == "distractor":
            self.num_distractors += 1
            self._distractors_correct += verdict.correct
        elif not verdict.correct:
            self.was_false_pos, self.was_false_neg = verdict.false_pos, verdict.false_neg
            self.end = (
                "violation" if verdict.violation
                else "false_positive" if verdict.false_pos
                else "false_negative"
            )
            return  # the failing turn is not counted
        self.num_turns += 1
        if self.num_turns >= self.max_turns:
            self.end = "survived"

    def record(self) -> dict[str, Any]:
        """The JSON-serialisable per-sample record (spec §10; NaN accuracy as None)."""
        if not self.finished:
            raise RuntimeError("the episode is not finished yet")
        accuracy = (
            self._distractors_correct / self.num_distractors if self.num_distractors else None
        )
        cut = sum(1 for e in self.transcript if e.get("truncated_in_reasoning"))
        return {
            "variant": self.variant,
            "idx": self.idx,
            "seed": self.seed,
            "num_turns": self.num_turns,
            "num_distractors": self.num_distractors,
            "was_false_pos": self.was_false_pos,
            "was_false_neg": self.was_false_neg,
            "violation_occurred": self.violation_occurred,
            "distractor_accuracy": accuracy,
            "end": self.end,
            **({ENDED_UNFIT: self.unfit} if self.unfit else {}),
            "transcript": self.transcript,
            **({"truncated_in_reasoning": cut} if cut else {}),
        }


async def run_episode(
    *,
    variant: str,
    idx: int,
    seed: int,
    words: Sequence[str],
    pool: Sequence[tuple[str, str]],
    system: str,
    reply: ReplyFn,
    max_turns: int = 100,
    drive_all_turns: bool = False,
    turns: Iterable[Turn] | None = None,
) -> dict[str, Any]:
    """Play one sample against `reply` (full chat in, raw reply text out); its record."""
    episode = Episode(
        variant=variant,
        idx=idx,
        seed=seed,
        words=words,
        pool=pool,
        system=system,
        max_turns=max_turns,
        drive_all_turns=drive_all_turns,
        turns=turns,
    )
    while not episode.finished:
        episode.next_user_message()
        try:
            answer = await reply(episode.messages)
        except DoesNotFit as exc:
            if not episode.transcript:  # not even the first turn fits: the item does not
                raise
            episode.stop_unfit(str(exc))
            break
        episode.observe(answer)
    return episode.record()


def random_baseline_reply(rng: random.Random) -> str:
    """Spec §11 random baseline: yes or no with p = 1/2, from its own seeded RNG."""
    return f"[answer: {rng.choice(('yes', 'no'))}]"


def human_answer(typed: str) -> str:
    """Spec §11 human solver: map the typed line (lowercased, not trimmed) into the wrapper."""
    text = typed.lower()
    if text in ("y", "yes", "1"):
        text = "yes"
    elif text in ("n", "no", "0"):
        text = "no"
    return f"[answer: {text}]"
