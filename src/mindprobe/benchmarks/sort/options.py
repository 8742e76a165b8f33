"""SORT's run options (light: imported to build `mindprobe run sort --help`)."""

from __future__ import annotations

from dataclasses import dataclass

from mindprobe.core.options import option

PROMPT_NAMES = [f"prompt_{i}" for i in range(13)]
CONTEXTS = ["in-context", "no-context", "retrieval", "long-term"]
#: Conditions whose prompt holds no excerpt (long-term: the book is in the model's weights).
NO_EXCERPT = ("no-context", "long-term")
DEFAULT_HELD_OUT = "72963"


@dataclass
class SortOptions:
    prompt: str = option("prompt_0", "prompt wording (the paper's 13 configurations; `mindprobe "
                         "sweep sort` picks the best on the validation rows)", choices=PROMPT_NAMES)
    condition: str = option("in-context", "in-context: the excerpt is in the prompt; "
                            "no-context: only the book title (memory of the book); retrieval: "
                            "BM25 passages retrieved for the two segments replace the excerpt; "
                            "long-term: no-context prompts to a model fine-tuned on the books "
                            "(`mindprobe export sort --finetune-corpus`), the paper's long-term "
                            "memory", choices=CONTEXTS)
    task: str = option("first", "which segment to ask for", choices=["first", "last"])
    split: str = option("test", "test (excerpts 0-99) or validation (100-109, for prompt "
                        "selection)", choices=["test", "validation"])
    scoring: str = option("logprob", "logprob: the label with the higher log-probability of "
                          "the first answer token (as the paper scores); text: parse the reply "
                          "(only for backends without log-probs; recorded)",
                          choices=["logprob", "text"])
    space: str = option("auto", "a space after upstream's answer prefix: auto decides as "
                        "upstream does, from the model's tokenizer (spaces as separate tokens: "
                        "yes), where the backend exposes one, else no; recorded in the manifest",
                        choices=["auto", "yes", "no"])
    books: str | None = option(None, "only these Gutenberg ids, comma-separated", metavar="IDS")
    excerpts: int | None = option(None, "only the first N excerpts of each book and condition, "
                                  "with all their segment pairs (a quick run that still shows "
                                  "prefix reuse; a book has 100)", minimum=1, maximum=100)
    base_model: str | None = option(None, "with --condition long-term: the label of the model "
                                    "it was fine-tuned from, whose no-context run is its "
                                    "baseline in `analyse` and the report", metavar="LABEL",
                                    needs=("condition", ("long-term",)))
    held_out: str = option(DEFAULT_HELD_OUT, "with --condition long-term: Gutenberg ids kept out "
                           "of the fine-tuning corpus, the control books (default: 72963, as "
                           "the paper)", metavar="IDS", needs=("condition", ("long-term",)))
    retrieval_k: int = option(3, "passages retrieved per segment (--condition retrieval)",
                              minimum=1, maximum=20,
                              needs=("condition", ("retrieval",)))
