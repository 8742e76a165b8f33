"""FanOutQA's answer/text normalisation (spec §6.1), exact, with a per-string cache.

Upstream normalises the candidate once per gold string; the result only depends on the string,
so ``Normalizer`` normalises every *distinct* string once and sends the misses through spaCy
in one batch (``nlp.pipe``) — identical output, a small fraction of the time.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import ftfy

from mindprobe.core.files import write_file

from .lemma import AUTO, Lemmatizer, load_lemmatizer

#: Bumped whenever pre_lemma/post_lemma change: persisted normalisations are then not reused.
NORMALIZE_VERSION = 1
_NUMBER_WITH_COMMAS = re.compile(r"(\d+,)+\d+(\.\d+)?")
_PUNCT = re.compile(r"[,.?!:;]")
_WHITESPACE = re.compile(r"\s+")
#: The most characters of one text a lemmatiser takes when it says no limit of its own:
#: spaCy's default `nlp.max_length`, past which upstream stops with spaCy's error E088.
MAX_LEMMA_CHARS = 1_000_000


def pre_lemma(text: Any, limit: int | None = None) -> str:
    """Steps 1-3: ``str().lower()``, ftfy.fix_text, commas removed inside numbers; only the
    first `limit` characters (a runaway reply is bounded before it is lemmatised)."""
    s = str(text)[:limit]
    s = ftfy.fix_text(s.lower())[:limit]
    return _NUMBER_WITH_COMMAS.sub(lambda m: m.group(0).replace(",", ""), s)


def lemma_limit(lemmatizer: Lemmatizer) -> int:
    """How many characters of one text `lemmatizer` takes: its spaCy pipeline's
    `max_length` (upstream's limit too: a longer answer stops it with E088)."""
    nlp = getattr(lemmatizer, "nlp", None)
    return int(getattr(nlp, "max_length", MAX_LEMMA_CHARS) or MAX_LEMMA_CHARS)


def post_lemma(lemmas: str) -> str:
    """Steps 5-6: drop ``,.?!:;`` (decimal points too), collapse whitespace runs; no strip."""
    return _WHITESPACE.sub(" ", _PUNCT.sub("", lemmas))


class Normalizer:
    """Callable ``normalize(text)`` bound to one lemmatiser, caching every distinct input.

    Call :meth:`prime` with all strings you are about to normalise (gold strings and candidates)
    to lemmatise the uncached ones in a single batch.
    """

    def __init__(self, lemmatizer: Lemmatizer | None = None):
        self.lemmatizer = lemmatizer if lemmatizer is not None else load_lemmatizer(AUTO)
        #: Longer texts are lemmatised up to here (see `truncated`).
        self.max_chars = lemma_limit(self.lemmatizer)
        self._cache: dict[str, str] = {}
        self._store: Path | None = None
        self._stored: set[str] = set()

    @classmethod
    def persistent(cls, lemmatizer: Lemmatizer | None = None) -> Normalizer:
        """A normaliser whose gold-string results outlive the process, one file per fingerprint
        (backend, model, spaCy, ftfy and normaliser versions) under the user cache. The dev
        set's ~2,300 gold strings are the same in every evaluation, and lemmatising them is most
        of a first evaluation's time; a later one (another model, another judge) only
        lemmatises its new answers."""
        from mindprobe.core.paths import cache_dir

        norm = cls(lemmatizer)
        key = hashlib.sha256(norm.fingerprint().encode()).hexdigest()[:16]
        norm._store = cache_dir() / "fanoutqa" / f"normalized-{key}.json"
        norm.load(norm._store)
        norm._stored = set(norm._cache)
        return norm

    def flush(self, keys: Iterable[Any]) -> None:
        """Add the normalisations of `keys` (gold strings: answers vary, gold does not, so the
        store stays the size of the datasets' gold) to the persistent store; a read-only cache
        only costs speed."""
        if self._store is None:
            return
        new = {str(k) for k in keys} - self._stored
        new &= self._cache.keys()
        if not new:
            return
        self._stored |= new
        with contextlib.suppress(OSError):
            self.save(self._store, keys=self._stored)

    @property
    def backend(self) -> dict[str, Any]:
        return self.lemmatizer.describe()

    def prime(self, texts: Iterable[Any]) -> None:
        """Normalise all not-yet-cached texts in one batch (distinct pre-lemma forms only)."""
        todo: dict[str, list[str]] = {}
        for t in texts:
            key = str(t)
            if key not in self._cache:
                todo.setdefault(pre_lemma(key, self.max_chars), []).append(key)
        if not todo:
            return
        pre = list(todo)
        for p, lem in zip(pre, self.lemmatizer.lemmatize_many(pre), strict=True):
            out = post_lemma(lem)
            for key in todo[p]:
                self._cache[key] = out

    def __call__(self, text: Any) -> str:
        key = str(text)
        hit = self._cache.get(key)
        if hit is None:
            self.prime([key])
            hit = self._cache[key]
        return hit

    def normalize_many(self, texts: Iterable[Any]) -> list[str]:
        texts = [str(t) for t in texts]
        self.prime(texts)
        return [self._cache[t] for t in texts]

    def __len__(self) -> int:
        return len(self._cache)

    def truncated(self, text: Any) -> bool:
        """Whether only the first `max_chars` characters of `text` are scored."""
        return len(str(text)) > self.max_chars

    # -- optional persistence: gold strings are the same in every evaluation of the dev set

    def fingerprint(self) -> str:
        """What a normalisation depends on besides its input: a stored one with another
        fingerprint is never used."""
        d = self.backend
        return (
            f"{d.get('backend')}|{d.get('model')}|{d.get('model_version')}|{d.get('spacy_version')}"
            f"|ftfy {ftfy.__version__}|normalize v{NORMALIZE_VERSION}"
        )

    def save(self, path: str | Path, keys: Iterable[Any] | None = None) -> Path:
        """Write (some of) the cache to JSON, tagged with the backend fingerprint; atomic."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        wanted = self._cache if keys is None else {str(k) for k in keys}
        entries = {k: v for k, v in self._cache.items() if k in wanted}
        payload = {"fingerprint": self.fingerprint(), "entries": entries}
        return write_file(path, json.dumps(payload, ensure_ascii=False), replace=True)

    def load(self, path: str | Path) -> int:
        """Merge a saved cache if it was made by the same backend and versions; returns the
        number of entries loaded (0 for a missing, unreadable or foreign file)."""
        try:
            payload = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return 0
        if not isinstance(payload, dict) or payload.get("fingerprint") != self.fingerprint():
            return 0
        entries = payload.get("entries")
        if not isinstance(entries, dict):
            return 0
        good = {k: v for k, v in entries.items() if isinstance(k, str) and isinstance(v, str)}
        self._cache.update(good)
        return len(good)


def normalize(text: Any, lemmatizer: Lemmatizer | None = None) -> str:
    """Normalise one string, uncached (the reference path; upstream's per-call behaviour)."""
    lem = lemmatizer if lemmatizer is not None else load_lemmatizer(AUTO)
    one = getattr(lem, "lemmatize_one", None)
    pre = pre_lemma(text, lemma_limit(lem))
    lemmas = one(pre) if one is not None else lem.lemmatize_many([pre])[0]
    return post_lemma(lemmas)
