"""A dry run plans SORT from the books without building Book-SORT: the same items a build gives
(ids, order, count exact; the failed cells left out), tokens within a stated tolerance of the
built data's, and a plan note saying the numbers are estimated."""

from __future__ import annotations

import pytest

from mindprobe.benchmarks.sort.build import build_books, plan_cells
from mindprobe.benchmarks.sort.cell import BUILD_FAILURES, CONDITIONS
from mindprobe.benchmarks.sort.estimated import (
    ESTIMATED_NOTE,
    ESTIMATED_NUMBERS,
    estimated_groups,
    pinned,
)
from mindprobe.benchmarks.sort.planned import conditions_of, planned_rows, row_groups

#: The estimate's prompt tokens against the built data's: the excerpts are the books' own
#: words at other places, so over a condition's excerpts the length differs by a few percent.
TOKEN_TOLERANCE = 0.05
SMALL = [(250, 20), (250, 50)]
BOOKS = [72578, 73017]  # two books that build in a fraction of a second


@pytest.fixture(scope="module")
def small_build(tmp_path_factory, books):
    """Two books × the two 250-word conditions, built and written as a run's build is."""
    out = tmp_path_factory.mktemp("booksort-small")
    summary = build_books([books[b] for b in BOOKS], SMALL, out_dir=out, csv=False)
    assert not summary.failures
    return out


def _compare(built, est, conditions, split):
    """Same keys, sizes, row ids, places and row fields that are not texts."""
    assert est.keys == built.keys and est.sizes == built.sizes
    same = ("row_id", "_pos", "book_idx", "excerpt_idx", "segment_idx", "excerpt_length",
            "segment_length", "distance_bin", "bin_index", "book_title", "num_words")
    got = [{k: r[k] for k in same} for r in est.all()]
    assert got == [{k: r[k] for k in same} for r in built.all()]
    for kwargs in ({"excerpts": 1}, {"limit": 150, "excerpts": 2}, {"limit": 7}):
        ids = [r["row_id"] for r in planned_rows(est, conditions, **kwargs)]
        assert ids == [r["row_id"] for r in planned_rows(built, conditions, **kwargs)]


@pytest.mark.parametrize("split", ["test", "validation", "all"])
def test_estimated_rows_are_the_built_rows_less_their_texts(small_build, books, split):
    est = estimated_groups([books[b] for b in BOOKS], SMALL, split)
    built = row_groups(small_build, split)
    assert conditions_of(est) == SMALL
    _compare(built, est, SMALL, split)


def test_estimated_texts_have_the_built_lengths(small_build, books):
    """Each excerpt is L_E of the book's words, each segment L_S; over the 100 test excerpts of
    a cell the characters are within the tolerance of the built ones."""
    est = estimated_groups([books[b] for b in BOOKS], SMALL, "test").all()
    built = row_groups(small_build, "test").all()
    for key in ("excerpt_text", "segment_1"):
        for cond in SMALL:
            a = sum(len(r[key]) for r in est if (r["excerpt_length"], r["segment_length"]) == cond)
            b = sum(len(r[key]) for r in built
                    if (r["excerpt_length"], r["segment_length"]) == cond)
            assert abs(a / b - 1) < TOKEN_TOLERANCE, (key, cond, a, b)
    assert all(len(r["excerpt_text"].split()) == r["excerpt_length"] for r in est)
    assert all(len(r["segment_2"].split()) == r["segment_length"] for r in est)


@pytest.mark.parametrize("split", ["test", "validation", "all"])
def test_a_runs_build_goes_straight_into_the_memo(small_build, books, sort_data, split):
    """The rows a run builds (no Parquet between the build and the memo) are the rows of the
    same build written and read back, field for field and in order."""
    from mindprobe.benchmarks.sort import sources
    from mindprobe.benchmarks.sort.planned import split_of

    built = split_of(sources.built_rows(sort_data, SMALL, [books[b] for b in BOOKS]), split)
    written = row_groups(small_build, split)
    assert built.keys == written.keys

    def bare(rows):  # `_pos` counts over both splits in the build's memo: only order matters
        return [{k: v for k, v in r.items() if k != "_pos"} for r in rows]

    assert bare(built.all()) == bare(written.all())
    assert planned_rows(built, SMALL, limit=500) == planned_rows(written, SMALL, limit=500)


def test_a_book_cleaned_otherwise_is_not_pinned(books):
    from dataclasses import replace

    assert pinned([books[73017]])
    assert not pinned([replace(books[73017], words=books[73017].words[1:])])


def test_dry_run_estimates_then_the_run_builds(cli, tmp_path, sort_data):
    """`run --dry-run` builds nothing and says its numbers are estimated; once built, the dry
    run is exact: same items, tokens within the tolerance."""
    from mindprobe.benchmarks.sort import sources
    from mindprobe.core.paths import cache_dir

    args = ("run", "sort:250-20", "--model", "random", "--data-dir", sort_data, "--books",
            "73017", "--dry-run", "--json")
    code, est, err = cli(*args)
    assert code == 0, err
    books = sources.load_source_books(sort_data, [73017])
    assert not sources.is_built(books, [(250, 20)])  # nothing built
    assert not list((cache_dir() / "decoded").glob("sort-built-rows*"))
    assert "Book-SORT is not built yet" in " ".join(err.split())
    assert est["items"] == 400 and est["requests"] == 400
    sources.built_rows(sort_data, [(250, 20)], books)  # what the run does first
    assert sources.is_built(books, [(250, 20)])
    code, exact, err = cli(*args)
    assert code == 0, err
    assert "not built yet" not in err and exact["items"] == est["items"]
    for key in ("prompt_tokens", "prefill_tokens"):
        assert abs(est["tokens"][key] / exact["tokens"][key] - 1) < TOKEN_TOLERANCE, key


