"""The one writer: every file and folder mindprobe writes goes through here, so every surface
(exports, reports, leaderboards, caches, a run's own files) has the same guarantees.

- Whole or not at all: the content goes to a hidden temporary file beside the target
  (`.NAME.PID-RANDOM.mindprobe.tmp`), is fsynced, then renamed over the target; the previous
  file stays intact until the new one is complete. A folder (a Hugging Face dataset) is built
  the same way beside the target and swapped into place.
- Temporary files are removed on any error and on Ctrl-C; those left by a kill -9 (their
  process is gone) are removed by the next write to the same target.
- No symlink it did not create is followed: temporary files are created with O_EXCL |
  O_NOFOLLOW, a target that is a link is replaced as a link (never written through), appends
  and locks refuse (or replace) a link (`open_append`, `open_own`).
- A run folder (a folder holding `manifest.json` with `records.jsonl` or `.lock`) is the
  store's: any other writer is refused there (`run_file=True` is the store's own pass;
  `core.write_targets` says what may be written).
- An existing target is replaced only when the caller says so (`replace=True`: a command's
  `--force`, or a documented overwrite such as a report); otherwise one message naming the
  flag and `--force`.
- Failures are one message: a full disk is `DiskFull` naming the folder and its free space,
  anything else a `UsageError` naming the file and the reason.

The append-only `records.jsonl` stays append-only (`open_append`).
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import hashlib
import os
import secrets
import shutil
import socket
import tempfile
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import NoReturn

from mindprobe.core.paths import free_space, is_disk_full
from mindprobe.core.write_targets import check_target
from mindprobe.errors import DiskFull, MindprobeError, UsageError

#: How a temporary file or folder of this writer ends (hidden: its name starts with a dot).
TMP_SUFFIX = ".mindprobe.tmp"
#: A previous folder moved aside while a new one takes its place (where no atomic swap exists).
OLD_SUFFIX = ".mindprobe.old"

#: What `write_file` writes: bytes, text (UTF-8), chunks of either streamed in order (a
#: generator: nothing is held whole), or a function writing the file at the path it is given.
Content = bytes | str | Iterable[bytes | str] | Callable[[Path], None]


#: This machine, in temporary names: on a folder shared between machines (NFS), a process id
#: says whether a writer is alive only on the machine that wrote it.
_HOST = hashlib.sha256(socket.gethostname().encode()).hexdigest()[:8]
#: How old another machine's temporary file must be to count as left by a killed writer.
FOREIGN_STALE_S = 24 * 3600


def _tmp_name(path: Path, suffix: str = TMP_SUFFIX) -> Path:
    """`.NAME.PID-HOST-RANDOM.mindprobe.tmp`: hidden, recognisable, and saying who wrote it."""
    return path.with_name(f".{path.name}.{os.getpid()}-{_HOST}-{secrets.token_hex(4)}{suffix}")


def _is_stale(stale: Path, writer: str) -> bool:
    """Left by a writer that is gone: a dead process of this machine, or another machine's
    temporary untouched for a day."""
    pid, _, host = writer.partition("-")
    if not pid.isdigit():
        return False
    if host.split("-", 1)[0] == _HOST:
        return not _alive(int(pid))
    try:
        return time.time() - os.lstat(stale).st_mtime > FOREIGN_STALE_S
    except OSError:
        return False


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _remove(path: Path) -> None:
    """Remove a file, link or (real) folder of ours, whatever is left of it."""
    with contextlib.suppress(OSError):
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path, ignore_errors=True)
        else:
            os.unlink(path)


def clean_stale(path: Path) -> None:
    """Temporary files of `path` whose writing process is gone (a kill -9): removed. A previous
    folder a killed swap left aside is put back when nothing took its place."""
    folder = Path(path).parent
    prefix = f".{Path(path).name}."
    try:
        names = os.listdir(folder)
    except OSError:
        return
    for name in names:
        if not name.startswith(prefix) or not name.endswith((TMP_SUFFIX, OLD_SUFFIX)):
            continue
        stale = folder / name
        if not _is_stale(stale, name[len(prefix):]):
            continue
        if name.endswith(OLD_SUFFIX) and not os.path.lexists(path):
            with contextlib.suppress(OSError):
                os.rename(stale, path)
                continue
        _remove(stale)


def _fsync_dir(folder: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _fsync_file(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _failure(exc: BaseException, path: Path, what: str) -> BaseException:
    """The one message for a write the system refused: a full disk, or the reason (an
    OSError, or one a library wrapped). Anything else (a bug, bad content) stays itself."""
    seen: BaseException | None = exc
    while seen is not None:  # libraries (pyarrow, datasets) wrap the OSError they met
        if is_disk_full(seen) or "No space left on device" in str(seen):
            return DiskFull(f"no space left on the disk holding {path.parent} "
                            f"({free_space(path.parent)}); {what} was not written"
                            + (" (the previous one is kept)" if os.path.lexists(path) else "")
                            + ". Free some space there and run the command again")
        if isinstance(seen, OSError):
            reason = seen.strerror or str(seen) or type(seen).__name__
            return UsageError(f"cannot write {path}: {reason}")
        seen = seen.__cause__ or (None if seen.__suppress_context__ else seen.__context__)
    return exc


def _write_tmp(tmp: Path, content: Content, mode: int) -> None:
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode)
    if callable(content):
        os.close(fd)
        content(tmp)  # a library writing by path writes our own fresh file
        _fsync_file(tmp)
        return
    chunks = [content] if isinstance(content, bytes | str) else content
    try:
        buffer = bytearray()
        for chunk in chunks:  # streamed in 1 MiB writes, not one system call per line
            buffer += chunk.encode("utf-8") if isinstance(chunk, str) else chunk
            if len(buffer) >= 1 << 20:
                _write_all(fd, buffer)
                buffer.clear()
        _write_all(fd, buffer)
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_all(fd: int, data: bytes | bytearray) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def write_file(path: Path | str, content: Content, *, replace: bool = False,
               flag: str | None = None, run_file: bool = False, mode: int = 0o644,
               what: str | None = None, in_place_when_full: bool = False) -> Path:
    """Write `content` (bytes, text as UTF-8, or a function writing the file at the path it is
    given) as `path`, whole or not at all.

    `replace`: an existing `path` may be replaced (else a UsageError naming `flag` and
    --force); `run_file`: the store writing a run's own file (else refused inside a run
    folder; an OSError is then left to the store to word); `in_place_when_full`: on a full
    disk, where no second copy fits, an existing file is overwritten in place (a run's
    manifest must still say the run stopped)."""
    path = Path(path)
    tmp = _begin(path, replace=replace, flag=flag, run_file=run_file)
    try:
        _write_tmp(tmp, content, mode)
        os.replace(tmp, path)
        _fsync_dir(path.parent)
    except BaseException as exc:
        _remove(tmp)
        if not isinstance(exc, Exception):
            raise  # Ctrl-C / SystemExit: the temporary file is gone, the old one intact
        if (in_place_when_full and is_disk_full(exc) and isinstance(content, bytes | str)
                and os.path.isfile(path) and not os.path.islink(path)):
            _overwrite_in_place(path, content)
            return path
        if run_file:
            raise  # the store words a failure of a run's own file itself (RunStore.disk_full)
        _reraise(exc, path, what or str(path))
    return path


def _begin(path: Path, replace: bool, flag: str | None, run_file: bool = False,
           folder: bool = False) -> Path:
    """Before a write: refuse what must be (`check_target`), clean what a killed writer left,
    and name the temporary file or folder."""
    check_target(path, replace=replace, flag=flag, run_file=run_file, folder=folder)
    clean_stale(path)
    return _tmp_name(path)


def _reraise(exc: BaseException, path: Path, what: str) -> NoReturn:
    """Raise the one message for a failed write (`_failure`); Ctrl-C, our own errors and
    anything that is no refusal by the system stay as they are."""
    failure = _failure(exc, path, what)
    if failure is exc or not isinstance(exc, Exception) or isinstance(exc, MindprobeError):
        raise exc
    raise failure from None


def _overwrite_in_place(path: Path, content: bytes | str) -> None:
    data = content.encode("utf-8") if isinstance(content, str) else content
    fd = os.open(path, os.O_WRONLY | os.O_NOFOLLOW)
    try:
        os.write(fd, data)
        os.ftruncate(fd, len(data))
    finally:
        os.close(fd)


_RENAME_EXCHANGE = 2


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths atomically (Linux renameat2); False where the system cannot."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        fn = libc.renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd = -100
    done = fn(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), _RENAME_EXCHANGE)
    if done == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):
        return False
    raise OSError(err, os.strerror(err), str(b))


def write_folder(path: Path | str, build: Callable[[Path], None], *, replace: bool = False,
                 flag: str | None = None, what: str | None = None) -> Path:
    """Build a folder (`build(tmp)` fills the fresh folder it is given) beside `path`, then put
    it in place: an existing `path` (with `replace`) is swapped out atomically and removed
    only once the new folder is there; on any failure it is untouched."""
    path = Path(path)
    tmp = _begin(path, replace=replace, flag=flag, folder=True)
    try:
        os.mkdir(tmp, 0o755)
        build(tmp)
        for root, _dirs, names in os.walk(tmp):
            for name in names:
                _fsync_file(Path(root) / name)
            _fsync_dir(Path(root))
        if os.path.lexists(path):
            if not _exchange(tmp, path):
                old = _tmp_name(path, OLD_SUFFIX)
                os.rename(path, old)
                os.rename(tmp, path)
                tmp = old
        else:
            os.rename(tmp, path)
        _fsync_dir(path.parent)
    except BaseException as exc:
        _remove(tmp)
        _reraise(exc, path, what or str(path))
    _remove(tmp)  # the previous folder, now swapped out
    return path


def copy_file(source: Path | str, path: Path | str, *, replace: bool = True,
              flag: str | None = None) -> Path:
    """A copy of `source` as `path`, whole or not at all (`write_file`)."""
    return write_file(path, lambda tmp: shutil.copyfile(source, tmp), replace=replace,
                      flag=flag)


def open_append(path: Path | str) -> int:
    """A descriptor appending to `path` (created if missing), never through a symlink: the
    append-only files of a run (records, shared texts). OSError is the caller's to word; a
    link is a UsageError."""
    try:
        return os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o644)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise UsageError(f"{path} is a symbolic link; mindprobe appends only to a file it "
                             "made: remove the link and run again") from None
        raise


def cut_to(path: Path | str, size: int) -> None:
    """Cut a run's append-only file back to `size` bytes (a torn last line), never through a
    symlink (a link is a UsageError, as for `open_append`)."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_NOFOLLOW)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise UsageError(f"{path} is a symbolic link; mindprobe repairs only a file it "
                             "made: remove the link and run again") from None
        raise
    try:
        os.ftruncate(fd, size)
    finally:
        os.close(fd)


def open_own(path: Path | str, flags: int = os.O_RDWR | os.O_CREAT) -> int:
    """A descriptor on a small file mindprobe owns (a lock): a symlink found there was not
    made by mindprobe, so it is removed and a fresh file made in its place, never followed."""
    for _ in range(3):
        try:
            return os.open(path, flags | os.O_NOFOLLOW, 0o644)
        except OSError as exc:
            if exc.errno != errno.ELOOP:
                raise
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)
    return os.open(path, flags | os.O_NOFOLLOW, 0o644)


def probe_writable(folder: Path | str) -> None:
    """Create and remove an empty hidden file in `folder` (OSError when it cannot): whether a
    file could be made there, which `os.access` cannot tell as root or on a read-only mount."""
    with tempfile.NamedTemporaryFile(dir=folder, prefix=".mindprobe-check-"):
        pass
