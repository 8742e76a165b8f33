"""A table given as rows is shown and written to JSON from the rows themselves, without
pandas, exactly as from the DataFrame pandas would make of them; rows pandas alone can read
(numpy integers, mixed types) are read through the DataFrame."""

from __future__ import annotations

import math
import random
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from mindprobe.core.numbers import Table, display, legend
from mindprobe.core.results import table_json
from mindprobe.core.table_columns import columns_of

VALUES = {
    "ints": lambda r: r.randint(-5, 200_000),
    "floats": lambda r: r.choice([0.0, 1.0, r.random(), 1e-5 * r.random(), 1e5 * r.random(),
                                  math.nan]),
    "mixed numbers": lambda r: r.choice([r.randint(0, 9), r.random()]),
    "text": lambda r: r.choice(["ALL", "Infer.normal", "1", ""]),
    "flags": lambda r: r.random() < 0.5,
}


def _table(rows: list[dict], **kw) -> tuple[Table, Table]:
    return Table([dict(r) for r in rows], "t", **kw), Table(pd.DataFrame(rows), "t", **kw)


@pytest.mark.parametrize("seed", range(60))
def test_rows_show_as_their_dataframe(seed):
    rng = random.Random(seed)
    kinds = rng.sample(sorted(VALUES), rng.randint(1, 4))
    cols = {f"{k} {i}": k for i, k in enumerate(kinds)}
    rows = []
    for _ in range(rng.randint(1, 12)):
        row = {}
        for name, kind in cols.items():
            if kind != "flags" and rng.random() < 0.15:
                if rng.random() < 0.5:
                    row[name] = None
                continue  # an absent key: NaN in the DataFrame
            row[name] = VALUES[kind](rng)
        rows.append(row)
    if rng.random() < 0.3:
        for r in rows:
            r["ci_low"], r["ci_high"] = sorted((rng.random(), rng.random()))
    kw = {"percent": tuple(c for c in cols if rng.random() < 0.3),
          "short": {c: c[:3] for c in cols if rng.random() < 0.3}, "index": False,
          "hidden": tuple(c for c in cols if rng.random() < 0.1)}
    rows_table, frame_table = _table(rows, **kw)
    assert display(rows_table) == display(frame_table)
    assert legend(rows_table) == legend(frame_table)
    assert _json(table_json(rows_table)) == _json(table_json(frame_table))


def _json(rows: list[dict]) -> list[dict]:
    return [{k: "nan" if isinstance(v, float) and math.isnan(v) else v for k, v in r.items()}
            for r in rows]


def test_rows_pandas_alone_can_read_go_through_the_dataframe():
    for rows in ([{"a": np.int64(3)}], [{"a": 1}, {"a": "x"}], [{"a": True}, {"a": None}]):
        t = Table(rows, "t")
        assert columns_of(t) is None
        assert display(t) == display(Table(pd.DataFrame(rows), "t"))


def test_showing_a_table_of_rows_imports_no_pandas():
    probe = ("import sys\nfrom mindprobe.core.results import Results, table_json\n"
             "from mindprobe.core.numbers import display\n"
             "r = Results('x')\nr.add_table('t', [{'problem': 'ALL', 'n': 3, 'acc': 0.5}, "
             "{'problem': 'A', 'n': 1, 'acc': None}])\n"
             "print(display(r.tables['t'])[1], r.to_json()['tables']['t'])\n"
             "print('PANDAS', 'pandas' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    assert "PANDAS False" in out.stdout and "'acc': None" in out.stdout
