"""Untrusted buffers at every entry point that takes a Python buffer or an Arrow capsule.

Each case either reads the input correctly (strided, reversed, 2-D and numpy byte views;
sliced, offset and chunked Arrow arrays of every string and binary type, with and without
nulls) or refuses it with a ValueError naming the problem; none may crash. Malformed Arrow
input comes from arrays corrupted after pyarrow validated them (offsets rewritten through the
buffer's address) and from C Data Interface structs filled in by hand with ctypes, passed to
the ``_core`` entry points as "arrow_schema"/"arrow_array" PyCapsules and, where the public
APIs take pyarrow objects, through those. scripts/sanitize.sh runs this file under ASan+UBSan.
"""

from __future__ import annotations

import ctypes
from array import array
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

import sliceflow.json as sj
from sliceflow import _core
from sliceflow import changelog as C
from sliceflow import window as W
from sliceflow._runtime.arrow_c_data import buffer_sizes, import_struct
from sliceflow.changelog.plan import build_plan as build_changelog_plan
from sliceflow.window.plan import build_plan as build_window_plan

TEXT = b'{"a":1}\n{"a":2}\n{"a":3}\n'
WANT = [{"a": 1}, {"a": 2}, {"a": 3}]
STRING_TYPES = [pa.string(), pa.large_string(), pa.binary(), pa.large_binary()]


def rows(batch: pa.RecordBatch) -> list[dict[str, Any]]:
    return batch.to_pylist()


# ---------------------------------------------------------------------------------------------
# Python buffers (decode_lines)


def test_strided_memoryview_is_read_as_its_items() -> None:
    interleaved = bytes(b for pair in zip(TEXT, b"X" * len(TEXT), strict=True) for b in pair)
    view = memoryview(interleaved)[::2]
    assert view.tobytes() == TEXT
    assert rows(sj.decode(view, "a INT")) == WANT


def test_the_issue_example_reads_the_strided_bytes() -> None:
    view = memoryview(b'{"a":1}\n{"a":2}\n')[::2]
    want = sj.decode(view.tobytes(), "a INT")
    assert rows(sj.decode(view, "a INT")) == rows(want)


def test_reversed_memoryview() -> None:
    view = memoryview(TEXT[::-1])[::-1]
    assert rows(sj.decode(view, "a INT")) == WANT


