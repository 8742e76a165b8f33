"""What a llama.cpp server offers beyond the OpenAI API, shared by `local` and the Ray
replicas: exact assistant-prefix continuation, the GGUF's own tokenizer, and candidate
log-probabilities from grammar-forced continuations."""

from __future__ import annotations

import contextlib
import json
import re
import time
from dataclasses import replace
from typing import Any

import aiohttp

from mindprobe.core.model import CallContext, ChoiceScores, Completion, Request, TransientError
from mindprobe.models.apply_template import (
    PATH,
    PROBE,
    TEMPLATED,
    UNTEMPLATED_COUNT,
    answer_says,
    note,
    why_not,
)
from mindprobe.models.slots import SlotPool, prompt_parts


def answer_stage(text: str, stages: tuple[tuple[str, ...], ...], stage: int, stage_start: int,
                 pattern: re.Pattern[str] | None) -> tuple[int, int]:
    """(stage, where it starts) after `text` reached a stop string of `stages[stage]`: the
    next stage when this one has non-blank text of its own (and, for the last stage, the
    text matches `pattern`), else the same one (generation goes on). Reaching
    `len(stages)` means the answer is complete."""
    stop = next((s for s in stages[stage] if text.endswith(s)), "")
    own = text[stage_start:len(text) - len(stop)]
    if not own.strip():
        return stage, stage_start
    if stage == len(stages) - 1 and pattern is not None and not pattern.search(text):
        return stage, stage_start
    return stage + 1, len(text)


