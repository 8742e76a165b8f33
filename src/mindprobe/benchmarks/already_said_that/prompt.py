"""The task description (system prompt) of "Already Said That" (spec §6).

The wording is mindprobe's own; its structure and the normative tokens follow the spec:
`MAIN TASK - ` as the main-task prefix, the `[answer: ...]` wrapper, `yes`/`no`, the six
example input/response pairs and the `example` fence are taken from openai/evals
`already_said_that` (MIT) because the scorer and the example depend on them exactly.
"""

from __future__ import annotations

MAIN_PREFIX = "MAIN TASK - "

_INTRO = (
    "I am going to show you words, one after another. Your main task is to say whether I "
    "have already shown you the current word earlier in our conversation. Every now and "
    "then I will interleave an unrelated task instead of a word: you must ALWAYS answer "
    "that task, and afterwards go back to the main task. Words that occur inside unrelated "
    "tasks do not count as words I have shown you."
)
_FORMAT = (
    "Always reply in the format [answer: <answer>], where <answer> is yes or no for the "
    "main task, or a valid answer to the unrelated task."
)
_EXAMPLE_INTRO = "Here is an example of how the interaction could look:"
_CLOSING = "Now the task begins."
_UNRELATED_NOTE = "# words from unrelated tasks do not count as shown"


#: The chain-of-thought solver's request, appended to the current user message of each turn
#: when it is sent (never stored in the chat history: later turns see the plain message).
COT_INSTRUCTION = (
    "Before you answer, think step by step: for the main task, recall which words I have "
    "already shown you as main-task words. Write your reasoning, then end your reply with "
    "your final answer in the required format [answer: <answer>]."
)


def with_cot_instruction(message: str) -> str:
    """The user message as a chain-of-thought solver sends it on the turn it is asked."""
    return f"{message}\n\n{COT_INSTRUCTION}"


def example_word(question: str) -> str:
    """The example item's last token, edge punctuation `.,!?` stripped and lowercased."""
    tokens = question.split()
    if not tokens:
        raise ValueError("the example question is empty")
    return tokens[-1].strip(".,!?").lower()


def task_description(example_question: str, example_ideal: str) -> str:
    """Render the system prompt with the variant's example item (the file's last record)."""
    word = example_word(example_question)
    pairs = (
        (f"{MAIN_PREFIX}hello", "[answer: no]"),
        (f"{MAIN_PREFIX}hello", "[answer: yes]"),
        (example_question, f"[answer: {example_ideal}]"),
        (f"{MAIN_PREFIX}{word}", f"[answer: no] {_UNRELATED_NOTE}"),
        (f"{MAIN_PREFIX}main", "[answer: no]"),
        (f"{MAIN_PREFIX}main", "[answer: yes]"),
    )
    block = "\n".join(f"input: {q}\nresponse: {r}" for q, r in pairs)
    return (
        f"{_INTRO}\n{_FORMAT}\n{_EXAMPLE_INTRO}\n\n```example\n{block}\n```\n\n{_CLOSING}"
    )
