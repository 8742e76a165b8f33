"""What a llama.cpp server offers beyond the OpenAI API, shared by `local` and the Ray
replicas: exact assistant-prefix continuation, the GGUF's own tokenizer, and candidate
log-probabilities from grammar-forced continuations."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import aiohttp

from mindprobe.models.base import CallContext, ChoiceScores, Completion, Request, TransientError


class LlamaCppFeatures:
    """Mixin for an OpenAI-compatible client of a llama.cpp server (before it in the MRO)."""

    token_count_method = "llama.cpp tokenizer of the GGUF"
    capabilities = frozenset({"logprobs", "prefix", "tokenize", "grammar"})
    base_url: str
    _session: aiohttp.ClientSession | None

    async def complete(self, request: Request, ctx: CallContext) -> Completion:
        """A partial assistant turn is continued exactly: the chat template is applied with
        its generation prompt and the prefix appended, then sent as a raw completion."""
        msgs = request.messages
        if request.continue_final and msgs and msgs[-1].get("role") == "assistant":
            head = (await self._post_root("/apply-template", {"messages": msgs[:-1]}))["prompt"]
            request = replace(request, messages=None, prompt=head + msgs[-1]["content"],
                              continue_final=False)
        return await super().complete(request, ctx)  # type: ignore[misc]

    # -- capabilities ------------------------------------------------------------------------
    async def _post_root(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        """POST to a llama.cpp endpoint outside /v1 (tokenize, apply-template)."""
        assert self._session is not None, "model not started"
        url = self.base_url.removesuffix("/v1") + path
        try:
            async with self._session.post(url, json=body) as resp:
                payload = await resp.json(content_type=None)
                status = resp.status
        except (TimeoutError, OSError, ValueError) as exc:
            raise TransientError(f"llama.cpp {path} failed: {exc}") from None
        if status != 200 or not isinstance(payload, dict):
            raise TransientError(f"llama.cpp {path} answered HTTP {status}")
        return payload

    async def count_tokens(self, messages: list[dict[str, str]] | str) -> int:
        """Tokens of the prompt exactly as the server would build it (chat template applied)."""
        if isinstance(messages, str):
            text = messages
        else:
            text = (await self._post_root("/apply-template", {"messages": messages}))["prompt"]
        out = await self._post_root("/tokenize", {"content": text, "add_special": True})
        return len(out.get("tokens") or [])

    async def score_choices(self, request: Request, candidates: list[str],
                            ctx: CallContext) -> ChoiceScores:
        """Each candidate forced by a grammar while the server reports the log-prob of every
        token from the model's unconstrained distribution: full-continuation log-probs, as
        lm-evaluation-harness computes them; the conversation's slot keeps the prefix cached."""
        first: list[float | None] = []
        full: list[float | None] = []
        top: dict[str, float] | None = None
        cost = Completion("")
        for cand in candidates:
            forced = replace(request, max_tokens=max(8, 2 * len(cand)), temperature=0.0,
                             logprobs=20, constrain=True, choices=[cand])
            comp = await self.complete(forced, ctx)
            cost.prompt_tokens += comp.prompt_tokens
            cost.cached_prompt_tokens += comp.cached_prompt_tokens
            cost.completion_tokens += comp.completion_tokens
            cost.latency += comp.latency
            lps = comp.logprobs or []
            if top is None and lps:
                top = dict(lps[0]["top"])
            total, built = 0.0, ""
            for tok in lps:
                if built == cand:
                    break
                built += tok.get("token") or ""
                total += float(tok.get("logprob") or 0.0)
            first.append(float(lps[0]["logprob"]) if lps else None)
            full.append(total if lps and built == cand else None)
        return ChoiceScores(list(candidates), first, full, top,
                            "llama.cpp grammar-forced continuation", len(candidates), cost)

