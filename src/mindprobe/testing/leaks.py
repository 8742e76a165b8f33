"""Finding a secret in what mindprobe wrote, as the hostile tests do: every file under a folder,
and what it packs (zip members such as an Inspect `.eval`, bz2, gzip, a Parquet file's rows,
whose pages are compressed), searched for each secret raw and in base64."""

from __future__ import annotations

import base64
import bz2
import contextlib
import gzip
import json
import zipfile
from pathlib import Path


def secret_forms(secret: str) -> list[bytes]:
    """A secret as it could be found: raw, and base64 (standard, URL-safe, unpadded)."""
    raw = secret.encode()
    encoded = [base64.b64encode(raw), base64.urlsafe_b64encode(raw)]
    return [raw, *encoded, *(e.rstrip(b"=") for e in encoded)]


def file_blobs(path: Path) -> list[bytes]:
    """A file's bytes, and the bytes of what it packs."""
    raw = Path(path).read_bytes()
    out = [raw]
    if zipfile.is_zipfile(path):
        with contextlib.suppress(ImportError):
            import zipfile_zstd  # noqa: F401 (registers zstd, which Inspect's .eval uses)
        with zipfile.ZipFile(path) as z:
            out += [z.read(n) for n in z.namelist()]
    if raw[:3] == b"BZh":
        out.append(bz2.decompress(raw))
    if raw[:2] == b"\x1f\x8b":
        out.append(gzip.decompress(raw))
    if raw[:4] == b"PAR1":
        import pyarrow.parquet as pq

        out.append(json.dumps(pq.read_table(path).to_pylist(), default=str).encode())
    return out


def find_leaks(root: Path, secrets: list[str]) -> list[str]:
    """`file: secret` for every secret (raw or base64) found in any file under `root`."""
    forms = {s: secret_forms(s) for s in secrets}
    found = set()
    for path in sorted(p for p in Path(root).rglob("*") if p.is_file() and not p.is_symlink()):
        for blob in file_blobs(path):
            found |= {f"{path.relative_to(root)}: {s}" for s, fs in forms.items()
                      if any(f in blob for f in fs)}
    return sorted(found)
