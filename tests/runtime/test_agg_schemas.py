"""The aggregate layer's schema rules (cpp/agg/state_schema.h) as the plans see them: Spark's
result types, the window partial and changelog delta schemas written out by hand, and the
kernels' refusal of schemas that differ from the rule (naming the column at fault)."""

from __future__ import annotations

import pyarrow as pa
import pytest

from sliceflow import _core
from sliceflow import window as W
from sliceflow._runtime.agg_plan import result_type
from sliceflow.changelog.plan import build_plan as changelog_plan
from sliceflow.window.plan import build_plan as window_plan

D10_2 = pa.decimal128(10, 2)

# Spark 4.3: sum(int) BIGINT, avg(int) DOUBLE, sum(DECIMAL(p,s)) DECIMAL(min(38,p+10),s),
# avg(DECIMAL(p,s)) DECIMAL(min(38,p+4),min(38,s+4)); min/max/first/last keep the type.
RESULTS = [
    ("count", None, pa.int64()),
    ("count", pa.binary(), pa.int64()),
    ("sum", pa.int8(), pa.int64()),
    ("sum", pa.int64(), pa.int64()),
    ("avg", pa.int32(), pa.float64()),
    ("sum", pa.float32(), pa.float64()),
    ("avg", pa.float64(), pa.float64()),
    ("sum", D10_2, pa.decimal128(20, 2)),
    ("sum", pa.decimal128(30, 3), pa.decimal128(38, 3)),
    ("avg", D10_2, pa.decimal128(14, 6)),
    ("avg", pa.decimal128(36, 36), pa.decimal128(38, 38)),
    ("min", pa.large_string(), pa.string()),
    ("max", pa.timestamp("us", tz="Asia/Tokyo"), pa.timestamp("us", tz="Asia/Tokyo")),
    ("first_value", pa.date32(), pa.date32()),
    ("last_value", pa.bool_(), pa.bool_()),
    ("count_distinct", pa.string(), pa.int64()),
]


@pytest.mark.parametrize(("fn", "arg", "want"), RESULTS)
def test_result_types(fn: str, arg: pa.DataType | None, want: pa.DataType) -> None:
    assert result_type(fn, arg) == want


NUMERIC = "takes a numeric column (TINYINT … BIGINT, FLOAT, DOUBLE, DECIMAL)"
COMPARABLE = (
    "takes BOOLEAN, integer, FLOAT, DOUBLE, DECIMAL, STRING, DATE, TIMESTAMP or TIMESTAMP_NTZ "
    "columns"
)


@pytest.mark.parametrize(
    ("fn", "arg", "message"),
    [
        ("sum", pa.string(), f"sum {NUMERIC}"),
        ("avg", pa.bool_(), f"avg {NUMERIC}"),
        ("sum", pa.uint8(), f"sum {NUMERIC}"),  # a type the kernels cannot read at all
        ("sum", pa.decimal256(10, 2), f"sum {NUMERIC}"),
        ("min", pa.binary(), f"min {COMPARABLE}"),
        ("max", pa.list_(pa.int64()), f"max {COMPARABLE}"),
        ("count_distinct", pa.timestamp("ns"), f"count_distinct {COMPARABLE}"),
    ],
)
def test_unsupported_arguments(fn: str, arg: pa.DataType, message: str) -> None:
    with pytest.raises(TypeError) as e:
        result_type(fn, arg)
    assert str(e.value) == message


def test_unknown_function() -> None:
    with pytest.raises(ValueError, match="unknown aggregate 'median'"):
        result_type("median", pa.int64())


INPUT = pa.schema(
    [
        ("k", pa.large_string()),
        ("ts", pa.timestamp("us", tz="UTC")),
        ("i", pa.int32()),
        ("x", D10_2),
        ("s", pa.large_string()),
        ("op", pa.string()),
    ]
)
AGGS = [
    W.count(),
    W.sum("i"),
    W.avg("x"),
    W.max("s"),
    W.first_value("i"),
    W.count_distinct("s"),
]


