"""FanOutQA end to end: `mindprobe run fanoutqa:*`, `analyse`, `judge` and `export`.

Closed book runs on the embedded model; evidence-provided and open-book runs talk to the fake
MediaWiki server (the evidence pages of the first two dev questions) and an OpenAI-compatible
test server whose replies are scripted from the prompt.
"""

from __future__ import annotations

import json
import socket
import threading
from pathlib import Path
from typing import Any

import pytest

from mindprobe.benchmarks.fanoutqa import prompts
from mindprobe.benchmarks.fanoutqa.chunking import chunk_text
from mindprobe.benchmarks.fanoutqa.retrieval import TOKEN_ESTIMATE_NAME, estimate_tokens
from mindprobe.core.store import read_records
from mindprobe.testing import TestServer
from mindprobe.testing.kiwix import KiwixServer, build_zim, kiwix_missing
from mindprobe.testing.mediawiki import MediaWikiServer
from mindprobe.testing.wiki_fixtures import FANOUTQA_DEV_PAGES, PAGES

Q_DRAFT, Q_STARWARS = "7dcbbbdc7f1120cd", "2120afba8009bad3"
DRAFT_ANSWER = ("Pat Burrell: Right\nMark Mulder: Left\nCorey Patterson: Left\n"
                "Jeff Austin: Right\nJD Drew: Left")
STARWARS_ANSWER = "The Phantom Menace: $1.027 billion\nThe Last Jedi: $1.334 billion"


@pytest.fixture(autouse=True)
def _needs_data(dev):
    """Every test here needs the nov23 data (skips cleanly without the fanoutqa wheel)."""


@pytest.fixture
def wiki():
    with MediaWikiServer(pages=PAGES + FANOUTQA_DEV_PAGES) as server:
        yield server


class Model:
    """Scripted model under test (+ judges): replies from the last user message."""

    def __init__(self, searches: list[str] | None = None, always_search: bool = False):
        self.searches = list(searches or [])
        self.always_search = always_search
        self.prompts: list[str] = []  # model-under-test requests, last user message
        self.conversations: list[list[dict[str, Any]]] = []
        self.judge_calls: list[str] = []
        self.lock = threading.Lock()

    def __call__(self, body: dict[str, Any]) -> str:
        messages = body["messages"]
        last = messages[-1]["content"]
        with self.lock:
            if body["model"] != "test-model":
                self.judge_calls.append(body["model"])
                return "The submission states the same facts.\nC\nC"
            self.prompts.append(last)
            self.conversations.append(messages)
            if self.always_search:
                return f"<search>Pat Burrell</search> (turn {len(messages)})"
            n_replies = sum(1 for m in messages if m["role"] == "assistant")
            if self.searches and n_replies < len(self.searches):
                return f"<search>{self.searches[n_replies]}</search> and some trailing text"
        text = "\n".join(m["content"] for m in messages)
        return DRAFT_ANSWER if "1998 MLB draft" in text else STARWARS_ANSWER


def _run_dir(root: Path, setting: str) -> Path:
    (path,) = (root / "fanoutqa" / setting).iterdir()
    return path


def _common(tmp_path: Path, wiki: MediaWikiServer | None = None) -> list[str]:
    args = ["--runs-dir", tmp_path / "runs", "--no-cache", "--max-attempts", "1", "--json"]
    if wiki is not None:
        args += ["--wiki-api", wiki.api_url, "--wiki-cache", tmp_path / "wikicache"]
    return args


# ------------------------------------------------------------------ closed book, embedded model


