"""How Python drives the C++ kernels: one place for what every operator does around a call.

* :func:`add_batch` -- hands a RecordBatch to a kernel object's ``add`` through the Arrow C Data
  Interface with its buffer sizes (which the kernel's input validation bounds every offset
  by), and rewrites a refusal's internal column names into the user's;
* :func:`import_batch` / :func:`drain` -- the RecordBatches a kernel hands back as capsules;
* :func:`conform` -- a batch with exactly the schema a kernel was built for;
* :func:`add_stats` -- sums a kernel's counters into the caller's dict.

Each call is per batch: nothing here runs per row.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, MutableMapping, Sequence
from typing import Any

import pyarrow as pa

from sliceflow._runtime.arrow_c_data import buffer_sizes, c_array, import_struct, with_user_columns

__all__ = ["MAX_OUTPUT_ROWS", "add_batch", "add_stats", "conform", "drain", "import_batch"]


#: Rows per output batch a kernel hands back (window and changelog results): bounds the memory
#: of one batch and what one Arrow-backed frame carries back to Spark.
MAX_OUTPUT_ROWS = 65536


def add_batch(
    kernel: Any,
    batch: pa.RecordBatch,
    *args: Any,
    columns: tuple[Sequence[str], Sequence[str]] | None = None,
) -> Any:
    """``kernel.add(batch, *args)`` through the C Data Interface, with ``batch``'s buffer
    sizes; returns what ``add`` returns. ``columns`` (the batch's internal names, the user's
    names): a ValueError from the kernel's validation names the user's column."""
    try:
        return kernel.add(*c_array(batch), *args, buffer_sizes=buffer_sizes(batch))
    except ValueError as e:
        if columns is None:
            raise
        raise with_user_columns(e, *columns) from e


def import_batch(struct_type: pa.DataType, capsule: Any) -> pa.RecordBatch:
    """The RecordBatch a kernel exported as a struct array capsule of ``struct_type``."""
    return pa.RecordBatch.from_struct_array(import_struct(struct_type, capsule))


def drain(take: Callable[[], Any], schema: pa.Schema) -> Iterator[pa.RecordBatch]:
    """The batches ``take()`` hands back (as ``schema``) until it returns None."""
    struct_type = pa.struct(list(schema))
    while (capsule := take()) is not None:
        yield import_batch(struct_type, capsule)


def conform(batch: pa.RecordBatch, schema: pa.Schema) -> pa.RecordBatch:
    """``batch`` with exactly ``schema``'s field names and types (cast where they differ:
    list child names, string vs large_string, a timestamp's zone). No copy when equal."""
    if batch.schema.equals(schema):
        return batch
    if batch.num_columns != len(schema):
        raise ValueError(f"expected {len(schema)} columns, got {batch.num_columns}")
    columns = [
        column if column.type == field.type else column.cast(field.type)
        for column, field in zip(batch.columns, schema, strict=True)
    ]
    return pa.RecordBatch.from_arrays(columns, schema=schema)


def add_stats(into: MutableMapping[str, int], counters: Mapping[str, int]) -> None:
    """Adds each of a kernel's ``counters`` to the same name in ``into``."""
    for name, value in counters.items():
        into[name] = into.get(name, 0) + int(value)
