"""MR-GSM8K's run options (light: imported to build `mindprobe run mr_gsm8k --help`)."""

from __future__ import annotations

from dataclasses import dataclass

from mindprobe.core.options import option

MAX_SHOTS = 5


@dataclass
class MRGSM8KOptions:
    shots: int = option(0, f"demos before the question, 0-{MAX_SHOTS} (published runs use 0 "
                        "and 3)", minimum=0, maximum=MAX_SHOTS)
    judge: str | None = option(None, "model spec that grades the error reasons (T3); same as "
                               "--role judge=SPEC; without it MR-Score is a lower bound",
                               metavar="SPEC")
    question_type: str | None = option(None, "only these types, comma-separated (original, "
                                       "POT, reversed)", metavar="TYPES")
    sample: int | None = option(None, "a seeded sample of N solutions, stratified by question "
                                "type and correct/wrong label (--seed; default all)",
                                minimum=1, maximum=1_000_000, metavar="N")
    data_file: str | None = option(None, "records to use instead of the official file (JSON "
                                   "array or JSONL with the MR-GSM8K fields)", metavar="FILE")
    share_correct: float | None = option(None, "variant fresh: the share of correct solutions "
                                         "(default: the official file's, 1427 of 3000)",
                                         minimum=0.0, maximum=1.0, metavar="SHARE")
    error_kinds: str | None = option(None, "variant fresh: the kinds of planted first error, "
                                     "comma-separated (calculation, operation, quantity; "
                                     "default all)", metavar="KINDS")