@pytest.mark.slow
def test_closedbook_local_then_rescore_export_and_analyse(cli, tmp_path):
    code, doc, err = cli("run", "fanoutqa", "--model", "local", "--limit", 2, "--max-tokens", 16,
                         *_common(tmp_path))
    assert code == 0, err
    assert doc["variant"] == "closedbook" and doc["dataset_version"] == "jul26"
    head = doc["headline"]
    assert head["name"] == "loose accuracy" and head["n"] == 2
    assert head["ci_method"].startswith(("bootstrap95", "wilson95 (no spread"))
    assert {"overall", "by_category", "by_fanout"} <= set(doc["tables"])
    overall = {r["metric"]: r for r in doc["tables"]["overall"]}
    assert overall["BLEURT"]["value"] is None and "BLEURT" in overall["BLEURT"]["note"]
    assert overall["LLM judge"]["value"] is None  # no judge ran: not "GPT judge"
    assert doc["score"]["acc"]["loose"] == head["value"] and doc["score"]["bleurt"] is None
    assert doc["lemmatizer"]["backend"].startswith("spacy:")

    run = _run_dir(tmp_path / "runs", "closedbook")
    assert run.name.startswith("paper-jul26___")  # never the folder of an older nov23 run
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["data"]["dataset_version"] == "jul26"
    assert manifest["config"]["dataset_version"] == "jul26"
    records = read_records(run / "records.jsonl")
    assert [r["id"] for r in records] == [Q_DRAFT, Q_STARWARS]
    for r in records:
        assert isinstance(r["answer"], str) and r["finish_reason"] in ("stop", "length")
        assert set(r["scores"]) == {"loose", "strict", "missing", "rouge"}
        assert r["lemmatizer"].startswith("spacy:")

    # Re-scored with the lookup backend: no model, the backend is named and flagged.
    code, doc2, err = cli("analyse", "fanoutqa", "--run", run, "--lemmatizer", "lookup", "--json")
    assert code == 0, err
    assert doc2["lemmatizer"]["backend"] == "lookup(approximate)"
    assert doc2["lemmatizer"]["exact"] is False and doc2["headline"]["n"] == 2
    assert any("APPROXIMATE" in w for w in doc2["warnings"])
    assert doc2["dataset_version"] == "jul26"  # the run's own release
    # Against the other release's gold: said in the JSON, the title and a warning.
    code, doc4, err = cli("analyse", "fanoutqa", "--run", run, "--dataset-version", "nov23",
                          "--json")
    assert code == 0, err
    assert doc4["dataset_version"] == "nov23" and doc4["run_dataset_version"] == "jul26"
    assert any("re-scored against the nov23 gold" in w for w in doc4["warnings"])
    # A judge pass or an export of another release than the run's is refused.
    code, _, err = cli("judge", "fanoutqa", "--run", run, "--judge", "random",
                       "--dataset-version", "nov23")
    assert code == 2 and "is a jul26 run" in err

    # Export round trip: the exported file scores the same.
    out, meta = tmp_path / "sub" / "closedbook.jsonl", tmp_path / "sub" / "meta.json"
    code, exp, err = cli("export", "fanoutqa", "--run", run, "--out", out, "--metadata", meta,
                         "--authors", "Tester", "--json")
    assert code == 0, err
    assert exp["n_answers"] == 2 and exp["n_missing"] == 308 and "308" in err
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    assert [x["id"] for x in lines] == [Q_DRAFT, Q_STARWARS]
    assert [x["answer"] for x in lines] == [r["answer"] for r in records]
    m = json.loads(meta.read_text())
    assert m["closedbook_generations"] == "closedbook.jsonl" and m["authors"] == "Tester"
    assert m["type"] == "FOUNDATION" and m["is_trained_for_function_calling"] is False
    assert m["dataset_version"] == "jul26" and exp["dataset_version"] == "jul26"
    assert {"name", "url", "citation", "context", "details"} <= set(m)
    assert "closed book" in m["details"] and "open book" not in m["details"]
    code, doc3, err = cli("analyse", "fanoutqa", "--generations", out, "--only-score-answered",
                          "--json")
    assert code == 0, err
    assert doc3["score"]["acc"] == doc["score"]["acc"] and doc3["n"] == 2
    assert doc3["dataset_version"] == "jul26"
    for t in ("rouge1", "rouge2", "rougeL"):
        assert doc3["score"]["rouge"][t] == pytest.approx(doc["score"]["rouge"][t])
    code, doc5, err = cli("analyse", "fanoutqa", "--generations", out, "--only-score-answered",
                          "--dataset-version", "nov23", "--json")
    assert code == 0 and doc5["dataset_version"] == "nov23", err


