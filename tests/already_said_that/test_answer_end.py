"""The stop of a base model's reply (answer_end + answer_pattern) never changes what is scored:
whatever the model would have written, the reply cut where generation stops parses to the
same answer (upstream's parser: the first `[answer: ...]` anywhere, on any line)."""

from __future__ import annotations

import random
import re

from mindprobe.benchmarks.already_said_that.episode import parse_reply
from mindprobe.benchmarks.already_said_that.task import ANSWER_END, ANSWER_PATTERN
from mindprobe.models.llamacpp import answer_stage


def stopped(full: str, stages: tuple[tuple[str, ...], ...], pattern: str | None) -> str:
    """The reply `_complete_to_answer_end` ends with when the model would write `full`:
    llama.cpp stops at the first of the stage's stop strings (the text before it is the
    content, the string the stopping word, put back), and generation goes on unless
    `answer_stage` says the answer is complete."""
    rx = re.compile(pattern) if pattern else None
    text, stage, start = "", 0, 0
    while True:
        rest = full[len(text):]
        hits = [(rest.find(s), s) for s in stages[stage] if s in rest]
        if not hits:
            return full  # to the model's own end (or the token cap)
        at, stop = min(hits)
        text += rest[:at] + stop
        stage, start = answer_stage(text, stages, stage, start, rx)
        if stage == len(stages):
            return text


PIECES = ["[answer: ", "[answer:", "[Answer: ", "yes", "no", "]", "[", " ", "\n", "\n\n",
          "maybe", "<answer>", "x", "# note", "MAIN TASK - word", "You should respond with "]


def test_the_stop_never_changes_the_parsed_answer() -> None:
    rng = random.Random(25)
    replies = ["You will be presented with a list of words.\n[answer: no]",
               "You should respond with [answer: <answer>], where <answer> is yes or no",
               "[see below]\n[answer: yes] and later [answer: no]", "[answer: ]] [answer: no]",
               "[answer: no]", "no tag at all", "]\n]\n"]
    replies += ["".join(rng.choice(PIECES) for _ in range(rng.randint(1, 25)))
                for _ in range(5000)]
    cut_short = 0
    for full in replies:
        cut = stopped(full, ANSWER_END, ANSWER_PATTERN)
        assert full.startswith(cut)
        assert parse_reply(cut) == parse_reply(full), (full, cut)
        if parse_reply(full) is not None:  # the reply ends at the close of its first tag
            assert cut == full[:re.search(ANSWER_PATTERN, full).end()]
            cut_short += cut != full
    assert cut_short > 500  # the stop does save tokens


def test_a_line_without_the_tag_does_not_end_the_reply() -> None:
    """The base model often repeats the task description first; upstream's parser finds a tag
    on a later line, so the reply goes on past the line end."""
    full = "You will be presented with words.\nReply [answer: no]\ninput: MAIN TASK - x"
    assert stopped(full, ANSWER_END, ANSWER_PATTERN) == \
        "You will be presented with words.\nReply [answer: no]"
