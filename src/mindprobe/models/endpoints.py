"""The endpoints of one model: where they come from (`--endpoints FILE`, `openai:M@U1,U2`, Ray
replicas), and how healthy each one is (cooldown with exponential backoff, then a probe).

An endpoints file has one endpoint per line, options after the URL, `#` starts a comment::

    # vLLM data-parallel ranks on two hosts
    group = llama-70b-fp8
    http://gpu1:8000/v1  concurrency=64  key_env=VLLM_KEY
    http://gpu2:8000/v1  concurrency=64  key_env=VLLM_KEY
    gpu3:8000                                   # http:// and /v1 are added

`concurrency=N` caps the items in flight on that endpoint (and weights the spread), `key_env=VAR`
names the environment variable holding its API key (default `MINDPROBE_API_KEY`). `group = NAME`
names the deployment: it is part of the cache key and the run directory, the URLs are not, so
endpoints can be added or removed between runs and resumes.
"""

from __future__ import annotations

import os
import random
import re
from dataclasses import dataclass, field
from pathlib import Path

from mindprobe.core.inputs import read_input
from mindprobe.core.retry import backoff_delay
from mindprobe.core.secrets import UrlCredentials, redact, remember, split_credentials
from mindprobe.errors import ModelError, UsageError

#: The group of endpoints given without a name (inline URL lists, files without `group =`).
DEFAULT_GROUP = "openai-compatible"
_GROUP_RE = re.compile(r"^group\s*=\s*(\S+)$")
_NAME_RE = re.compile(r"^[A-Za-z0-9._+-]+$")
_ENV_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass
class EndpointSpec:
    """One server of a model: its base URL (`.../v1`), optional cap and key; `source` says where
    it was declared (`file:line`) for messages."""

    url: str
    concurrency: int | None = None
    key_env: str | None = None
    key: str | None = field(default=None, repr=False)
    #: What the URL carried besides the address (userinfo, query): sent, never shown.
    credentials: UrlCredentials = field(default_factory=UrlCredentials, repr=False)
    source: str = ""
    #: llama.cpp servers take `id_slot`: one KV slot per live conversation (Ray replicas).
    llama_slots: bool = False
    #: The folder a llama.cpp server saves slots into, when it shares it with others (several
    #: servers on one machine): their slots can be restored from each other's files.
    slot_dir: str | None = None


def _endpoint(url: str, where: str) -> EndpointSpec:
    """The endpoint at `url`, its address shown and its credentials kept apart."""
    from mindprobe.models.wire import normalise_base_url

    if "://" not in url:
        url = "http://" + url
    try:
        normalise_base_url(url)  # a malformed URL (`http://[::1`) before it is taken apart
        address, credentials = split_credentials(url)
        return EndpointSpec(normalise_base_url(address), credentials=credentials, source=where)
    except ModelError as exc:
        raise UsageError(f"{where}: {redact(str(exc))}") from None


def parse_endpoint_list(text: str, *, what: str = "the model spec") -> list[EndpointSpec]:
    """`URL1,URL2,...` (from `openai:MODEL@URL1,URL2`): keys from MINDPROBE_API_KEY."""
    what = redact(what)  # it names the endpoints in messages and the manifest
    urls = [u.strip() for u in text.split(",")]
    if any(not u for u in urls):
        raise UsageError(f"{what}: empty URL in the endpoint list {text!r}")
    specs = [_endpoint(u, f"{what} #{i + 1}") for i, u in enumerate(urls)]
    _check_unique(specs)
    return [_with_key(s) for s in specs]


