"""Browsable transcripts: the items of every run (capped), each with its full conversation,
filterable by run, variant, group (problem / question type) and outcome.

Model output is untrusted: every string goes through `html.escape` and is shown as text (a reply
holding `<script>` is displayed, never run). The records' fields are shown generically, so a new
benchmark's records appear without code here: what each item sent (`request`: messages or
prompt, and the sampling parameters; a chat's turns each carry theirs) and got back (`reply`)
becomes a chat, with the run's shared texts put back (`core.requests`); scalar fields a small
facts table. Records of older runs (`messages`, `raw`, `response`) are shown as before.

The page carries each item's summary line; its conversation goes into one packed block
(`report.textstore`: each paragraph once, deflated) that the page's script renders when the
item is opened, each text and each item cut to a stated length (the records keep it whole).
"""

from __future__ import annotations

import json
from html import escape
from typing import Any

from mindprobe.core.benchmark import ItemFields
from mindprobe.core.requests import sent_calls
from mindprobe.report.collect import ReportData, RunEntry
from mindprobe.report.textstore import ITEM_CHARS, TEXT_CHARS, Shown, TextStore

MAX_ITEMS = 300
PROMPT_FIELDS = ("prompt", "question", "text", "input")
SKIP_FACTS = {"id", "usage", "transcript", "messages", "raw", "response", "judge", "latency",
              "request", "reply", *PROMPT_FIELDS}
LONG = 160


def _bench(benchmark: str) -> Any:
    from mindprobe.registry import BENCHMARKS, get_benchmark

    return get_benchmark(benchmark) if benchmark in BENCHMARKS else None


def outcome(benchmark: str, rec: dict[str, Any]) -> tuple[str, str]:
    """(filter value, shown text) of an item, as its benchmark judges it: correct / wrong /
    invalid / error, or the benchmark's own word (e.g. how a chat ended)."""
    bench = _bench(benchmark)
    if bench is None:
        return ("error", "error") if "error" in rec else ("unscored", "unscored")
    out = bench.item_outcome(rec)
    return out, out


def scores_html(benchmark: str, rec: dict[str, Any]) -> str:
    """The item's scores by name (the benchmark's `item_scores`)."""
    bench = _bench(benchmark)
    scores = bench.item_scores(rec) if bench is not None and "error" not in rec else {}
    if not scores:
        return ""
    cells = "".join(f"<div><dt>{escape(str(k))}</dt><dd>{escape(_score_text(v))}</dd></div>"
                    for k, v in scores.items())
    return f'<p class="small"><b>scores</b></p><dl class="facts scores">{cells}</dl>'