def test_window_partial_schema() -> None:
    wp = window_plan(INPUT, W.tumble("ts", "1 minute"), ["k"], AGGS)
    assert wp.partial_schema == pa.schema(
        [
            pa.field("__key", pa.binary(), nullable=False),
            pa.field("__slice", pa.int64(), nullable=False),
            pa.field("__a0_n", pa.int64(), nullable=False),
            ("__a1_s", pa.decimal128(38, 0)),
            ("__a1_n", pa.int64()),
            ("__a2_s", pa.decimal128(38, 2)),
            ("__a2_n", pa.int64()),
            ("__a3_v", pa.string()),
            ("__a4_v", pa.int32()),
            ("__a4_t", pa.int64()),
            ("__a5_v", pa.list_(pa.field("element", pa.string()))),
            ("__a5_c", pa.list_(pa.field("element", pa.int64()))),
        ]
    )
    assert wp.output_schema.field("avg(x)").type == pa.decimal128(14, 6)


def test_changelog_delta_schema() -> None:
    cp = changelog_plan(INPUT, ["k"], AGGS, op_col="op")
    assert cp.delta_schema == pa.schema(
        [
            pa.field("__bucket", pa.int32(), nullable=False),
            pa.field("__key", pa.binary(), nullable=False),
            pa.field("__n", pa.int64(), nullable=False),
            pa.field("__a0_n", pa.int64(), nullable=False),
            ("__a1_s", pa.decimal128(38, 0)),
            pa.field("__a1_n", pa.int64(), nullable=False),
            ("__a2_s", pa.decimal128(38, 2)),
            pa.field("__a2_n", pa.int64(), nullable=False),
            ("__a3_v", pa.string()),
            ("__a4_v", pa.int32()),
            ("__a5_v", pa.string()),
        ]
    )


def _replaced(schema: pa.Schema, name: str, t: pa.DataType) -> pa.Schema:
    i = schema.get_field_index(name)
    return schema.set(i, schema.field(i).with_type(t))


def test_window_kernels_refuse_other_schemas() -> None:
    wp = window_plan(INPUT, W.tumble("ts", "1 minute"), ["k"], AGGS)
    local = wp.local_schema.__arrow_c_schema__()
    bad = _replaced(wp.partial_schema, "__a1_s", pa.float64())
    with pytest.raises(ValueError) as e:
        _core.window.LocalAggregator(wp.plan, local, bad.__arrow_c_schema__())
    assert str(e.value) == (
        "window kernel: the partial schema does not match the plan: column 3 is '__a1_s' "
        "double, expected '__a1_s' decimal128(38, 0)"
    )
    # The sweep sees no input: it derives the partial schema from the arguments it implies.
    bad = _replaced(wp.partial_schema, "__a5_c", pa.list_(pa.int32()))
    with pytest.raises(ValueError) as e:
        _core.window.GlobalAggregator(
            wp.plan, bad.__arrow_c_schema__(), wp.output_schema.__arrow_c_schema__()
        )
    assert str(e.value) == (
        "window kernel: the partial schema does not match the plan: column 11 is '__a5_c' "
        "list<item: int32>, expected '__a5_c' list<element: int64>"
    )
    out = _replaced(wp.output_schema, "first_value(i)", pa.string())
    with pytest.raises(ValueError) as e:
        _core.window.GlobalAggregator(
            wp.plan, wp.partial_schema.__arrow_c_schema__(), out.__arrow_c_schema__()
        )
    assert str(e.value) == (
        "window kernel: the output schema does not match the plan: column 'first_value(i)' is "
        "string, but first_value gives int32"
    )


def test_changelog_kernels_refuse_other_schemas() -> None:
    cp = changelog_plan(INPUT, ["k"], AGGS, op_col="op")
    bad = _replaced(cp.delta_schema, "__a3_v", pa.int64())
    with pytest.raises(ValueError) as e:
        _core.changelog.Encoder(
            cp.plan, cp.encoder_schema.__arrow_c_schema__(), bad.__arrow_c_schema__()
        )
    assert str(e.value) == (
        "changelog kernel: the delta schema does not match the plan: column 8 is '__a3_v' "
        "int64, expected '__a3_v' string"
    )
    out = _replaced(cp.output_schema, "sum(i)", pa.float64())
    with pytest.raises(ValueError) as e:
        _core.changelog.Aggregator(
            cp.plan, cp.delta_schema.__arrow_c_schema__(), out.__arrow_c_schema__()
        )
    assert str(e.value) == (
        "changelog kernel: the output schema does not match the plan: column 'sum(i)' is "
        "double, but sum gives int64"
    )
