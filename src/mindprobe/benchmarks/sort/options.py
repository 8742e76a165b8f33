"""SORT's run options (light: imported to build `mindprobe run sort --help`)."""

from __future__ import annotations

from dataclasses import dataclass

from mindprobe.core.options import option

PROMPT_NAMES = [f"prompt_{i}" for i in range(13)]
CONTEXTS = ["in-context", "no-context", "retrieval"]


@dataclass
class SortOptions:
    prompt: str = option("prompt_0", "prompt wording (the paper's 13 configurations; `mindprobe "
                         "sweep sort` picks the best on the validation rows)", choices=PROMPT_NAMES)
    condition: str = option("in-context", "in-context: the excerpt is in the prompt; "
                            "no-context: only the book title (memory of the book); retrieval: "
                            "BM25 passages retrieved for the two segments replace the excerpt",
                            choices=CONTEXTS)
    task: str = option("first", "which segment to ask for", choices=["first", "last"])
    split: str = option("test", "test (excerpts 0-99) or validation (100-109, for prompt "
                        "selection)", choices=["test", "validation"])
    scoring: str = option("logprob", "logprob: the label with the higher log-probability of "
                          "the first answer token (as the paper scores); text: parse the reply "
                          "(only for backends without log-probs; recorded)",
                          choices=["logprob", "text"])
    books: str | None = option(None, "only these Gutenberg ids, comma-separated", metavar="IDS")
    excerpts: int | None = option(None, "only the first N excerpts of each book and condition, "
                                  "with all their segment pairs (a quick run that still shows "
                                  "prefix reuse)", minimum=1)
    retrieval_k: int = option(3, "passages retrieved per segment (--condition retrieval)",
                              minimum=1, maximum=20,
                              needs=("condition", ("retrieval",)))