class LlamaServerTools:
    """llama.cpp's endpoints outside /v1 for any client of a llama.cpp server: its tokenizer
    (`tokenize`, exact `count_tokens`) and its chat template (`apply_template`), used when the
    client declares "tokenize" / "template"; otherwise the base model's behaviour."""

    base_url: str
    _session: aiohttp.ClientSession | None
    capabilities: frozenset[str]
    token_count_method: str
    grammar_fixed: bool

    async def _root(self, path: str, body: dict[str, Any], timeout: float | None = None
                    ) -> tuple[int, Any]:
        """(HTTP status, JSON body or None) of a POST to `path` at the server's root."""
        assert self._session is not None, "model not started"
        url = self.base_url.removesuffix("/v1") + path
        kw = {"timeout": aiohttp.ClientTimeout(total=timeout)} if timeout else {}
        async with self._session.post(url, json=body, **kw) as resp:
            status, raw = resp.status, await resp.read()
        try:
            return status, json.loads(raw)
        except ValueError:
            return status, None

    async def _post_root(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        """POST to a llama.cpp endpoint outside /v1 (tokenize, apply-template)."""
        try:
            status, payload = await self._root(path, body)
        except (TimeoutError, OSError, aiohttp.ClientError) as exc:
            raise TransientError(f"llama.cpp {path} failed: {exc}") from None
        if status != 200 or not isinstance(payload, dict):
            raise TransientError(f"llama.cpp {path} answered HTTP {status}"
                                 + ("" if status != 200 else " without a JSON object"))
        return payload

    #: Why capabilities were dropped at start ({"template": "no POST /apply-template ..."}),
    #: recorded in the manifest; and what the run should hear once about it (`take_notes`).
    dropped: dict[str, str]
    _notes: list[tuple[str, str]]

    async def _learn_template(self) -> None:
        """Whether a server declared "template" really has `POST /apply-template`
        (`models.apply_template`): one small request at start; without it "template" and
        "prefix" are dropped, recorded (`dropped`) and said once (`take_notes`)."""
        if "template" not in self.capabilities or self.grammar_fixed:
            return  # a llama.cpp engine of our own serves it
        try:
            status, payload = await self._root(PATH, PROBE, 15)
        except (TimeoutError, OSError, aiohttp.ClientError):
            status, payload = None, None
        has = answer_says(status, payload)
        if has:
            for cap in TEMPLATED:
                self.dropped.pop(cap, None)
            return
        if has is None:  # says nothing: what an earlier answer said holds
            self.capabilities = self.capabilities.difference(self.dropped)
            return
        lost = sorted(self.capabilities & TEMPLATED)
        self.capabilities = self.capabilities - TEMPLATED
        self.dropped.update(dict.fromkeys(lost, why_not(status)))
        if "tokenize" in self.capabilities:
            self.token_count_method = UNTEMPLATED_COUNT
        part = (note(status, lost), self.base_url.removesuffix("/v1"))
        if part not in self._notes:
            self._notes.append(part)

    def take_note_parts(self) -> list[tuple[str, str]]:
        """The notes as (text with a `{where}` for the server, the server): a pool of servers
        says one line for all those that lack the same (`RouterModel.take_notes`)."""
        parts, self._notes[:] = list(self._notes), []
        return parts

    def take_notes(self) -> list[str]:
        return [text.replace("{where}", where) for text, where in self.take_note_parts()]

    async def tokenize(self, text: str, add_special: bool = True) -> list[int]:
        if not self.can("tokenize"):
            return await super().tokenize(text, add_special)  # type: ignore[misc]
        out = await self._post_root("/tokenize", {"content": text, "add_special": add_special})
        return [int(t) for t in out.get("tokens") or []]

    async def apply_template(self, messages: list[dict[str, str]]) -> str:
        if not self.can("template"):
            return await super().apply_template(messages)  # type: ignore[misc]
        return str((await self._post_root("/apply-template", {"messages": messages}))["prompt"])

    #: Set when the server answered that it has no tokenizer: plans count ~4 chars per token.
    _no_tokenizer = False
    _has_tokenizer = False

    async def count_text(self, text: str) -> int | None:
        """`text`'s tokens by the server's own tokenizer, no special tokens added: `POST
        /tokenize` as llama.cpp ({"content"}) and vLLM ({"prompt"}) serve it, asked whether or
        not the server was recognised (None: it has none, or it is OpenAI's API)."""
        if self._no_tokenizer or self.base_url.startswith("https://api.openai.com"):
            return None
        body = {"model": getattr(self, "model", None), "content": text, "prompt": text,
                "add_special": False, "add_special_tokens": False}
        try:
            n = _token_count(await self._post_root("/tokenize", body))
        except TransientError:
            n = None
        if n is None or (text.strip() and n == 0):
            self._no_tokenizer = True
            return None
        return n

    async def count_chat(self, messages: list[dict[str, str]]) -> int | None:
        """A conversation's tokens as the server renders it: vLLM's `POST /tokenize` of
        {"messages"}, else llama.cpp's chat template (`/apply-template`) then its tokenizer."""
        if not self._has_tokenizer and await self.count_text("x") is None:
            return None
        self._has_tokenizer = True  # asked once: every prompt's fit is counted (`core.fit`)
        body = {"model": getattr(self, "model", None), "messages": messages,
                "add_generation_prompt": True}
        with contextlib.suppress(TransientError):
            n = _token_count(await self._post_root("/tokenize", body))
            if n:  # llama.cpp answers no tokens for a body without "content"
                return n
        if "template" in self.dropped:
            return None  # no chat template to render with: plans count per message
        try:
            prompt = (await self._post_root(PATH, {"messages": messages}))["prompt"]
        except (TransientError, KeyError):
            return None
        return await self.count_text(str(prompt))

    async def count_tokens(self, messages: list[dict[str, str]] | str) -> int:
        """Tokens of the prompt exactly as the server would build it (chat template applied);
        a server without /apply-template: the tokens of its messages' text."""
        if not self.can("tokenize"):
            return await super().count_tokens(messages)  # type: ignore[misc]
        if isinstance(messages, str):
            text = messages
        elif self.can("template"):
            text = await self.apply_template(messages)
        else:  # the messages' own tokens, a line apart (`token_count_method` says so)
            text = "\n".join(m.get("content") or "" for m in messages)
        return len(await self.tokenize(text))


def _token_count(out: dict[str, Any]) -> int | None:
    """The count of a /tokenize answer (llama.cpp: "tokens"; vLLM: "count" and "tokens")."""
    if isinstance(out.get("count"), int):
        return int(out["count"])
    tokens = out.get("tokens")
    return len(tokens) if isinstance(tokens, list) else None


def counted(comp: Completion, out: dict[str, Any]) -> int:
    """Add a `/completion` reply's prompt tokens (those read from the slot's cache among them)
    to `comp`; the tokens it generated."""
    timings = out.get("timings") or {}
    cached = int(timings.get("cache_n", 0))
    comp.prompt_tokens += int(timings.get("prompt_n", 0)) + cached
    comp.cached_prompt_tokens += cached
    return int(out.get("tokens_predicted") or timings.get("predicted_n") or 0)


class LlamaCppFeatures:
    """Mixin for an OpenAI-compatible client of a llama.cpp server (before it in the MRO)."""

    #: The server's KV slots as handed out (which prefix group each was taken for); set by
    #: whoever hands them out (the local model, a router's endpoint).
    slot_pool: SlotPool | None = None

    token_count_method = "llama.cpp tokenizer of the GGUF"
    score_method = "llama.cpp forced canonical tokens (logit bias)"
    score_requests = "per-token"  # `score_choices` below: one request per candidate token
    capabilities = frozenset({"logprobs", "prefix", "tokenize", "template", "grammar"})
    base_url: str
    _session: aiohttp.ClientSession | None

    async def complete(self, request: Request, ctx: CallContext) -> Completion:
        """A partial assistant turn is continued exactly: the chat template is applied with
        its generation prompt and the prefix appended, then sent as a raw completion. A base
        model's request with an `answer_end` goes the completion path and stops there."""
        prefill = await self._checkpoint(request) if await self._warm_slot(request) else None
        if request.answer_end and "base" in self.capabilities and not (
                request.logprobs or request.constrain):
            comp = await self._complete_to_answer_end(request)
        else:
            msgs = request.messages
            if request.continue_final and msgs and msgs[-1].get("role") == "assistant":
                head = (await self._post_root("/apply-template",
                                              {"messages": msgs[:-1]}))["prompt"]
                request = replace(request, messages=None, prompt=head + msgs[-1]["content"],
                                  continue_final=False)
            comp = await super().complete(request, ctx)  # type: ignore[misc]
        if self.slot_pool is not None and request.slot is not None:
            self.slot_pool.replied(request.slot, comp.completion_tokens)
        if prefill is not None:  # its prefill is this reply's (the reply then reads it)
            comp.requests += prefill.requests
            comp.prompt_tokens += prefill.prompt_tokens
            comp.cached_prompt_tokens += prefill.cached_prompt_tokens
            comp.completion_tokens += prefill.completion_tokens
            comp.latency += prefill.latency
        return comp

    async def _checkpoint(self, request: Request) -> Completion | None:
        """Before a group's first request on this server: prefill its prompt alone (llama.cpp
        evaluates the prompt, samples one token it does not keep) and save the slot as the
        group's checkpoint (see `models.slots`), so later items restore exactly the prompt,
        however long this reply turns out. Its cost, or None when the server refused."""
        pool, slot = self.slot_pool, request.slot
        if pool is None or slot is None or self.__dict__.get("_no_slot_copies"):
            return None
        cost = Completion("", requests=1)
        try:
            body = {"prompt": await self._rendered(request), "n_predict": 0,
                    "temperature": 0.0, "cache_prompt": True, "id_slot": slot}
            t0 = time.perf_counter()
            out = await self._post_root("/completion", body)
            cost.latency = time.perf_counter() - t0
            cost.completion_tokens = counted(cost, out)
            await self._post_root(f"/slots/{slot}?action=save",
                                  {"filename": pool.checkpoint(slot)})
        except Exception:  # noqa: BLE001 - only a shortcut, as copies are
            self.__dict__["_no_slot_copies"] = True
        return cost

    async def _warm_slot(self, request: Request) -> bool:
        """Before an item's first request on a slot, copy into it the KV of the slot that
        shares most of its prompt (llama.cpp's slot save and restore: tens of ms where
        prefilling takes seconds), so a prefix shared across slots (a group's excerpt, the
        chats' system prompt) is prefilled once; across servers too when they share a slot
        folder (the source's server saves, this one restores). A server without a slot
        folder refuses: it then prefills, as before. True: the slot is to leave its group's
        checkpoint once it has answered (`SlotPool.wants_checkpoint`)."""
        pool, slot = self.slot_pool, request.slot
        if slot is None or pool is None:
            return False
        parts = prompt_parts(request)
        checkpoint = pool.wants_checkpoint(slot)
        found = pool.copy_source(slot, parts)
        pool.served(slot, parts)
        if found is None or self.__dict__.get("_no_slot_copies"):
            return checkpoint
        src_pool, src = found
        source = src_pool.server if src_pool.server is not None else self
        try:
            if src < 0:  # a checkpoint: its file is there already
                name = src_pool.file(src)
            else:
                name = pool.file(slot)  # one file per target slot, overwritten
                await source._post_root(f"/slots/{src}?action=save", {"filename": name})
            await self._post_root(f"/slots/{slot}?action=restore", {"filename": name})
        except Exception:  # noqa: BLE001 - only a shortcut; the slot then prefills
            self.__dict__["_no_slot_copies"] = True
        return checkpoint

    async def _rendered(self, request: Request) -> str:
        """The prompt text the server would build for `request` (its chat template applied)."""
        msgs = request.messages
        if msgs is None:
            return request.prompt or ""
        if request.continue_final and msgs and msgs[-1].get("role") == "assistant":
            head = await self._post_root("/apply-template", {"messages": msgs[:-1]})
            return head["prompt"] + msgs[-1]["content"]
        return (await self._post_root("/apply-template", {"messages": msgs}))["prompt"]

    async def _complete_to_answer_end(self, request: Request) -> Completion:
        """Generate until the reply has passed every stage of `answer_end` in order, each
        ending at one of its stop strings after some non-blank text of its own, the last one
        once the reply matches `answer_pattern` (llama.cpp's `stop`; the stopping word is put
        back: it is the model's text). A stop that does not end its stage continues the same
        reply on the same slot, its prefix cached, so the text is what one long generation
        would have written, cut at the answer's end (see `answer_stage`). The request's own
        `stop` strings end the reply wherever they come, left out of it as a stop is."""
        stages = request.answer_end or ()
        final = list(request.stop or ())
        pattern = re.compile(request.answer_pattern) if request.answer_pattern else None
        prompt = await self._rendered(request)
        text, stage, stage_start = "", 0, 0
        out: dict[str, Any] = {}
        comp = Completion("", finish_reason="length", requests=0)
        left = request.max_tokens
        while left > 0:
            body: dict[str, Any] = {"prompt": prompt + text, "n_predict": left,
                                    "temperature": request.temperature,
                                    "stop": [*stages[stage], *final], "cache_prompt": True}
            if request.seed is not None:
                body["seed"] = request.seed
            if request.slot is not None:
                body["id_slot"] = request.slot
            t0 = time.perf_counter()
            out = await self._post_root("/completion", body)
            comp.latency += time.perf_counter() - t0
            comp.requests += 1
            made = counted(comp, out)
            comp.completion_tokens += made
            left -= max(1, made)
            text += str(out.get("content") or "")
            word = out.get("stopping_word")
            if out.get("stop_type") != "word" or (word in final and word not in stages[stage]):
                comp.finish_reason = "length" if out.get("stop_type") == "limit" else "stop"
                break
            text += str(word or stages[stage][0])
            stage, stage_start = answer_stage(text, stages, stage, stage_start, pattern)
            if stage == len(stages):
                comp.finish_reason = "stop"
                break
        comp.text, comp.raw = text, out
        return comp

    async def score_choices(self, request: Request, candidates: list[str],
                            ctx: CallContext) -> ChoiceScores:
        """Log-probabilities of each candidate's canonical tokens continuing the prompt, as
        lm-evaluation-harness computes them: every token is forced with a logit bias while the
        server reports its log-prob under the model's unbiased distribution. One request per
        candidate token; the conversation's slot keeps the shared prompt cached."""
        await self._warm_slot(request)
        prompt = await self._rendered(request)
        first: list[float | None] = []
        full: list[float | None] = []
        top: dict[str, float] | None = None
        cost = Completion("")
        requests = 0
        for cand in candidates:
            ids = await self._candidate_tokens(cand)
            total = 0.0
            for k, tid in enumerate(ids):
                body: dict[str, Any] = {
                    "prompt": [prompt, *ids[:k]], "n_predict": 1, "temperature": 0.0,
                    "n_probs": 20 if top is None else 1, "logit_bias": [[tid, 1000.0]],
                    "cache_prompt": True}
                if request.slot is not None:
                    body["id_slot"] = request.slot
                t0 = time.perf_counter()
                out = await self._post_root("/completion", body)
                cost.latency += time.perf_counter() - t0
                requests += 1
                counted(cost, out)
                cost.completion_tokens += 1
                probs = out.get("completion_probabilities") or [{}]
                lp = float(probs[0].get("logprob", float("-inf")))
                if k == 0:
                    first.append(lp)
                    if top is None:
                        top = {t.get("token", ""): float(t["logprob"])
                               for t in probs[0].get("top_logprobs") or []}
                total += lp
            if not ids:
                first.append(None)
            full.append(total if ids else None)
        return ChoiceScores(list(candidates), first, full, top,
                            "llama.cpp forced canonical tokens (logit bias)", requests, cost)

    async def _candidate_tokens(self, text: str) -> list[int]:
        memo: dict[str, list[int]] = self.__dict__.setdefault("_token_memo", {})
        if text not in memo:
            out = await self._post_root("/tokenize", {"content": text, "add_special": False})
            memo[text] = [int(t) for t in out.get("tokens") or []]
        return memo[text]

