"""A run as an Inspect evaluation log (`.eval`), written through inspect_ai's own log API, so
`inspect view` browses mindprobe runs: one sample per item with the messages as sent, the
model's reply, the item's scores (the benchmark's `item_scores` and `item_outcome`) and its
fields as metadata; the run's headline as the log's results.

inspect_ai is an optional dependency (`pip install "mindprobe[inspect]"`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from mindprobe.core.requests import resolve_text, sent_calls
from mindprobe.errors import UsageError
from mindprobe.report.inspect_data import Parts

#: Record fields that are the exchange itself (shown as messages, not repeated as metadata).
EXCHANGE = ("request", "reply", "messages", "transcript", "raw", "usage")


def _import_inspect() -> Any:
    try:
        import inspect_ai.log as log
    except ImportError:
        raise UsageError("exporting to Inspect needs inspect_ai: pip install "
                         "\"mindprobe[inspect]\" (or pip install inspect-ai)") from None
    return log


def _text(v: Any, texts: dict[str, str] | None = None) -> str:
    """A message's content as text (shared texts put back, parts joined); anything else as
    JSON, since an Inspect message holds text."""
    v = resolve_text(v, texts or {})
    if v is None:
        return ""
    return v if isinstance(v, str) else json.dumps(v, ensure_ascii=False, default=str)


def exchange(rec: dict[str, Any], texts: dict[str, str] | None = None) -> list[tuple[str, str]]:
    """(role, text) of the item's exchange in order: the stored calls (`request`: one call or a
    list; a call continuing the previous one holds only its new messages) with their replies,
    else the chat or transcript older records hold."""
    calls = sent_calls(rec.get("request"), rec.get("reply"), texts)
    if calls:
        out: list[tuple[str, str]] = []
        for _, msgs, reply in calls:
            out += [(m["role"], _text(m["content"])) for m in msgs]
            if reply is not None:
                out.append(("assistant", _text(reply, texts)))
        return out
    for key in ("messages", "transcript"):
        turns = rec.get(key)
        if isinstance(turns, list):
            out = []
            for t in turns:
                if isinstance(t, dict) and "role" in t and "content" in t:
                    out.append((str(t["role"]), _text(t["content"], texts)))
                elif isinstance(t, dict):
                    user = t.get("user", t.get("prompt"))
                    reply = t.get("reply", t.get("response"))
                    if user is not None:
                        out.append(("user", _text(user, texts)))
                    if reply is not None:
                        out.append(("assistant", _text(reply, texts)))
            if out:
                return out
    raw = rec.get("raw")
    replies = raw if isinstance(raw, list) else [raw] if isinstance(raw, str) else []
    return [("assistant", _text(r)) for r in replies]


def _message(role: str, text: str) -> Any:
    from inspect_ai.model import ChatMessageAssistant, ChatMessageSystem, ChatMessageUser

    cls = {"system": ChatMessageSystem, "assistant": ChatMessageAssistant}.get(role,
                                                                           ChatMessageUser)
    return cls(content=text)


def _scalar(v: Any) -> bool:
    return isinstance(v, (str, int, float, bool))


def parts(bench: Any, rec: dict[str, Any], texts: dict[str, str] | None = None) -> Parts:
    """The record's exchange, reply, scores, target and metadata."""
    turns = exchange(rec, texts)
    reply_at = max((i for i, (role, _) in enumerate(turns) if role == "assistant"), default=None)
    error = rec.get("error")
    scores_in = bench.item_scores(rec) if error is None else {}
    scores: dict[str, tuple[Any, str | None]] = {
        "outcome": (bench.item_outcome(rec), _text(scores_in.get("answer", "")) or None)}
    for k, v in scores_in.items():
        if _scalar(v) and k not in ("answer", "gold"):
            scores[k] = (v, None)
    gold = scores_in.get("gold")
    return Parts(turns, reply_at, turns[reply_at][1] if reply_at is not None else "",
                 str(error) if error else None, scores, "" if gold is None else _text(gold),
                 {k: v for k, v in rec.items() if k not in EXCHANGE and k != "id"})


def sample(bench: Any, rec: dict[str, Any], model: str, texts: dict[str, str] | None = None
           ) -> Any:
    """One Inspect sample of a record, made and validated by inspect_ai's own models (the
    reference `inspect_data.sample_json` is checked against)."""
    from inspect_ai.log import EvalSample
    from inspect_ai.model import ModelOutput
    from inspect_ai.scorer import Score

    p = parts(bench, rec, texts)
    messages = [_message(r, t) for r, t in p.turns]
    inputs = messages[:p.reply_at] if p.reply_at is not None else messages  # the same ones
    return EvalSample(
        id=str(rec["id"]), epoch=1,
        input=inputs or str(rec["id"]), target=p.target, messages=messages,
        output=ModelOutput.from_content(model, p.reply, error=p.error),
        scores={k: Score(value=v, answer=a) for k, (v, a) in p.scores.items()},
        metadata=json.loads(json.dumps(p.metadata, default=str)),
    )


