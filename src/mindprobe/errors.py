"""Exception types that map to one clear user-facing message (exit code 2), never a traceback."""

from __future__ import annotations

from collections.abc import Iterable


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


def did_you_mean(name: str, choices: Iterable[str]) -> str:
    """`; did you mean 'x'?` naming the closest of `choices` to a name that is none of them
    (difflib; case, `-` and `_` do not count), else "": the one near-miss hint of every
    error (a benchmark, a flag, a server's model)."""
    import difflib

    def key(s: str) -> str:
        return s.lower().replace("-", "_")

    by_key = {key(c): c for c in choices if c}
    if key(name) in by_key:
        return f"; did you mean {by_key[key(name)]!r}?" if by_key[key(name)] != name else ""
    found = difflib.get_close_matches(key(name), list(by_key), n=1, cutoff=0.6)
    return f"; did you mean {by_key[found[0]]!r}?" if found else ""
