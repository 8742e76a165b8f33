"""The context window, checked before a request leaves: a prompt plus its reply budget that
cannot fit the model's window is never sent (a server would refuse it, or silently cut the
prompt and answer another question). The item is recorded as `does not fit`, a state of its
own: not an error (asking again changes nothing), not an answer (nothing was asked), counted
in the results, the run summary and the report.

Counting is exact where the backend has a tokenizer (a llama.cpp or vLLM server's
`/tokenize`, the embedded engine), else the ~4 characters per token estimate; a prompt whose
UTF-8 bytes alone leave room for it needs no count at all (no token is shorter than a byte).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

from mindprobe.core.model import Model, Request
from mindprobe.core.results import Results

#: The record field of an item that did not fit (its reason); the record has no answer.
DOES_NOT_FIT = "does_not_fit"
#: The record field of an item played in part, ended where its next request did not fit (a
#: chat): its reason. The item is scored as played; runs count such items beside the rest.
ENDED_UNFIT = "ended_by_context_window"
#: Tokens a chat template may add: per message (role markers) and once (a preamble).
TEMPLATE_PER_MESSAGE, TEMPLATE_ONCE = 8, 32


class DoesNotFit(Exception):  # noqa: N818 (a state of the item, not a failure)
    """A request whose prompt plus reply budget exceeds the model's context window."""

    def __init__(self, prompt: int, budget: int, window: int, source: str, how: str) -> None:
        self.prompt, self.budget, self.window = prompt, budget, window
        super().__init__(
            f"does not fit the context window: {prompt:,} prompt tokens ({how}) + {budget:,} "
            f"reply tokens > {window:,} ({source}); not sent")


def _text(request: Request) -> tuple[str, int]:
    if request.prompt is not None:
        return request.prompt, 0
    messages = request.messages or []
    return "".join(str(m.get("content") or "") for m in messages), len(messages)


async def check_fits(model: Model, request: Request, budget: int | None = None) -> None:
    """Raise DoesNotFit when `request` (its prompt and `budget` reply tokens, by default its
    max_tokens) cannot fit `model`'s context window; nothing when the window is unknown."""
    window = model.context_window
    if not window:
        return
    budget = request.max_tokens if budget is None else budget
    text, n_messages = _text(request)
    overhead = TEMPLATE_ONCE + TEMPLATE_PER_MESSAGE * n_messages if n_messages else 0
    if len(text.encode("utf-8", "surrogatepass")) + overhead + budget <= window:
        return  # fits even if every byte were a token
    tokens, how = await count_prompt(model, request)
    if tokens + budget > window:
        raise DoesNotFit(tokens, budget, window, model.context_window_source or "", how)


async def count_prompt(model: Model, request: Request) -> tuple[int, str]:
    """(tokens of the request's prompt, how they were counted): the backend's tokenizer (a
    chat rendered with its template) where it has one, else its estimate."""
    if request.prompt is not None:
        n = await model.count_text(request.prompt)
        if n is not None:
            return n, "counted by the model's tokenizer"
        return await model.count_tokens(request.prompt), _how(model)
    messages = request.messages or []
    n = await model.count_chat(messages)
    if n is not None:
        return n, "counted by the model's tokenizer"
    return await model.count_tokens(messages), _how(model)


def _how(model: Model) -> str:
    method = model.token_count_method
    return "counted by the model's tokenizer" if model.can("tokenize") else method


def unfit_count(records: list[dict[str, Any]]) -> tuple[int, int]:
    """(items not sent at all, items ended early) because a request did not fit."""
    return (sum(1 for r in records if DOES_NOT_FIT in r),
            sum(1 for r in records if ENDED_UNFIT in r))


def score_fitting(benchmark: str, records: list[dict[str, Any]],
                  score: Callable[[list[dict[str, Any]]], Results]) -> Results:
    """`score` over the records of items that were asked; those that did not fit are left
    out of every number and counted beside them (a note, a table, `does_not_fit` in JSON)."""
    unfit = [r for r in records if DOES_NOT_FIT in r]
    if not unfit:
        return score(records)
    import pandas as pd

    asked = [r for r in records if DOES_NOT_FIT not in r]
    res = score(asked) if asked else Results(benchmark)
    res.detail[DOES_NOT_FIT] = len(unfit)
    res.notes.append(f"does not fit: {len(unfit)} of {len(records)} items could not fit the "
                     "model's context window (prompt + reply budget) and were not sent; they "
                     "are left out of every number above")
    reasons = Counter(_reason(str(r[DOES_NOT_FIT])) for r in unfit)
    frame = pd.DataFrame([{"reason": k, "items": n} for k, n in reasons.most_common()])
    res.add_table(DOES_NOT_FIT, frame, f"{len(unfit)} items did not fit the context window "
                  "(not sent)")
    return res


def _reason(text: str) -> str:
    """The reason without the item's own counts: `context window 2,048 (--context-window)`."""
    head, _, tail = text.partition(" > ")
    return "context window " + tail.removesuffix("; not sent") if tail else head
