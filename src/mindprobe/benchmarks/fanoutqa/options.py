"""FanOutQA's run options (light: imported to build `mindprobe run fanoutqa --help`)."""

from __future__ import annotations

from dataclasses import dataclass

from mindprobe.core.options import option

from .upstream import DEFAULT_VERSION, VERSIONS

#: The context the paper's "short" runs (and Llama-2-70B-chat) used; the default ``max_context``
#: when neither --max-context nor the model's context window is known.
PAPER_MAX_CONTEXT = 4096
#: Wall-clock cap per question in the paper's open-book runs.
PAPER_TIME_LIMIT = 600.0


@dataclass
class FanOutQAOptions:
    split: str = option("dev", "dev (310 questions with answers: scored here) or test (725 "
                        "without: answers only, for the leaderboard via `mindprobe export`)",
                        choices=["dev", "test"])
    dataset_version: str = option(DEFAULT_VERSION, "questions and gold answers: jul26 "
                                  "(upstream's July 2026 corrected release, the default) or "
                                  "nov23 (the original release: the paper and the leaderboard's "
                                  "first years)", choices=list(VERSIONS), metavar="VERSION")
    max_context: int | None = option(None, "token budget of a prompt (evidenceprovided: "
                                     "documents fill max_context-520 tokens; openbook: a "
                                     "search result fills max_context/2, history is trimmed "
                                     "to max_context-520). Default: the model's context window "
                                     "(less any --max-tokens above 512), else the paper's "
                                     f"{PAPER_MAX_CONTEXT}", minimum=1024, maximum=10_000_000,
                                     metavar="TOKENS")
    chunk_size: int = option(1024, "characters per retrieval chunk (paper 1024; the library's "
                             "default is 2048)", minimum=64, maximum=65536)
    lemmatizer: str = option("auto", "lemmatiser behind accuracy and BM25: auto (en_core_web_sm, "
                             "else its PyPI re-upload), lookup (approximate), or an importable "
                             "spaCy pipeline package", metavar="BACKEND")
    judge: str | None = option(None, "model spec of the GPT-as-judge metric (paper: "
                               "openai:gpt-4-0613; leaderboard since 2025: gpt-4o-2024-11-20); "
                               "same as --role judge=SPEC", metavar="SPEC")
    wiki_cache: str | None = option(None, "Wikipedia page cache ({pageid}-dated.md files, "
                                    "upstream's layout); default $MINDPROBE_FANOUTQA_CACHE, else "
                                    "~/.cache/fanoutqa/wikicache (with --wiki kiwix: its "
                                    "kiwix/BOOK folder)", metavar="DIR")
    wiki: str = option("api", "where pages come from: api (the MediaWiki API: each page's "
                       "revision at 2023-11-20) or kiwix:URL (a kiwix-serve with upstream's "
                       "2023-09 archive; $MINDPROBE_KIWIX_URL when just `kiwix`)",
                       metavar="SOURCE")
    kiwix_book: str | None = option(None, "with --wiki kiwix:URL: the ZIM's name without .zim "
                                    "(default $MINDPROBE_KIWIX_BOOK, else "
                                    "wikipedia_en_all_nopic_2023-09)", metavar="NAME")
    wiki_api: str | None = option(None, "MediaWiki api.php URL (default "
                                  "https://en.wikipedia.org/w/api.php)", metavar="URL")
    offline: bool = option(False, "never touch the network: pages come from --wiki-cache or "
                           "the run stops naming the missing page (evidenceprovided only)")
    search_results: int = option(10, "openbook: similar titles offered when a search names no "
                                 "page (paper 10)", minimum=1, maximum=50)
    time_limit: float = option(PAPER_TIME_LIMIT, "openbook: wall-clock seconds per question "
                               "(paper 600); at the cap the loop stops and the question is "
                               "answered with the last message so far", minimum=1,
                               maximum=86_400)
    wiki_attempts: int = option(5, "attempts per Wikipedia request before the question is "
                                "recorded as an error", minimum=1, maximum=20)
