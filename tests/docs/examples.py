"""The fenced examples of README.md and docs/: found, classified and run as a reader would.

Every ```bash and ```python block is run, page by page, in one shell per page (so a `cd`, a
`source .venv/bin/activate` or a file written by one block holds for the next), in a fresh
folder beside a `shared` link to ../shared, so `../shared/data/...` reads as it does from the
repository root. An HTML comment on the line before a block says more:

- `<!-- example: needs internet -->` (or `gpu-server`, `api-key`, several joined by commas): not
  run; listed by the manual's examples page, and its `mindprobe` commands are still parsed by
  the CLI's own parser so that none rots silently;
- `<!-- example: ci -->`: the install and test commands, which `.ci/run` runs itself (checked);
- `<!-- example: background -->`: a server, started in the background; the next blocks run once
  its port answers;
- `<!-- example: setup ... -->`: hidden set-up, run before the block.

A block whose info string has `title="PATH"` is a file: it is written to PATH before the page's
blocks run. A ```text block right after a run block is what it prints: its first line must be in
the block's output. Port 8000 in a page stands for a free port picked for the run.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

RUN_LANGS = ("bash", "python")
NEEDS = ("internet", "gpu-server", "api-key")
FENCE = re.compile(r"^(?P<indent> *)(?P<fence>`{3,}|~{3,})(?P<lang>[\w+-]*)(?P<info>.*)$")
DIRECTIVE = re.compile(r"<!--\s*example:\s*(?P<kind>[\w-]+)(?P<rest>.*?)-->", re.S)


@dataclass
class Block:
    page: str
    line: int
    lang: str
    info: str
    code: str
    kind: str = ""
    arg: str = ""
    output: str | None = None  #: the ```text block shown after it, if any
    needs: list[str] = field(default_factory=list)

    @property
    def title(self) -> str | None:
        m = re.search(r'title="([^"]+)"', self.info)
        return m.group(1) if m else None

    @property
    def runs(self) -> bool:
        """Run by the examples test (set-up and background servers included)."""
        return (self.lang in RUN_LANGS and not self.title and not self.needs
                and self.kind != "ci")

    def where(self) -> str:
        return f"{self.page}:{self.line}"


def pages(root: Path) -> list[Path]:
    docs = sorted(p for p in (root / "docs").rglob("*.md") if not p.name.startswith("_from_"))
    return [root / "README.md", *docs]


def parse(text: str, page: str) -> list[Block]:
    lines = text.splitlines()
    blocks: list[Block] = []
    i = 0
    last: Block | None = None
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            if lines[i].strip() and not lines[i].strip().startswith("<!--"):
                last = None
            i += 1
            continue
        start, fence, indent = i, m.group("fence"), len(m.group("indent"))
        i += 1
        body = []
        while i < len(lines) and not (lines[i].strip().startswith(fence)
                                      and not lines[i].strip()[len(fence):].strip()):
            body.append(lines[i][indent:] if lines[i][:indent].isspace() else lines[i])
            i += 1
        i += 1
        block = Block(page, start + 1, m.group("lang"), m.group("info").strip(),
                      "\n".join(body) + "\n")
        head = "\n".join(lines[max(0, start - 12):start]).rstrip()
        found = list(DIRECTIVE.finditer(head))
        d = found[-1] if found else None
        if d and head.endswith("-->") and head[d.end():].strip() == "":
            block.kind, block.arg = d.group("kind"), d.group("rest").strip()
            if block.kind == "needs":
                block.needs = [n.strip() for n in block.arg.split(",") if n.strip()]
                unknown = set(block.needs) - set(NEEDS)
                if unknown or not block.needs:
                    raise ValueError(f"{block.where()}: needs {block.arg!r}: say one of {NEEDS}")
        if block.lang in ("text", "console") and last is not None and last.runs:
            last.output = block.code
            last = None
            continue
        blocks.append(block)
        last = block
    return blocks


def collect(root: Path) -> list[Block]:
    out: list[Block] = []
    for path in pages(root):
        out += parse(path.read_text(), str(path.relative_to(root)))
    return out
