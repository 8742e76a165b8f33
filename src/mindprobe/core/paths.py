"""Where mindprobe keeps things on disk; every location can be overridden by an env variable."""

from __future__ import annotations

import errno
import os
import re
import shutil
from pathlib import Path

from mindprobe.errors import UsageError

_COMPONENT = re.compile(r"^[A-Za-z0-9._+-]+$")


def cache_dir() -> Path:
    """Root of mindprobe's user cache (`MINDPROBE_CACHE_DIR`, else ~/.cache/mindprobe)."""
    env = os.environ.get("MINDPROBE_CACHE_DIR")
    if env:
        return Path(env).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "mindprobe"


def data_root() -> Path:
    """Where `mindprobe data fetch` puts official files (`MINDPROBE_DATA_DIR` overrides)."""
    env = os.environ.get("MINDPROBE_DATA_DIR")
    return Path(env).expanduser() if env else cache_dir() / "data"


def response_cache_path() -> Path:
    """The SQLite response cache (`MINDPROBE_RESPONSE_CACHE` overrides)."""
    env = os.environ.get("MINDPROBE_RESPONSE_CACHE")
    return Path(env).expanduser() if env else cache_dir() / "responses.sqlite"


def free_space(folder: Path) -> str:
    """The free space of the disk holding `folder`, for messages ("12.0 MB free")."""
    try:
        return f"{shutil.disk_usage(folder).free / 1e6:.1f} MB free"
    except OSError:
        return "free space unknown"


def is_disk_full(exc: BaseException) -> bool:
    """A write failed for want of room (a full disk, or the user's quota)."""
    return isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT)


def path_component(value: str, what: str) -> str:
    """`value` checked to be one safe folder name (a run's --name, a judge's label): never a
    path that would put a run somewhere else."""
    if not _COMPONENT.match(value) or value in (".", ".."):
        raise UsageError(f"{what} {value!r} must be one path component of letters, digits "
                         "and ._+-")
    return value


def check_parent(path: Path, flag: str) -> None:
    """A path given as `flag` may be created, its folder must exist already: a typo is one
    line, not a tree of folders somewhere unexpected."""
    parent = path.expanduser().absolute().parent
    if not parent.is_dir():
        raise UsageError(f"{flag} {path}: the folder {parent} does not exist")


def refuse_empty(value: object, flag: str) -> None:
    """An empty value given for `flag` is a usage error: to `Path` it is the current folder, so
    `--runs-dir "$UNSET"` would write where nobody asked."""
    if isinstance(value, str) and not value.strip():
        raise UsageError(f"{flag} is empty: give a value (an empty path would mean the current "
                         "folder; an unset shell variable?)")


#: The most a small input file the user names (a prompt file, an endpoints file) may hold.
SMALL_FILE_LIMIT = 4 * 1024 * 1024


def read_bounded(path: Path, what: str, limit: int = SMALL_FILE_LIMIT) -> bytes:
    """A small file the user names, read up to `limit` bytes: a larger one (or an endless one,
    /dev/zero) is one usage error naming it, never a read until memory runs out. OSError is
    the caller's to word."""
    with open(path, "rb") as f:
        data = f.read(limit + 1)
    if len(data) > limit:
        raise UsageError(f"{what} {path}: larger than {limit // 2**20} MiB, the most such a file "
                         "may hold; give the right file")
    return data
