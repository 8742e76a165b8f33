"""Examples are tests: every runnable block of README.md and docs/ runs here (see examples.py
for the conventions); the others say what they need, and their commands still parse."""

from __future__ import annotations

import os
import re
import shlex
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from examples import NEEDS, Block, collect, pages, parse

from mindprobe.cli import build_parser
from mindprobe.errors import MindprobeError

ROOT = Path(__file__).resolve().parents[2]
SHARED = Path(os.environ.get("MINDPROBE_SHARED_DATA", ROOT.parent / "shared" / "data")).parent
BLOCKS = collect(ROOT)
PAGES = sorted({b.page for b in BLOCKS if b.runs})
BEGIN, END = "@@example-begin", "@@example-end"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_for_port(port: int) -> str:
    return (f'{shlex.quote(sys.executable)} -c "import socket,time\n'
            f'for _ in range(300):\n'
            f'    try: socket.create_connection((\'127.0.0.1\', {port}), 1).close(); break\n'
            f'    except OSError: time.sleep(0.1)\n'
            f'else: raise SystemExit(\'nothing answers on port {port}\')"\n')


PORT = re.compile(r"\b800\d\b")


def _script(blocks: list[Block], work: Path) -> str:
    """One bash script for a page: its blocks in order, each between markers. Ports 8000-8009
    stand for free ports."""
    ports = {p: str(_free_port()) for b in blocks for p in PORT.findall(b.code + b.arg)}

    def local(text: str) -> str:
        return PORT.sub(lambda m: ports[m.group(0)], text)

    # A server block runs in its own process group (set -m), so the whole group, the server
    # and not only its subshell, is stopped when the page ends.
    lines = ["set -eo pipefail",
             "trap 'for p in $(jobs -p); do kill -- -$p 2>/dev/null || true; done' EXIT"]
    for n, b in enumerate(blocks):
        code = local(b.code)
        if b.title:
            target = work / b.title
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(code)
            continue
        if not b.runs:
            continue
        src = work.parent / f"block{n}.{'py' if b.lang == 'python' else 'sh'}"
        src.write_text(code)
        if b.kind == "setup":
            setup = work.parent / f"setup{n}.sh"
            setup.write_text(local(b.arg) + "\n")
            lines.append(f"source {setup}")
        lines.append(f"echo {BEGIN} {n}")
        if b.kind == "background":
            lines.append(f"set -m; (source {src}) > {work.parent}/background{n}.log 2>&1 & "
                         "set +m")
            lines += [_wait_for_port(int(ports[p])) for p in PORT.findall(b.code)]
        elif b.lang == "python":
            lines.append(f"python {src}")
        else:
            lines.append(f"source {src}")
        lines.append(f"echo {END} {n}")
    return "\n".join(lines) + "\n"


def _squash(text: str) -> str:
    return " ".join(text.split())


