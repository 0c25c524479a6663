"""The Top-N kernel (sliceflow.topn, in process) and its plain-Python model against Apache
Flink 2.3.0's ``ROW_NUMBER() <= n`` Top-N, on randomized inputs.

Optional (marker ``flink``): skipped unless ``.flink-venv`` exists (``scripts/flink_venv.sh``).
Parallelism 1; order keys unique within a key (``v DESC, id``), so the order is total.

* Insert-only input (``+I`` rows only), mini-batch off: with the row number and without it,
  the changelog equals Flink's row by row.
* Changelog input (``-D``/``-U`` of live rows: Flink's ``RetractableTopNFunction``): the
  materialized result equals Flink's; row by row, Flink emits the same changes.
* Mini-batch on: Flink's Top-N has no bundled form (it emits per row whatever the mini-batch
  settings); sliceflow's net changes per bundle materialize to the same table.
"""

from __future__ import annotations

import random
from typing import Any

import pyarrow as pa
import pytest
from support import flink_session
from support.flink_reference import flink_available

from sliceflow.testing.topn_reference import TopNModel
from sliceflow.topn import topn
from sliceflow.topn.plan import OrderKey

pytestmark = [
    pytest.mark.flink,
    pytest.mark.skipif(not flink_available(), reason="needs .flink-venv (scripts/flink_venv.sh)"),
]

N = 3
ORDER = [OrderKey("v", descending=True), OrderKey("id")]
SCHEMA = pa.schema([("k", pa.int32()), ("v", pa.int64()), ("id", pa.int64())])
RANKED = f"""SELECT k, v, id, rn FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY v DESC, id) AS rn FROM src
) WHERE rn <= {N}"""
UNRANKED = f"""SELECT k, v, id FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY v DESC, id) AS rn FROM src
) WHERE rn <= {N}"""


def inserts(seed: int, n: int) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    return [{"k": rng.randrange(4), "v": rng.randrange(30), "id": i} for i in range(n)]


def changelog(seed: int, n: int) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    live: list[dict[str, Any]] = []
    rows: list[dict[str, Any]] = []
    for i in range(n):
        if live and rng.random() < 0.35:
            rows.append({**live.pop(rng.randrange(len(live))), "op": rng.choice(["-D", "-U"])})
            continue
        row = {"k": rng.randrange(3), "v": rng.randrange(30), "id": i}
        live.append(row)
        rows.append({**row, "op": "+I"})
    return rows


APPEND = inserts(3, 300)
RETRACT = changelog(4, 300)


def flink_jobs() -> dict[str, dict[str, Any]]:
    cols = [["k", "INT"], ["v", "BIGINT"], ["id", "BIGINT"]]
    rows = [[r["op"], r["k"], r["v"], r["id"]] for r in RETRACT]
    inserted = [["+I", r["k"], r["v"], r["id"]] for r in APPEND]
    jobs = {
        "append/rank": {"columns": cols, "rows": inserted, "sql": RANKED},
        "append/plain": {"columns": cols, "rows": inserted, "sql": UNRANKED},
        "retract/rank": {"columns": cols, "rows": rows, "sql": RANKED},
        "retract/plain": {"columns": cols, "rows": rows, "sql": UNRANKED},
    }
    return jobs


@pytest.fixture(scope="module")
def flink() -> dict[str, list[tuple]]:
    return flink_session.results(__name__, flink_jobs)


def ours(rows: list[dict[str, Any]], *, retract: bool, with_rank: bool, mini: bool) -> list:
    schema = SCHEMA.append(pa.field("op", pa.string())) if retract else SCHEMA
    table = pa.Table.from_pylist(rows, schema)
    out = topn(
        table,
        N,
        by="k",
        order_by=ORDER,
        with_rank=with_rank,
        op_col="op" if retract else None,
        mini_batch=mini,
        bundle_rows=50,
    )
    return [tuple(r.values()) for r in out.to_pylist()]


def materialize(changes: list[tuple]) -> list[tuple]:
    live: list[tuple] = []
    for op, *row in changes:
        if op in ("+I", "+U"):
            live.append(tuple(row))
        else:
            live.remove(tuple(row))
    return sorted(live)


@pytest.mark.parametrize("with_rank", [True, False])
def test_insert_only_equals_flink_row_by_row(flink, with_rank):
    want = flink["append/rank" if with_rank else "append/plain"]
    got = ours(APPEND, retract=False, with_rank=with_rank, mini=False)
    model = TopNModel(["k"], ORDER, N, with_rank=with_rank, mini_batch=False).process(APPEND)
    assert len(want) > 50
    assert got == model == [tuple(r) for r in want]


@pytest.mark.parametrize("with_rank", [True, False])
def test_retracting_input_equals_flink(flink, with_rank):
    want = [tuple(r) for r in flink["retract/rank" if with_rank else "retract/plain"]]
    got = ours(RETRACT, retract=True, with_rank=with_rank, mini=False)
    model = TopNModel(["k"], ORDER, N, with_rank=with_rank, op_col="op", mini_batch=False)
    assert got == model.process(RETRACT)
    assert materialize(got) == materialize(want)
    assert got == want


@pytest.mark.parametrize("retract", [False, True])
def test_mini_batch_materializes_to_flink(flink, retract):
    want = flink["retract/rank" if retract else "append/rank"]
    got = ours(RETRACT if retract else APPEND, retract=retract, with_rank=True, mini=True)
    assert materialize(got) == materialize([tuple(r) for r in want])
    assert len(got) < len(want)
