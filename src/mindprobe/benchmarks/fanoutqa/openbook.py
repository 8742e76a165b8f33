"""Building FanOutQA's contexts through a live session: token counting, the greedy fill, the
evidence-provided documents and the open-book search loop (spec §2).

The pure builders in :mod:`.prompts` take a synchronous ``count_tokens``; here counting goes
through the model under test (``Model.count_tokens``, an HTTP call for llama.cpp), so the fill
is async. Output is identical to the pure builders for the same counter: same chunks, same BM25+
order, same first-overflow stop. With no tokenizer the documented estimate
(:data:`~.retrieval.TOKEN_ESTIMATE_NAME`) is used and computed incrementally (it is additive
over the template's pieces), so a 128k-token budget costs no quadratic re-counting.

Open book uses the text protocol (``<search>…</search>`` replies, tool results as user
messages) for every model: mindprobe's Request has no tool-calling field yet, so GPT-style
native function calls are not offered (documented in the results).
"""

from __future__ import annotations

import asyncio
import math
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from mindprobe.core.model import Model, Request
from mindprobe.core.session import Session

from .chunking import chunk_text
from .normalize import Normalizer
from .prompts import (
    DOCUMENT,
    EVIDENCE_PROVIDED,
    FRAGMENT,
    PAGE,
    Message,
    evidence_budget,
    final_answer,
    open_book_messages,
    parse_reply,
    search_disambiguation,
    search_not_found,
    trim_history,
    user,
)
from .retrieval import _PRETOKEN, TOKEN_ESTIMATE_NAME, BM25Plus, estimate_tokens, tokenize

_SENTINEL = "\x00FANOUTQA-SLOT\x00"
_WORD = re.compile(r"\w")


# ------------------------------------------------------------------ counting tokens


class TokenCounter:
    """Counts a prompt as one user message with the target model's tokenizer when the model
    declares "tokenize", else with the documented estimate; ``method`` names which."""

    def __init__(self, model: Model) -> None:
        self.model = model
        self.exact = model.can("tokenize")
        self.method = model.token_count_method if self.exact else TOKEN_ESTIMATE_NAME
        self._messages: dict[tuple[str, str], int] = {}

    async def prompt(self, text: str) -> int:
        if self.exact:
            return await self.model.count_tokens([user(text)])
        return estimate_tokens(text)

    async def message(self, msg: Message) -> int:
        """Tokens of one history message (for trimming), memoised by role and content."""
        key = (str(msg.get("role")), str(msg.get("content") or ""))
        if key not in self._messages:
            if self.exact:
                self._messages[key] = await self.model.count_tokens([dict(msg)])
            else:
                self._messages[key] = estimate_tokens(key[1])
        return self._messages[key]


def _split(template: str, **fields: str) -> tuple[str, str]:
    """(text before, text after) the one field left as the slot."""
    head, _, tail = template.format(**fields).partition(_SENTINEL)
    return head, tail


def _additive(head: str, pieces: Sequence[str], tail: str) -> bool:
    """Whether the estimate of head+pieces+tail is the sum of the parts' estimates: no joint
    has a word character on both sides (a punctuation pre-token is one character)."""
    ends = [s[-1] for s in (head, *pieces) if s]
    starts = [s[0] for s in (*pieces, tail) if s]
    return not (any(_WORD.match(c) for c in ends) and any(_WORD.match(c) for c in starts))


@dataclass(frozen=True)
class Filled:
    """What a greedy fill kept: the first ``n_kept`` pieces, the rendered text and its tokens."""

    n_kept: int
    text: str
    tokens: int


