"""Token estimates of single-request items without a model (`run --dry-run`, the profile plan).

Tokens are counted as ~4 characters each (plus a few per message for the chat template);
prefix reuse is measured on the prompts in run order: what a prompt shares with the one before
it (a Book-SORT excerpt asked about again, the same instructions) is not prefilled again.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any

#: Chat-template tokens per message (role markers, separators), roughly.
PER_MESSAGE = 4


def text_tokens(text: str) -> int:
    return max(1, len(text) // 4) if text else 0


def prompt_text(messages: list[dict[str, Any]]) -> str:
    return "\n".join(str(m.get("content") or "") for m in messages)


def single_request_estimate(prompts: Iterable[list[dict[str, Any]]], completion_expected: float,
                            completion_max: int, requests_per_item: int = 1,
                            note: str = "") -> dict[str, Any]:
    """Totals over items of one request each, expected; the bound allows `requests_per_item`
    (re-asks of an invalid answer, each re-sending the prompt) and full-length replies."""
    prompt = prefill = n = 0
    previous = ""
    for messages in prompts:
        text = prompt_text(messages)
        tokens = text_tokens(text) + PER_MESSAGE * len(messages)
        shared = text_tokens(os.path.commonprefix([previous, text])) if previous else 0
        prompt += tokens
        prefill += tokens - shared
        previous = text
        n += 1
    requests = n * requests_per_item
    again = (requests_per_item - 1) * completion_max  # a re-ask re-sends the reply too
    return {"requests": requests, "prompt_tokens": prompt * requests_per_item + n * again,
            "prefill_tokens": prefill + n * again,
            "completion_tokens": requests * completion_max,
            "expected_completion_tokens": round(n * min(completion_expected,
                                                        completion_max)),
            "expected_prompt_tokens": prompt, "expected_prefill_tokens": prefill,
            "expected_requests": n, "note": note}


def estimate_results(name: str, est: dict[str, Any]) -> Any:
    """The estimate as Results (its `detail["estimate"]` is what dry runs read)."""
    import pandas as pd

    from mindprobe.core.results import Results

    res = Results(name, detail={"estimate": est})
    res.add_table("estimate", pd.DataFrame([{k: v for k, v in est.items() if k != "note"}]),
                  f"estimate ({est.get('note') or '~4 characters per token'})", index=False)
    return res
