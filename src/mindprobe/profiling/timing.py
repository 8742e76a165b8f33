"""How long a profile will take on an engine of our own, from its measured speed.

The plan already knows each benchmark's expected requests, prefill tokens (prefix reuse
counted) and reply tokens. Where the model is the in-process llama.cpp engine, two short
requests measure this machine now: its prefill and generation speeds (llama.cpp's own
`timings`) and the time a request costs besides them (HTTP, sampling, scheduling). The
estimate is then prefill / prefill speed + reply / generation speed + requests × overhead,
one request at a time (the engine's default); `bench/profile_time.py` checks it against
real runs. A server's speed depends on what else it serves: no estimate is given for one.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from mindprobe.core.model import Model, TransientError

#: About 600 tokens of plain prose: long enough that prefill dominates its own timing.
_PROMPT = " ".join(["The river ran past the old mill, and the miller counted the sacks."] * 40)
_REPLY = 32


@dataclass(frozen=True)
class EngineSpeed:
    prefill_per_s: float
    generate_per_s: float
    overhead_s: float  #: per request, besides prefill and generation

    def seconds(self, prefill: int, completion: int, requests: int) -> float:
        return (prefill / self.prefill_per_s + completion / self.generate_per_s
                + requests * self.overhead_s)

    def describe(self) -> str:
        return (f"measured now on this machine's engine: prefill {self.prefill_per_s:,.0f} "
                f"tokens/s, generation {self.generate_per_s:,.1f} tokens/s, "
                f"{self.overhead_s * 1000:,.0f} ms per request besides, one request at a time")


async def engine_speed(model: Model, concurrency: int) -> EngineSpeed | None:
    """The engine's speed by two requests (nothing recorded, no cache), or None where it is
    not an engine of ours run one request at a time, or it answers without timings."""
    post = getattr(model, "_post_root", None)
    if not model.heavy_start or concurrency != 1 or post is None:
        return None
    try:
        t0 = time.perf_counter()
        short = await post("/completion", {"prompt": "Hello", "n_predict": 1,
                                            "temperature": 0.0, "cache_prompt": False})
        wall = time.perf_counter() - t0
        long = await post("/completion", {"prompt": _PROMPT, "n_predict": _REPLY,
                                           "temperature": 0.0, "cache_prompt": False,
                                           "ignore_eos": True})
    except TransientError:
        return None
    return _speed(short, wall, long)


def _speed(short: dict[str, Any], wall: float, long: dict[str, Any]) -> EngineSpeed | None:
    st, lt = short.get("timings") or {}, long.get("timings") or {}
    pp, tg = lt.get("prompt_per_second"), lt.get("predicted_per_second")
    if not (isinstance(pp, int | float) and isinstance(tg, int | float) and pp > 0 and tg > 0):
        return None
    inside = (float(st.get("prompt_ms") or 0) + float(st.get("predicted_ms") or 0)) / 1000
    return EngineSpeed(float(pp), float(tg), max(0.0, wall - inside))


def expected_seconds(speed: EngineSpeed, estimate: dict[str, Any]) -> float | None:
    """A plan entry's expected time from its expected prefill, reply tokens and requests."""
    prefill = estimate.get("expected_prefill_tokens", estimate.get("prefill_tokens"))
    reply = estimate.get("expected_completion_tokens", estimate.get("completion_tokens"))
    requests = estimate.get("expected_requests", estimate.get("requests",
                                                               estimate.get("turns")))
    if prefill is None or reply is None or requests is None:
        return None
    return speed.seconds(int(prefill), int(reply), int(requests))
