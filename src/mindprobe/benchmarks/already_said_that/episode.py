"""One "Already Said That" interaction: reply scoring and the stop rules.

Spec: shared/specs/already_said_that.md §7 (parsing), §8 (state update and ending), §11
(custom solvers). The turns and their generator (§5) are `turns.py`'s, separate from the
model loop (`Episode`) so that they can be driven and tested without a model.
"""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from mindprobe.core.fit import ENDED_UNFIT, DoesNotFit

from .data import resolve_variant
from .turns import ANSWER_RE as ANSWER_RE  # where upstream's parser was always found
from .turns import Draws, Turn, _check_words, parse_reply
from .turns import sample_rng as sample_rng


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

#: `end` of a chat whose next turn could not fit the model's context window (not sent).
DOES_NOT_FIT = "does_not_fit"


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
