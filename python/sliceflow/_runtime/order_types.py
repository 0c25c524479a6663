"""Which Arrow types an operator can order rows by: the one check that ``topn`` and
``deduplicate`` (by event time) share.

Both kernels order with Spark's rules (``cpp/order/sort_key.h`` for Top-N, the deduplicator's
comparison for ``deduplicate``): booleans, signed integers, floats (NaN above everything,
-0.0 equal to 0.0), DECIMAL(p ≤ 38), STRING and BINARY (unsigned byte order), DATE and
TIMESTAMP (microseconds, any zone). Spark has no unsigned integers, so the kernels take none.
"""

from __future__ import annotations

from collections.abc import Callable

import pyarrow as pa

from sliceflow._runtime.agg_plan import is_comparable
from sliceflow._runtime.spark_types import spark_type_name

__all__ = ["check_orderable", "is_orderable"]


def is_orderable(t: pa.DataType) -> bool:
    """Whether rows can be ordered by a column of Arrow type ``t``: a grouping key's type
    (:func:`sliceflow._runtime.agg_plan.is_comparable`) or BINARY.

    >>> is_orderable(pa.timestamp("us", tz="UTC")), is_orderable(pa.map_(pa.string(), pa.int32()))
    (True, False)
    """
    return is_comparable(t) or pa.types.is_binary(t) or pa.types.is_large_binary(t)


# Why a type is refused, the first test that holds deciding.
_REFUSALS: tuple[tuple[Callable[[pa.DataType], bool], str], ...] = (
    (pa.types.is_map, "a MAP cannot be ordered (Spark refuses it too)"),
    (
        pa.types.is_nested,
        "ordering by ARRAY or STRUCT columns is not supported; order by atomic columns",
    ),
    (
        pa.types.is_timestamp,
        "timestamps must be in microseconds (Spark's TIMESTAMP); cast it to timestamp[us]",
    ),
    (pa.types.is_unsigned_integer, "Spark has no unsigned integers; cast it to a signed type"),
)


def check_orderable(name: str, t: pa.DataType) -> None:
    """Raises ``ValueError`` naming the ``order_by`` column ``name`` and saying why unless rows
    can be ordered by its type ``t``.

    >>> check_orderable("m", pa.map_(pa.string(), pa.int32()))
    Traceback (most recent call last):
    ...
    ValueError: order_by column 'm' has type MAP<STRING, INT>: a MAP cannot be ordered (Spark ...
    """
    if is_orderable(t):
        return
    why = next((why for refused, why in _REFUSALS if refused(t)), "it cannot be ordered")
    raise ValueError(f"order_by column {name!r} has type {spark_type_name(t)}: {why}")