def test_nov23_runs_keep_the_folder_and_identity_of_runs_made_before_releases(cli, tmp_path):
    """A nov23 run has the folder name and data identity every earlier run recorded, so an old
    run resumes with --dataset-version nov23; a jul26 run of the same model sits beside it."""
    with TestServer(reply="Some answer") as srv:
        model = f"openai:test-model@{srv.base_url}"
        label = "test-model"  # the model, not its address (issue 22)
        args = ["run", "fanoutqa", "--model", model, "--limit", 2, "--runs-dir",
                tmp_path / "runs", "--no-cache", "--json"]
        code, doc, err = cli(*args, "--dataset-version", "nov23")
        assert code == 0 and doc["dataset_version"] == "nov23", err
        (run,) = (tmp_path / "runs" / "fanoutqa" / "closedbook").iterdir()
        assert run.name == f"paper___{label}"
        code, doc, err = cli(*[a if a != 2 else 3 for a in args], "--dataset-version", "nov23")
        assert code == 0 and doc["headline"]["n"] == 3, err  # resumed: one more question
        code, doc, err = cli(*args)
        assert code == 0 and doc["dataset_version"] == "jul26", err
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["data"] == {  # exactly what mindprobe recorded before jul26 existed
        "dataset": "FanOutQA", "dataset_version": "nov23", "package": "fanoutqa==1.1.1",
        "file": "fanout-final-dev.json", "split": "dev",
        "sha256": "359300b029c6891567816f351bf8786e9b018d7af8a1a44b7da9ba5ef4651288"}
    assert manifest["config"]["dataset_version"] == "nov23"
    assert sorted(p.name for p in run.parent.iterdir()) == [f"paper-jul26___{label}",
                                                            f"paper___{label}"]


# ------------------------------------------------------------------ evidence provided


@pytest.mark.slow
def test_evidenceprovided_fills_the_paper_prompt_and_judges(cli, tmp_path, wiki,
                                                            exact_normalizer):
    model = Model()
    with TestServer(models=["test-model", "judge-a", "judge-b"], responder=model) as srv:
        code, doc, err = cli("run", "fanoutqa:evidenceprovided", "--model",
                             f"openai:test-model@{srv.base_url}", "--limit", 2,
                             "--max-context", 1400, "--chunk-size", 256,
                             "--judge", f"openai:judge-a@{srv.base_url}", *_common(tmp_path, wiki))
        assert code == 0, err
        run = _run_dir(tmp_path / "runs", "evidenceprovided")
        records = {r["id"]: r for r in read_records(run / "records.jsonl")}
        assert len(model.prompts) == 2 and model.judge_calls == ["judge-a", "judge-a"]

        draft = records[Q_DRAFT]
        assert draft["scores"]["loose"] == 1.0 and draft["scores"]["strict"] is True
        assert draft["token_count_method"] == TOKEN_ESTIMATE_NAME
        assert draft["token_count_exact"] is False
        assert draft["max_context"] == 1400 and draft["max_context_source"] == "--max-context"
        ctx = draft["context"]
        assert ctx["budget"] == 1400 - 520 and ctx["tokens"] <= ctx["budget"]
        assert 0 < ctx["chunks_kept"] < ctx["chunks_total"] == len(ctx["chunk_ids"]) or \
            ctx["chunks_kept"] == len(ctx["chunk_ids"])
        pageids = {p.pageid for p in FANOUTQA_DEV_PAGES}
        assert all(int(c.split(":")[0]) in pageids for c in ctx["chunk_ids"])
        assert draft["judge"]["verdict"] is True and draft["judge"]["letter"] == "c"
        assert doc["score"]["gpt"] == 1.0 and doc["judge"].startswith("judge-a")
        rows = {r["metric"]: r for r in doc["tables"]["overall"]}
        assert "LLM judge" in rows and "GPT judge" not in rows  # judge-a is no GPT model
        label_a = doc["judge"]

        # The prompt is exactly the pure builder's (same chunks, BM25+ order, first overflow).
        cache = tmp_path / "wikicache"
        questions = {q.id: q for q in __import__(
            "mindprobe.benchmarks.fanoutqa.data", fromlist=["load_dev"]).load_dev()[:2]}
        q = questions[Q_DRAFT]
        pages = [(e.title, (cache / f"{e.pageid}-dated.md").read_text())
                 for e in q.necessary_evidence]
        want = prompts.evidence_provided_messages(q.question, pages, 1400, estimate_tokens,
                                                  exact_normalizer, chunk_size=256)
        sent = next(p for p in model.prompts if "1998 MLB draft" in p)
        assert sent == want.messages[0]["content"]
        assert want.n_chunks_kept == ctx["chunks_kept"] and want.prompt_tokens == ctx["tokens"]
        assert sent.startswith("*** BEGIN DATA ***\n\n<document>\n<title>")

        # A second judge later: the model is not asked again; both judges are reported.
        model.prompts.clear()
        model.judge_calls.clear()
        code, jdoc, err = cli("judge", "fanoutqa", "--run", run, "--judge",
                              f"openai:judge-b@{srv.base_url}", "--no-cache", "--json")
        assert code == 0, err
        assert model.prompts == [] and model.judge_calls == ["judge-b", "judge-b"]
        label_b = next(j for j in jdoc["judges"] if j != label_a)
        assert set(jdoc["judges"]) == {label_a, label_b} and label_b.startswith("judge-b")
        assert jdoc["judges"][label_b]["judged"] == 2 and jdoc["judge"] == label_b
        assert (run / "judgements" / f"{label_b}.jsonl").exists()
        code, _, err = cli("judge", "fanoutqa", "--run", run, "--judge",
                           f"openai:judge-b@{srv.base_url}", "--no-cache", "--json")
        assert code == 0 and model.judge_calls == ["judge-b", "judge-b"]  # resumed: nothing new
        code, adoc, err = cli("analyse", "fanoutqa", "--run", run, "--judge-label", label_b,
                              "--json")
        assert code == 0 and adoc["judge"] == label_b and adoc["score"]["gpt"] == 1.0
        code, adoc, err = cli("analyse", "fanoutqa", "--run", run, "--json")
        assert code == 0 and adoc["judge"] == label_a and len(adoc["tables"]["judges"]) == 2

    # Offline from the cache the first run filled: no Wikipedia needed.
    wiki.stop()
    with TestServer(responder=model) as srv:
        code, doc, err = cli("run", "fanoutqa:evidenceprovided", "--model",
                             f"openai:test-model@{srv.base_url}", "--limit", 2,
                             "--max-context", 1400, "--chunk-size", 256, "--offline",
                             "--wiki-cache", tmp_path / "wikicache", "--runs-dir",
                             tmp_path / "offline", "--no-cache", "--json")
    assert code == 0, err
    assert doc["headline"]["value"] > 0


