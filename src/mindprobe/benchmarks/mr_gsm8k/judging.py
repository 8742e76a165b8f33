"""T3 judging (spec section 6): one judge call per T2 hit, and where each judge's verdicts live.

Design (one source of truth per judge, nothing copied):
- the judge given to `mindprobe run --judge` answers inside the run; its verdict is part of
  the item's record (`record["judge"]`), like every other per-item score;
- a judge added later with `mindprobe judge mr_gsm8k --run DIR --judge SPEC` is a judge pass
  of the common runner (`judge_item` below): the store appends its verdicts to
  `DIR/judgements/<label>.jsonl` exactly like records.jsonl (resumable, never twice), and
  `DIR/judgements/<label>.json` names the judge, so one label never mixes two judges.
A label's verdicts are the union of both places (the judge command only fills in the T2 hits
the run's own judge left without a verdict when given the same judge). Records of T2 hits keep
the four dataset fields the judge prompt needs, so judging never needs the data file again.
"""

from __future__ import annotations

from typing import Any

from mindprobe.core.judges import merge_judges
from mindprobe.core.model import Request
from mindprobe.core.session import Session
from mindprobe.core.thinking import THINKING_ROOM, generate_with_room
from mindprobe.errors import DataError

from .dataset_file import STEP_FIELD
from .parse import parse_judge, reason_hit
from .prompts import prompts_of

JUDGE_INPUT_FIELDS = (
    "question",
    "model_output_steps",
    STEP_FIELD,
    "model_output_solution_first_error_reason",
)


def _judge_reply(decision: str) -> str:
    return (
        "Step-by-Step Reasoning: (canned reply)\n"
        "Student Error Reason Analysis: (canned reply)\n"
        f"Final Decision: {decision}"
    )


#: What `--judge random` picks from: a fair coin between the two decisions.
JUDGE_CHOICES = [_judge_reply("Correct"), _judge_reply("Wrong")]
HUMAN_HINT = "type c if the student's explanation matches the ground-truth reason, else w"


def human_verdict(typed: str) -> str:
    """`c`/`w` typed by a human judge as a reply the judge parser reads."""
    short = typed.strip().lower()
    if short in ("c", "correct", "w", "wrong"):
        return _judge_reply("Correct" if short.startswith("c") else "Wrong")
    return typed


def judge_input(item: dict[str, Any]) -> dict[str, Any]:
    """The dataset fields a judge prompt needs, kept in the record of every T2 hit."""
    return {k: item[k] for k in JUDGE_INPUT_FIELDS}


async def judge_one(
    session: Session, item: dict[str, Any], error_text: str, max_tokens: int
) -> dict[str, Any]:
    """Ask the `judge` role whether `error_text` matches the annotated reason; raw reply kept.
    The prompt is upstream's grading prompt (or the run's --prompt-file wording), sent with
    upstream's temperature, both from the run's config."""
    cfg = session.config
    req = Request(
        messages=[{"role": "user", "content": prompts_of(cfg).judge(item, error_text)}],
        max_tokens=max_tokens,
        temperature=cfg["temperature"],
        choices=JUDGE_CHOICES,
        human_hint=HUMAN_HINT,
        human_wrap=human_verdict,
    )
    comp = await generate_with_room(session, req, max_tokens + THINKING_ROOM, role="judge")
    # comp.text is the judge's answer only: a reasoning judge's thinking is kept apart.
    decision = parse_judge(comp.text)[2]
    out = {
        "label": session.model("judge").label,
        "request": session.take_request("judge")[0],
        "reply": comp.text,
        "decision": decision,
        "verdict": reason_hit(decision),
    }
    if comp.reasoning is not None:
        out["reasoning"] = comp.reasoning
    if comp.truncated_in_reasoning:
        out["truncated_in_reasoning"] = True
    return out


def collect_judges(
    config: dict[str, Any], records: list[dict[str, Any]],
    judgements: dict[str, tuple[dict[str, Any], list[dict[str, Any]]]],
) -> dict[str, dict[str, Any]]:
    """Every judge of a run: label -> {source, spec, verdicts}, the run's own judge first.

    `judgements` are the later judge passes' records (label -> (manifest, records)), read by
    the store."""
    from .judged_metrics import runtime_verdicts

    for label, (_meta, entries) in judgements.items():
        for e in entries:
            if "verdict" not in e and "error" not in e:
                raise DataError(f"judgements/{label}.jsonl: line for {e['id']} has no 'verdict'")
    return merge_judges(config.get("judge_label"), config.get("judge"),
                        runtime_verdicts(records), judgements, lambda e: bool(e["verdict"]))
