"""The manual's WorldSense Python API example runs as written and prints the paper's numbers."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_readme_python_example_runs(shared_data):
    shared_data("worldsense")  # skips with a reason when the official data is absent
    text = (REPO / "docs" / "benchmarks" / "worldsense.md").read_text()
    code = re.search(r"analysis in Python.*?```python\n(.*?)```", text, re.S).group(1)
    env = {**os.environ, "COLUMNS": "200"}
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True,
                          text=True, timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr
    assert "Llama2-FT+1M" in proc.stdout and "79.7 (0.9)" in proc.stdout
