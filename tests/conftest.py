"""Shared fixtures: where the official data lives, and skipping cleanly when it is absent."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SHARED_DATA = Path(os.environ.get("MINDPROBE_SHARED_DATA", REPO.parent / "shared" / "data"))


def shared_data_dir(benchmark: str) -> Path:
    """Return ../shared/data/<benchmark>, or skip the test with the reason it is missing."""
    path = SHARED_DATA / benchmark
    if not path.is_dir():
        pytest.skip(f"official data for {benchmark} not found at {path} (set MINDPROBE_SHARED_DATA)")
    return path


@pytest.fixture
def shared_data():
    """Factory fixture: shared_data("worldsense") -> Path, skipping when the data is absent."""
    return shared_data_dir
