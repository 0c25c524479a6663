"""Arrow arrays that the C++ kernels hand back as bare PyCapsules, imported by pyarrow."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import pyarrow as pa


class _Exported:
    """Pairs an ``arrow_array`` capsule with its struct type for pyarrow's PyCapsule import."""

    def __init__(self, struct_type: pa.DataType, array_capsule: Any) -> None:
        self._type = struct_type
        self._array = array_capsule

    def __arrow_c_array__(self, requested_schema: Any = None) -> tuple[Any, Any]:
        return self._type.__arrow_c_schema__(), self._array


def import_struct(struct_type: pa.DataType, array_capsule: Any) -> pa.StructArray:
    """The struct array a kernel exported (``array_capsule``), typed ``struct_type``."""
    return pa.array(_Exported(struct_type, array_capsule))


def c_array(data: pa.Array | pa.RecordBatch) -> tuple[Any, Any]:
    """``data``'s C Data Interface export: the schema capsule and the array capsule that a
    kernel's ``add`` (and the like) takes as its first two arguments."""
    schema_capsule, array_capsule = data.__arrow_c_array__()
    return schema_capsule, array_capsule


def buffer_sizes(data: pa.Array | pa.RecordBatch) -> list[int]:
    """The sizes in bytes of ``data``'s buffers in the order its C Data Interface export lists
    them (pre-order over the nodes; -1 for an absent buffer), for the kernels' validation to
    bound every offset by the buffer it indexes: the C interface itself carries no sizes.

    A RecordBatch exports as a struct without a validity buffer, then its columns. O(buffers).
    """
    if isinstance(data, pa.RecordBatch):
        buffers: list[pa.Buffer | None] = [None]
        for column in data.columns:
            buffers.extend(column.buffers())
    else:
        buffers = data.buffers()
    return [-1 if b is None else b.size for b in buffers]


def with_user_columns(
    error: ValueError, internal: Sequence[str], user: Sequence[str]
) -> ValueError:
    """``error`` (a kernel's refusal of a malformed batch, arrow/validate.h) with the batch's
    internal column names (``__k0``) replaced by the user's (``k``), so that the message names
    the column the caller passed."""
    names = dict(zip(internal, user, strict=True))
    message = re.sub(
        r"\)\.(\w+)",
        lambda m: f").{names[m.group(1)]}" if m.group(1) in names else m.group(0),
        str(error),
        count=1,
    )
    return ValueError(message)
