"""The plan identity on real streaming queries (docs/state.md): a restart from a checkpoint
with other tuning options (``bundle_rows``, ``bundle_bytes``) resumes and gives the output of
an uninterrupted run; a restart with another aggregation is refused, naming the field that
changed (tests/window/test_spark_window_stream.py and tests/changelog/test_spark_changelog.py
check the aggregate and bucket-count refusals)."""

from __future__ import annotations

import pyarrow as pa
import pytest
from support.changelog_data import SCHEMA as CHANGELOG_SCHEMA
from support.changelog_data import by_key, random_changelog, table_of
from support.spark_helpers import collect_stream, stream_of, write_micro_batches
from support.spark_helpers import collect_tables as collect
from support.window_data import OURS, REF, SCHEMA, S, random_stream, spec_of

from sliceflow import window as W
from sliceflow.spark import changelog_agg, window_agg
from sliceflow.testing.changelog_reference import ChangelogModel
from sliceflow.testing.window_reference import RefWindow, canonical_rows
from sliceflow.testing.window_stream_reference import same_values, stream_reference

pytestmark = pytest.mark.spark


def test_window_restart_with_other_bundle_sizes_resumes(spark, tmp_path):
    window = RefWindow("hop", 30 * S, 10 * S)
    batches = random_stream(11, 6, 30)
    src, ck = str(tmp_path / "src"), str(tmp_path / "ck")

    def run(**tuning) -> list[pa.Table]:
        stream = stream_of(spark, src, SCHEMA).withWatermark("t", "5 seconds")
        out = window_agg(stream, spec_of(window), ["k"], OURS, buckets=3, **tuning)
        return list(collect(out, ck).values())

    write_micro_batches(src, batches[:3])
    first = run(bundle_rows=2, bundle_bytes=4096)
    write_micro_batches(src, batches[3:], first=3)
    second = run(bundle_rows=100_000)
    got = canonical_rows(pa.concat_tables(first + second), ["k"])
    # Run 1 ended with a no-data micro-batch at the moved watermark (Spark runs one), which
    # the model sees as an empty micro-batch: rows of batch 3 are late against its watermark.
    no_data = [SCHEMA.empty_table()] * (len(first) - 3)
    model = stream_reference(
        [*batches[:3], *no_data, *batches[3:]], "t", window, ["k"], REF, delay_us=5 * S
    )
    expected = canonical_rows(pa.concat_tables(model.batches), ["k"])
    assert sum(t.num_rows for t in first) > 0 and sum(t.num_rows for t in second) > 0
    assert len(got) == len(expected)
    assert all(same_values(a, b) for a, b in zip(got, expected, strict=True))


def test_changelog_restart_with_other_bundle_rows_resumes(spark, tmp_path):
    rows = random_changelog(11, 240)
    cuts = [0, 50, 90, 170, 240]
    batches = [rows[a:b] for a, b in zip(cuts, cuts[1:], strict=False)]
    aggs = [W.count().alias("n"), W.sum("v").alias("sv"), W.max("s").alias("hs")]
    src, ck = str(tmp_path / "src"), str(tmp_path / "ck")

    def run(bundle_rows: int) -> dict[int, list[tuple]]:
        stream = stream_of(spark, src, CHANGELOG_SCHEMA)
        out = changelog_agg(stream, ["k"], aggs, op_col="op", bundle_rows=bundle_rows, buckets=3)
        return collect_stream(out, ck)

    write_micro_batches(src, [table_of(b) for b in batches[:2]])
    got = run(5000)
    write_micro_batches(src, [table_of(b) for b in batches[2:]], first=2)
    # Bundles stay one bucket's rows of a micro-batch at either size: the same changes.
    got.update(run(1000))
    assert sorted(got) == list(range(len(batches)))
    model = ChangelogModel(["k"], aggs, op_col="op", mini_batch=True)
    for b, batch in enumerate(batches):
        assert by_key(got[b], 1) == by_key(model.process(batch), 1), f"micro-batch {b}"
