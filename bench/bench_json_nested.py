"""The nested rows of bench_json.py's kernel part: GitHub-events-like NDJSON
(``sliceflow.testing.github_event_lines``: structs, arrays of structs, escaped and non-ASCII
text, type drift) decoded on one core, with the wide schema sliceflow infers (the one
``spark.read.json`` infers; ``tests/json/test_spark_json_nested.py`` checks that against Spark)
and with a 5-field nested DDL, next to pyarrow, polars and simdjson's own parsers on the same
bytes. The corpus is valid JSON so that every contender can read it; one more sliceflow row
reads the same events with a share of malformed lines (PERMISSIVE, the corrupt-record column).

Run it through ``bench_json.py --only kernel`` (``--nested-rows`` sets the size), or alone:

    python bench/bench_json_nested.py --rows 100000 --repeat 7 --cpu 1
"""

from __future__ import annotations

import argparse
import io
import os
import statistics
import sys
from collections.abc import Callable
from typing import Any

import parse_floor
import pyarrow as pa
from kernel_timing import interleaved, one_core, paired, spread

# polars sizes its thread pool when it is first imported: one thread, for the one-core kernel.
os.environ["POLARS_MAX_THREADS"] = "1"

#: Share of malformed lines in the PERMISSIVE row.
MALFORMED = 0.005


def _try(check: Callable[[], bool]) -> str | None:
    """None when ``check`` holds, else why not (an exception or 'differs')."""
    try:
        return None if check() else "returns a different table"
    except Exception as e:  # a contender that cannot read the shape
        return f"fails: {type(e).__name__}: {str(e).splitlines()[0][:120]}"