@pytest.mark.parametrize("page", PAGES)
@pytest.mark.slow
def test_examples_run(page, tmp_path):
    blocks = [b for b in BLOCKS if b.page == page]
    if any("../shared" in b.code for b in blocks if b.runs) and not (SHARED / "data").is_dir():
        pytest.skip(f"{page}'s examples read ../shared/data, absent at {SHARED / 'data'}")
    if any("local:smollm2" in b.code for b in blocks if b.runs):
        from mindprobe.models.embedded import SMOLLM2, find

        if find(SMOLLM2) is None:  # never fetched by a test: .ci/run fetches it
            pytest.skip(f"{page}'s examples run local:smollm2, not fetched (`mindprobe data "
                        "fetch smollm2`)")
    work = tmp_path / "work"
    work.mkdir()
    (tmp_path / "shared").symlink_to(SHARED)
    env = {**os.environ, "MINDPROBE_CACHE_DIR": str(tmp_path / "cache"), "COLUMNS": "100",
           "PIP_NO_INDEX": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1", "NO_COLOR": "1",
           "MINDPROBE_REPO": str(ROOT),  # the plugin guide installs mindprobe into a venv
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    script = _script(blocks, work)
    proc = subprocess.run(["bash", "-c", script], cwd=work, env=env, capture_output=True,
                          text=True, timeout=900, stdin=subprocess.DEVNULL)
    out = proc.stdout + proc.stderr
    started = re.findall(rf"^{BEGIN} (\d+)$", proc.stdout, re.M)
    if proc.returncode != 0:
        n = int(started[-1]) if started else 0
        pytest.fail(f"{blocks[n].where()}: example failed (exit {proc.returncode}):\n"
                    f"{blocks[n].code}\n--- output (end) ---\n{out[-4000:]}")
    for n, b in enumerate(blocks):
        if b.output is None:
            continue
        m = re.search(rf"^{BEGIN} {n}$(.*?)^{END} {n}$", proc.stdout, re.M | re.S)
        shown = proc.stdout if m is None else m.group(1)
        headline = next(line for line in b.output.splitlines() if line.strip())
        assert _squash(headline) in _squash(shown + proc.stderr), (
            f"{b.where()}: the docs show {headline!r}, the command printed:\n{out[-3000:]}")


def _commands(code: str) -> list[list[str]]:
    """The `mindprobe ...` command lines of a bash block (continuations joined, comments cut)."""
    text = code.replace("\\\n", " ")
    out = []
    for line in text.splitlines():
        words = shlex.split(line, comments=True)
        while words and re.match(r"^\w+=", words[0]):  # VAR=value mindprobe ...
            words = words[1:]
        if words[:1] == ["mindprobe"]:
            out.append(words[1:])
    return out


UNRUN = [b for b in BLOCKS if b.needs]


@pytest.mark.parametrize("block", UNRUN, ids=[b.where() for b in UNRUN])
def test_unrun_examples_still_parse(block):
    """An example CI cannot run (no internet, GPU server or key here) still names real
    commands and flags, and its Python compiles."""
    assert set(block.needs) <= set(NEEDS)
    if block.lang == "python":
        compile(block.code, block.where(), "exec")
        return
    for argv in _commands(block.code):
        try:
            build_parser(argv).parse_args(argv)
        except MindprobeError as exc:
            pytest.fail(f"{block.where()}: `mindprobe {shlex.join(argv)}`: {exc}")


def test_every_block_is_run_or_says_why():
    """No bash/python block is silently left out: each runs, is a file, is CI's own command,
    or names what it needs."""
    for b in BLOCKS:
        if b.lang in ("bash", "python"):
            assert b.runs or b.title or b.needs or b.kind == "ci", b.where()
    assert len(UNRUN) < len([b for b in BLOCKS if b.runs]), "most examples should run"


def test_ci_runs_the_readme_install_and_test_commands():
    """The README's first two commands are the ones .ci/run runs."""
    ci = (ROOT / ".ci" / "run").read_text()
    readme = [b for b in BLOCKS if b.page == "README.md"]
    assert readme[0].kind == "ci"
    for line in readme[0].code.strip().splitlines():
        assert re.search(rf"^{re.escape(line)}$", ci, re.M), line


def test_readme_is_a_landing_page():
    text = (ROOT / "README.md").read_text()
    assert len(text.splitlines()) <= 200
    blocks = [b for b in BLOCKS if b.page == "README.md"]
    assert blocks[0].code == 'pip install -e ".[dev]"\npython -m pytest -q\n'
    assert blocks[1].code == "mindprobe run worldsense:fresh --model local --limit 20\n"


def test_markers_are_understood(tmp_path):
    """The conventions examples.py reads: needs, ci, outputs and files."""
    page = ("<!-- example: needs gpu-server -->\n```bash\nvllm serve x\n```\n\n"
            "```bash\necho hi\n```\n\n```text\nhi\n```\n"
            '```toml title="pkg/pyproject.toml"\n[project]\n```\n')
    a, b, c = parse(page, "x.md")
    assert a.needs == ["gpu-server"] and not a.runs
    assert b.runs and b.output == "hi\n"
    assert c.title == "pkg/pyproject.toml" and not c.runs
    with pytest.raises(ValueError):
        parse("<!-- example: needs a-miracle -->\n```bash\nx\n```\n", "y.md")
    assert pages(ROOT)[0].name == "README.md"
