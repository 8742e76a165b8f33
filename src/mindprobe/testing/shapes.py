"""The test server as odd and hostile servers answer: every legal form of a chat reply's
content (a list of parts, null beside the reasoning), forms no server should send (an
integer, an object), usage fields of any value, and a context window it enforces."""

from __future__ import annotations

from typing import Any

#: `ServerConfig.content_form` values: how the reply text is put into `message.content`.
CONTENT_FORMS = ("string", "parts", "null", "integer", "object")


def shape_content(message: dict[str, Any], form: str) -> None:
    """Put `message`'s text in `form`: `parts` splits it into two text parts around an image
    part (the client must join the text in order and ignore the image), `null` sends it as
    `reasoning_content` only, `integer` and `object` send what no client can read as text."""
    text = message.get("content") or ""
    if form == "parts":
        half = len(text) // 2
        message["content"] = [{"type": "text", "text": text[:half]},
                              {"type": "image_url", "image_url": {"url": "data:,"}},
                              {"type": "text", "text": text[half:]}]
    elif form == "null":
        message["content"], message["reasoning_content"] = None, text
    elif form == "integer":
        message["content"] = 42
    elif form == "object":
        message["content"] = {"text": text}
    elif form != "string":
        raise ValueError(f"content_form {form!r}: expected one of {', '.join(CONTENT_FORMS)}")


def window_error(prompt_tokens: int, max_tokens: int | None, n_ctx: int | None
                 ) -> str | None:
    """What a server with a context window of `n_ctx` says to a request that cannot fit it
    (vLLM's wording), or None when it fits."""
    need = prompt_tokens + (max_tokens or 0)
    if n_ctx is None or need <= n_ctx:
        return None
    return (f"This model's maximum context length is {n_ctx} tokens. However, you requested "
            f"{need} tokens ({prompt_tokens} in the messages, {max_tokens or 0} in the "
            "completion). Please reduce the length of the messages or completion.")
