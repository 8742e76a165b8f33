"""Whether a llama.cpp server has `POST /apply-template`, asked once when a client starts.

llama.cpp serves it since January 2025 (PR 11489); older builds, some forks and proxies of /v1
and /completion only do not. A client that declared "template" (the chat template as text) for
such a server would fail every request that needs it, so it asks first: a 404 or 405, or a 200
without a prompt, is a no; a network error or any other answer says nothing (what an earlier
answer said holds, and the requests will tell). Without it the client drops "template" and
"prefix": llama.cpp's exact continuation of an answer prefix renders through the endpoint, and
llama.cpp continues a final assistant turn on /v1/chat/completions only since PR 13174 (spring
2025), later than the endpoint. Benchmarks then take the path they take for any chat API, and
the run says so in one line (`note`).
"""

from __future__ import annotations

from typing import Any

#: What a llama.cpp client offers only through `POST /apply-template`.
TEMPLATED = frozenset({"template", "prefix"})
PATH = "/apply-template"
#: The cheapest question: one short user message.
PROBE = {"messages": [{"role": "user", "content": "?"}]}
#: How tokens are counted by a server's tokenizer without its chat template.
UNTEMPLATED_COUNT = ("llama.cpp tokenizer of the server on the messages' text, its chat "
                     "template's own tokens not counted (no /apply-template)")


def answer_says(status: int | None, payload: Any) -> bool | None:
    """True: the server has the endpoint; False: it has not; None: its answer (`status`
    None: none came) says nothing."""
    if status == 200 and isinstance(payload, dict) and isinstance(payload.get("prompt"), str):
        return True
    return False if status in (200, 404, 405) else None


def why_not(status: int | None) -> str:
    """Why a capability was dropped, as the manifest records it."""
    return f"the server has no POST {PATH} (HTTP {status}" + (
        " without a prompt)" if status == 200 else ")")


def note(status: int | None, lost: list[str]) -> str:
    """The one line a run shows, with `{where}` for the server(s) (a pool names them all)."""
    return (f"no POST {PATH} at the llama.cpp server {{where}} (HTTP {status}), so its chat "
            "template cannot be read: benchmarks that send the exact templated prompt or "
            "continue an answer prefix (SORT) send plain messages to /v1/chat/completions "
            f"instead, their path for chat APIs (capabilities dropped: {', '.join(lost)}; "
            "recorded in the manifest)")
