"""Deterministic token approximations: usage counts, simulated prefix caching and logprobs.

No real tokenizer is involved; tests only need counts and shapes that are stable and plausible.
Prompts count whitespace-separated words; replies are split into word pieces that keep their
leading whitespace (like BPE tokens do), so the pieces concatenate back to the exact reply.
"""

from __future__ import annotations

import re
from typing import Any

_PIECE = re.compile(r"\s*\S+|\s+$")
#: Log-probability of the emitted token and of the j-th alternative (probabilities sum < 1).
CHOSEN_LOGPROB = -0.1
_ALT_BASE_LOGPROB = -2.0  # alternative j (1-based) gets -2 - j


def prompt_tokens(text: str) -> list[str]:
    """Approximate prompt tokens: whitespace-separated words."""
    return text.split()


def reply_tokens(text: str) -> list[str]:
    """Split a reply into pieces that concatenate back to ``text`` exactly."""
    return _PIECE.findall(text)


class PrefixCache:
    """Longest common token prefix with any earlier prompt, like a provider's prompt cache.

    A token trie makes each lookup O(prompt length) regardless of how many prompts came before.
    """

    def __init__(self) -> None:
        self._root: dict[str, dict] = {}

    def observe(self, tokens: list[str]) -> int:
        """Return how many leading tokens were seen before, then remember this prompt."""
        node = self._root
        depth = 0
        for token in tokens:
            child = node.get(token)
            if child is None:
                break
            node = child
            depth += 1
        for token in tokens[depth:]:
            node = node.setdefault(token, {})
        return depth


def _alternatives(piece: str, top_k: int) -> list[tuple[str, float]]:
    """The emitted piece first, then ``top_k - 1`` made-up, less likely alternatives."""
    lead = piece[: len(piece) - len(piece.lstrip())]
    ranked = [(piece, CHOSEN_LOGPROB)]
    ranked += [(f"{lead}<alt{j}>", _ALT_BASE_LOGPROB - j) for j in range(1, top_k)]
    return ranked[:top_k]


def _utf8(token: str) -> list[int]:
    return list(token.encode("utf-8"))


def chat_logprobs(pieces: list[str], top_k: int) -> dict[str, Any]:
    """``choices[0].logprobs`` as the chat completions API shapes it."""
    content = [
        {
            "token": piece,
            "logprob": CHOSEN_LOGPROB,
            "bytes": _utf8(piece),
            "top_logprobs": [
                {"token": alt, "logprob": lp, "bytes": _utf8(alt)}
                for alt, lp in _alternatives(piece, top_k)
            ],
        }
        for piece in pieces
    ]
    return {"content": content, "refusal": None}


def completion_logprobs(pieces: list[str], top_k: int, text_offset: int) -> dict[str, Any]:
    """``choices[0].logprobs`` as the legacy completions API shapes it."""
    offsets = []
    for piece in pieces:
        offsets.append(text_offset)
        text_offset += len(piece)
    return {
        "tokens": list(pieces),
        "token_logprobs": [CHOSEN_LOGPROB] * len(pieces),
        "top_logprobs": [dict(_alternatives(piece, top_k)) for piece in pieces],
        "text_offset": offsets,
    }