def test_offline_cache_miss_is_one_message_and_keeps_records(cli, tmp_path, wiki):
    model = Model()
    with TestServer(responder=model) as srv:
        url = f"openai:test-model@{srv.base_url}"
        # The first question's pages get cached online.
        code, _, err = cli("run", "fanoutqa:evidenceprovided", "--model", url, "--limit", 1,
                           *_common(tmp_path, wiki))
        assert code == 0, err
        # Offline, the second question's pages are missing: the run stops with one message.
        code, _, err = cli("run", "fanoutqa:evidenceprovided", "--model", url, "--limit", 2,
                           "--offline", "--wiki-cache", tmp_path / "wikicache",
                           "--runs-dir", tmp_path / "runs", "--no-cache")
    assert code == 2 and "Traceback" not in err
    assert "offline cache" in err and str(tmp_path / "wikicache") in err.replace("\n", "")
    assert "pageid" in err and "Star Wars" in err
    records = read_records(_run_dir(tmp_path / "runs", "evidenceprovided") / "records.jsonl")
    assert [r["id"] for r in records] == [Q_DRAFT] and "error" not in records[0]


@pytest.mark.slow
def test_unreachable_wikipedia_stops_the_run_in_seconds_with_one_message(cli, tmp_path, wiki):
    """No network (nothing listens at the API's address): the run stops with exit code 2 and
    one message naming the source and the fixes, long before every question failed slowly;
    the record written before stays, nothing is scored as 0."""
    import time

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed once the block ends: nothing listens there
    with TestServer(responder=Model()) as srv:
        model = f"openai:test-model@{srv.base_url}"
        code, _, err = cli("run", "fanoutqa:evidenceprovided", "--model", model, "--limit", 1,
                           *_common(tmp_path, wiki))
        assert code == 0, err
        t0 = time.monotonic()
        code, doc, err = cli("run", "fanoutqa:evidenceprovided", "--model", model, "--limit", 8,
                             "--wiki-api", f"http://127.0.0.1:{port}/w/api.php",
                             "--wiki-cache", tmp_path / "wikicache",
                             "--runs-dir", tmp_path / "runs", "--no-cache", "--json")
        elapsed = time.monotonic() - t0
    assert code == 2 and elapsed < 30, (elapsed, err)
    assert "Traceback" not in err and doc["exit_code"] == 2
    message = doc["error"]
    assert f"http://127.0.0.1:{port}/w/api.php" in message and "cannot be reached" in message
    assert "--wiki kiwix:" in message and "--wiki-cache" in message and "--offline" in message
    records = read_records(_run_dir(tmp_path / "runs", "evidenceprovided") / "records.jsonl")
    assert [r["id"] for r in records] == [Q_DRAFT] and "error" not in records[0]
    assert records[0]["page_sources"] and set(records[0]["page_sources"]) == {"api"}


# ------------------------------------------------------------------ a local Wikipedia (Kiwix)


