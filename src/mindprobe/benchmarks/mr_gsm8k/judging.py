"""T3 judging (spec section 6): one judge call per T2 hit, and where each judge's verdicts live.

Design (one source of truth per judge, nothing copied):
- the judge given to `mindprobe run --judge` answers inside the run; its verdict is part of
  the item's record (`record["judge"]`), like every other per-item score;
- a judge added later with `mindprobe judge mr_gsm8k --run DIR --judge SPEC` writes
  `DIR/judgements/<label>.jsonl`, one line per judged uuid (`id`, verdict, raw reply, usage),
  appended with one write(2) per line like records.jsonl: a kill tears at most the last line,
  which is dropped on resume; a uuid already judged is never judged or written again.
  `DIR/judgements/<label>.json` names the judge, so one label never mixes two judges.
A label's verdicts are the union of both places (the judge command only fills in the T2 hits
the run's own judge left without a verdict when given the same judge). Records of T2 hits keep
the four dataset fields the judge prompt needs, so judging never needs the data file again.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from mindprobe.core.session import Session
from mindprobe.core.store import encode_record, now_iso, read_records, write_json_atomic
from mindprobe.errors import DataError, UsageError
from mindprobe.models.base import Request

from .data import STEP_FIELD
from .parse import parse_judge, reason_hit
from .prompts import build_judge_prompt

JUDGEMENTS_DIR = "judgements"
JUDGE_INPUT_FIELDS = (
    "question",
    "model_output_steps",
    STEP_FIELD,
    "model_output_solution_first_error_reason",
)
_LABEL = re.compile(r"^[A-Za-z0-9._+-]+$")


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
    """Ask the `judge` role whether `error_text` matches the annotated reason; raw reply kept."""
    req = Request(
        messages=[{"role": "user", "content": build_judge_prompt(item, error_text)}],
        max_tokens=max_tokens,
        temperature=0.0,
        choices=JUDGE_CHOICES,
        human_hint=HUMAN_HINT,
        human_wrap=human_verdict,
    )
    comp = await session.generate(req, role="judge")
    decision = parse_judge(comp.text)[2]
    return {
        "label": session.model("judge").label,
        "reply": comp.text,
        "decision": decision,
        "verdict": reason_hit(decision),
    }


def check_label(label: str) -> str:
    if not _LABEL.match(label):
        raise UsageError(
            f"judge label {label!r} must be one path component of letters, digits and ._+-"
        )
    return label


class JudgeStore:
    """`judgements/<label>.jsonl` of one run: append-only, resumable, one line per uuid."""

    def __init__(self, run_dir: Path, label: str) -> None:
        self.dir = Path(run_dir) / JUDGEMENTS_DIR
        self.label = check_label(label)
        self.path = self.dir / f"{label}.jsonl"
        self.meta_path = self.dir / f"{label}.json"
        self._fd: int | None = None

    def read(self) -> dict[str, dict[str, Any]]:
        """Verdict lines by uuid (first wins); a torn last line is ignored."""
        out: dict[str, dict[str, Any]] = {}
        for entry in read_records(self.path):
            if "verdict" not in entry:
                raise DataError(f"{self.path}: line for {entry['id']} has no 'verdict'")
            out.setdefault(entry["id"], entry)
        return out

    def meta(self) -> dict[str, Any]:
        try:
            return json.loads(self.meta_path.read_text())
        except FileNotFoundError:
            return {}
        except ValueError:
            raise DataError(f"{self.meta_path} is not valid JSON; delete it to re-judge") from None

    def open(self, spec: str, identity: dict[str, Any]) -> dict[str, dict[str, Any]]:
        """Create or resume; refuse a different judge under the same label."""
        old = self.meta()
        if old and old.get("identity") != identity:
            raise UsageError(
                f"{self.path} holds verdicts of another judge ({old.get('spec')}); "
                "pass --judge-label NAME to keep both"
            )
        self.dir.mkdir(parents=True, exist_ok=True)
        read_records(self.path, repair=True)  # cut a torn last line before appending after it
        done = self.read()
        if not old:
            write_json_atomic(
                self.meta_path,
                {"label": self.label, "spec": spec, "identity": identity, "created": now_iso()},
            )
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        return done

    def append(self, entry: dict[str, Any]) -> None:
        assert self._fd is not None, "judge store not open"
        os.write(self._fd, encode_record(entry))

    def close(self) -> None:
        if self._fd is not None:
            os.fsync(self._fd)
            os.close(self._fd)
            self._fd = None


def run_judges(
    run_dir: Path, manifest: dict[str, Any], records: list[dict[str, Any]]
) -> dict[str, dict[str, Any]]:
    """Every judge of a run: label -> {source, spec, verdicts}, the run's own judge first."""
    from .results import runtime_verdicts

    config = manifest.get("config") or {}
    judges: dict[str, dict[str, Any]] = {}
    own = config.get("judge_label")
    if own:
        judges[own] = {
            "source": "run",
            "spec": config.get("judge"),
            "verdicts": runtime_verdicts(records),
        }
    folder = Path(run_dir) / JUDGEMENTS_DIR
    for path in sorted(folder.glob("*.jsonl")) if folder.is_dir() else []:
        store = JudgeStore(run_dir, path.stem)
        verdicts = {uuid: bool(e["verdict"]) for uuid, e in store.read().items()}
        if path.stem in judges:
            merged = {**verdicts, **judges[path.stem]["verdicts"]}
            judges[path.stem].update(source="run+judge", verdicts=merged)
        else:
            judges[path.stem] = {
                "source": "judge",
                "spec": store.meta().get("spec"),
                "verdicts": verdicts,
            }
    return judges
