"""WorldSense's run options (light: imported to build `mindprobe run worldsense --help`)."""

from __future__ import annotations

from dataclasses import dataclass

from mindprobe.core.options import option

# Kept literal (not imported from strategies.py) so `--help` stays light; a test checks both
# lists agree.
PROMPTINGS = ["basic", "direct", "clarified", "cot", "incontext-iid", "incontext-diffcat",
              "constrained"]


@dataclass
class WorldSenseOptions:
    prompting: str = option(
        "basic", "basic = the trial text verbatim, free answer, re-asked if invalid; direct = "
        "+ 'answer only'; clarified = + the question restated with what each option means; "
        "cot = + 'think step by step, end with a line Answer: X' (that line is scored); "
        "incontext-iid / incontext-diffcat = --shots worked examples of the same / another "
        "problem category first; constrained = the answer set enforced by the backend "
        "(grammar / guided choice). Run labels: basic, direct, clarified, COT, incontext_IID, "
        "incontext_DIFFERENTCAT, constrained", choices=PROMPTINGS)
    shots: int = option(3, "worked examples before each question with --prompting "
                        "incontext-iid / incontext-diffcat (from the official training set, or "
                        "generated ones for worldsense:fresh without it)", minimum=1, maximum=20,
                        needs=("prompting", ("incontext-iid", "incontext-diffcat")))
    scoring: str | None = option(
        None, "text = parse the reply; logprob = pick the allowed answer with the highest "
        "log-probability, as lm-evaluation-harness does for base models (basic, direct, "
        "clarified, incontext-*; not cot or constrained). Default: logprob on the embedded "
        "base model, text elsewhere", choices=["text", "logprob"])
    reasks: int = option(1, "re-asks after an invalid answer (text scoring)", minimum=0,
                         maximum=10)
    data_file: str | None = option(
        None, "a trials file to run instead of the variant's (e.g. the trials.jsonl.bz2 that "
        "`mindprobe generate worldsense` wrote)", metavar="FILE")
