"""Where mindprobe keeps things on disk; every location can be overridden by an env variable."""

from __future__ import annotations

import errno
import os
import re
import shutil
from pathlib import Path

from mindprobe.errors import UsageError

_COMPONENT = re.compile(r"^[A-Za-z0-9._+-]+$")
#: The longest folder name mindprobe makes from a label (file systems allow 255 bytes; room
#: is left for the suffixes beside it, `.tmp` files and `__<name>`).
FOLDER_NAME_LIMIT = 120


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
    if len(value) > FOLDER_NAME_LIMIT:
        raise UsageError(f"{what} {value[:40]!r}… is {len(value):,} characters long; a name "
                         f"mindprobe files things under has at most {FOLDER_NAME_LIMIT}")
    return value


def folder_name(text: str, limit: int = FOLDER_NAME_LIMIT) -> str:
    """`text` (already one safe path component) as a folder name of at most `limit` bytes: a
    longer one keeps its start and gets the sha256 of the whole, so two long names that share
    a start never share a folder. The manifest keeps the full text."""
    if len(text.encode()) <= limit:
        return text
    import hashlib

    digest = hashlib.sha256(text.encode()).hexdigest()[:12]
    return text.encode()[: limit - len(digest) - 1].decode(errors="ignore") + "-" + digest


def check_parent(path: Path, flag: str) -> None:
    """A path given as `flag` may be created, its folder must exist already: a typo is one
    line, not a tree of folders somewhere unexpected."""
    parent = path.expanduser().absolute().parent
    if not parent.is_dir():
        raise UsageError(f"{flag} {path}: the folder {parent} does not exist")


def check_out_file(path: Path, flag: str, suffixes: tuple[str, ...] = ()) -> None:
    """An output file named by `flag`, checked before any work is done or shown: a known
    suffix, an existing folder mindprobe may write in, not a folder itself."""
    if suffixes and path.suffix.lower() not in suffixes:
        raise UsageError(f"{flag} {path}: written as {' or '.join(suffixes)}; name the file so")
    check_parent(path, flag)
    parent = path.expanduser().absolute().parent
    if path.expanduser().is_dir():
        raise UsageError(f"{flag} {path}: is a directory; give a file name")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise UsageError(f"{flag} {path}: the folder {parent} is not writable")


def refuse_empty(value: object, flag: str) -> None:
    """An empty value given for `flag` is a usage error: to `Path` it is the current folder, so
    `--runs-dir "$UNSET"` would write where nobody asked."""
    if isinstance(value, str) and not value.strip():
        raise UsageError(f"{flag} is empty: give a value (an empty path would mean the current "
                         "folder; an unset shell variable?)")