@pytest.fixture(scope="module")
def kiwix(tmp_path_factory):
    """A real kiwix-serve over a ZIM of the fixture pages (the dev questions' evidence)."""
    reason = kiwix_missing()
    if reason:
        pytest.skip(reason)
    zim = build_zim(tmp_path_factory.mktemp("zim") / "wikipedia_test.zim")
    with KiwixServer(zim) as server:
        yield server


def test_evidenceprovided_and_openbook_read_a_kiwix_archive(cli, tmp_path, kiwix, wiki):
    """Both settings end to end on a kiwix-serve; every page says it came from there, and the
    pages are the same Markdown the API path caches."""
    source = ["--wiki", f"kiwix:{kiwix.url}", "--kiwix-book", kiwix.book,
              "--wiki-cache", tmp_path / "kiwixcache"]
    common = ["--runs-dir", tmp_path / "runs", "--no-cache", "--max-attempts", "1", "--json"]
    model = Model()
    with TestServer(responder=model) as srv:
        url = f"openai:test-model@{srv.base_url}"
        code, doc, err = cli("run", "fanoutqa:evidenceprovided", "--model", url, "--limit", 2,
                             *source, *common)
        assert code == 0, err
        assert f"kiwix:{kiwix.url} (book {kiwix.book})" in err.replace("\n", "")
        records = {r["id"]: r for r in read_records(
            _run_dir(tmp_path / "runs", "evidenceprovided") / "records.jsonl")}
        assert set(records) == {Q_DRAFT, Q_STARWARS} and doc["n_errors"] == 0
        n_pages = sum(len(r["page_sources"]) for r in records.values())
        assert doc["page_sources"] == {"kiwix": n_pages}
        assert any(n.startswith(f"Wikipedia pages from: kiwix {n_pages}") for n in doc["notes"])
        for rec in records.values():
            assert rec["page_sources"] and set(rec["page_sources"]) == {"kiwix"}
            assert rec["scores"]["loose"] > 0
        sent = next(p for p in model.prompts if "1998 MLB draft" in p)
        assert "<title>Pat Burrell</title>" in sent and "Bats: Right" in sent
        # The same pages through the fake MediaWiki API convert to the same Markdown.
        code, _, err = cli("run", "fanoutqa:evidenceprovided", "--model", url, "--limit", 1,
                           "--name", "api", *_common(tmp_path, wiki))
        assert code == 0, err
        api_pages = list((tmp_path / "wikicache").glob("*-dated.md"))
        assert len(api_pages) == 6
        for page in api_pages:
            assert (tmp_path / "kiwixcache" / page.name).read_text() == page.read_text()

    with TestServer(responder=Model(searches=["pat burrell", "Pat Burrell"])) as srv:
        code, doc, err = cli("run", "fanoutqa:openbook", "--model",
                             f"openai:test-model@{srv.base_url}", "--limit", 1,
                             "--max-context", 2048, *source, *common)
        assert code == 0, err
    (rec,) = read_records(_run_dir(tmp_path / "runs", "openbook") / "records.jsonl")
    trail = rec["search_trail"]
    assert [t["outcome"] for t in trail] == ["not_found", "page"]
    assert "Pat Burrell" in trail[0]["similar"]  # kiwix's full-text search offers it
    # Found by title: the archive has no page ids, so the page is cached under its title.
    assert trail[1]["title"] == "Pat Burrell" and trail[1]["source"] == "kiwix"
    assert trail[1]["pageid"] is None and trail[1]["chunk_ids"][0].startswith("Pat Burrell:")
    assert rec["answer"] == DRAFT_ANSWER and rec["scores"]["loose"] == 1.0


def test_bad_wiki_sources_are_one_line_errors(cli, tmp_path, monkeypatch):
    monkeypatch.delenv("MINDPROBE_KIWIX_URL", raising=False)
    base = ["run", "fanoutqa:evidenceprovided", "--model", "random", "--runs-dir",
            tmp_path / "runs"]
    code, _, err = cli(*base, "--wiki", "mirror")
    assert code == 2 and "expected api or kiwix:URL" in err
    code, _, err = cli(*base, "--wiki", "kiwix:localhost:8080")
    assert code == 2 and "kiwix:http://127.0.0.1:8080" in err
    code, _, err = cli(*base, "--kiwix-book", "x")
    assert code == 2 and "--kiwix-book goes with --wiki kiwix:URL" in err
    code, _, err = cli("run", "fanoutqa", "--model", "random", "--wiki", "kiwix:http://x")
    assert code == 2 and "--wiki sets how Wikipedia is read, which fanoutqa:closedbook" in err
    code, _, err = cli(*base, "--wiki", "kiwix")  # no URL, and no $MINDPROBE_KIWIX_URL
    assert code == 2 and "MINDPROBE_KIWIX_URL" in err
    code, _, err = cli(*base, "--wiki", "kiwix:http://127.0.0.1:1", "--wiki-api", "http://x")
    assert code == 2 and "does not go with" in err