def test_the_dry_runs_json_says_which_numbers_are_estimated(cli, sort_data, shared_data):
    """`run --dry-run --json` names, per variant, why its numbers are estimates and which of
    the document's keys they are: SORT planned from the books has it (its console says so
    too); a plan from the data itself (WorldSense) says `null`."""
    code, doc, err = cli("run", "sort", "--model", "random", "--data-dir", sort_data,
                         "--excerpts", "1", "--dry-run", "--json")
    assert code == 0, err
    assert doc["items"] == 332 and doc["estimated"] == {
        "why": ESTIMATED_NOTE, "what": ["prompt_tokens", "prefill_tokens"]}
    assert set(ESTIMATED_NUMBERS) <= set(doc["tokens"]) and set(ESTIMATED_NUMBERS) <= set(
        doc["endpoints"][0])  # each key it names is one the document has
    assert "Book-SORT is not built yet" in " ".join(err.split())
    code, doc, err = cli("run", "worldsense", "--model", "random", "--data-dir",
                         shared_data("worldsense"), "--limit", "20", "--dry-run", "--json")
    assert code == 0, err
    assert doc["tokens"] and "estimated" in doc and doc["estimated"] is None


def test_an_estimated_plan_cannot_run(sort_data, tmp_path, monkeypatch):
    """A plan a dry run estimated (no Book-SORT built: a cache of its own, since another test
    may have built this book's cell in the session's) refuses to run."""
    import asyncio

    monkeypatch.setenv("MINDPROBE_CACHE_DIR", str(tmp_path / "cache"))

    from mindprobe.core.plan import ModelFacts, PlanContext, RunPlan
    from mindprobe.errors import UsageError
    from mindprobe.registry import get_benchmark

    bench = get_benchmark("sort")
    opts = bench.Options(books="73017")
    plan = bench.plan(PlanContext("250-20", data_dir=sort_data, model=ModelFacts("random"),
                                  info=lambda _: None, dry_run=True), opts)
    assert isinstance(plan, RunPlan) and plan.estimated.why == ESTIMATED_NOTE
    plan.options = opts
    with pytest.raises(UsageError, match="estimated for a dry run"):
        asyncio.run(bench.prepare(plan, None))


@pytest.mark.slow
def test_the_grid_fails_exactly_the_named_cells(books, tmp_path):
    """The whole grid built (as a run builds it): the cells it fails are BUILD_FAILURES, and
    a dry run's rows are the built ones; a quick profile's 332 pairs, tokens within the
    tolerance."""
    ordered = [books[b] for b in sorted(books, key=list(books).index)]
    summary = build_books(ordered, CONDITIONS, out_dir=tmp_path, csv=False, workers=2)
    assert {(f.book_idx, f.excerpt_length, f.segment_length)
            for f in summary.failures} == BUILD_FAILURES
    assert summary.n_cells == len(plan_cells(ordered)) - len(BUILD_FAILURES) == 83
    built = row_groups(tmp_path, "test")
    est = estimated_groups(ordered, CONDITIONS, "test")
    _compare(built, est, list(CONDITIONS), "test")
    quick = [planned_rows(g, list(CONDITIONS), excerpts=1) for g in (built, est)]
    assert len(quick[0]) == len(quick[1]) == 332
    chars = [sum(len(r["excerpt_text"]) + len(r["segment_1"]) + len(r["segment_2"])
                 for r in rows) for rows in quick]
    assert abs(chars[1] / chars[0] - 1) < TOKEN_TOLERANCE, chars



@pytest.mark.slow
def test_a_profile_dry_run_estimates_sort_and_says_so(cli, tmp_path, sort_data):
    """`profile --dry-run` plans with `dry_run` too: SORT's row says its numbers are estimated
    (the other benchmarks' data is absent here, so they are listed as missing)."""
    from mindprobe.core.paths import cache_dir

    root = tmp_path / "data"
    root.mkdir()
    (root / "sort").symlink_to(sort_data)
    code, plan, err = cli("profile", "--model", "random", "--size", "quick", "--dry-run",
                          "--data-dir", root, "--runs-dir", tmp_path / "runs", "--json")
    assert code == 0, err
    (row,) = [r for r in plan["plan"] if r["benchmark"] == "sort"]
    assert row["status"] == "runs" and row["items"] == 332
    assert ESTIMATED_NOTE in row["assumes"]
    assert row["estimated"] == {"why": ESTIMATED_NOTE, "what": list(ESTIMATED_NUMBERS)}
    assert all(r["estimated"] is None for r in plan["plan"] if r["benchmark"] != "sort")
    assert not list((cache_dir() / "decoded").glob("sort-built-rows*"))
