"""Import of upstream MR-GSM8K eval-results files, rescored with mindprobe's parser and metrics.

An upstream result record is a dataset record plus the graded model's output under a
`<prefix>_eval_output` field (an object whose `response` is the raw reply, or the reply itself)
and, in judged files, the reason judge's raw reply under another field. Field names vary per
model, so they are detected: the response from the one `*_eval_output` field, the judge reply
from whichever other text field carries the judge's `Final Decision:` header. Rescoring from the
raw replies (never upstream's stored flags) makes imported runs comparable with ours.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mindprobe.errors import DataError

from .dataset_file import DATASET_FIELDS, read_objects, validate_record
from .metrics import aggregate, score_item
from .parse import judge_verdict, reason_hit
from .prompts import upstream_placeholders

RESPONSE_SUFFIX = "_eval_output"
_JUDGE_MARKER = "Final Decision:"


@dataclass(frozen=True)
class UpstreamResults:
    """One upstream results file: dataset records plus replies keyed by uuid."""

    path: Path
    items: list[dict[str, Any]]
    responses: dict[str, str]
    judge_replies: dict[str, str] = field(default_factory=dict)
    manual_verdicts: dict[str, bool] = field(default_factory=dict)
    response_key: str = ""
    judge_key: str | None = None
    manual_key: str | None = None


def _extra_fields(obj: dict[str, Any]) -> dict[str, Any]:
    """Extra (non-dataset) fields, with string members of objects flattened as 'key.sub'."""
    flat: dict[str, Any] = {}
    for key, value in obj.items():
        if key in DATASET_FIELDS:
            continue
        flat[key] = value
        if isinstance(value, dict):
            for sub, inner in value.items():
                flat[f"{key}.{sub}"] = inner
    return flat


def _as_text(value: Any) -> str | None:
    if isinstance(value, dict):
        value = value.get("response")
    return value if isinstance(value, str) else None


def _detect_response_key(path: Path, rows: list[tuple[int, dict[str, Any]]]) -> str:
    keys = sorted({k for _, obj in rows for k in obj if k.endswith(RESPONSE_SUFFIX)})
    if len(keys) != 1:
        found = ", ".join(keys) or "none"
        raise DataError(
            f"{path}: expected exactly one '<prefix>{RESPONSE_SUFFIX}' field holding the model's "
            f"reply, found {found}. Fix: name it with --upstream-response-key FIELD"
        )
    return keys[0]


def _detect_judge_key(
    path: Path, rows: list[tuple[int, dict[str, Any]]], response_key: str
) -> str | None:
    skip = {response_key, f"{response_key}.response"}
    keys = set()
    for _, obj in rows:
        for key, value in _extra_fields(obj).items():
            text = _as_text(value)
            if key not in skip and text is not None and _JUDGE_MARKER in text:
                keys.add(key)
    # An object holding the reply in `response` is found both as "key" and "key.response".
    keys -= {k for k in keys if k.endswith(".response") and k[: -len(".response")] in keys}
    if len(keys) > 1:
        raise DataError(
            f"{path}: several fields look like judge replies ({', '.join(sorted(keys))}). "
            "Fix: pass judge_key='<field>'"
        )
    return keys.pop() if keys else None


def _manual_value(value: Any) -> bool | None:
    """Human reason verdict: a bool, 0/1, or text read with the T3 substring rule."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.strip():
        return reason_hit(value)
    return None


def load_upstream_results(
    path: str | Path,
    response_key: str | None = None,
    judge_key: str | None = None,
    manual_key: str | None = None,
) -> UpstreamResults:
    """Read one upstream results file (JSON array or JSONL).

    Keys may be 'field' or 'field.sub' for a member of an object field. A missing or null reply
    counts as "" (upstream's value for a failed call); records without a judge reply or manual
    verdict simply have none.
    """
    path = Path(path)
    rows = read_objects(path)
    response_key = response_key or _detect_response_key(path, rows)
    if judge_key is None:
        judge_key = _detect_judge_key(path, rows, response_key)
    items, responses, judge_replies, manual = [], {}, {}, {}
    for line, obj in rows:
        where = f"{path}:{line}"
        item = validate_record(obj, where)
        uuid = item["uuid"]
        if uuid in responses:
            raise DataError(f"{where}: uuid {uuid} appears twice. Fix: keep one record per uuid")
        extra = _extra_fields(obj)
        if response_key not in extra:
            raise DataError(
                f"{where}: field '{response_key}' (the model's reply) is missing. Fix: pass "
                "--upstream-response-key FIELD or repair the record"
            )
        raw = extra[response_key]
        text = _as_text(raw)
        if text is None and raw is not None and not (isinstance(raw, dict) and "response" in raw):
            raise DataError(
                f"{where}: field '{response_key}' is neither text nor an object with a "
                "'response'. Fix: pass the field holding the raw reply as response_key"
            )
        items.append(item)
        responses[uuid] = text or ""
        reply = _as_text(extra.get(judge_key)) if judge_key else None
        if reply is not None:
            judge_replies[uuid] = reply
        verdict = _manual_value(extra.get(manual_key)) if manual_key else None
        if verdict is not None:
            manual[uuid] = verdict
    return UpstreamResults(
        path, items, responses, judge_replies, manual, response_key, judge_key, manual_key
    )


def rescore(results: UpstreamResults) -> dict[str, Any]:
    """Metrics of one imported file: `auto` from judge replies, `manual` from human verdicts."""
    scored = [score_item(item, results.responses[item["uuid"]]) for item in results.items]
    auto = {uuid: judge_verdict(reply) for uuid, reply in results.judge_replies.items()}
    marks = tuple(upstream_placeholders().values())  # upstream's runs used its script's
    return {
        "n_records": len(results.items),
        "response_key": results.response_key,
        "judge_key": results.judge_key,
        "manual_key": results.manual_key,
        "auto": aggregate(scored, auto if results.judge_key else None, placeholders=marks),
        "manual": aggregate(scored, results.manual_verdicts, placeholders=marks)
        if results.manual_key else None,
    }


def rescore_upstream(
    paths: str | Path | Iterable[str | Path],
    response_key: str | None = None,
    judge_key: str | None = None,
    manual_key: str | None = None,
) -> dict[str, dict[str, Any]]:
    """Rescore upstream results files; returns {path: rescore(...)} in the order given."""
    if isinstance(paths, str | Path):
        paths = [paths]
    return {
        str(p): rescore(load_upstream_results(p, response_key, judge_key, manual_key))
        for p in paths
    }