# ------------------------------------------------------------------ open book


def test_openbook_search_loop(cli, tmp_path, wiki):
    model = Model(searches=["Pat Burrell", "Batting hands of draft picks", "Python"])
    with TestServer(responder=model) as srv:
        code, doc, err = cli("run", "fanoutqa:openbook", "--model",
                             f"openai:test-model@{srv.base_url}", "--limit", 1,
                             "--max-context", 2048, *_common(tmp_path, wiki))
    assert code == 0, err
    (rec,) = read_records(_run_dir(tmp_path / "runs", "openbook") / "records.jsonl")
    trail = rec["search_trail"]
    assert [t["outcome"] for t in trail] == ["page", "not_found", "disambiguation"]
    assert trail[0]["title"] == "Pat Burrell" and trail[0]["pageid"] == 428791
    assert trail[0]["chunk_ids"] and trail[0]["tokens"] <= 2048 // 2
    assert "Monty Python" in trail[2]["options"]
    assert rec["answer"] == DRAFT_ANSWER and rec["stopped"] == "answered"
    assert rec["scores"]["loose"] == 1.0 and rec["n_searches"] == 3
    assert rec["replies"][0] == "<search>Pat Burrell</search>"  # cut right after </search>
    conv = model.conversations[-1]
    assert [m["role"] for m in conv] == ["user", "assistant", "user", "assistant", "user",
                                         "assistant", "user"]
    assert conv[0]["content"] == prompts.open_book_messages(
        "What is the batting hand of each of the first five picks in the 1998 MLB draft?"
    )[0]["content"]
    assert conv[2]["content"].startswith("<document>\n<title>Pat Burrell</title>\n<fragment>\n")
    assert conv[4]["content"].startswith(prompts.NOT_FOUND + "\n<search>")
    assert conv[6]["content"].startswith(prompts.DISAMBIGUATION + "\n<search>")
    assert any("text search protocol" in n for n in doc["notes"])


def test_openbook_time_limit_still_answers_and_history_is_trimmed(cli, tmp_path):
    model = Model(always_search=True)
    with MediaWikiServer(pages=PAGES + FANOUTQA_DEV_PAGES, latency=0.02) as wiki, \
            TestServer(responder=model) as srv:
        code, doc, err = cli("run", "fanoutqa:openbook", "--model",
                             f"openai:test-model@{srv.base_url}", "--limit", 1,
                             "--max-context", 1024, "--time-limit", 1.5,
                             *_common(tmp_path, wiki))
    assert code == 0, err
    (rec,) = read_records(_run_dir(tmp_path / "runs", "openbook") / "records.jsonl")
    # asyncio's timer may fire a few ms early: the loop takes 10 ms before the deadline as it
    assert rec["stopped"] == "time_limit" and 1.49 <= rec["elapsed_s"] < 5
    assert rec["answer"]  # the last non-empty message of the round so far
    assert any("time limit" in n for n in doc["notes"])
    # The history was trimmed oldest-first to max_context - 520 tokens: the question went.
    assert rec["trimmed_turns"] > 0 and len(model.conversations) > 5
    last = model.conversations[-1]
    assert "[Question]" not in last[0]["content"]
    assert sum(estimate_tokens(m["content"]) for m in last) <= 1024 - 520


def test_openbook_refuses_offline(cli, tmp_path):
    code, _, err = cli("run", "fanoutqa:openbook", "--model", "random", "--offline",
                       "--runs-dir", tmp_path)
    assert code == 2 and "--offline cannot run openbook" in err


# ------------------------------------------------------------------ submissions


SPEC_GENERATIONS = [
    {"id": "563b95ed6141123c",
     "answer": "Macau: 680,000\nMaldives: 521,000\nSingapore: 5.9 million\nBahrain: 1,463,000"},
    {"id": "daaf58facccf012d", "answer": "2006, 2012 and 1996"},
    {"id": "ffffffffffffffff", "answer": "not a question: ignored"},
]


