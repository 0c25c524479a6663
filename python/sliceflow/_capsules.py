"""Arrow arrays that the C++ kernels hand back as bare PyCapsules, imported by pyarrow."""

from __future__ import annotations

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
