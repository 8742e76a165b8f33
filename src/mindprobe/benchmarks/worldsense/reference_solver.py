"""Independent brute-force WorldSense solver (spec §5.4), working only from structured fields.

It enumerates every world the description allows (all n! orders, or all 2^n orientations for
Infer.parallel) and reads the answer off the set of models, without any of the generator's
logic, so agreeing with it is real evidence that generated gold labels are right.

Field conventions understood (official ones plus this project's generator's):
- ``descr``: list of ``(p, s)`` (p precedes s) and ``(m, a, b)`` (m strictly between a and b);
  for Infer.parallel, ``(x, y, 'par'|'perp')`` links.
- ``query``: such a relation; ``i(a, b)`` (another dimension) or a -1 index (an entity absent
  from the world) make a Compl item undecidable; ``(e, True|False)`` asks whether e is the
  first-pole (True) or last-pole (False) extreme; Infer.parallel: ``(x, y, 'par'|'perp')``.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping, Sequence
from functools import lru_cache
from itertools import permutations, product

from mindprobe.errors import DataError


def _literal(record: Mapping, field: str) -> object:
    try:
        return ast.literal_eval(record[field])
    except (ValueError, SyntaxError, TypeError) as exc:
        raise DataError(
            f"trial Key={record.get('Key')}: field {field!r} is not a Python literal "
            f"({record.get(field)!r}); regenerate or fix the trials file"
        ) from exc


def _true_in(claim: Sequence, pos: Sequence[int]) -> bool:
    """Truth of a claim in a world where entity i sits at position pos[i]."""
    if len(claim) == 2 and isinstance(claim[1], bool):
        return pos[claim[0]] == (0 if claim[1] else len(pos) - 1)
    if len(claim) == 2:
        return pos[claim[0]] < pos[claim[1]]
    lo, hi = sorted((pos[claim[1]], pos[claim[2]]))
    return lo < pos[claim[0]] < hi


@lru_cache(maxsize=256)
def _orders(n: int, descr: tuple[tuple, ...]) -> tuple[tuple[int, ...], ...]:
    """All positions vectors satisfying the description (cached: a tuple shares its world)."""
    return tuple(pos for pos in permutations(range(n)) if all(_true_in(r, pos) for r in descr))


def _verdict(values: set[bool], record: Mapping, what: str) -> bool:
    if len(values) != 1:
        state = "contradictory" if not values else "not decided by the description"
        raise DataError(f"trial Key={record.get('Key')}: {what} is {state}; not a valid item")
    return values.pop()


def _solve_parallel(record: Mapping, n: int) -> str:
    links = _literal(record, "descr")
    query = _literal(record, "query")
    if not isinstance(query, tuple) or len(query) != 3:
        raise DataError(
            f"trial Key={record.get('Key')}: Infer.parallel query {record['query']!r} does not "
            "name the asked pair and relation (upstream's dummy '(0, 1)' cannot be solved)"
        )
    worlds = [
        o
        for o in product((0, 1), repeat=n)
        if all((o[x] == o[y]) == (kind == "par") for x, y, kind in links)
    ]
    x, y, kind = query
    values = {(o[x] == o[y]) == (kind == "par") for o in worlds}
    return "TRUE" if _verdict(values, record, "the query") else "FALSE"


def solve(record: Mapping) -> str:
    """The plain gold token (TRUE/FALSE, POSSIBLE/IMPOSSIBLE, 1/2/3) for one trial record."""
    problem = str(record["problemname"])
    n = int(record["problemsize"])
    if problem == "Infer.parallel":
        return _solve_parallel(record, n)
    family = problem.split(".")[0]
    models = _orders(n, tuple(_literal(record, "descr")))
    if family == "Consist":
        return "POSSIBLE" if models else "IMPOSSIBLE"
    query_text = str(record["query"]).strip()
    if family == "Compl":
        if query_text.startswith("i"):
            return "3"
        query = _literal(record, "query")
        if -1 in query:
            return "3"
        values = {_true_in(query, pos) for pos in models}
        if not values:
            raise DataError(f"trial Key={record.get('Key')}: the description is contradictory")
        return "3" if len(values) == 2 else ("1" if values.pop() else "2")
    if family == "Infer":
        query = _literal(record, "query")
        values = {_true_in(query, pos) for pos in models}
        return "TRUE" if _verdict(values, record, "the query") else "FALSE"
    raise DataError(f"trial Key={record.get('Key')}: unknown problemname {problem!r}")
