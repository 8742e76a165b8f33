"""llama.cpp's native `POST /completion` as the test server speaks it (served when the server
says it is llama.cpp, `owned_by="llamacpp"`): the paths `local` takes that the OpenAI API has
no word for — a base model's reply generated stage by stage up to stop strings (`stop`,
`stop_type`, `stopping_word`) and candidate answers scored by forced tokens (`logit_bias`,
`n_probs`, `completion_probabilities`) — with llama.cpp's `timings` (`prompt_n` prefilled,
`cache_n` read from the slot, which holds the last prompt and the reply it generated)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from aiohttp import web

from mindprobe.testing.responders import Responder
from mindprobe.testing.stats import Stats
from mindprobe.testing.tokens import prompt_tokens, reply_tokens

NATIVE_PATH = "/completion"


class NativeCompletion:
    """The handler and its slots' caches (token sequences, by `id_slot`); it answers with the
    server's responder and tokenizer and counts into the server's stats."""

    def __init__(self, stats: Stats, responder: Responder,
                 tokenizer: Callable[[str, bool], list[int]] | None = None) -> None:
        self.stats, self.responder, self.tokenizer = stats, responder, tokenizer
        self.slots: dict[Any, list[str]] = {}

    def tokens(self, text: str) -> list[str]:
        """The prompt's tokens as this server's /tokenize counts them."""
        if self.tokenizer is not None:
            return [str(t) for t in self.tokenizer(text, False)]
        return prompt_tokens(text)

    async def handle(self, request: web.Request) -> web.Response:
        stats = self.stats
        stats.requests[NATIVE_PATH] = stats.requests.get(NATIVE_PATH, 0) + 1
        body = json.loads(await request.read())
        head, *ids = body["prompt"] if isinstance(body["prompt"], list) else [body["prompt"]]
        tokens = self.tokens(head) + [str(i) for i in ids]
        slot = body.get("id_slot", -1)
        cached = _common(self.slots.get(slot, []), tokens)
        out: dict[str, Any]
        if body.get("logit_bias"):
            forced = int(body["logit_bias"][0][0])
            lp = -0.1 - (forced % 7) / 10
            tops = [{"id": forced, "token": f"t{forced}", "logprob": lp}]
            out = {"content": f"t{forced}", "stop_type": "limit", "tokens_predicted": 1,
                   "completion_probabilities": [{"id": forced, "token": f"t{forced}",
                                                 "logprob": lp, "top_logprobs": tops}]}
            self.slots[slot] = tokens + [str(forced)]
        else:
            out = self._continue(head, body)
            # the slot holds the reply's tokens too: the next stage re-sends it as text
            self.slots[slot] = self.tokens(head + out["content"] + out["stopping_word"])
        out["timings"] = {"prompt_n": len(tokens) - cached, "cache_n": cached,
                          "predicted_n": out["tokens_predicted"]}
        stats.served_ok += 1
        stats.prompt_tokens += len(tokens)
        stats.cached_prompt_tokens += cached
        return web.json_response(out)

    def _continue(self, prompt: str, body: dict[str, Any]) -> dict[str, Any]:
        """The responder's reply for the prompt, less what the prompt already ends with (the
        reply so far), up to the first stop string or `n_predict` pieces."""
        reply = self.responder({"prompt": prompt, "model": body.get("model")}, prompt)
        done = next(k for k in range(len(reply), -1, -1) if prompt.endswith(reply[:k]))
        rest = reply[done:]
        hits = [(rest.find(s), s) for s in body.get("stop") or [] if s and s in rest]
        stop_type, word = "eos", ""
        if hits:
            at, word = min(hits)
            rest, stop_type = rest[:at], "word"
        pieces = reply_tokens(rest)
        cap = int(body.get("n_predict", -1))
        if 0 <= cap < len(pieces) + (1 if word else 0):
            pieces, stop_type, word = pieces[:cap], "limit", ""
        return {"content": "".join(pieces), "stop_type": stop_type, "stopping_word": word,
                "tokens_predicted": len(pieces) + len(reply_tokens(word))}


def _common(a: list[str], b: list[str]) -> int:
    """Tokens read from the slot: the shared prefix, less one (llama.cpp always evaluates the
    prompt's last token again)."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return min(n, len(b) - 1)