def parse_endpoints_file(path: str | Path) -> tuple[list[EndpointSpec], str | None]:
    """(endpoints, group name or None) of an endpoints file; a bad line is a UsageError that
    names the file and the line number."""
    path = Path(path).expanduser()
    try:
        text = read_input(path, "--endpoints", "endpoints file").decode("utf-8")
    except UnicodeDecodeError:
        raise UsageError(f"the endpoints file {path} is not UTF-8 text") from None
    specs: list[EndpointSpec] = []
    group: str | None = None
    for n, raw in enumerate(text.splitlines(), 1):
        where = f"{path} line {n}"
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        m = _GROUP_RE.match(line)
        if m:
            if group is not None:
                raise UsageError(f"{where}: the group is named twice ({group!r} before)")
            if not _NAME_RE.match(m.group(1)):
                raise UsageError(f"{where}: a group name is letters, digits and ._+- only; "
                                 f"got {m.group(1)!r}")
            group = m.group(1)
            continue
        url, *options = line.split()
        if "=" in url.partition("?")[0]:  # an option where the URL belongs (a query may hold =)
            raise UsageError(f"{where}: expected a URL first (e.g. http://host:8000/v1 "
                             f"concurrency=8 key_env=VLLM_KEY), got {raw.strip()!r}")
        spec = _endpoint(url, where)
        for opt in options:
            key, sep, value = opt.partition("=")
            if not sep or not value:
                raise UsageError(f"{where}: expected KEY=VALUE after the URL, got {opt!r}")
            if key == "concurrency":
                if not value.isdigit() or int(value) < 1:
                    raise UsageError(f"{where}: concurrency must be a positive integer, "
                                     f"got {value!r}")
                spec.concurrency = int(value)
            elif key == "key_env":
                if not _ENV_RE.match(value):
                    raise UsageError(f"{where}: key_env must name an environment variable, "
                                     f"got {value!r}")
                spec.key_env = value
            else:
                raise UsageError(f"{where}: unknown option {key!r} (known: concurrency, "
                                 "key_env)")
        specs.append(spec)
    if not specs:
        raise UsageError(f"the endpoints file {path} lists no endpoints (one URL per line)")
    _check_unique(specs)
    return [_with_key(s) for s in specs], group


def _check_unique(specs: list[EndpointSpec]) -> None:
    seen: dict[str, str] = {}
    for s in specs:
        if s.url in seen:
            raise UsageError(f"{s.source}: {s.url} is listed twice (first at {seen[s.url]})")
        seen[s.url] = s.source


def _with_key(spec: EndpointSpec) -> EndpointSpec:
    env = spec.key_env or "MINDPROBE_API_KEY"
    spec.key = os.environ.get(env)
    remember(spec.key)
    if spec.key_env and not spec.key:
        raise UsageError(f"{spec.source}: key_env={spec.key_env} but ${spec.key_env} is not set")
    return spec


# -- health ---------------------------------------------------------------------------------
#: Failures that say something about the endpoint rather than the request.
ENDPOINT_FAULTS = ("refused", "dropped", "timeout", "server")


class Health:
    """Up, or cooling down until `until` (then probed). A refused connection takes an endpoint
    out at once; timeouts, dropped connections and 5xx after `threshold` in a row (any success
    resets the count). Each cooldown is twice the last (jittered, capped), reset by a probe or
    request that succeeds."""

    def __init__(self, *, threshold: int = 3, base: float = 1.0, cap: float = 60.0,
                 rng: random.Random | None = None) -> None:
        self.threshold = threshold
        self.base = base
        self.cap = cap
        self.up = True
        self.streak = 0
        self.cooldowns = 0  # cooldowns in a row (backoff exponent)
        self.downs = 0  # times taken out of rotation (for the summary)
        self.until = 0.0
        self.reason = ""
        self._rng = rng or random.Random()

    def ok(self) -> None:
        self.streak = 0
        if self.up:
            self.cooldowns = 0

    def failure(self, kind: str, reason: str, now: float) -> bool:
        """Note a failed request; True when this takes the endpoint out of rotation."""
        if kind not in ENDPOINT_FAULTS or not self.up:
            return False
        self.streak += 1
        if kind == "refused" or self.streak >= self.threshold:
            self.down(reason, now)
            return True
        return False

    def down(self, reason: str, now: float) -> None:
        self.up = False
        self.downs += 1
        self.reason = reason
        self._cool(now)

    def probe_failed(self, reason: str, now: float) -> None:
        self.reason = reason
        self._cool(now)

    def back(self) -> None:
        self.up = True
        self.streak = 0
        self.cooldowns = 0

    def _cool(self, now: float) -> None:
        wait = backoff_delay(self._rng, self.cooldowns, self.base, self.cap, jitter=0.25)
        self.cooldowns += 1
        self.until = now + wait

    @property
    def state(self) -> str:
        return "up" if self.up else "down"


def spread(n_items: int, weights: list[float]) -> list[int]:
    """How least-loaded routing spreads `n_items` items of equal cost over endpoints of these
    capacities (each next item to the endpoint with the fewest items per unit of capacity)."""
    counts = [0] * len(weights)
    for _ in range(n_items):
        i = min(range(len(weights)), key=lambda j: ((counts[j] + 1) / weights[j], j))
        counts[i] += 1
    return counts
