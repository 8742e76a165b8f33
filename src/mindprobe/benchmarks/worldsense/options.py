"""WorldSense's run options (light: imported to build `mindprobe run worldsense --help`)."""

from __future__ import annotations

from dataclasses import dataclass

from mindprobe.core.options import option


@dataclass
class WorldSenseOptions:
    prompting: str = option(
        "basic", "basic = the trial text verbatim, free answer, re-asked if invalid; "
        "constrained = the answer set enforced by the backend (grammar / guided choice)",
        choices=["basic", "constrained"])
    scoring: str | None = option(
        None, "text = parse the reply; logprob = pick the allowed answer with the highest "
        "log-probability, as lm-evaluation-harness does for base models (default: logprob on "
        "the embedded base model, text elsewhere)", choices=["text", "logprob"])
    reasks: int = option(1, "re-asks after an invalid answer (text scoring)", minimum=0,
                         maximum=10)
    data_file: str | None = option(
        None, "a trials file to run instead of the variant's (e.g. the trials.jsonl.bz2 that "
        "`mindprobe generate worldsense` wrote)", metavar="FILE")
