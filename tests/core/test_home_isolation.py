"""Issue 22, observation 9: the suite never writes into the user's home, and the embedded GGUF
is used where pip installed it, not copied into every cache."""

from __future__ import annotations

import os
import pwd
from pathlib import Path

from mindprobe.core.paths import cache_dir, data_root, response_cache_path

REAL_HOME = Path(pwd.getpwuid(os.getuid()).pw_dir)  # the account's home, whatever HOME says


def _inside(path: Path, root: Path) -> bool:
    return path.resolve().is_relative_to(root.resolve())


def test_every_cache_and_data_directory_is_temporary(isolated_home):
    assert Path.home() != REAL_HOME and _inside(Path.home(), isolated_home)
    for path in (cache_dir(), data_root(), response_cache_path(),
                 Path(os.environ["XDG_CACHE_HOME"])):
        assert _inside(path, isolated_home), path
        assert not _inside(path, REAL_HOME / ".cache"), path


def test_subprocesses_inherit_the_temporary_home(isolated_home):
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", "from mindprobe.core.paths import cache_dir;"
                          "print(cache_dir())"], capture_output=True, text=True, check=True)
    assert _inside(Path(out.stdout.strip()), isolated_home)
