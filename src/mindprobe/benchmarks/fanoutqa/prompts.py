"""The paper's prompts for the three FanOutQA settings (spec §2), as pure message builders.

Template strings are the benchmark-defining prompts of the FanOutQA paper (Zhu et al., ACL
2024), verbatim; the authority is upstream's code (zhudotexe/fanoutqa, the `fanoutqa` package's
baseline prompts), which spec §2 quotes; everything else here is mindprobe's own code.
Messages are ``{"role": ..., "content": ...}`` dicts; the lead's runner sends them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from .chunking import PAPER_CHUNK_SIZE, Chunk, chunk_text
from .normalize import Normalizer
from .options import PAPER_MAX_CONTEXT
from .retrieval import CountTokens, greedy_fill, rank_chunks

Message = dict[str, Any]

# ---- FanOutQA paper, reference prompts (spec §2), verbatim
CURRENT_DATE = "11-20-2023"
TAIL = (
    "If the answer is a list, output one on each line. Current date: "
    + CURRENT_DATE
    + ".\n\n[Question]: {question}"
)
CLOSED_BOOK = "Answer the following question, and output only your answer. " + TAIL
EVIDENCE_PROVIDED = (
    "*** BEGIN DATA ***\n\n{docs}\n*** END DATA ***\n\nAnswer the following question based on the "
    "documents above, and output only your answer. " + TAIL
)
# (braces doubled for str.format: renders as "{YOUR_SEARCH_QUERY}")
OPEN_BOOK_TEXT_SEARCH = (
    "You have the ability to search Wikipedia for information. To do so, output a message in the "
    "format <search>{{YOUR_SEARCH_QUERY}}</search> (e.g. `<search>List of states and territories "
    "of the United States</search>`).\nAnswer the following question, and output only your answer "
    "or a search, but not both. " + TAIL
)
OPEN_BOOK_TOOL_CALLING = (
    "Answer the following question, and output only a function call or your answer. " + TAIL
)
OPEN_BOOK_GPT35 = (
    "Answer the following question, and output only your answer. You may search before outputting "
    "your answer. " + TAIL
)
DOCUMENT = "<document>\n<title>{title}</title>\n<content>{content}</content>\n</document>\n"
NOT_FOUND = "No page with that title exists. Try one of the similar searches:"
DISAMBIGUATION = "That may refer to multiple pages. Select one of these pages:"
PAGE = "<document>\n<title>{title}</title>\n{fragments}</document>"
FRAGMENT = "<fragment>\n{chunk}\n</fragment>\n"
# ---- end of verbatim paper prompts

GENERATION_RESERVE = 512  # tokens kept free for the answer
FORMATTING_RESERVE = 8
OPEN_BOOK_TIMEOUT_S = 600  # wall-clock cap per question in the paper's open-book runs

# mindprobe's own wording of the paper's tool (search Wikipedia by title, spec §2).
SEARCH_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "search",
        "description": (
            "Look up the Wikipedia article whose title matches the query and return its most "
            "relevant content; when no article has that title, return the titles of similar "
            "articles to try instead."
        ),
        "parameters": {
            "type": "object",
            "properties": {"query": {"type": "string", "description": "An article title."}},
            "required": ["query"],
        },
    },
}


def user(content: str) -> Message:
    return {"role": "user", "content": content}


# ------------------------------------------------------------------ closed book


def closed_book_messages(question: str) -> list[Message]:
    """Closed-book: the question alone, one user message."""
    return [user(CLOSED_BOOK.format(question=question))]


# ------------------------------------------------------------------ evidence provided


def render_documents(chunks: Sequence[Chunk]) -> str:
    return "".join(DOCUMENT.format(title=c.title, content=c.content) for c in chunks)


def evidence_provided_prompt(question: str, chunks: Sequence[Chunk]) -> str:
    return EVIDENCE_PROVIDED.format(docs=render_documents(chunks), question=question)


def evidence_budget(max_context: int) -> int:
    """Prompt-token budget: the context minus 512 for generation and 8 for formatting."""
    return max_context - GENERATION_RESERVE - FORMATTING_RESERVE


@dataclass(frozen=True)
class FilledPrompt:
    """A prompt built by greedy fill, with what went into it (for per-question records)."""

    messages: list[Message]
    n_chunks_kept: int
    n_chunks_total: int
    prompt_tokens: int


def evidence_provided_messages(
    question: str,
    pages: Sequence[tuple[str, str]],
    max_context: int,
    count_tokens: CountTokens,
    normalizer: Normalizer,
    chunk_size: int = PAPER_CHUNK_SIZE,
) -> FilledPrompt:
    """Evidence-provided prompt: chunk the (title, markdown) pages of ``necessary_evidence``
    (duplicates included), rank by BM25+ against the question, keep chunks in rank order until
    the first one that would push the rendered prompt over ``max_context - 520`` tokens.

    ``count_tokens`` should count the rendered text as one user message for the target model.
    """
    chunks = [Chunk(t, c) for t, text in pages for c in chunk_text(text, chunk_size)]
    ranked = rank_chunks(chunks, question, normalizer)
    kept, prompt = greedy_fill(
        ranked,
        lambda cs: evidence_provided_prompt(question, cs),
        count_tokens,
        evidence_budget(max_context),
    )
    return FilledPrompt([user(prompt)], len(kept), len(chunks), count_tokens(prompt))


# ------------------------------------------------------------------ open book

SearchMode = Literal["text", "tools", "tools-gpt35"]
_SEARCH = re.compile(r"<search>(.+?)</search>")  # no DOTALL: the query stays on one line


def open_book_messages(question: str, mode: SearchMode = "text") -> list[Message]:
    """First message of the open-book loop. ``text``: models without tool calling use the
    ``<search>`` protocol; ``tools``: pass ``SEARCH_TOOL``; ``tools-gpt35``: gpt-3.5-turbo's
    wording."""
    template = {
        "text": OPEN_BOOK_TEXT_SEARCH,
        "tools": OPEN_BOOK_TOOL_CALLING,
        "tools-gpt35": OPEN_BOOK_GPT35,
    }[mode]
    return [user(template.format(question=question))]


@dataclass(frozen=True)
class ParsedReply:
    """A model reply in the text-search protocol: a search (``query`` set) or a final answer."""

    content: str  # the reply as kept in history (truncated right after </search> for a search)
    query: str | None

    @property
    def is_search(self) -> bool:
        return self.query is not None


def parse_reply(reply: str) -> ParsedReply:
    """A reply is a search only if it *starts* with ``<search>…</search>`` (non-greedy, non-empty
    query); it is then cut right after ``</search>``. Anything else is the answer."""
    m = _SEARCH.match(reply)
    if m is None:
        return ParsedReply(reply, None)
    return ParsedReply(reply[: m.end()], m.group(1))


def search_not_found(similar_titles: Sequence[str]) -> str:
    """Tool result when no page has the exact title: the full-text search hits to try."""
    return "\n".join([NOT_FOUND, *(f"<search>{t}</search>" for t in similar_titles)])


def search_disambiguation(options: Sequence[str]) -> str:
    """Tool result for a disambiguation page: its options as ready-made searches."""
    return "\n".join([DISAMBIGUATION, *(f"<search>{t}</search>" for t in options)])


def render_page(title: str, chunks: Sequence[str]) -> str:
    return PAGE.format(title=title, fragments="".join(FRAGMENT.format(chunk=c) for c in chunks))


def search_page_result(
    title: str,
    markdown: str,
    question: str,
    max_context: int,
    count_tokens: CountTokens,
    normalizer: Normalizer,
    chunk_size: int = PAPER_CHUNK_SIZE,
) -> str:
    """Tool result for a found page: its chunks ranked by BM25+ against the *original question*
    (not the search query), greedily filled into ``max_context // 2`` tokens for this message."""
    chunks = [Chunk(title, c) for c in chunk_text(markdown, chunk_size)]
    ranked = [c.content for c in rank_chunks(chunks, question, normalizer)]
    _, text = greedy_fill(ranked, lambda cs: render_page(title, cs), count_tokens, max_context // 2)
    return text


def tool_result_message(
    text: str, mode: SearchMode = "text", tool_call_id: str | None = None
) -> Message:
    """Text protocol: the tool result goes back as a **user** message; tool calling: a tool
    message."""
    if mode == "text":
        return user(text)
    msg: Message = {"role": "tool", "content": text, "name": "search"}
    if tool_call_id is not None:
        msg["tool_call_id"] = tool_call_id
    return msg


def trim_history(
    messages: Sequence[Message],
    budget: int,
    count_message_tokens: Callable[[Message], int],
    keep_first: int = 0,
) -> list[Message]:
    """Drop the oldest messages until the rest fit ``budget`` tokens (the chat framework's
    behaviour in the paper; the question itself may go). ``keep_first`` pins leading messages
    (e.g. a system prompt). The newest message is always kept, even if it alone overflows, and
    a tool result is never left without the assistant message that called it."""
    head = list(messages[:keep_first])
    tail = list(messages[keep_first:])
    used = sum(count_message_tokens(m) for m in head)
    kept: list[Message] = []
    for m in reversed(tail):
        cost = count_message_tokens(m)
        if kept and used + cost > budget:
            break
        kept.append(m)
        used += cost
    kept.reverse()
    while len(kept) > 1 and kept[0].get("role") == "tool":
        kept.pop(0)
    return head + kept


def final_answer(messages: Sequence[Message]) -> str:
    """The round's answer: content of the last message with non-empty text content."""
    for m in reversed(messages):
        content = m.get("content")
        if isinstance(content, str) and content:
            return content
    return ""


def resolve_max_context(explicit: int | None, window: int | None,
                        reply_tokens: int) -> tuple[int, str]:
    """(max_context, where it came from). The fill reserves 512 tokens for the reply; a larger
    --max-tokens takes its excess off the model's window so prompt and reply still fit."""
    if explicit is not None:
        return explicit, "--max-context"
    if window:
        excess = max(0, reply_tokens - GENERATION_RESERVE)
        return max(1024, window - excess), "model context window" + (
            f" less {excess} reply tokens above 512" if excess else "")
    return PAPER_MAX_CONTEXT, f"paper default {PAPER_MAX_CONTEXT} (model context window unknown)"
