"""The OpenAI-compatible exchange as data, apart from the client's transport and retries: a
Request as the endpoint path and JSON body a server takes, and a 200 reply as a Completion."""

from __future__ import annotations

from typing import Any

from mindprobe.core.model import Completion, Request, split_reasoning
from mindprobe.models.replies import ReplyTally, an_object, reply_text, reply_usage
from mindprobe.models.wire import gbnf_choice, json_schema_choice, parse_logprobs


def request_body(request: Request, model: str, *, grammar: str | None,
                 reasoning_effort: str | None, openai: bool, slots: bool
                 ) -> tuple[str, dict[str, Any]]:
    """A Request as (endpoint path, JSON body) for a server of this `grammar` mechanism
    (`openai`: OpenAI itself; `slots`: llama.cpp KV slots are used)."""
    body: dict[str, Any] = {
        "model": model,
        "max_tokens": request.max_tokens,
        "temperature": request.temperature,
    }
    effort = request.reasoning_effort or reasoning_effort
    if effort:
        body["reasoning_effort"] = effort
        if openai:
            # OpenAI's reasoning models refuse `max_tokens` (the cap covers the thinking
            # too, as `max_completion_tokens`) and any temperature but the default.
            body["max_completion_tokens"] = body.pop("max_tokens")
            body.pop("temperature")
    if request.prompt is not None:
        path = "/completions"
        body["prompt"] = request.prompt
        if request.logprobs:
            body["logprobs"] = request.logprobs
    else:
        path = "/chat/completions"
        body["messages"] = request.messages
        if request.logprobs:
            body["logprobs"] = True
            body["top_logprobs"] = request.logprobs
    if request.stop:
        body["stop"] = request.stop
    if request.seed is not None:
        body["seed"] = request.seed
    if request.constrain and request.choices:
        if grammar == "llama":
            body["grammar"] = gbnf_choice(request.choices)
        elif grammar == "vllm":
            body["guided_choice"] = request.choices
        elif grammar == "openai":
            body["response_format"] = json_schema_choice(request.choices)
    if request.continue_final and grammar == "vllm":
        body["continue_final_message"] = True
        body["add_generation_prompt"] = False
    if request.slot is not None and slots:
        body["id_slot"] = request.slot
        body["cache_prompt"] = True
    if request.extra:
        body.update(request.extra)
    return path, body


def completion_of(payload: dict[str, Any], path: str, latency: float, tally: ReplyTally
                  ) -> Completion:
    """A 200 reply as a Completion: every legal form of content (`models.replies`), usage
    checked; what the run should hear about is tallied in `tally`."""
    choice = an_object(payload["choices"][0], "choices[0]")
    parsed = None
    if path == "/completions":
        got = reply_text(choice["text"])
    else:
        message = an_object(choice["message"], "message")
        got = reply_text(message.get("content"))
        # vLLM / llama.cpp / SGLang reasoning parsers (`reasoning` in newer vLLM).
        parsed = message.get("reasoning_content") or message.get("reasoning")
        if not isinstance(parsed, str):
            parsed = None
    think, text, unclosed = split_reasoning(got.text)
    parts = [p for p in (parsed, think) if p]
    reasoning = "\n".join(parts) if parts else (
        "" if parsed is not None or think is not None else None)
    finish = choice.get("finish_reason")
    # Cut off while thinking: an unclosed <think>, or a parser's reasoning with no answer.
    truncated = finish == "length" and (unclosed or (reasoning is not None
                                                     and not text.strip()))
    usage = reply_usage(payload)
    tally.saw(got, usage)
    return Completion(
        text=text,
        prompt_tokens=usage.prompt_tokens,
        cached_prompt_tokens=usage.cached_prompt_tokens,
        completion_tokens=usage.completion_tokens,
        latency=latency,
        finish_reason=finish if isinstance(finish, str) else None,
        logprobs=parse_logprobs(choice.get("logprobs")),
        raw=payload,
        reasoning=reasoning,
        reasoning_tokens=usage.reasoning_tokens,
        truncated_in_reasoning=truncated,
        invalid=got.invalid,
    )
