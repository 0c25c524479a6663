"""The change kinds of a changelog, ``+I``/``-U``/``+U``/``-D``, and the op column that holds them.

Every operator that reads or writes a changelog takes its kinds from here; the kernels use the
same codes (``cpp/changes/``): 0 ``+I`` insert, 1 ``-U`` update-before, 2 ``+U``
update-after, 3 ``-D`` delete. An op column is a STRING column of those names; a null op is an
insert. A value that is no change kind is refused with one message, :func:`not_a_kind`, the
text the kernels use too.

>>> import pyarrow as pa
>>> codes_of(pa.array(["+U", None, "-D"]), "op").to_pylist()
[2, 0, 3]
>>> names_of(pa.array([0, 1], pa.int8())).to_pylist()
['+I', '-U']
>>> not_a_kind("op", "+X")
"op column 'op' holds '+X', which is not a change kind: expected +I, -U, +U or -D (null: +I)"
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from sliceflow._runtime.spark_types import spark_type_name

__all__ = [
    "CHANGE_KINDS",
    "DELETE",
    "INSERT",
    "UPDATE_AFTER",
    "UPDATE_BEFORE",
    "codes_of",
    "is_op_type",
    "names_of",
    "not_a_kind",
    "op_type_error",
    "shown_value",
]

#: The change kinds, in the order of their codes.
CHANGE_KINDS = ("+I", "-U", "+U", "-D")
#: The kernels' codes of the change kinds (``int8``).
INSERT, UPDATE_BEFORE, UPDATE_AFTER, DELETE = range(4)

_NAMES = pa.array(CHANGE_KINDS, pa.string())


def shown_value(value: Any) -> str:
    """A row's value as an error message shows it: strings quoted and cut at 40 characters,
    null as ``null``."""
    if isinstance(value, str):
        return repr(value if len(value) <= 40 else value[:40] + "…")
    return "null" if value is None else str(value)


def not_a_kind(op_col: str, value: Any) -> str:
    """The message for an op value that is no change kind (cut at 40 characters)."""
    return (
        f"op column {op_col!r} holds {shown_value(value)}, which is not a change kind: "
        "expected +I, -U, +U or -D (null: +I)"
    )


def is_op_type(t: pa.DataType) -> bool:
    """Whether an Arrow type can be an op column (a STRING)."""
    return bool(pa.types.is_string(t) or pa.types.is_large_string(t))


def op_type_error(op_col: str, t: pa.DataType) -> ValueError:
    """The error for an op column of another type than STRING."""
    return ValueError(
        f"op column {op_col!r} must be a STRING column holding +I, -U, +U or -D, not "
        f"{spark_type_name(t)}"
    )


def codes_of(ops: pa.Array, op_col: str) -> pa.Array:
    """The codes (``int8``) of an op column's values (null: ``+I``); ``ValueError``
    (:func:`not_a_kind`) naming the first value that is no change kind."""
    codes = pc.index_in(ops, value_set=_NAMES.cast(ops.type))
    bad = pc.and_(pc.is_valid(ops), pc.is_null(codes))
    if pc.any(bad).as_py():
        raise ValueError(not_a_kind(op_col, ops.filter(bad)[0].as_py()))
    return pc.fill_null(codes, INSERT).cast(pa.int8())


def names_of(codes: Any) -> pa.Array:
    """The op column (STRING) of kernel codes (an ``int8`` Arrow array or numpy array)."""
    return _NAMES.take(codes if isinstance(codes, pa.Array) else pa.array(codes))
