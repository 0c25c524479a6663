"""The changelog streams the changelog_agg Spark tests share: a random valid changelog (inserts,
deletes of live rows, -U/+U pairs, null values) over one schema, as rows and as Arrow."""

from __future__ import annotations

import random
from collections.abc import Sequence
from decimal import Decimal
from typing import Any

import pyarrow as pa

SCHEMA = pa.schema(
    [
        ("k", pa.int64()),
        ("s", pa.string()),
        ("v", pa.int64()),
        ("d", pa.decimal128(10, 2)),
        ("op", pa.string()),
    ]
)


def random_changelog(seed: int, n: int, keys: int = 8) -> list[dict[str, Any]]:
    """A valid changelog: inserts, deletes of live rows, -U/+U pairs; some null values."""
    rng = random.Random(seed)
    live: dict[Any, list[dict[str, Any]]] = {}
    rows: list[dict[str, Any]] = []
    while len(rows) < n:
        k = rng.choice([None, *range(keys)])
        new = {
            "k": k,
            "s": rng.choice(["a", "b", None]),
            "v": rng.choice([None, *range(-3, 20)]),
            "d": rng.choice([None, Decimal(rng.randint(-999, 999)).scaleb(-2)]),
        }
        if live.get(k) and rng.random() < 0.4:
            old = live[k].pop(rng.randrange(len(live[k])))
            if rng.random() < 0.5:
                rows.append({**old, "op": "-D"})
            else:
                rows += [{**old, "op": "-U"}, {**new, "s": old["s"], "op": "+U"}]
                live[k].append({**new, "s": old["s"]})
            continue
        rows.append({**new, "op": "+I"})
        live.setdefault(k, []).append(new)
    return rows


def table_of(rows: Sequence[dict[str, Any]]) -> pa.Table:
    return pa.table({f.name: pa.array([r[f.name] for r in rows], f.type) for f in SCHEMA})


def by_key(rows: Sequence[tuple], nkeys: int) -> dict[tuple, list[tuple]]:
    out: dict[tuple, list[tuple]] = {}
    for r in rows:
        out.setdefault(tuple(r[1 : 1 + nkeys]), []).append(tuple(r))
    return out
