"""`mindprobe export --format inspect --run DIR --out FILE.eval`: any run as an Inspect
evaluation log (the benchmark's own upstream format stays `mindprobe export BENCH`)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from mindprobe.errors import UsageError

if TYPE_CHECKING:
    from rich.console import Console


def cmd_export_inspect(args: argparse.Namespace, err: Console) -> int:
    from mindprobe.core.paths import check_parent
    from mindprobe.core.store import MANIFEST
    from mindprobe.report.inspect_log import export_inspect

    run, out = Path(args.run), Path(args.out)
    if not (run / MANIFEST).is_file():
        raise UsageError(f"--run {run}: not a run directory (no {MANIFEST})")
    if out.is_dir():
        raise UsageError(f"--out {out} is a directory; give a file name such as {out}/run.eval")
    check_parent(out, "--out")
    n, path = export_inspect(run, out)
    err.print(f"wrote {n} sample(s) to {path}; browse with: inspect view --log-dir "
              f"{path.parent}", soft_wrap=True, highlight=False)
    return 0