async def greedy_fill(
    head: str, pieces: Sequence[str], tail: str, counter: TokenCounter, budget: int
) -> Filled:
    """Keep pieces in order while the rendered ``head + kept + tail`` fits ``budget`` tokens;
    the first overflow ends the loop (the paper's fill, :func:`.retrieval.greedy_fill`)."""
    if not counter.exact and _additive(head, pieces, tail):
        pre = len(_PRETOKEN.findall(head)) + len(_PRETOKEN.findall(tail))
        size = len(head.encode("utf-8")) + len(tail.encode("utf-8"))
        n = 0
        for piece in pieces:
            p2 = pre + len(_PRETOKEN.findall(piece))
            s2 = size + len(piece.encode("utf-8"))
            if max(p2, math.ceil(s2 / 4)) > budget:
                break
            pre, size, n = p2, s2, n + 1
        return Filled(n, head + "".join(pieces[:n]) + tail, max(pre, math.ceil(size / 4)))
    kept: list[str] = []
    tokens: int | None = None
    for piece in pieces:
        count = await counter.prompt(head + "".join(kept) + piece + tail)
        if count > budget:
            break
        kept.append(piece)
        tokens = count
    text = head + "".join(kept) + tail
    if tokens is None:
        tokens = await counter.prompt(text)
    return Filled(len(kept), text, tokens)


# ------------------------------------------------------------------ retrieval over pages


def rank_order(contents: Sequence[str], query: str, normalizer: Normalizer) -> list[int]:
    """BM25+ ranking of chunk texts against the query, best first (spec §4; as rank_chunks)."""
    if not contents:
        return []
    docs = normalizer.normalize_many(contents)
    bm25 = BM25Plus([tokenize(d) for d in docs])
    return [int(i) for i in bm25.rank(tokenize(normalizer(query)))]


@dataclass
class Context:
    """A filled prompt (or tool result) and what went into it, for the item's record."""

    text: str
    tokens: int
    budget: int
    chunk_ids: list[str]  # kept chunks in prompt order: "{pageid}:{chunk index in its page}"
    chunks_total: int

    def record(self) -> dict[str, Any]:
        return {"tokens": self.tokens, "budget": self.budget, "chunks_total": self.chunks_total,
                "chunks_kept": len(self.chunk_ids), "chunk_ids": self.chunk_ids}


async def evidence_provided_context(
    question: str,
    pages: Sequence[tuple[int, str, str]],
    max_context: int,
    counter: TokenCounter,
    normalizer: Normalizer,
    chunk_size: int,
) -> Context:
    """The evidence-provided prompt over (pageid, title, markdown) pages, duplicates included:
    chunks ranked by BM25+ against the question, greedily filled into max_context - 520."""
    chunks: list[tuple[str, str, str]] = []  # (id, title, content)
    for pageid, title, text in pages:
        chunks += [(f"{pageid}:{i}", title, c) for i, c in enumerate(chunk_text(text, chunk_size))]
    order = await asyncio.to_thread(rank_order, [c[2] for c in chunks], question, normalizer)
    pieces = [DOCUMENT.format(title=chunks[i][1], content=chunks[i][2]) for i in order]
    head, tail = _split(EVIDENCE_PROVIDED, docs=_SENTINEL, question=question)
    budget = evidence_budget(max_context)
    filled = await greedy_fill(head, pieces, tail, counter, budget)
    ids = [chunks[i][0] for i in order[: filled.n_kept]]
    return Context(filled.text, filled.tokens, budget, ids, len(chunks))


async def page_context(
    pageid: int | str,
    title: str,
    markdown: str,
    question: str,
    max_context: int,
    counter: TokenCounter,
    normalizer: Normalizer,
    chunk_size: int,
) -> Context:
    """A found page as a search result: its chunks ranked against the *original question*,
    greedily filled into max_context // 2 tokens for this one message."""
    contents = chunk_text(markdown, chunk_size)
    order = await asyncio.to_thread(rank_order, contents, question, normalizer)
    pieces = [FRAGMENT.format(chunk=contents[i]) for i in order]
    head, tail = _split(PAGE, title=title, fragments=_SENTINEL)
    budget = max_context // 2
    filled = await greedy_fill(head, pieces, tail, counter, budget)
    ids = [f"{pageid}:{i}" for i in order[: filled.n_kept]]
    return Context(filled.text, filled.tokens, budget, ids, len(contents))


# ------------------------------------------------------------------ the open-book loop


