"""``deduplicate(order_by=<time column>)`` against Apache Flink 2.3.0's rowtime Deduplicate:
``ROW_NUMBER() OVER (PARTITION BY k ORDER BY rt) = 1`` where ``rt`` is an event-time attribute
(a watermark on it), the operator Flink plans for "first / last row by event time".

Optional (marker ``flink``): skipped unless ``.flink-venv`` exists (``scripts/flink_venv.sh``).
Row by row, the rowtime Deduplicate emits what ``deduplicate`` without mini-batch emits: ``+I``
for a key's first row, ``-U``/``+U`` when a row ordered before the kept one (keep first:
strictly earlier; keep last: at the same time or later) replaces it; those changelogs are
compared key by key, ties in event time included. Where the two differ by design, the final
rows are compared: ``deduplicate``'s mini-batch folds a bundle to one net change per key
(Flink's holds the output back but still updates row by row), and Flink 2.3's keep-first
without mini-batch waits for the watermark and emits insert-only. The watermark trails by an
hour, more than the inputs span, so no row is late.
"""

from __future__ import annotations

import random
from typing import Any

import pyarrow as pa
import pytest
from support import flink_session
from support.flink_reference import flink_available
from test_dedup_flink import SCHEMA, by_key, upserted

from sliceflow.dedup.plan import build_plan
from sliceflow.dedup.step import DedupStep
from sliceflow.testing.dedup_reference import DedupModel

pytestmark = [
    pytest.mark.flink,
    pytest.mark.skipif(
        not flink_available(), reason="no .flink-venv (run scripts/flink_venv.sh to create it)"
    ),
]

COLUMNS = [["k", "INT"], ["t", "BIGINT"], ["v", "INT"]]
ROWTIME = {"name": "rt", "expr": "TO_TIMESTAMP_LTZ(t, 3)", "watermark": "rt - INTERVAL '1' HOUR"}


def rows_with_ties(seed: int, n: int) -> list[dict[str, Any]]:
    """Out-of-order event times over few keys, about a third of them repeated."""
    rng = random.Random(seed)
    times = [rng.randrange(0, 40) * 1000 for _ in range(n)]
    return [{"k": rng.randrange(5), "t": times[i], "v": i} for i in range(n)]


def sql(direction: str) -> str:
    return (
        "SELECT k, t, v FROM (SELECT k, t, v, ROW_NUMBER() OVER (PARTITION BY k ORDER BY "
        f"rt {direction}) AS rn FROM src) WHERE rn = 1"
    )


def job(rows: list[dict[str, Any]], query: str, **options: Any) -> dict[str, Any]:
    return {
        "columns": COLUMNS,
        "rows": [["+I", r["k"], r["t"], r["v"]] for r in rows],
        "append": True,
        "rowtime": ROWTIME,
        "sql": query,
        **options,
    }


CASES = [
    # (name, our kwargs, Flink ORDER BY direction, Flink job options, what is compared)
    ("last", {"keep": "last", "mini_batch": False}, "DESC", {"mini_batch": False}, "changelog"),
    # Flink's mini-batch rowtime Deduplicate updates row by row within a bundle (it only holds
    # the output back): the changelog of deduplicate without mini-batch
    ("first-rows", {"keep": "first", "mini_batch": False}, "ASC", {"mini_batch": True, "size": 9},
     "changelog"),
    ("last-rows", {"keep": "last", "mini_batch": False}, "DESC", {"mini_batch": True, "size": 9},
     "changelog"),
    # deduplicate's mini-batch folds a bundle to one net change per key: the same final rows
    ("first-mb", {"keep": "first", "bundle_rows": 9}, "ASC", {"mini_batch": True, "size": 9},
     "final"),
    ("last-mb", {"keep": "last", "bundle_rows": 9}, "DESC", {"mini_batch": True, "size": 9},
     "final"),
    # Flink 2.3 without mini-batch keeps the first row until the watermark passes it and then
    # emits it once (``outputInsertOnly``); deduplicate emits at once and corrects
    ("first", {"keep": "first", "mini_batch": False}, "ASC", {"mini_batch": False}, "final"),
]  # fmt: skip
SEEDS = range(3)


def flink_jobs() -> dict[Any, dict[str, Any]]:
    jobs = {}
    for name, _, direction, options, _ in CASES:
        for seed in SEEDS:
            jobs[(name, seed)] = job(rows_with_ties(seed, 70), sql(direction), **options)
    # the plan: Flink's rowtime Deduplicate, not its Rank
    for direction in ("ASC", "DESC"):
        jobs[("plan", direction)] = job(rows_with_ties(0, 3), "EXPLAIN PLAN FOR " + sql(direction))
    return jobs


@pytest.fixture(scope="module")
def flink_results() -> dict[Any, Any]:
    return flink_session.results(__name__, flink_jobs)


def test_flink_plans_its_rowtime_deduplicate(flink_results):
    for direction, keep in (("ASC", "FirstRow"), ("DESC", "LastRow")):
        plan = flink_results[("plan", direction)][0][1]
        assert f"Deduplicate(keep=[{keep}], key=[k], order=[ROWTIME]" in plan, plan


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_matches_flink_rowtime_deduplicate(flink_results, case, seed):
    name, kwargs, _, _, compare = case
    rows = rows_with_ties(seed, 70)
    step = DedupStep(build_plan(SCHEMA, ["k"], order_by="t", **kwargs))
    out, _ = step.run(step.empty_state(), pa.RecordBatch.from_pylist(rows, schema=SCHEMA))
    got = [(r.pop("op", "+I"), r["k"], r["t"], r["v"]) for r in out.to_pylist()]
    model = DedupModel(["k"], order_by="t", **kwargs).micro_batch(rows)
    assert got == [(op, r["k"], r["t"], r["v"]) for op, r in model]
    flink = flink_results[(name, seed)]
    if compare == "changelog":
        assert by_key(got) == by_key(flink)
    else:
        assert upserted(got) == upserted(flink)
    assert any(op == "-U" for op, *_ in got)  # the inputs do replace kept rows
