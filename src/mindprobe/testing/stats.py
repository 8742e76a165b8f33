"""The test server's counters (GET /stats), shared by every handler that serves a request."""

from __future__ import annotations

from typing import Any

from mindprobe.testing.faults import FAULT_KINDS
from mindprobe.testing.protocol import CHAT_PATH, COMPLETIONS_PATH, MODELS_PATH


class Stats:
    """Counters behind GET /stats; only touched from the server's event loop."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> dict[str, Any]:
        self.requests = dict.fromkeys((CHAT_PATH, COMPLETIONS_PATH, MODELS_PATH), 0)
        self.faults = dict.fromkeys(FAULT_KINDS, 0)
        self.rejected: dict[str, int] = {}
        self.served_ok = 0
        self.prompt_tokens = 0
        self.cached_prompt_tokens = 0
        #: Every distinct Authorization header and query string requests came with (tests
        #: check that credentials kept off disk still reach the server).
        self.credentials: set[str] = set()
        self.log: list[dict[str, Any]] | None = [] if getattr(self, "log", None) is not None \
            else None
        return self.snapshot()

    def reject(self, status: int) -> None:
        self.rejected[str(status)] = self.rejected.get(str(status), 0) + 1

    def snapshot(self) -> dict[str, Any]:
        return {
            "requests": dict(self.requests),
            "requests_total": sum(self.requests.values()),
            "faults": dict(self.faults),
            "faults_total": sum(self.faults.values()),
            "rejected": dict(self.rejected),
            "served_ok": self.served_ok,
            "prompt_tokens": self.prompt_tokens,
            "cached_prompt_tokens": self.cached_prompt_tokens,
            "credentials": sorted(self.credentials),
            **({"log": [dict(e) for e in self.log]} if self.log is not None else {}),
        }