@dataclass
class OpenBookSettings:
    max_context: int
    reply_tokens: int
    chunk_size: int
    search_results: int
    time_limit: float


@dataclass
class OpenBookRound:
    """One question's search loop as recorded: answer, trail of searches, why it stopped."""

    answer: str
    replies: list[str] = field(default_factory=list)
    trail: list[dict[str, Any]] = field(default_factory=list)
    stopped: str = "answered"  # or "time_limit"
    finish_reason: str | None = None
    trimmed_turns: int = 0  # model calls whose history was trimmed to fit
    elapsed_s: float = 0.0


async def search_tool(
    wiki: Any,
    query: str,
    question: str,
    settings: OpenBookSettings,
    counter: TokenCounter,
    normalizer: Normalizer,
) -> tuple[str, dict[str, Any]]:
    """The paper's search tool: an exact title (redirects followed) gives that page's best
    fragments; no such page gives similar titles as ready-made searches; a disambiguation
    page gives its options."""
    found = await wiki.lookup(query)
    if found.evidence is None:
        hits = await wiki.search(query, settings.search_results)
        titles = [h.title for h in hits]
        return search_not_found(titles), {"query": query, "outcome": "not_found",
                                          "similar": titles}
    ev = found.evidence
    where = {"query": query, "title": ev.title, "pageid": ev.pageid, "revid": ev.revid}
    if found.disambiguation:
        options = await wiki.disambiguation_options(ev)
        return search_disambiguation(options), {**where, "outcome": "disambiguation",
                                                "options": options}
    page = await wiki.page(ev)
    ctx = await page_context(ev.pageid if ev.pageid is not None else ev.title, ev.title,
                             page.text, question, settings.max_context, counter, normalizer,
                             settings.chunk_size)
    return ctx.text, {**where, "outcome": "page", "source": page.source, **ctx.record()}


async def open_book_round(
    session: Session,
    question: str,
    settings: OpenBookSettings,
    counter: TokenCounter,
    normalizer: Normalizer,
) -> OpenBookRound:
    """Ask, search while the reply is a search, answer; at most ``time_limit`` seconds.

    History is trimmed oldest-first to max_context - 520 tokens before each call (the question
    may go, as in the paper's chat framework). At the time limit - before a call, or cutting
    one short - the loop stops and the answer is the last non-empty message of the round.
    """
    wiki = session.resource("wikipedia")
    history: list[Message] = open_book_messages(question, "text")
    out = OpenBookRound(answer="")
    start = time.monotonic()
    deadline = start + settings.time_limit
    budget = evidence_budget(settings.max_context)

    async def before_deadline(coro: Any) -> Any:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            coro.close()
            raise _Deadline
        try:
            return await asyncio.wait_for(coro, remaining)
        except TimeoutError:
            if time.monotonic() >= deadline - 0.01:
                raise _Deadline from None
            raise

    try:
        while True:
            sizes = {id(m): await counter.message(m) for m in history}
            sent = trim_history(history, budget, lambda m, sizes=sizes: sizes[id(m)])
            if len(sent) < len(history):
                out.trimmed_turns += 1
            req = Request(messages=sent, max_tokens=settings.reply_tokens, temperature=0.0)
            comp = await before_deadline(session.generate(req))
            out.finish_reason = comp.finish_reason
            parsed = parse_reply(comp.text)
            out.replies.append(parsed.content)
            history.append({"role": "assistant", "content": parsed.content})
            if parsed.query is None:
                break
            t0 = time.monotonic()
            try:
                result, entry = await before_deadline(
                    search_tool(wiki, parsed.query, question, settings, counter, normalizer))
            except _Deadline:
                out.trail.append({"query": parsed.query, "outcome": "time_limit"})
                raise
            entry["seconds"] = round(time.monotonic() - t0, 3)
            out.trail.append(entry)
            history.append(user(result))
    except _Deadline:
        out.stopped = "time_limit"
    out.answer = final_answer(history[1:])
    out.elapsed_s = round(time.monotonic() - start, 3)
    return out


class _Deadline(Exception):
    """The open-book time limit was reached."""
