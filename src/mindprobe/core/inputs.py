"""The one reader for outside input: every file a user names or a run folder holds, and every
number typed on the command line, passes here before mindprobe believes it.

A file is read only if it is a regular file (a FIFO, a device or a folder is one clear message
naming what it is: opened with O_NONBLOCK and checked with fstat before a byte is read, so a
FIFO never blocks), within the size cap of its kind (`LIMITS`), and a JSON document's numbers
are finite (`NaN`, `Infinity`, `1e999` are refused naming the file and the key). Paths a file
holds (a profile's runs) are resolved inside its folder (`inside`). The same finite-and-in-range
check (`finite`) serves numbers from anywhere else: prices (`parse_numbers`), record fields,
usage a server reports.
"""

from __future__ import annotations

import json
import math
import os
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from mindprobe.errors import MindprobeError, UsageError

MiB = 2**20
#: The most each kind of input may hold: larger is refused with the cap named (an endless
#: file such as /dev/zero is refused before it is read at all).
LIMITS: dict[str, int] = {
    "prompt file": 4 * MiB,      # a few templates
    "endpoints file": 4 * MiB,   # one line per server
    "profile": 16 * MiB,         # profile.json: a few lines per benchmark
    "manifest": 64 * MiB,        # manifest.json of a run (plans of large runs included)
    "chat template": 4 * MiB,    # --chat-template: a Jinja template or tokenizer_config.json
    "id list": 4 * MiB,          # --questions @FILE: one id per line
    "text": 256 * MiB,           # a book's plain text (`mindprobe sort build --text`)
    "results file": 2 * 2**30,   # a submission or upstream's results, read whole
    "data file": 16 * 2**30,     # --data-file: streamed, never read whole into memory
    "records": 1 << 40,          # records.jsonl: streamed line by line
}


class InputError(UsageError):
    """Outside input that cannot be used as it is (wrong kind of file, too large, a number
    that is not finite or out of range); the message names the file and the fix."""


def _kind(mode: int) -> str | None:
    """What a non-regular file is, in words (None for a regular file)."""
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a special file"


def _refuse(what: str, path: Path, problem: str, error: type[MindprobeError]) -> MindprobeError:
    return error(f"{what} {path}: {problem}")


def _open_error(what: str, path: Path, exc: OSError,
                error: type[MindprobeError]) -> MindprobeError:
    if isinstance(exc, FileNotFoundError):
        return _refuse(what, path, "no such file", error)
    if isinstance(exc, IsADirectoryError):
        return _refuse(what, path, "is a directory, not a file", error)
    return _refuse(what, path, f"cannot read it ({exc.strerror or exc})", error)


def check_regular(path: str | Path, what: str, kind: str = "data file",
                  error: type[MindprobeError] = InputError) -> Path:
    """`path` if it is a regular file within `kind`'s cap, without opening it for reading
    (for files a loader streams itself): anything else is one message naming what it is."""
    path = Path(path).expanduser()
    try:
        st = path.stat()
    except OSError as exc:
        raise _open_error(what, path, exc, error) from None
    _check_stat(path, st, what, kind, error)
    return path


def check_new_or_regular(path: str | Path, what: str, folder_hint: str = "") -> Path:
    """A file mindprobe will open and may create (`--cache FILE`): absent, or a regular file;
    a folder (`folder_hint` says what to give instead), FIFO or device is refused now,
    naming what it is, not found out mid-run."""
    path = Path(path).expanduser()
    try:
        st = path.stat()
    except FileNotFoundError:
        return path
    except OSError as exc:
        raise _open_error(what, path, exc, InputError) from None
    is_what = _kind(st.st_mode)
    if is_what is not None:
        hint = folder_hint if stat.S_ISDIR(st.st_mode) and folder_hint else "give a file"
        raise InputError(f"{what} {path}: is {is_what}, not a file; {hint}")
    return path


def _check_stat(path: Path, st: os.stat_result, what: str, kind: str,
                error: type[MindprobeError]) -> None:
    is_what = _kind(st.st_mode)
    if is_what is not None:
        fix = "; give a file" if issubclass(error, UsageError) else ""
        raise _refuse(what, path, f"is {is_what}, not a regular file{fix}", error)
    limit = LIMITS[kind]
    if st.st_size > limit:
        raise _refuse(what, path, f"is larger than {_size(limit)}, the most a {kind} may "
                      "hold; give the right file", error)


