"""One writing process per run directory: an advisory `flock` that names its holder."""

from __future__ import annotations

import datetime as dt
import fcntl
import os
from pathlib import Path

from mindprobe.core.files import open_own
from mindprobe.core.secrets import command_line
from mindprobe.errors import UsageError

LOCK = ".lock"


def now_iso() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


class RunLock:
    """An advisory lock on a run directory: one writing process at a time.

    `flock` dies with its process, so a lock left by a kill -9 is simply taken over; the lock
    file names the holder so the refusal can say who it is. Re-entrant within one process.
    """

    _held: dict[str, list[int]] = {}

    def __init__(self, run_dir: Path) -> None:
        self.path = Path(run_dir) / LOCK
        self._key = str(self.path.resolve())

    def acquire(self) -> None:
        held = RunLock._held.get(self._key)
        if held is not None:
            held[1] += 1
            return
        try:
            fd = open_own(self.path)  # a symlink planted as .lock is replaced, never followed
        except OSError as exc:
            raise UsageError(f"cannot write in {self.path.parent}: {exc.strerror} "
                             "(choose a writable --runs-dir)") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 4096, 0).decode("utf-8", "replace").strip() or "unknown"
            os.close(fd)
            raise UsageError(
                f"{self.path.parent} is in use by another mindprobe process ({holder}); "
                "wait for it to finish or stop it, or use another --runs-dir"
            ) from None
        info = f"pid {os.getpid()}, since {now_iso()}: {command_line()}"
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, info.encode()[:4000], 0)
        except OSError:  # a full disk: the lock holds all the same, its holder goes unnamed
            pass
        RunLock._held[self._key] = [fd, 1]

    def release(self) -> None:
        held = RunLock._held.get(self._key)
        if held is None:
            return
        held[1] -= 1
        if held[1] == 0:
            del RunLock._held[self._key]
            os.close(held[0])

    def is_held_elsewhere(self) -> bool:
        """True when another live process holds this run (for `mindprobe runs`)."""
        if self._key in RunLock._held or not self.path.exists():
            return False
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_NOFOLLOW)
        except OSError:  # a link (not ours: no mindprobe holds it) or gone
            return False
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        finally:
            os.close(fd)
        return False