def bench_nested_kernel(rows: int, repeats: int, cpu: int) -> tuple[str, dict[str, Any]]:
    """The nested table (markdown) and the medians."""
    import polars as pl
    import pyarrow.json as pj
    from pyspark.sql.types import StructType

    from sliceflow import json as sj
    from sliceflow.json import infer_schema
    from sliceflow.testing import GITHUB_EVENTS_DDL, github_event_lines

    lines = list(github_event_lines(rows))
    data = ("\n".join(lines) + "\n").encode()
    strings = pa.array(lines, pa.string())
    bad_lines = list(github_event_lines(rows, malformed=MALFORMED))
    bad_strings = pa.array(bad_lines, pa.string())
    del lines, bad_lines
    mb = len(data) / 1e6
    wide_json = infer_schema(data)
    bad_wide = infer_schema(b"\n".join(s.as_py().encode() for s in bad_strings))
    wide = StructType.fromJson(wide_json)
    bad_schema = StructType.fromJson(bad_wide)
    ddl = GITHUB_EVENTS_DDL
    wide_arrow = sj.to_arrow_schema(wide)
    ddl_arrow = sj.to_arrow_schema(ddl)

    with one_core(cpu):
        read_options = pj.ReadOptions(use_threads=False, block_size=1 << 24)

        def pyarrow_json(schema: pa.Schema) -> Callable[[], Any]:
            # Fields outside the schema are skipped, as every other contender skips them.
            parse = pj.ParseOptions(explicit_schema=schema, unexpected_field_behavior="ignore")
            return lambda: pj.read_json(
                pa.BufferReader(data), read_options=read_options, parse_options=parse
            )

        def polars_ndjson(schema: pa.Schema) -> Callable[[], Any]:
            polars_schema = dict(pl.from_arrow(schema.empty_table()).schema)
            return lambda: pl.read_ndjson(io.BytesIO(data), schema=polars_schema)

        floor_lib = parse_floor.build()
        floor = parse_floor.ParseFloor(floor_lib) if floor_lib else None
        padded = bytearray(data) + bytearray(parse_floor.PADDING)
        contenders: dict[str, tuple[str, Callable[[], Any]]] = {
            "wide": (
                "sliceflow.json.decode(NDJSON bytes), wide inferred schema",
                lambda: sj.decode(data, wide),
            ),
            "wide_array": (
                "sliceflow.json.decode(pa.string array), wide inferred schema",
                lambda: sj.decode(strings, wide),
            ),
            "wide_bad": (
                f"sliceflow, wide schema, {MALFORMED:.1%} malformed lines (PERMISSIVE)",
                lambda: sj.decode(bad_strings, bad_schema),
            ),
            "pa_wide": ("pyarrow.json.read_json, wide schema", pyarrow_json(wide_arrow)),
            "pl_wide": ("polars.read_ndjson, wide schema", polars_ndjson(wide_arrow)),
            "ddl": (
                "sliceflow.json.decode(NDJSON bytes), 5-field nested DDL",
                lambda: sj.decode(data, ddl),
            ),
            "ddl_array": (
                "sliceflow.json.decode(pa.string array), 5-field nested DDL",
                lambda: sj.decode(strings, ddl),
            ),
            "pa_ddl": ("pyarrow.json.read_json, 5-field nested DDL", pyarrow_json(ddl_arrow)),
            "pl_ddl": ("polars.read_ndjson, 5-field nested DDL", polars_ndjson(ddl_arrow)),
        }
        if floor is not None:
            contenders["dom"] = (
                "floor: simdjson DOM parse_many + walk, nothing built",
                lambda: floor.lines(padded, len(data), dom=True),
            )
            contenders["ondemand"] = (
                "floor: simdjson On-Demand reading every value, nothing built",
                lambda: floor.lines(padded, len(data)),
            )

        # Same table from everyone before anything is timed; a contender that cannot read
        # the shape is said so and left out of the timing.
        expected = {
            "wide": pa.Table.from_batches([sj.decode(data, wide)]).combine_chunks(),
            "ddl": pa.Table.from_batches([sj.decode(data, ddl)]).combine_chunks(),
        }
        assert expected["wide"].num_rows == rows
        left_out: dict[str, str] = {}
        for key, schema_key in (("wide_array", "wide"), ("ddl_array", "ddl")):
            table = pa.Table.from_batches([contenders[key][1]()])
            assert table.combine_chunks().equals(expected[schema_key]), key
        batch = contenders["wide_bad"][1]()
        corrupt = batch.column("_corrupt_record").drop_null()
        assert 0 < len(corrupt) < rows * MALFORMED * 2, len(corrupt)
        for key in ("pa_wide", "pa_ddl", "pl_wide", "pl_ddl"):
            want = expected[key.split("_")[1]]
            job = contenders[key][1]
            if key.startswith("pa"):
                why = _try(lambda job=job, want=want: job().combine_chunks().equals(want))
            else:
                why = _try(lambda job=job, want=want: job().equals(pl.from_arrow(want)))
            if why is not None:
                left_out[key] = why
        if floor is not None:
            assert contenders["dom"][1]() == rows and contenders["ondemand"][1]() == rows
        jobs = [(label, job) for key, (label, job) in contenders.items() if key not in left_out]
        print(
            f"kernel, nested: {rows:,} events, {mb:.1f} MB, {len(wide_json['fields'])} "
            f"top-level fields inferred, CPU {cpu}",
            file=sys.stderr,
        )
        times = interleaved(jobs, repeats)

    med = {label: statistics.median(samples) for label, samples in times.items()}
    dom = contenders["dom"][0] if floor is not None else None
    out = [
        f"**Kernel, nested**: GitHub-events-like NDJSON (`sliceflow.testing.github_event_lines`, "
        f"valid JSON with type drift, escapes and non-ASCII text), one core (pinned to CPU "
        f"{cpu}); {rows:,} events = {mb:.1f} MB; median of {repeats} runs. The wide schema is "
        f"the one `spark.read.json` infers ({len(wide_json['fields'])} top-level fields, "
        "nested structs and arrays of structs); the DDL is "
        f"`{ddl}`.",
        "",
        "*vs DOM floor* is this row's time / the DOM floor's time (< 2x is the target for the "
        "wide schema).",
        "",
        "| decoder | median s | min-max s | MB/s | vs DOM floor |",
        "|---|---:|---:|---:|---:|",
    ]
    for label, _ in jobs:
        t = med[label]
        vs = f"{t / med[dom]:.2f}x" if dom else "-"
        out.append(f"| {label} | {t:.3f} | {spread(times[label])} | {mb / t:,.0f} | {vs} |")
    for key, why in left_out.items():
        out.append(f"| {contenders[key][0]} | - | - | - | {why} |")
    if dom:
        wide_label = contenders["wide"][0]
        ratio = med[wide_label] / med[dom]
        out.append("")
        out.append(
            f"Target (wide schema, NDJSON bytes, <= 2x the DOM floor): {ratio:.2f}x "
            f"({'met' if ratio <= 2 else 'NOT met'}); round by round "
            f"{paired(times, wide_label, dom)}."
        )
    return "\n".join(out), {"median": med, "mb": mb}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--cpu", type=int, default=0)
    args = parser.parse_args(argv)
    block, _ = bench_nested_kernel(args.rows, args.repeat, args.cpu)
    print(block)


if __name__ == "__main__":
    main()