def read_input(path: str | Path, what: str, kind: str,
               error: type[MindprobeError] = InputError) -> bytes:
    """The bytes of a regular file, at most `kind`'s cap. `what` names it in messages (the
    flag, or the file's role). Never blocks on a FIFO, never reads an endless device."""
    path = Path(path).expanduser()
    limit = LIMITS[kind]
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise _open_error(what, path, exc, error) from None
    chunks: list[bytes] = []
    total = 0
    try:
        _check_stat(path, os.fstat(fd), what, kind, error)
        os.set_blocking(fd, True)
        while total <= limit:  # in pieces: a cap is never allocated up front
            block = os.read(fd, min(1 << 20, limit + 1 - total))
            if not block:
                break
            chunks.append(block)
            total += len(block)
    except OSError as exc:
        raise _open_error(what, path, exc, error) from None
    finally:
        os.close(fd)
    if total > limit:  # grew while read
        raise _refuse(what, path, f"is larger than {_size(limit)}, the most a {kind} may "
                      "hold; give the right file", error)
    return b"".join(chunks)


def _size(n: int) -> str:
    return f"{n // 2**30} GiB" if n >= 2**30 else f"{n // MiB} MiB"


def nonfinite_key(doc: Any, at: str = "") -> str | None:
    """The key path (`benchmarks.worldsense.items`, `runs[2]`) of the first number in `doc`
    that is not finite, or None."""
    if isinstance(doc, float):
        return None if math.isfinite(doc) else (at or "(the document)")
    if isinstance(doc, Mapping):
        for k, v in doc.items():
            found = nonfinite_key(v, f"{at}.{k}" if at else str(k))
            if found is not None:
                return found
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            found = nonfinite_key(v, f"{at}[{i}]")
            if found is not None:
                return found
    return None


def parse_json(data: bytes | str, where: str, error: type[MindprobeError] = InputError) -> Any:
    """A JSON document whose every number is finite: `NaN`, `Infinity` or a number too large
    for a float is refused, naming `where` and the key."""
    try:
        doc = json.loads(data)
    except UnicodeDecodeError:
        raise error(f"{where}: not UTF-8 text") from None
    except ValueError as exc:
        raise error(f"{where}: not valid JSON ({exc})") from None
    bad = nonfinite_key(doc)
    if bad is not None:
        raise error(f"{where}: {bad} is not a finite number (NaN or Infinity); the file was "
                    "edited or damaged")
    return doc


def read_json(path: str | Path, what: str, kind: str,
              error: type[MindprobeError] = InputError) -> Any:
    """`read_input` + `parse_json`: a small JSON file a user names or a run folder holds."""
    path = Path(path).expanduser()
    return parse_json(read_input(path, what, kind, error), f"{what} {path}", error)


def finite(value: Any, what: str, lo: float | None = None, hi: float | None = None,
           error: type[MindprobeError] = InputError) -> float:
    """`value` as a float, refused unless it is a finite number within [lo, hi]; the shared
    check of every number from outside (prices, record fields, a server's usage)."""
    problem = out_of_range(value, lo, hi)
    if problem is not None:
        raise error(f"{what}: {problem}")
    return float(value)


def out_of_range(value: Any, lo: float | None = None, hi: float | None = None) -> str | None:
    """Why `value` is not a finite number within [lo, hi] (None when it is)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return f"{value!r} is not a number"
    try:
        f = float(value)
    except OverflowError:
        return f"{value!r} is too large"
    if not math.isfinite(f):
        return f"{value!r} is not a finite number"
    if (lo is not None and f < lo) or (hi is not None and f > hi):
        return f"{value!r} is outside [{_g(lo)}, {_g(hi)}]"
    return None


def _g(v: float | None) -> str:
    return "–" if v is None else f"{v:g}"


def parse_numbers(text: str, flag: str, counts: tuple[int, ...], usage: str,
                  lo: float | None = 0.0, hi: float | None = None) -> list[float]:
    """A comma-separated list of finite numbers in [lo, hi] typed for `flag` (e.g. `--price
    2.5,10`), of one of the lengths `counts`; anything else names the flag and `usage`."""
    parts = [p.strip() for p in text.split(",")]
    try:
        values = [float(p) for p in parts]
    except ValueError:
        values = []
    if len(values) not in counts or any(out_of_range(v, lo, hi) for v in values):
        raise InputError(f"{flag} expects {usage}, got {text!r}" + (
            " (numbers must be finite)" if any(not math.isfinite(v) for v in values) else ""))
    return values


def inside(folder: Path, relative: Any, what: str,
           error: type[MindprobeError] = InputError) -> Path:
    """`folder / relative`, refused unless `relative` is a relative path with no `..`: a path
    a file holds never reaches outside its folder. (A symbolic link the user made inside the
    folder is theirs to follow, as every other tool does.)"""
    if not isinstance(relative, str) or not relative or "\0" in relative:
        raise error(f"{what}: {relative!r} is not a path")
    rel = Path(relative)
    if rel.is_absolute() or ".." in rel.parts:
        raise error(f"{what}: {relative!r} points outside {folder}; a path it holds must "
                    "stay inside its folder (the file was edited or damaged)")
    return folder / rel