@pytest.mark.parametrize("backend", ["auto", "lookup"])
def test_analyse_generations_reproduces_spec_aggregate(cli, tmp_path, backend):
    path = tmp_path / "gen.jsonl"
    path.write_text("".join(json.dumps(g) + "\n" for g in SPEC_GENERATIONS))
    code, doc, err = cli("analyse", "fanoutqa", "--generations", path, "--questions",
                         f"563b95ed6141123c,daaf58facccf012d,{Q_DRAFT}",
                         "--lemmatizer", backend, "--raw", "--dataset-version", "nov23", "--json")
    assert code == 0, err
    score = doc["score"]
    assert doc["n"] == 3 and doc["dataset_version"] == "nov23"
    assert score["acc"]["loose"] == pytest.approx(0.483333, abs=1e-6)
    assert score["acc"]["strict"] == 0.0
    r1, r2, rl = (score["rouge"][t] for t in ("rouge1", "rouge2", "rougeL"))
    assert (r1["precision"], r1["recall"], r1["fscore"]) == pytest.approx(
        (0.261905, 0.287879, 0.273333), abs=1e-6)
    assert (r2["precision"], r2["recall"], r2["fscore"]) == pytest.approx((0.111111,) * 3,
                                                                          abs=1e-6)
    assert rl == r1
    assert [r["acc"] for r in score["raw"]] == pytest.approx([0.7, 0.75, 0.0])
    assert score["bleurt"] is None and score["gpt"] is None
    assert doc["meta"]["n_unknown_ids_ignored"] == 1


def test_analyse_scores_against_jul26_by_default_and_nov23_when_asked(cli, tmp_path, dev,
                                                                     dev_jul26):
    """The nov23 gold answers as a submission: unchanged questions score the same against both
    releases, corrected ones lower against the July 2026 gold."""
    from mindprobe.benchmarks.fanoutqa.flatten import str_answer

    old = {q.id: q for q in dev}
    changed = [q.id for q in dev_jul26 if q.answer != old[q.id].answer]
    same = [q.id for q in dev_jul26 if q.answer == old[q.id].answer]
    ids = changed[:3] + same[:3]
    path = tmp_path / "nov23-gold.jsonl"
    path.write_text("".join(json.dumps({"id": i, "answer": str_answer(old[i].answer)}) + "\n"
                            for i in ids))
    args = ["analyse", "fanoutqa", "--generations", path, "--only-score-answered",
            "--lemmatizer", "lookup", "--raw", "--json"]
    code, new, err = cli(*args)
    assert code == 0 and new["dataset_version"] == "jul26", err
    code, orig, err = cli(*args, "--dataset-version", "nov23")
    assert code == 0 and orig["dataset_version"] == "nov23", err
    orig_acc = [r["acc"] for r in orig["score"]["raw"]]
    new_acc = [r["acc"] for r in new["score"]["raw"]]
    assert new_acc[3:] == orig_acc[3:]
    assert all(n <= o for n, o in zip(new_acc[:3], orig_acc[:3], strict=True))
    assert sum(new_acc[:3]) < sum(orig_acc[:3])