def test_two_dimensional_views_read_in_c_order() -> None:
    grid = np.frombuffer(TEXT, dtype=np.uint8).reshape(3, len(TEXT) // 3)
    assert rows(sj.decode(memoryview(grid), "a INT")) == WANT
    fortran = np.asfortranarray(grid)  # same items, not C-contiguous
    assert not fortran.flags.c_contiguous
    assert rows(sj.decode(memoryview(fortran), "a INT")) == WANT
    # A transposed view holds other bytes in C order: read exactly those.
    transposed = memoryview(grid.T)
    assert rows(sj.decode(transposed, "a INT")) == rows(sj.decode(grid.T.tobytes(), "a INT"))


@pytest.mark.parametrize(
    "data",
    [
        memoryview(array("i", [1, 2, 3])),
        memoryview(np.arange(4, dtype=np.int32)),
        memoryview(np.zeros((2, 2), dtype=np.float64)),
    ],
    ids=["array-i", "numpy-int32", "numpy-2d-float64"],
)
def test_items_wider_than_a_byte_are_refused(data: memoryview) -> None:
    with pytest.raises(ValueError, match=r"itemsize 1\).*got format '[^']+' with itemsize [48]"):
        sj.decode(data, "a INT")


def test_wide_items_cast_to_bytes_are_read() -> None:
    padded = TEXT + b" " * (-len(TEXT) % 4)
    view = memoryview(np.frombuffer(padded, dtype=np.int32)).cast("B")
    assert rows(sj.decode(view, "a INT")) == WANT


@pytest.mark.parametrize("step", [2, -2, -1])
def test_numpy_views(step: int) -> None:
    source = TEXT if abs(step) == 1 else bytes(b for c in TEXT for b in (c, 0))
    base = np.frombuffer(source if step > 0 else source[::-1], dtype=np.uint8)
    view = base[::step] if step != -2 else base[1::2][::-1]
    assert view.tobytes() == TEXT
    assert rows(sj.decode(memoryview(view), "a INT")) == WANT
    decoder = _core.json.Decoder(pa.schema([("a", pa.int32())]).__arrow_c_schema__(), {})
    decoder.decode_lines(view)  # the binding itself takes any buffer
    assert decoder.pending_rows == 3


def test_empty_and_single_byte_views() -> None:
    assert sj.decode(memoryview(b"")[::-1], "a INT").num_rows == 0
    assert sj.decode(memoryview(b"x\n{}")[::3], "a INT").num_rows == 1


# ---------------------------------------------------------------------------------------------
# Well-formed Arrow input: sliced, offset, chunked, every string and binary type


DOCS = ['{"a":1}', None, '{"a":3}', '{"a":4}', None, '{"a":6}']


@pytest.mark.parametrize("t", STRING_TYPES, ids=str)
@pytest.mark.parametrize("with_nulls", [True, False])
def test_sliced_arrays(t: pa.DataType, with_nulls: bool) -> None:
    docs = DOCS if with_nulls else [d or "{}" for d in DOCS]
    arr = pa.array(docs, t)
    for start, length in [(0, 6), (1, 3), (2, 4), (5, 1), (3, 0), (6, 0)]:
        part = arr.slice(start, length)
        want = sj.decode(pa.array(part.to_pylist(), t), "a INT")
        assert rows(sj.decode(part, "a INT")) == rows(want), (start, length)


@pytest.mark.parametrize("t", STRING_TYPES, ids=str)
def test_chunked_arrays(t: pa.DataType) -> None:
    arr = pa.array(DOCS, t)
    chunked = pa.chunked_array([arr.slice(1, 2), arr.slice(0, 0), arr.slice(3)], t)
    want = sj.decode(pa.array(DOCS[1:3] + DOCS[3:], t), "a INT")
    assert (
        rows(sj.decode(chunked, "a INT"))
        == rows(want)
        == [
            {"a": None},
            {"a": 3},
            {"a": 4},
            {"a": None},
            {"a": 6},
        ]
    )
    assert sj.decode(pa.chunked_array([], t), "a INT").num_rows == 0


# ---------------------------------------------------------------------------------------------
# Arrow arrays corrupted after pyarrow validated them


def offsets_of(arr: pa.Array) -> Any:
    """A writable ctypes view of ``arr``'s whole offsets buffer."""
    buf = arr.buffers()[1]
    large = pa.types.is_large_string(arr.type) or pa.types.is_large_binary(arr.type)
    item = ctypes.c_int64 if large else ctypes.c_int32
    return (item * (buf.size // ctypes.sizeof(item))).from_address(buf.address)


def fresh(t: pa.DataType) -> pa.Array:
    # Built from Python objects, so that its buffers are its own (never shared).
    return pa.array(['{"a":1}', '{"a":2}', '{"a":3}'], t)


@pytest.mark.parametrize("t", STRING_TYPES, ids=str)
def test_last_offset_past_the_data_is_refused(t: pa.DataType) -> None:
    arr = fresh(t)
    offsets_of(arr)[3] = arr.buffers()[2].size + 100
    with pytest.raises(ValueError, match=r"documents.*offsets reach \d+, past the end of the"):
        sj.decode(arr, "a INT")


@pytest.mark.parametrize("t", STRING_TYPES, ids=str)
def test_decreasing_offsets_are_refused(t: pa.DataType) -> None:
    arr = fresh(t)
    offsets_of(arr)[2] = 1
    with pytest.raises(ValueError, match=r"offsets decrease at row 1 \(7 then 1\)"):
        sj.decode(arr, "a INT")
    # Without buffer sizes (a bare capsule) too.
    decoder = _core.json.Decoder(pa.schema([("a", pa.int32())]).__arrow_c_schema__(), {})
    with pytest.raises(ValueError, match="offsets decrease"):
        decoder.decode_array(*arr.__arrow_c_array__())


@pytest.mark.parametrize("t", STRING_TYPES, ids=str)
def test_negative_offsets_are_refused(t: pa.DataType) -> None:
    arr = fresh(t)
    offsets_of(arr)[0] = -5
    with pytest.raises(ValueError, match=r"negative offset -5"):
        sj.decode(arr, "a INT")


def test_corruption_outside_the_slice_is_not_read() -> None:
    arr = fresh(pa.string())
    offsets_of(arr)[0] = -5  # row 0 is not in the slice
    assert rows(sj.decode(arr.slice(1), "a INT")) == [{"a": 2}, {"a": 3}]


def test_sliced_corrupt_offsets_are_refused() -> None:
    arr = fresh(pa.large_string())
    offsets_of(arr)[3] = 1 << 40
    with pytest.raises(ValueError, match="past the end"):
        sj.decode(arr.slice(1, 2), "a INT")


# ---------------------------------------------------------------------------------------------
# C Data Interface structs filled by hand


class ArrowSchema(ctypes.Structure):
    pass


class ArrowArray(ctypes.Structure):
    pass


SCHEMA_RELEASE = ctypes.CFUNCTYPE(None, ctypes.POINTER(ArrowSchema))
ARRAY_RELEASE = ctypes.CFUNCTYPE(None, ctypes.POINTER(ArrowArray))
ArrowSchema._fields_ = [
    ("format", ctypes.c_char_p),
    ("name", ctypes.c_char_p),
    ("metadata", ctypes.c_char_p),
    ("flags", ctypes.c_int64),
    ("n_children", ctypes.c_int64),
    ("children", ctypes.POINTER(ctypes.POINTER(ArrowSchema))),
    ("dictionary", ctypes.POINTER(ArrowSchema)),
    ("release", SCHEMA_RELEASE),
    ("private_data", ctypes.c_void_p),
]
ArrowArray._fields_ = [
    ("length", ctypes.c_int64),
    ("null_count", ctypes.c_int64),
    ("offset", ctypes.c_int64),
    ("n_buffers", ctypes.c_int64),
    ("n_children", ctypes.c_int64),
    ("buffers", ctypes.POINTER(ctypes.c_void_p)),
    ("children", ctypes.POINTER(ctypes.POINTER(ArrowArray))),
    ("dictionary", ctypes.POINTER(ArrowArray)),
    ("release", ARRAY_RELEASE),
    ("private_data", ctypes.c_void_p),
]
# The structs are owned by Python here: releasing them frees nothing.
_NO_SCHEMA_RELEASE = SCHEMA_RELEASE(lambda _: None)
_NO_ARRAY_RELEASE = ARRAY_RELEASE(lambda _: None)

_capsule_new = ctypes.pythonapi.PyCapsule_New
_capsule_new.restype = ctypes.py_object
_capsule_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype = ctypes.c_void_p
_capsule_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
# PyCapsule keeps the name pointer: these bytes live as long as the module.
SCHEMA_NAME = b"arrow_schema"
ARRAY_NAME = b"arrow_array"


class Forged:
    """A hand-filled string array (format ``u``) of the documents ``docs``, then altered by
    the test; keeps every buffer alive as long as the capsules are used."""

    def __init__(self, docs: list[bytes], fmt: bytes = b"u") -> None:
        data = b"".join(docs)
        ends = np.cumsum([0] + [len(d) for d in docs])
        self.data = ctypes.create_string_buffer(data, len(data) + 1)
        width = np.int64 if fmt in (b"U", b"Z") else np.int32
        self.offsets = np.ascontiguousarray(ends, dtype=width)
        self.validity = np.full(1, 0xFF, dtype=np.uint8)
        self.buffers = (ctypes.c_void_p * 3)(
            None, self.offsets.ctypes.data, ctypes.addressof(self.data)
        )
        self.schema = ArrowSchema(format=fmt, name=b"docs", release=_NO_SCHEMA_RELEASE)
        self.array = ArrowArray(
            length=len(docs),
            null_count=0,
            offset=0,
            n_buffers=3,
            n_children=0,
            buffers=self.buffers,
            release=_NO_ARRAY_RELEASE,
        )

    def capsules(self) -> tuple[Any, Any]:
        return (
            _capsule_new(ctypes.addressof(self.schema), SCHEMA_NAME, None),
            _capsule_new(ctypes.addressof(self.array), ARRAY_NAME, None),
        )


def decoder() -> Any:
    return _core.json.Decoder(pa.schema([("a", pa.int32())]).__arrow_c_schema__(), {})


def decoded(d: Any) -> list[dict[str, Any]]:
    struct = pa.struct([("a", pa.int32())])
    return import_struct(struct, d.finish()).to_pylist()


@pytest.mark.parametrize("fmt", [b"u", b"z", b"U", b"Z"])
def test_hand_filled_array_is_read(fmt: bytes) -> None:
    forged = Forged([b'{"a":1}', b'{"a":2}'], fmt)
    d = decoder()
    d.decode_array(*forged.capsules())
    assert decoded(d) == [{"a": 1}, {"a": 2}]


def test_hand_filled_array_with_offset_and_validity() -> None:
    forged = Forged([b'{"a":1}', b'{"a":2}', b'{"a":3}'])
    forged.validity[0] = 0b101  # row 1 is null
    forged.buffers[0] = forged.validity.ctypes.data
    forged.array.null_count = 1
    forged.array.offset = 1
    forged.array.length = 2
    d = decoder()
    d.decode_array(*forged.capsules())
    assert decoded(d) == [None, {"a": 3}]


def test_hand_filled_empty_strings_without_a_data_buffer() -> None:
    forged = Forged([b"", b""])
    forged.buffers[2] = None  # allowed: no offset reaches past 0
    d = decoder()
    d.decode_array(*forged.capsules())
    reference = decoder()
    reference.decode_array(*pa.array(["", ""]).__arrow_c_array__())
    got = decoded(d)
    assert len(got) == 2
    assert got == decoded(reference)


def alter(forged: Forged, what: str) -> None:
    a = forged.array
    if what == "n_buffers":
        a.n_buffers = 2
    elif what == "no_offsets":
        forged.buffers[1] = None
    elif what == "no_buffers":
        a.buffers = ctypes.POINTER(ctypes.c_void_p)()
    elif what == "null_count_without_validity":
        a.null_count = 1
    elif what == "unknown_null_count_without_validity":
        a.null_count = -1
    elif what == "null_count_over_length":
        forged.buffers[0] = forged.validity.ctypes.data
        a.null_count = 3
    elif what == "negative_length":
        a.length = -1
    elif what == "negative_offset":
        a.offset = -2
    elif what == "huge_offset":
        a.offset = (1 << 63) - 1
    elif what == "released":
        a.release = ARRAY_RELEASE()
    elif what == "format":
        forged.schema.format = b"i"
    elif what == "unknown_format":
        forged.schema.format = b"vu"
    elif what == "children":
        a.n_children = 1
    elif what == "decreasing":
        forged.offsets[1] = forged.offsets[2] + 1
    elif what == "no_data":
        forged.buffers[2] = None
    elif what == "dictionary":
        a.dictionary = ctypes.pointer(ArrowArray())


REFUSALS = {
    "n_buffers": r"format 'u' has 3 buffers, got n_buffers 2",
    "no_offsets": r"no offsets buffer",
    "no_buffers": r"the buffers pointer is null",
    "null_count_without_validity": r"null_count is 1 but there is no validity buffer",
    "unknown_null_count_without_validity": r"null_count is unknown \(-1\)",
    "null_count_over_length": r"null_count 3 for length 2",
    "negative_length": r"negative length -1",
    "negative_offset": r"negative offset -2",
    "huge_offset": r"offset \+ length overflows",
    "released": r"ArrowArray was released",
    "format": r"expected a string or binary array.*got format 'i'",
    "unknown_format": r"unsupported Arrow type format 'vu'",
    "children": r"has 0 children; the schema has 0, the array 1",
    "decreasing": r"offsets decrease at row 1 \(15 then 14\)",
    "no_data": r"offsets reach 14 but there is no data buffer",
    "dictionary": r"dictionary-encoded",
}


@pytest.mark.parametrize("what", sorted(REFUSALS))
def test_hand_filled_array_is_refused(what: str) -> None:
    forged = Forged([b'{"a":1}', b'{"a":2}'])
    alter(forged, what)
    with pytest.raises(ValueError, match=REFUSALS[what]):
        decoder().decode_array(*forged.capsules())


def test_buffer_sizes_bound_the_data() -> None:
    forged = Forged([b'{"a":1}', b'{"a":2}'])
    d = decoder()
    with pytest.raises(ValueError, match="past the end of the 13-byte data buffer"):
        d.decode_array(*forged.capsules(), [-1, 12, 13])
    with pytest.raises(ValueError, match=r"offsets buffer of 8 bytes for 3 offsets"):
        d.decode_array(*forged.capsules(), [-1, 8, 14])
    with pytest.raises(ValueError, match=r"fewer buffer sizes than buffers \(2 sizes given\)"):
        d.decode_array(*forged.capsules(), [-1, 12])
    with pytest.raises(ValueError, match=r"4 buffer sizes given for 3 buffers"):
        d.decode_array(*forged.capsules(), [-1, 12, 14, 5])
    d.decode_array(*forged.capsules(), [-1, 12, 14])
    assert decoded(d) == [{"a": 1}, {"a": 2}]


def test_wrong_capsule_names_are_refused() -> None:
    forged = Forged([b"{}"])
    schema, arr = forged.capsules()
    with pytest.raises(ValueError, match="PyCapsule named 'arrow_array'"):
        decoder().decode_array(schema, schema)
    with pytest.raises(ValueError, match="PyCapsule named 'arrow_schema'"):
        decoder().decode_array(arr, arr)


# ---------------------------------------------------------------------------------------------
# The window and changelog kernels' batch inputs


@contextmanager
def exported(batch: pa.RecordBatch) -> Iterator[tuple[Any, Any, Any]]:
    """The capsules of ``batch`` and a ctypes view of its exported ArrowArray (for the test to
    alter; pyarrow's release reads it, so every field is restored afterwards)."""
    schema, arr = batch.__arrow_c_array__()
    struct = ArrowArray.from_address(_capsule_pointer(arr, ARRAY_NAME))
    saved = bytes(ctypes.string_at(ctypes.addressof(struct), ctypes.sizeof(ArrowArray)))
    children = [struct.children[i].contents for i in range(struct.n_children)]
    saved_children = [
        bytes(ctypes.string_at(ctypes.addressof(c), ctypes.sizeof(ArrowArray))) for c in children
    ]
    try:
        yield schema, arr, struct
    finally:
        ctypes.memmove(ctypes.addressof(struct), saved, len(saved))
        for c, s in zip(children, saved_children, strict=True):
            ctypes.memmove(ctypes.addressof(c), s, len(s))


def window_table() -> pa.Table:
    return pa.table(
        {
            "k": ["a", "b", "a", "c"],
            "v": [1, 2, 3, 4],
            "ts": pa.array([0, 1, 70_000_000, 2], pa.timestamp("us")),
        }
    )


def window_plan() -> Any:
    t = window_table()
    return build_window_plan(
        t.schema,
        W.tumble("ts", "1 minute"),
        "k",
        [W.sum("v")],
        ansi=True,
        bundle_rows=1 << 40,
        bundle_bytes=1 << 40,
    )


def partial_schema() -> pa.Schema:
    return window_plan().partial_schema


def local_aggregator() -> tuple[Any, Any]:
    wp = window_plan()
    agg = _core.window.LocalAggregator(
        wp.plan, wp.local_schema.__arrow_c_schema__(), wp.partial_schema.__arrow_c_schema__()
    )
    return agg, wp.local_batch(window_table().to_batches()[0])


WINDOW_REFUSALS = {
    "child_too_short": (r"window input batch\)\.__k0: length 2 is shorter than its struct's", None),
    "n_children": (
        r"window input batch\): format '\+s' has 3 children; the schema has 3, "
        r"the array 2",
        None,
    ),
    "null_count_no_validity": (r"null_count is 1 but there is no validity buffer", None),
    "child_offsets": (
        r"\.__k0: offsets reach 1000, past the end of the \d+-byte data buffer",
        None,
    ),
}


@pytest.mark.parametrize("what", sorted(WINDOW_REFUSALS))
def test_window_local_input_is_validated(what: str) -> None:
    agg, good = local_aggregator()
    batch = good
    if what == "child_offsets":
        batch = pa.RecordBatch.from_arrays(
            [pa.array(["a", "b", "a", "c"]), *batch.columns[1:]], schema=batch.schema
        )
        offsets_of(batch.column(0))[4] = 1000
    with exported(batch) as (schema, arr, struct):
        if what == "child_too_short":
            struct.children[0].contents.length = 2
        elif what == "n_children":
            struct.n_children = 2
        elif what == "null_count_no_validity":
            struct.null_count = 1
        sizes = None
        if what == "child_offsets":
            sizes = buffer_sizes(batch)
        with pytest.raises(ValueError, match=WINDOW_REFUSALS[what][0]):
            agg.add(schema, arr, sizes)
    # The aggregator still works after a refused batch: the good batch's two windows of "a"
    # and one each of "b" and "c" come out.
    agg.add(*good.__arrow_c_array__())
    assert import_struct(pa.struct(list(partial_schema())), agg.finish()).to_pylist() != []


def test_window_global_input_is_validated() -> None:
    wp = window_plan()
    local, batch = local_aggregator()
    local.add(*batch.__arrow_c_array__())
    partials = pa.RecordBatch.from_struct_array(
        import_struct(pa.struct(list(wp.partial_schema)), local.finish())
    )
    sweep = _core.window.GlobalAggregator(
        wp.plan, wp.partial_schema.__arrow_c_schema__(), wp.output_schema.__arrow_c_schema__()
    )
    with exported(partials) as (schema, arr, struct):
        struct.children[1].contents.length = 0
        with pytest.raises(ValueError, match=r"window partial batch\)\.__slice: length 0"):
            sweep.add(schema, arr)
    sweep.add(*partials.__arrow_c_array__())
    sweep.finish()
    assert sweep.pull() is not None


def test_window_aggregate_sliced_and_corrupted() -> None:
    t = window_table()
    spec = W.tumble("ts", "1 minute")
    for start, length in [(1, 3), (2, 2), (0, 1)]:
        part = t.slice(start, length)
        want = W.aggregate(
            pa.Table.from_pylist(part.to_pylist(), t.schema), spec, "k", [W.sum("v")]
        )
        assert W.aggregate(part, spec, "k", [W.sum("v")]).equals(want)
    bad = t.set_column(0, "k", pa.array(["a", "b", "a", "c"]))
    offsets_of(bad.column("k").chunk(0))[2] = 0
    with pytest.raises(
        ValueError, match=r"window input batch\)\.k: offsets decrease at row 1 \(1 then 0\)"
    ):
        W.aggregate(bad, spec, "k", [W.sum("v")])
    # Past the data: pyarrow's own check (RecordBatch.from_arrays) or the kernel's refuses it.
    offsets_of(bad.column("k").chunk(0))[2] = 2
    offsets_of(bad.column("k").chunk(0))[4] = 1 << 20
    with pytest.raises(ValueError, match=r"offsets.*(past the end|larger than values)"):
        W.aggregate(bad, spec, "k", [W.sum("v")])


def changelog_table() -> pa.Table:
    return pa.table({"k": ["a", "b", "a"], "v": [5, 7, 1], "op": ["+I", "+I", "+I"]})


def test_changelog_encoder_and_aggregator_inputs_are_validated() -> None:
    t = changelog_table()
    cp = build_changelog_plan(
        t.schema,
        "k",
        [W.sum("v")],
        op_col="op",
        mini_batch=True,
        bundle_rows=1000,
        fold=None,
        ansi=True,
    )
    enc = _core.changelog.Encoder(
        cp.plan, cp.encoder_schema.__arrow_c_schema__(), cp.delta_schema.__arrow_c_schema__()
    )
    batch = cp.encoder_batch(t.to_batches()[0])
    with exported(batch) as (schema, arr, struct):
        struct.children[0].contents.length = 1
        with pytest.raises(ValueError, match=r"changelog input batch\)\.\w+: length 1 is shorter"):
            enc.add(schema, arr)
    with exported(batch) as (schema, arr, struct):
        struct.children[0].contents.null_count = 5
        with pytest.raises(ValueError, match=r"null_count 5 for length 3"):
            enc.add(schema, arr)
    enc.add(*batch.__arrow_c_array__())
    enc.finish()
    deltas = pa.RecordBatch.from_struct_array(
        import_struct(pa.struct(list(cp.delta_schema)), enc.take())
    )
    agg = _core.changelog.Aggregator(
        cp.plan, cp.delta_schema.__arrow_c_schema__(), cp.output_schema.__arrow_c_schema__()
    )
    with exported(deltas) as (schema, arr, struct):
        struct.n_buffers = 2
        with pytest.raises(ValueError, match=r"changelog delta batch\): format '\+s' has 1 "):
            agg.add(schema, arr)
    agg.add(*deltas.__arrow_c_array__())
    agg.end_bundle()
    assert agg.take() is not None


def test_changelog_aggregate_sliced_and_corrupted() -> None:
    t = changelog_table()
    for start, length in [(1, 2), (2, 1)]:
        part = t.slice(start, length)
        want = C.aggregate(
            pa.Table.from_pylist(part.to_pylist(), t.schema), "k", [W.sum("v")], op_col="op"
        )
        assert C.aggregate(part, "k", [W.sum("v")], op_col="op").equals(want)
    bad = t.set_column(2, "op", pa.array(["+I", "+I", "+I"]))
    offsets_of(bad.column("op").chunk(0))[1] = 7
    with pytest.raises(
        ValueError, match=r"changelog input batch\)\.op: offsets decrease at row 1 \(7 then 4\)"
    ):
        C.aggregate(bad, "k", [W.sum("v")], op_col="op")
