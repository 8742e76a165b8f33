"""A report names no absolute path of the machine that made it: a page is shared, and the
folders it was made in are nobody else's. Run folders are shown from their runs folder on
(`runs/<benchmark>/…`), the working directory as `.`, the data cache as `<data cache>`,
the home as `~`, and any other local folder a run read (its data, named in its manifest) as
`<local>/<folder>`. Published results cite `owner/repo@commit:path`, never a copy's path."""

from __future__ import annotations

import contextlib
import os
import re
import shlex
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from mindprobe.core.paths import cache_dir, data_root


def _strings(v: Any) -> Iterable[str]:
    if isinstance(v, str):
        yield v
        if " " in v:
            with contextlib.suppress(ValueError):
                yield from shlex.split(v)
    elif isinstance(v, dict):
        for x in v.values():
            yield from _strings(x)
    elif isinstance(v, (list, tuple)):
        for x in v:
            yield from _strings(x)


def _absolute(text: str) -> Path | None:
    if not text.startswith("/") and not re.match(r"^[A-Za-z]:[\\/]", text):
        return None
    p = Path(text.split("=", 1)[-1] if text.startswith("--") else text)
    return p if p.exists() else None


def prefixes(run_dirs: Iterable[Path], manifests: Iterable[dict[str, Any]],
             others: Iterable[Path] = ()) -> list[tuple[str, str]]:
    """(local prefix, what the page shows instead), longest first. `manifests`: the runs'."""
    out: dict[str, str] = {}
    manifests = list(manifests)
    for d, m in zip(run_dirs, manifests, strict=False):
        d = Path(d).absolute()
        # <runs>/<benchmark>/…/<run>: the page shows the runs folder's name onwards
        bench = next((p for p in d.parents if p.name == m.get("benchmark")), d.parent)
        out.setdefault(str(bench.parent.parent), "")
    local = [*others]
    for m in manifests:
        for s in _strings(m):
            p = _absolute(s)
            if p is not None:
                local.append(p if p.is_dir() else p.parent)
    for p in local:
        p = Path(p).absolute()
        out.setdefault(str(p.parent), "<local>")
    out[str(data_root())] = "<data cache>"
    out[str(cache_dir())] = "<cache>"
    out[os.getcwd()] = "."
    out[str(Path.home())] = "~"
    return sorted(((k, v) for k, v in out.items() if len(k) > 1), key=lambda kv: -len(kv[0]))


def scrub(text: str, pairs: list[tuple[str, str]]) -> str:
    """`text` with every local prefix replaced (a prefix only where a path component ends)."""
    for prefix, shown in pairs:
        pattern = r"(?<![\w./-])" + re.escape(prefix) + r"(?![\w.+-])(/?)"
        text = re.sub(pattern, lambda m, s=shown: (s + m.group(1)) if s else "", text)
    return text
