"""Golden checkpoints (docs/state.md, "Compatibility"): each streaming operator restarts from
the small checkpoint committed under tests/data/checkpoints/ (written by
tools/make_golden_checkpoints.py with the release that introduced the state format) and gives,
together with what the checkpoint's run emitted, the same output as a run from scratch on the
same input. A failure here means this release no longer reads an earlier release's state."""

from __future__ import annotations

import os

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from support import DATA

from sliceflow.testing.golden_checkpoints import (
    FIRST_BATCHES,
    GOLDEN,
    place,
    stream,
    write_source,
)
from sliceflow.testing.spark import run_to_end

pytestmark = pytest.mark.spark

GOLDEN_DIR = os.path.join(DATA, "checkpoints")


def collect(df, checkpoint: str) -> list[tuple]:
    """The rows of every micro-batch the query runs now, in micro-batch order."""
    got: dict[int, pa.Table] = {}
    run_to_end(
        df, checkpoint, lambda batch_df, batch_id: got.__setitem__(batch_id, batch_df.toArrow())
    )
    return [tuple(r.values()) for b in sorted(got) for r in got[b].to_pylist()]


def by_key(rows: list[tuple], key: int) -> dict[object, list[tuple]]:
    out: dict[object, list[tuple]] = {}
    for row in rows:
        out.setdefault(row[key], []).append(row)
    return out


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_restart_from_golden_checkpoint_equals_a_run_from_scratch(spark, tmp_path, name):
    golden = GOLDEN[name]
    folder = os.path.join(GOLDEN_DIR, name)
    inputs = sorted(os.listdir(os.path.join(folder, "source")))
    assert len(inputs) > FIRST_BATCHES
    source, checkpoint = place(folder, str(tmp_path / "golden"))
    restarted = collect(stream(spark, golden, source), checkpoint)

    fresh_source = str(tmp_path / "fresh_src")
    tables = [pq.read_table(os.path.join(source, n)) for n in inputs]
    fresh_ck = str(tmp_path / "fresh_ck")
    if golden.restart_in_fresh_run:
        write_source(fresh_source, tables[:FIRST_BATCHES])
        fresh = collect(stream(spark, golden, fresh_source), fresh_ck)
        write_source(fresh_source, tables[FIRST_BATCHES:], first=FIRST_BATCHES)
        fresh += collect(stream(spark, golden, fresh_source), fresh_ck)
    else:
        write_source(fresh_source, tables)
        fresh = collect(stream(spark, golden, fresh_source), fresh_ck)

    before = [
        tuple(r.values())
        for r in pq.read_table(os.path.join(folder, "emitted.parquet")).to_pylist()
    ]
    assert before and restarted  # both runs emitted something: the state carried over
    assert sorted(map(repr, before + restarted)) == sorted(map(repr, fresh))
    if name in ("changelog_agg", "deduplicate"):
        # A key's changes in order: op, then the key column.
        assert by_key(before + restarted, 1) == by_key(fresh, 1)
