"""Exception types that map to one clear user-facing message (exit code 2), never a traceback."""

from __future__ import annotations


class MindprobeError(Exception):
    """Base for errors caused by user input or environment; the CLI prints only the message."""


class DataError(MindprobeError):
    """A data file is missing, corrupt or malformed; the message names the file/line and the fix."""


class ModelError(MindprobeError):
    """The model backend cannot be used at all (bad spec, unreachable, unauthorised, unknown model)."""


class UsageError(MindprobeError):
    """A bad flag or argument combination."""


class DiskFull(MindprobeError):
    """No space left where a run writes: the run stopped cleanly (marked interrupted, every
    finished record kept) and resumes once there is room."""


class Interrupted(KeyboardInterrupt):
    """Ctrl-C or SIGTERM already reported to the user (the resume line is printed)."""
