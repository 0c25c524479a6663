"""``deduplicate``'s kernel against Apache Flink 2.3.0's ``ROW_NUMBER() = 1`` on randomized
inputs, next to the plain-Python model.

Optional (marker ``flink``): skipped unless ``.flink-venv`` exists (``scripts/flink_venv.sh``).
All jobs run in one Flink process (parallelism 1, one input collection, bundles cut by
``table.exec.mini-batch.size`` rows or at the end of the input).

* Arrival order is Flink's processing time: ``ORDER BY pt`` over a ``PROCTIME()`` column is
  Flink's Deduplicate operator (keep first: ``+I`` once per key; keep last: ``-U``/``+U`` per
  row, or one net change per key and bundle with mini-batch). The changelog is compared key by
  key (Flink's bundle emits its keys in ``HashMap`` order).
* ``ORDER BY t`` (a plain column) is Flink's Rank with n = 1 (retractable over a changelog
  input): its ops differ (over an insert-only input it may send an update as ``+U`` alone, the
  key being unique), so the final row per key is compared.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

import pyarrow as pa
import pytest
from support import flink_session
from support.flink_reference import flink_available

from sliceflow.dedup.plan import build_plan
from sliceflow.dedup.step import DedupStep
from sliceflow.testing.dedup_reference import DedupModel, materialize_rows

pytestmark = [
    pytest.mark.flink,
    pytest.mark.skipif(
        not flink_available(), reason="no .flink-venv (run scripts/flink_venv.sh to create it)"
    ),
]

COLUMNS = [["k", "INT"], ["t", "BIGINT"], ["v", "INT"]]
SCHEMA = pa.schema([("k", pa.int32()), ("t", pa.int64()), ("v", pa.int32())])
OP_SCHEMA = SCHEMA.append(pa.field("op", pa.string()))


def insert_rows(seed: int, n: int) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    ts = rng.sample(range(1000), n)  # unique order values: Flink's and Spark's ties aside
    return [{"k": rng.randrange(6), "t": ts[i], "v": rng.randrange(9)} for i in range(n)]


def changelog_rows(seed: int, n: int) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    live: list[dict[str, Any]] = []
    out: list[dict[str, Any]] = []
    for row in insert_rows(seed, n):
        if live and rng.random() < 0.3:
            out.append({**live.pop(rng.randrange(len(live))), "op": "-D"})
        else:
            out.append({**row, "op": "+I"})
            live.append(row)
    return out


def ours(rows: list[dict[str, Any]], **kwargs: Any) -> list[tuple]:
    schema = OP_SCHEMA if kwargs.get("op_col") else SCHEMA
    step = DedupStep(build_plan(schema, ["k"], **kwargs))
    out, _ = step.run(step.empty_state(), pa.RecordBatch.from_pylist(rows, schema=schema))
    return [(r.pop("op", "+I"), r["k"], r["t"], r["v"]) for r in out.to_pylist()]


def by_key(changes: Sequence[tuple]) -> dict[Any, list[tuple]]:
    out: dict[Any, list[tuple]] = {}
    for c in changes:
        out.setdefault(c[1], []).append(tuple(c))
    return out


def upserted(changes: Sequence[tuple]) -> dict[Any, tuple]:
    """The final row per key of a changelog read as an upsert stream (Flink's Rank may send an
    update as ``+U`` alone, the key being unique)."""
    table: dict[Any, tuple] = {}
    for op, *row in changes:
        if op in ("+I", "+U"):
            table[row[0]] = tuple(row)
        elif table.get(row[0]) == tuple(row):
            del table[row[0]]
    return table


def flink_job(rows: list[dict[str, Any]], sql: str, **job: Any) -> dict[str, Any]:
    ops = [[r.get("op", "+I"), r["k"], r["t"], r["v"]] for r in rows]
    append = all(r[0] == "+I" for r in ops)
    return {"columns": COLUMNS, "rows": ops, "proctime": "pt", "append": append, "sql": sql, **job}


def dedup_sql(order: str) -> str:
    return (
        f"SELECT k, t, v FROM (SELECT k, t, v, ROW_NUMBER() OVER (PARTITION BY k ORDER BY "
        f"{order}) AS rn FROM src) WHERE rn = 1"
    )


CASES = [
    # (name, our kwargs, Flink ORDER BY, Flink job options, input kind)
    ("first-arrival", {"keep": "first"}, "pt ASC", {"mini_batch": False}, "insert"),
    ("first-arrival-mb", {"keep": "first"}, "pt ASC", {"mini_batch": True, "size": 7}, "insert"),
    ("last-arrival", {"keep": "last", "mini_batch": False}, "pt DESC", {}, "insert"),
    ("last-arrival-mb", {"keep": "last", "bundle_rows": 7}, "pt DESC",
     {"mini_batch": True, "size": 7}, "insert"),
    ("first-by-t", {"keep": "first", "order_by": "t"}, "t ASC", {}, "insert"),
    ("last-by-t", {"keep": "last", "order_by": "t"}, "t DESC", {}, "insert"),
    ("first-by-t-retract", {"keep": "first", "order_by": "t", "op_col": "op"}, "t ASC", {},
     "changelog"),
    ("last-arrival-retract", {"keep": "last", "op_col": "op", "order_by": "t"}, "t DESC", {},
     "changelog"),
]  # fmt: skip
SEEDS = range(3)


def flink_jobs() -> dict[tuple[str, int], dict[str, Any]]:
    jobs = {}
    for name, _, order, options, kind in CASES:
        for seed in SEEDS:
            rows = insert_rows(seed, 60) if kind == "insert" else changelog_rows(seed, 60)
            jobs[(name, seed)] = flink_job(rows, dedup_sql(order), **options)
    return jobs


@pytest.fixture(scope="module")
def flink_results() -> dict[tuple[str, int], list[tuple]]:
    return flink_session.results(__name__, flink_jobs)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_matches_flink(flink_results, case, seed):
    name, kwargs, order, options, kind = case
    rows = insert_rows(seed, 60) if kind == "insert" else changelog_rows(seed, 60)
    got = ours(rows, **kwargs)
    model = DedupModel(["k"], **kwargs).micro_batch(rows)
    assert got == [(op, r["k"], r["t"], r["v"]) for op, r in model]
    flink = flink_results[(name, seed)]
    if "pt" in order:  # Flink's Deduplicate: the same changelog, key by key
        assert by_key(got) == by_key(flink)
    else:  # Flink's Rank: the same result
        assert upserted(got) == upserted(flink)
        assert sorted(materialize_rows([(c[0], c[1:]) for c in got])) == sorted(  # type: ignore[misc]
            upserted(got).values()
        )
