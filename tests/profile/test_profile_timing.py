"""The profile's time estimate from an engine's measured speed (`profiling.timing`)."""

from __future__ import annotations

import pytest

from mindprobe.commands.profile import _duration
from mindprobe.profiling.timing import EngineSpeed, _speed, expected_seconds


def test_speed_comes_from_llama_cpp_timings_and_the_requests_own_cost():
    short = {"timings": {"prompt_ms": 20.0, "predicted_ms": 10.0}}
    long = {"timings": {"prompt_per_second": 400.0, "predicted_per_second": 20.0}}
    speed = _speed(short, 0.05, long)
    assert speed == EngineSpeed(400.0, 20.0, pytest.approx(0.02))
    assert _speed(short, 0.05, {"timings": {}}) is None  # a server without timings


def test_expected_seconds_prices_prefill_reply_and_requests():
    speed = EngineSpeed(400.0, 20.0, 0.02)
    est = {"expected_prefill_tokens": 4000, "prefill_tokens": 9000,
           "expected_completion_tokens": 200, "completion_tokens": 900,
           "expected_requests": 50, "requests": 100}
    assert expected_seconds(speed, est) == pytest.approx(10 + 10 + 1)
    assert expected_seconds(speed, {"turns": 3}) is None


def test_durations_read_as_people_say_them():
    assert [_duration(s) for s in (None, 45, 600, 3 * 3600)] == ["–", "45 s", "10 min", "3.0 h"]
