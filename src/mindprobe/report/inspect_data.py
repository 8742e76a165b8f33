"""An Inspect sample and its summary as the plain JSON data inspect_ai itself writes for them,
built without pydantic.

Making an `EvalSample` validates every message, score and output (0.2 ms a small
record) and `sample.summary()` thins every metadata value through `textwrap` (another
0.2 ms): at 87,048 records that alone is a minute. What is written is only the models'
JSON: here it is made directly from the record's parts (`Parts`, from `inspect_log.parts`),
in the models' own field order, with inspect_ai's own thinning functions where a value
needs thinning at all. Equality with the models' JSON is not assumed: the export checks the
first record of every batch against inspect_ai's own models (`same_json`) and the tests
compare the two, byte for byte, on every record of the test suite's runs and on the other
shapes a record takes.
"""

from __future__ import annotations

from typing import Any, NamedTuple


class Parts(NamedTuple):
    """What a record shows as an Inspect sample, whichever way the sample is then made."""

    turns: list[tuple[str, str]]
    #: Where the last reply is in `turns` (the input is what comes before it).
    reply_at: int | None
    reply: str
    error: str | None
    #: Score name -> (value, answer or None), "outcome" first.
    scores: dict[str, tuple[Any, str | None]]
    target: str
    metadata: dict[str, Any]


#: The widest text inspect_ai's summary keeps as is (`inspect_ai.log._util.thin_text`).
THIN_WIDTH = 1024


def sample_json(p: Parts, sample_id: str, model: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the sample, its summary) as the JSON of `EvalSample` and `EvalSample.summary()`."""
    from inspect_ai.model._chat_message import uuid  # the ids its messages get

    messages = [{"id": uuid(), "content": text,
                 "role": role if role in ("system", "assistant") else "user"}
                for role, text in p.turns]
    inputs = messages[:p.reply_at] if p.reply_at is not None else messages
    output: dict[str, Any] = {
        "model": model,
        "choices": [{"message": {"id": uuid(), "content": p.reply, "source": "generate",
                                 "role": "assistant", "model": model},
                     "stop_reason": "stop"}],
        "completion": p.reply}
    if p.error is not None:
        output["error"] = p.error
    scores = {k: _score(v, answer) for k, (v, answer) in p.scores.items()}
    sample = {"id": sample_id, "epoch": 1, "input": inputs or sample_id, "target": p.target,
              "messages": messages, "output": output, "scores": scores,
              "metadata": p.metadata, "store": {}, "events": [], "model_usage": {},
              "role_usage": {}, "attachments": {}}
    return sample, summary_json(sample)


def _score(value: Any, answer: str | None) -> dict[str, Any]:
    if answer is None:
        return {"value": value, "history": []}
    return {"value": value, "answer": answer, "history": []}


def summary_json(sample: dict[str, Any]) -> dict[str, Any]:
    """`EvalSampleSummary`'s JSON for a sample made by `sample_json`: input and target cut
    to inspect_ai's length, long metadata values and score answers thinned as it thins them."""
    from inspect_ai.log._util import truncate_text

    given = sample["input"]
    if isinstance(given, str):
        inputs: Any = truncate_text(given)
    else:
        inputs = []
        for m in given:
            cut = truncate_text(m["content"])
            inputs.append(m if cut is m["content"] else {**m, "content": cut})
    scores = {k: ({"value": s["value"], "answer": thin_text(s["answer"]), "history": []}
                  if "answer" in s else s) for k, s in sample["scores"].items()}
    return {"id": sample["id"], "epoch": 1, "input": inputs,
            "target": truncate_text(sample["target"]),
            "metadata": thin_metadata(sample["metadata"]), "scores": scores,
            "model_usage": {}, "role_usage": {}, "completed": True,
            "message_count": len(sample["messages"])}


def _kept(text: str) -> bool:
    """Whether inspect_ai's `thin_text` returns `text` unchanged: it collapses whitespace and
    shortens to `THIN_WIDTH`, so a text already collapsed and that short is kept."""
    return len(text) <= THIN_WIDTH and " ".join(text.split()) == text


def thin_text(text: str) -> str:
    """inspect_ai's `thin_text`, without its `textwrap` pass where that changes nothing."""
    if _kept(text):
        return text
    from inspect_ai.log._util import thin_text as thin

    return str(thin(text))


def thin_metadata(metadata: dict[str, Any]) -> dict[str, Any]:
    """inspect_ai's `thin_metadata`: numbers and short texts kept as they are, every other
    value through inspect_ai's own function."""
    from inspect_ai.log._util import thin_metadata as thin

    out: dict[str, Any] = {}
    rest: dict[str, Any] = {}
    for k, v in metadata.items():
        if (isinstance(v, (int, float)) or (isinstance(v, str) and _kept(v))
                or (isinstance(v, (list, dict)) and len(v) <= THIN_WIDTH // 4
                    and len(to_bytes(v).decode()) <= THIN_WIDTH)):  # what it keeps
            out[k] = v
        else:
            out[k] = None  # its place in the order, filled below
            rest[k] = v
    if rest:
        out.update(thin(rest))
    return out


def to_bytes(data: Any) -> bytes:
    """`data` (plain JSON data) as inspect_ai's `to_json_safe` writes it, less that function's
    first step (a copy of a model as plain Python: this is plain already)."""
    from inspect_ai._util.json import to_json_safe
    from pydantic_core import PydanticSerializationError, to_json

    try:
        return to_json(data, indent=None, exclude_none=True, fallback=_none)
    except PydanticSerializationError:  # e.g. a lone surrogate: inspect_ai's own repair
        return bytes(to_json_safe(data, indent=None))


def _none(_: Any) -> None:
    return None


def blank_message_ids(data: Any) -> Any:
    """`data` with every chat message's id blanked: ids are random, the rest must match."""
    if isinstance(data, dict):
        return {k: ("" if k == "id" and "role" in data else blank_message_ids(v))
                for k, v in data.items()}
    if isinstance(data, list):
        return [blank_message_ids(v) for v in data]
    return data


def same_json(made: Any, reference: Any) -> bool:
    """Whether `made` serialises to the same bytes as inspect_ai's `reference` (a model or
    its data), message ids aside."""
    from inspect_ai._util.json import jsonable_python, to_json_safe

    return (to_bytes(blank_message_ids(made))
            == to_json_safe(blank_message_ids(jsonable_python(reference)), indent=None))