def checked_items(bench: Any, records: Iterable[dict[str, Any]], model: str,
                  texts: dict[str, str] | None, every: int) -> Iterator[tuple[Any, Any]]:
    """Each record's (sample, summary) JSON, made as plain data (`inspect_data`); the first
    record of every `every` is made by inspect_ai's own models too and must serialise the
    same. Once one differs (an inspect_ai whose models changed), the rest are made by its
    models: slower, and still right."""
    from inspect_ai._util.json import jsonable_python

    from mindprobe.report.inspect_data import same_json, sample_json

    fast = True
    for i, rec in enumerate(records):
        if fast and i % every:
            yield sample_json(parts(bench, rec, texts), str(rec["id"]), model)
            continue
        ref = sample(bench, rec, model, texts)
        if fast:
            made = sample_json(parts(bench, rec, texts), str(rec["id"]), model)
            fast = same_json(made[0], ref) and same_json(made[1], ref.summary())
        yield jsonable_python(ref), jsonable_python(ref.summary())


STATUS = {"finished": "success", "partial": "success", "interrupted": "cancelled",
          "failed": "error", "running": "started"}


def export_inspect(run_dir: str | Path, out: str | Path,
                   replace: bool = False) -> tuple[int, Path]:
    """Write the run in `run_dir` as an Inspect log at `out` (an existing one only with
    `replace`); returns (samples, path)."""
    from mindprobe.core.files import write_file
    from mindprobe.core.store import load_run
    from mindprobe.registry import get_benchmark
    from mindprobe.report.collect import results_of

    log = _import_inspect()
    from inspect_ai.log import (
        EvalConfig,
        EvalDataset,
        EvalLog,
        EvalMetric,
        EvalPlan,
        EvalResults,
        EvalScore,
        EvalSpec,
        EvalStats,
    )

    out = Path(out)
    if out.suffix not in (".eval", ".json"):
        raise UsageError(f"--out {out}: an Inspect log is named .eval (or .json)")
    run = load_run(Path(run_dir))
    bench = get_benchmark(run.benchmark)
    m = run.manifest
    model = f"mindprobe/{run.model_label}"
    texts = run.texts
    scores = []
    h = results_of(run).headline  # the results themselves are let go before the samples
    if h is not None and h.value is not None:
        metrics = {"value": EvalMetric(name="value", value=float(h.value))}
        for name in ("ci_low", "ci_high"):
            v = getattr(h, name)
            if v is not None:
                metrics[name] = EvalMetric(name=name, value=float(v))
        scores.append(EvalScore(name=h.name, scorer="mindprobe", metrics=metrics,
                                metadata={"ci_method": h.ci_method, "n": h.n,
                                          "chance": h.chance, "percent": h.percent}))
    data = m.get("data") if isinstance(m.get("data"), dict) else {}
    spec = EvalSpec(
        created=str(m.get("created") or m.get("started") or ""),
        task=f"mindprobe/{run.benchmark}", task_args={"variant": run.variant,
                                                      "prompting": run.prompting},
        dataset=EvalDataset(name=f"{run.benchmark}:{run.variant}", location=data.get("path"),
                            samples=m.get("n_items")),
        model=model, config=EvalConfig(),
        metadata={"mindprobe_manifest": json.loads(json.dumps(m, default=str)),
                  "plan_prompting": run.plan().prompting})
    n = len(run.records)
    doc = EvalLog(
        status=STATUS.get(run.status, "started"), eval=spec, plan=EvalPlan(),
        results=EvalResults(total_samples=m.get("n_items") or n, completed_samples=n,
                            scores=scores),
        stats=EvalStats(started_at=str(m.get("started") or ""),
                        completed_at=str(m.get("ended") or "")))
    if out.suffix == ".eval":  # streamed: samples made one by one, in batches
        from mindprobe.report.inspect_stream import batch_size, write_eval_streamed

        items = checked_items(bench, run.records, model, texts, batch_size(n))
        write_file(out, lambda tmp: write_eval_streamed(doc, items, n, tmp),
                   replace=replace, flag="--out")
    else:  # one JSON document: inspect_ai writes it whole
        doc.samples = [sample(bench, rec, model, texts) for rec in run.records]
        write_file(out, lambda tmp: log.write_eval_log(doc, str(tmp), format="json"),
                   replace=replace, flag="--out")
    return n, out
