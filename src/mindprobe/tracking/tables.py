"""A run's records as a table: Parquet (through pyarrow) and a Hugging Face dataset (through
`datasets`), one row per record. A field whose values are all one scalar type gets a typed
column; anything else (nested requests and replies, fields that are sometimes a number and
sometimes text) is kept as its JSON text, and the schema metadata names those columns so a
reader can turn them back into values (`read_parquet` does)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from mindprobe.core.files import write_file, write_folder
from mindprobe.errors import UsageError

#: Schema metadata key naming the columns that hold JSON text.
JSON_COLUMNS = b"mindprobe.json_columns"
_INT64 = (-(2**63), 2**63 - 1)


def _kind(values: list[Any]) -> str:
    """"bool", "int", "float", "str" where every non-null value is of that kind, else "json"."""
    kinds = set()
    for v in values:
        if v is None:
            continue
        if isinstance(v, bool):
            kinds.add("bool")
        elif isinstance(v, int):
            kinds.add("int" if _INT64[0] <= v <= _INT64[1] else "json")
        elif isinstance(v, float):
            kinds.add("float")
        elif isinstance(v, str):
            kinds.add("str")
        else:
            kinds.add("json")
    if kinds == {"int", "float"}:
        return "float"
    return kinds.pop() if len(kinds) == 1 else ("str" if not kinds else "json")


def arrow_table(records: list[dict[str, Any]], meta: dict[str, Any]) -> Any:
    """The records as a pyarrow Table (columns in first-seen order)."""
    import pyarrow as pa  # a core dependency: the one Parquet engine
    columns: dict[str, list[Any]] = {}
    for rec in records:
        for key in rec:
            columns.setdefault(key, [])
    arrays, json_cols = {}, []
    types = {"bool": pa.bool_(), "int": pa.int64(), "float": pa.float64(), "str": pa.string()}
    for key in columns:
        values = [rec.get(key) for rec in records]
        kind = _kind(values)
        if kind == "json":
            json_cols.append(key)
            values = [None if v is None else json.dumps(v, ensure_ascii=False) for v in values]
            kind = "str"
        if kind == "float":
            values = [None if v is None else float(v) for v in values]
        arrays[key] = pa.array(values, type=types[kind])
    metadata = {JSON_COLUMNS: json.dumps(json_cols).encode(),
                b"mindprobe.run": json.dumps(meta, default=str).encode()}
    return pa.table(arrays, metadata=metadata)


def write_parquet(records: list[dict[str, Any]], meta: dict[str, Any], out: Path,
                  replace: bool = False) -> int:
    """Write the records as one Parquet file (`core.files`: whole or not at all, an existing
    one only with `replace`); how many rows."""
    import pyarrow.parquet as pq

    table = arrow_table(records, meta)
    write_file(out, lambda tmp: pq.write_table(table, tmp), replace=replace, flag="--out")
    return table.num_rows


def read_parquet(path: Path) -> list[dict[str, Any]]:
    """The records back from a Parquet export: JSON columns decoded, absent fields left out."""
    import pyarrow.parquet as pq

    table = pq.read_table(path)
    return decode_rows(table.to_pylist(), table.schema.metadata or {})


def decode_rows(rows: list[dict[str, Any]], metadata: dict[bytes, bytes]) -> list[dict[str, Any]]:
    json_cols = set(json.loads(metadata.get(JSON_COLUMNS, b"[]")))
    return [{k: (json.loads(v) if k in json_cols else v) for k, v in row.items() if v is not None}
            for row in rows]


def write_hf(records: list[dict[str, Any]], meta: dict[str, Any], out: Path | None,
             push: str | None, replace: bool = False) -> int:
    """The records as a `datasets.Dataset`: saved with `save_to_disk` (built beside `out` and
    swapped into place, `core.files`: a previous export stays whole until then), then pushed
    to the Hub."""
    try:
        from datasets import Dataset
    except ImportError:
        raise UsageError("export --format hf needs `datasets`: pip install "
                         "'mindprobe[export]'") from None
    from datasets import DatasetInfo
    from datasets.table import InMemoryTable

    table = arrow_table(records, meta)
    # The schema's metadata does not survive `datasets`; the dataset's description keeps it.
    info = DatasetInfo(description=json.dumps(
        {k.decode(): json.loads(v) for k, v in table.schema.metadata.items()}))
    ds = Dataset(InMemoryTable(table), info=info)
    token = os.environ.get("HF_TOKEN") or os.environ.get("HUGGING_FACE_HUB_TOKEN")
    if push and not token:
        raise UsageError("--push needs a Hugging Face token in HF_TOKEN")
    if out is not None:
        write_folder(out, lambda tmp: ds.save_to_disk(str(tmp)), replace=replace, flag="--out",
                     what="the dataset")
    if push:
        _push(ds, push, token, saved=out)
    return len(ds)


def _push(ds: Any, repo: str, token: str | None, saved: Path | None) -> None:
    """Push to the Hub; any failure (no network, a refused token) is one message."""
    from mindprobe.core.secrets import redact

    try:
        ds.push_to_hub(repo, token=token)
    except Exception as exc:  # the Hub client's errors are many (requests, HTTP, auth)
        kept = f" (the export at {saved} is written)" if saved is not None else ""
        reason = redact(str(exc).strip().splitlines()[0] if str(exc).strip() else
                        type(exc).__name__)
        raise UsageError(f"--push {repo}: the Hugging Face Hub could not be reached or "
                         f"refused it ({type(exc).__name__}: {reason}){kept}") from None


def read_hf(path: Path) -> list[dict[str, Any]]:
    """The records back from a saved Hugging Face export (JSON columns decoded)."""
    from datasets import load_from_disk

    ds = load_from_disk(str(path))
    described = json.loads(ds.info.description or "{}")
    return decode_rows(ds.to_list(), {JSON_COLUMNS: json.dumps(
        described.get(JSON_COLUMNS.decode(), [])).encode()})
