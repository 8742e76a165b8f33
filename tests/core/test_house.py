"""The house: nothing stray is committed at the repository root (a test server's `url.txt`
once was), and the README says what its first block costs."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
#: What belongs at the root; anything else (a scratch file, a server's address) is a slip.
ROOT_FILES = {".gitignore", "README.md", "mkdocs.yml", "pyproject.toml"}
ROOT_FOLDERS = {".ci", "bench", "docs", "src", "tests"}


def test_only_the_project_is_committed_at_the_root():
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True,
                             check=True).stdout.split()
    top = {p.split("/", 1)[0] for p in tracked if "/" not in p}
    folders = {p.split("/", 1)[0] for p in tracked if "/" in p}
    assert top <= ROOT_FILES, f"stray files committed at the root: {sorted(top - ROOT_FILES)}"
    assert folders <= ROOT_FOLDERS, f"unexpected folders: {sorted(folders - ROOT_FOLDERS)}"


def test_the_readme_says_what_its_first_block_costs():
    """Its first block starts the whole suite: the next words say how long, and the fast tier."""
    text = (ROOT / "README.md").read_text()
    after = text.split("python -m pytest -q\n```", 1)[1].split("```", 1)[0]
    assert "30 minutes" in after and 'python -m pytest -m "not slow"' in after
