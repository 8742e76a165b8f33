"""The model protocol's former home: it lives in `mindprobe.core.model` now (core's own concept,
so core imports nothing from the backends). Re-exported here so existing imports keep working."""

import mindprobe.core.model as _protocol
from mindprobe.core.model import *  # noqa: F403 (exactly the protocol's public names)

__all__ = list(_protocol.__all__)