def _score_text(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    if isinstance(v, (dict, list)):
        return json.dumps(v, ensure_ascii=False)
    return str(v)


def fields_of(benchmark: str) -> ItemFields:
    """The fields the benchmark shows an item by (`Benchmark.item_fields`)."""
    bench = _bench(benchmark)
    return bench.item_fields if bench is not None else ItemFields()


def group_of(rec: dict[str, Any], fields: ItemFields) -> str:
    for k in fields.group:
        if rec.get(k) not in (None, ""):
            return str(rec[k])
    return ""


def _bubble(shown: Shown, role: str, text: Any, label: str = "", meta: str = "",
            total: Any = None) -> str:
    body = text if isinstance(text, str) else json.dumps(text, ensure_ascii=False, indent=1)
    who = escape(label or role)
    extra = f'<div class="meta">{escape(meta)}</div>' if meta else ""
    whole = total if isinstance(total, int) and not isinstance(total, bool) else None
    return (f'<div class="msg {escape(role)}"><div class="who">{who}</div>'
            f"{shown.pre(body, whole)}{extra}</div>")


def _params(params: Any) -> str:
    if not isinstance(params, dict):
        return ""
    return "sent with " + ", ".join(f"{k} {json.dumps(v, ensure_ascii=False)}"
                                    for k, v in params.items())


def _sent(shown: Shown, request: Any, texts: dict[str, str], reply: Any = None,
          head: str = "", reply_chars: Any = None) -> list[str]:
    """What was sent: each call's messages (only those new to it; `history` says how many
    earlier ones it repeats) or prompt, its parameters, and each call's reply (`reply_chars`:
    the full length of `reply`, where the record keeps only its start)."""
    out = []
    for call, msgs, answer in sent_calls(request, reply, texts):
        total = call.get("reply_chars") if "reply" in call else reply_chars
        meta = _params(call.get("params"))
        if call.get("history"):
            out.append(f'<p class="muted small">then, after the {call["history"]} earlier '
                       "message(s) of this conversation:</p>")
        elif call.get("continues"):
            out.append(f'<p class="muted small">then, after the previous prompt (its '
                       f'{call["continues"]} characters), the prompt goes on:</p>')
        for j, m in enumerate(msgs):
            kind = "prompt" if "prompt" in call else m["role"]
            out.append(_bubble(shown, m["role"], m["content"], f"{kind} {head}".strip(),
                               meta if j == len(msgs) - 1 else ""))
        if answer is not None:
            out.append(_bubble(shown, "assistant", answer, "model", total=total))
    return out


def _turns(shown: Shown, turns: list[Any], texts: dict[str, str] | None = None) -> list[str]:
    out = []
    for t in turns:
        if not isinstance(t, dict):
            out.append(_bubble(shown, "other", t))
            continue
        if "role" in t and "content" in t:
            out.append(_bubble(shown, str(t["role"]), t["content"]))
            continue
        head = " · ".join(str(t[k]) for k in ("turn", "kind") if t.get(k) not in (None, ""))
        if t.get("request") is not None:  # what this turn sent, then its reply
            facts = [f"{k} {t[k]}" for k in ("expected", "answer", "correct", "violation")
                     if k in t and t[k] is not None]
            out += _sent(shown, t["request"], texts or {}, t.get("reply"), head,
                         t.get("reply_chars"))
            if facts:
                out.append(f'<div class="meta">{escape(" · ".join(facts))}</div>')
            continue
        user = t.get("user", t.get("prompt", t.get("question")))
        if user is not None:
            out.append(_bubble(shown, "user", user, f"user {head}".strip()))
        reply = t.get("reply", t.get("response", t.get("answer_text")))
        facts = [f"{k} {t[k]}" for k in ("expected", "answer", "correct", "violation")
                 if k in t and t[k] is not None]
        if reply is not None:
            out.append(_bubble(shown, "assistant", reply, "model", " · ".join(facts)))
        elif user is None:
            out.append(_bubble(shown, "other", t))
    return out


def conversation(rec: dict[str, Any], texts: dict[str, str] | None = None,
                 shown: Shown | None = None) -> str:
    """The item's exchange, as chat bubbles, in the order it happened: what it sent (the
    record's `request`) and got back (`reply`); `texts`: the run's shared texts; `shown`:
    where its texts go and how much of them (default: inline, capped)."""
    texts, shown = texts or {}, shown or Shown()
    if rec.get("request") is not None:
        parts = _sent(shown, rec["request"], texts, rec.get("reply"),
                      reply_chars=rec.get("reply_chars"))
        if isinstance(rec.get("transcript"), list):
            parts += _turns(shown, rec["transcript"], texts)
        return "".join(parts + _tail(shown, rec))
    parts = []
    for k in PROMPT_FIELDS:
        if isinstance(rec.get(k), str):
            parts.append(_bubble(shown, "user", rec[k], k))
            break
    else:
        if not isinstance(rec.get("messages"), list) and not isinstance(rec.get("transcript"),
                                                                         list):
            parts.append('<p class="muted small">The prompt is not stored in the record; the '
                         "item's fields below identify it.</p>")
    if isinstance(rec.get("messages"), list):
        parts += _turns(shown, rec["messages"])
    if isinstance(rec.get("transcript"), list):
        parts += _turns(shown, rec["transcript"], texts)
    raw = rec.get("raw")
    if isinstance(raw, list):
        for i, reply in enumerate(raw):
            label = "model" if len(raw) == 1 else ("model, first reply" if i == 0 else
                                                   f"model, after re-ask {i}")
            parts.append(_bubble(shown, "assistant", reply, label))
    elif isinstance(raw, str):
        parts.append(_bubble(shown, "assistant", raw, "model"))
    if isinstance(rec.get("response"), str):
        parts.append(_bubble(shown, "assistant", rec["response"], "model"))
    parts += _tail(shown, rec)
    if not parts:
        parts.append('<p class="muted">no conversation recorded for this item</p>')
    return "".join(parts)


def _tail(shown: Shown, rec: dict[str, Any]) -> list[str]:
    """A judge's verdict and the item's error, after the exchange."""
    parts = []
    if isinstance(rec.get("judge"), (dict, str)):
        parts.append(_bubble(shown, "judge", rec["judge"], "judge"))
    if "error" in rec:
        parts.append(_bubble(shown, "error", str(rec["error"]), "error"))
    return parts


def facts(rec: dict[str, Any], shown: Shown | None = None) -> str:
    """Scalar fields as a compact table; nested or long ones folded away as JSON."""
    shown = shown or Shown()
    short, long = [], []
    for k, v in rec.items():
        if k in SKIP_FACTS or k == "error":
            continue
        if (isinstance(v, list) and len(v) <= 10
                and all(isinstance(x, (str, int, float, bool)) for x in v)):
            v = ", ".join(map(str, v))
        if isinstance(v, (dict, list)) or (isinstance(v, str) and len(v) > LONG):
            long.append((k, v))
        else:
            short.append(f"<div><dt>{escape(str(k))}</dt><dd>{escape(str(v))}</dd></div>")
    out = f'<dl class="facts">{"".join(short)}</dl>' if short else ""
    for k, v in long:
        text = v if isinstance(v, str) else json.dumps(v, ensure_ascii=False, indent=1)
        out += f"<details><summary>{escape(str(k))}</summary>{shown.pre(text)}</details>"
    return out


def answer_of(rec: dict[str, Any], fields: ItemFields) -> str:
    """The item's final answer in a few words (what the summary line shows)."""
    for k in fields.answer:
        if rec.get(k) not in (None, "") and not isinstance(rec[k], (dict, list)):
            gold = next((rec[g] for g in fields.gold if rec.get(g) not in (None, "")), None)
            return f"answer {rec[k]}" + (f" · expected {gold}" if gold is not None else "")
    return ""


def _short(text: str, n: int = 90) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


def item_html(e: RunEntry, index: int, rec: dict[str, Any], store: TextStore) -> str:
    """One item: a summary line (id, group, outcome, answer), unfolding to the conversation,
    which goes into `store` (the page renders it when the item is opened)."""
    out, out_text = outcome(e.benchmark, rec)
    fields = fields_of(e.benchmark)
    group, answer = group_of(rec, fields), answer_of(rec, fields)
    cls = {"correct": "ok", "wrong": "bad", "invalid": "warn", "error": "bad"}.get(out, "neutral")
    summary = (f'<span class="iid">{escape(str(rec["id"]))}</span>'
               + (f'<span class="grp">{escape(group)}</span>' if group else "")
               + f'<span class="badge {cls}">{escape(out_text)}</span>'
               + (f'<span class="ans">{escape(_short(answer))}</span>' if answer else ""))
    shown = Shown(store)
    body = store.add_body(f'<div class="convo">{conversation(rec, e.run.texts, shown)}</div>'
                          f"{scores_html(e.benchmark, rec)}{facts(rec, shown)}")
    return (f'<details class="item" id="{item_anchor(e, index)}" data-outcome="{escape(out)}" '
            f'data-group="{escape(group)}" data-b="{body}"><summary>{summary}</summary>'
            '<div class="body"></div></details>')


def item_anchor(e: RunEntry, index: int) -> str:
    return f"item-{e.slug}-{index}"


def anchors(data: ReportData, cap: int = MAX_ITEMS) -> dict[str, str]:
    """'<run slug>/<item id>' -> the element id of that item's transcript."""
    return {f"{e.slug}/{rec['id']}": item_anchor(e, i)
            for e in data.entries for i, rec in enumerate(e.run.records[:cap])}


def transcripts_html(data: ReportData, cap: int = MAX_ITEMS) -> str:
    """The items' summaries, filters, and their conversations packed in one compressed block
    (`TextStore`), unpacked by the page's script."""
    runs, variants, groups, outcomes = {}, set(), set(), set()
    store = TextStore()
    blocks = []
    for e in data.entries:
        recs = e.run.records[:cap]
        if not recs:
            continue
        runs[e.slug] = f"{e.benchmark} · {e.title}"
        shown = (f"first {len(recs)} of {len(e.run.records):,} items"
                 if len(e.run.records) > cap else f"all {len(recs)} items")
        items, fields = [], fields_of(e.benchmark)
        for i, rec in enumerate(recs):
            out, group = outcome(e.benchmark, rec)[0], group_of(rec, fields)
            variants.add(e.run.variant)
            outcomes.add(out)
            if group:
                groups.add(group)
            items.append(item_html(e, i, rec, store))
        blocks.append(
            f'<section class="run-items" data-run="{escape(e.slug)}" '
            f'data-variant="{escape(e.run.variant)}"><h3>{escape(runs[e.slug])} '
            f'<span class="muted">({shown})</span></h3>{"".join(items)}</section>')
    if not blocks:
        return '<p class="muted">No items recorded.</p>'

    def select(name: str, label: str, options: dict[str, str], chosen: str = "") -> str:
        opts = "".join(f'<option value="{escape(k)}"{" selected" if k == chosen else ""}>'
                       f"{escape(v)}</option>" for k, v in options.items())
        return (f'<label>{escape(label)} <select data-filter="{name}">'
                f'<option value="">all</option>{opts}</select></label>')

    controls = (
        '<div class="filters" role="search">'
        + select("run", "run", runs, next(iter(runs)) if len(runs) > 1 else "")
        + select("variant", "variant", {v: v for v in sorted(variants)})
        + select("group", "problem / type", {g: g for g in sorted(groups)})
        + select("outcome", "outcome", {o: o for o in sorted(outcomes)})
        + '<label>text <input type="search" data-filter="text" placeholder="search replies…">'
        "</label>"
        '<span class="count" id="item-count"></span></div>')
    note = (f'<p class="muted">Up to {cap} items per run, in the order they were recorded; '
            "pick a run (or all) and filter below; open an item to see its conversation. Model "
            f"output is shown as text, exactly as received, each text up to {TEXT_CHARS:,} "
            f"characters and each item up to {ITEM_CHARS:,} (a longer one says where it is cut; "
            "the full text is in the run's records.jsonl).</p>")
    packed = (f'<script type="application/octet-stream" id="mindprobe-transcripts">'
              f"{store.blob()}</script>")
    return note + controls + "".join(blocks) + packed
