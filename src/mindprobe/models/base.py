"""The model protocol's former home: it lives in `mindprobe.core.model` now (core's own concept,
so core imports nothing from the backends). Re-exported here so existing imports keep working."""

from mindprobe.core.model import (
    FREE_TEXT,
    NO_REASONING,
    REASONING_EFFORTS,
    CallContext,
    ChoiceScores,
    Completion,
    Model,
    Reasoning,
    Request,
    TransientError,
    Usage,
    split_reasoning,
)

__all__ = [
    "FREE_TEXT", "NO_REASONING", "REASONING_EFFORTS", "CallContext", "ChoiceScores", "Completion", "Model",
    "Reasoning", "Request", "TransientError", "Usage", "split_reasoning",
]