def test_bad_submissions_are_one_line_errors(cli, tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "563b95ed6141123c", "answer": "x"}\n{"id": 1,\n')
    code, _, err = cli("analyse", "fanoutqa", "--generations", bad)
    assert code == 2 and "line 2" in err and "invalid JSON" in err

    nonstr = tmp_path / "nonstr.jsonl"
    nonstr.write_text('{"id": "563b95ed6141123c", "answer": 5}\n')
    code, _, err = cli("analyse", "fanoutqa", "--generations", nonstr)
    assert code == 2 and "line 1" in err and "'answer' must be a string" in err

    unknown = tmp_path / "unknown.jsonl"
    unknown.write_text('{"id": "563b95ed6141123c", "answer": "x"}\n'
                       '{"id": "0000000000000000", "answer": "y"}\n')
    code, _, err = cli("analyse", "fanoutqa", "--generations", unknown, "--only-score-answered")
    assert code == 2 and "0000000000000000" in err and "line 2" in err
    code, doc, err = cli("analyse", "fanoutqa", "--generations", unknown, "--json")
    assert code == 0 and doc["n"] == 310 and doc["meta"]["n_unknown_ids_ignored"] == 1

    code, _, err = cli("analyse", "fanoutqa", "--generations", unknown, "--split", "test")
    assert code == 2 and "maintainers" in err
    code, _, err = cli("analyse", "fanoutqa", "--only-score-answered")
    assert code == 2 and "--generations" in err


def test_test_split_answers_only_and_export(cli, tmp_path):
    with TestServer(reply="Some answer") as srv:
        code, doc, err = cli("run", "fanoutqa", "--split", "test", "--model",
                             f"openai:test-model@{srv.base_url}", "--limit", 3,
                             *_common(tmp_path))
    assert code == 0, err
    assert doc["headline"] is None and doc["tables"]["answers"][0]["answered"] == 3
    run = _run_dir(tmp_path / "runs", "closedbook")
    assert run.name.startswith("paper-test-jul26___")
    out = tmp_path / "test.jsonl"
    code, exp, err = cli("export", "fanoutqa", "--run", run, "--out", out, "--json")
    assert code == 0 and exp["split"] == "test" and exp["n_answers"] == 3
    assert all(json.loads(x)["answer"] == "Some answer" for x in out.read_text().splitlines())
    code, _, err = cli("judge", "fanoutqa", "--run", run, "--judge", "random")
    assert code == 2 and "gold answers" in err


def test_incremental_estimate_fill_matches_the_pure_fill(exact_normalizer):
    """The async fill's additive estimate equals estimate_tokens on the rendered prompt."""
    import asyncio

    from mindprobe.benchmarks.fanoutqa.openbook import TokenCounter, evidence_provided_context
    from mindprobe.models.random import RandomModel as BaseModel  # the base class's estimate

    text = " ".join(f"Word{i}, 1,234.5 units; naïve façade ($9)." for i in range(400))
    pages = [(1, "A page", text), (2, "Another", text[::-1]), (1, "A page", text)]
    for budget in (900, 2000, 5000):
        got = asyncio.run(evidence_provided_context("What units?", pages, budget,
                                                    TokenCounter(BaseModel()), exact_normalizer,
                                                    300))
        want = prompts.evidence_provided_messages(
            "What units?", [(t, x) for _, t, x in pages], budget, estimate_tokens,
            exact_normalizer, chunk_size=300)
        assert got.text == want.messages[0]["content"]
        assert got.tokens == estimate_tokens(got.text) == want.prompt_tokens
        assert len(got.chunk_ids) == want.n_chunks_kept
        assert got.chunks_total == 2 * len(chunk_text(text, 300)) + len(chunk_text(text[::-1], 300))


def test_tokenizer_counted_fill_goes_through_the_model(exact_normalizer):
    """With the "tokenize" capability the fill counts each rendered prompt as one user message
    with the model's own tokenizer, and the record names that method."""
    import asyncio

    from mindprobe.benchmarks.fanoutqa.openbook import TokenCounter, evidence_provided_context
    from mindprobe.models.base import Model as BaseModel

    class Tokenizing(BaseModel):
        capabilities = frozenset({"tokenize"})
        token_count_method = "whitespace test tokenizer"

        def __init__(self):
            self.calls = []

        async def count_tokens(self, messages):
            self.calls.append(messages)
            return 3 + sum(len(m["content"].split()) for m in messages)  # 3: the template

        async def complete(self, request, ctx):
            raise AssertionError("only its tokenizer is used")

    text = " ".join(f"fact{i} about units and more words here." for i in range(300))
    pages = [(7, "Units", text)]
    model = Tokenizing()
    counter = TokenCounter(model)
    assert counter.exact and counter.method == "whitespace test tokenizer"
    got = asyncio.run(evidence_provided_context("Which units?", pages, 1500, counter,
                                                exact_normalizer, 400))
    want = prompts.evidence_provided_messages("Which units?", [("Units", text)], 1500,
                                              lambda t: 3 + len(t.split()), exact_normalizer,
                                              chunk_size=400)
    assert got.text == want.messages[0]["content"] and got.tokens == want.prompt_tokens
    assert all(len(c) == 1 and c[0]["role"] == "user" for c in model.calls)
    assert len(model.calls) == len(got.chunk_ids) + 1  # each kept chunk, then the overflow


def test_empty_answers_are_counted_and_warned_about(cli, tmp_path):
    with TestServer(reply="") as srv:
        code, doc, err = cli("run", "fanoutqa", "--model", f"openai:test-model@{srv.base_url}",
                             "--limit", 6, "--runs-dir", tmp_path, "--lemmatizer", "lookup",
                             "--json")
    assert code == 0, err
    assert doc["meta"]["n_empty"] == 6 and doc["headline"]["percent"] is True
    assert doc["invalid"]["count"] == 6
    row = next(r for r in doc["tables"]["overall"] if r["metric"].startswith("no answer"))
    assert row["value"] == 1.0 and row["note"] == "6 of 6: score 0"
    assert any("6 of 6 answers were empty" in w for w in doc["warnings"])
