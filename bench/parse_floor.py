"""The floor of JSON parsing for the JSON benchmarks: ``bench/parse_floor.cpp`` (simdjson's DOM
and On-Demand parsers reading every value once, building nothing) compiled for this CPU with the
system's g++ and simdjson (``libsimdjson-dev``), loaded with ctypes. Not part of sliceflow: it
measures how fast simdjson alone parses the text any decoder has to read, on this machine.

:func:`build` compiles it once per source and returns the library's path (None, with the reason
on stderr, when g++ or simdjson is missing); :class:`ParseFloor` loads a built library in any
process (Spark's Python workers load it by path) and parses NDJSON bytes, files or a string
array.
ctypes releases the GIL during a call; a ParseFloor keeps its parsers between calls, so each
thread needs its own.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from typing import BinaryIO

import numpy as np
import pyarrow as pa

SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "parse_floor.cpp")
#: simdjson reads this many bytes past a document (SIMDJSON_PADDING).
PADDING = 64


def build() -> str | None:
    """The compiled floor library's path, built into the temp folder if needed."""
    with open(SOURCE, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()[:16]
    out = os.path.join(tempfile.gettempdir(), f"sliceflow-bench-parse-floor-{digest}.so")
    if os.path.exists(out):
        return out
    cmd = [
        "g++",
        "-O3",
        "-march=native",
        "-std=c++17",
        "-shared",
        "-fPIC",
        "-o",
        out + ".tmp",
        SOURCE,
        "-lsimdjson",
    ]
    try:
        subprocess.run(cmd, check=True, capture_output=True, text=True)
    except (OSError, subprocess.CalledProcessError) as e:
        detail = getattr(e, "stderr", "") or str(e)
        print(f"parse floor: not built ({' '.join(cmd)}): {detail.strip()[:500]}", file=sys.stderr)
        return None
    os.replace(out + ".tmp", out)
    return out


class ParseFloor:
    """The floor library loaded from ``path`` (see :func:`build`)."""

    def __init__(self, path: str) -> None:
        lib = ctypes.CDLL(path)
        lib.sf_open.restype = ctypes.c_void_p
        lib.sf_close.argtypes = [ctypes.c_void_p]
        # The parsers, kept between calls as a decoder keeps its own (closed with this object).
        self._handle = ctypes.c_void_p(lib.sf_open())
        self._close = lib.sf_close
        self._stream = lib.sf_parse_stream
        self._stream.restype = ctypes.c_int64
        self._stream.argtypes = [
            ctypes.c_void_p,
            ctypes.c_void_p,
            ctypes.c_int64,
            ctypes.c_int64,
            ctypes.POINTER(ctypes.c_int64),
        ]
        self._dom = lib.sf_parse_dom_stream
        self._dom.restype = ctypes.c_int64
        self._dom.argtypes = self._stream.argtypes
        lib.sf_implementation.restype = ctypes.c_char_p
        #: simdjson's kernel for this CPU (``icelake``, ``haswell``, ...).
        self.implementation = lib.sf_implementation().decode()
        lib.sf_version.restype = ctypes.c_char_p
        #: The version of the simdjson headers it was compiled with.
        self.version = lib.sf_version().decode()

    def __del__(self) -> None:
        if getattr(self, "_handle", None):
            self._close(self._handle)
            self._handle = None

    def lines(self, block: bytearray, size: int, *, dom: bool = False) -> int:
        """Parses the NDJSON text ``block[:size]`` (the rest of ``block`` may be read as
        padding) with On-Demand, or with ``dom`` the DOM parser; the number of documents.
        ValueError naming the first invalid one (for an error of simdjson's stage 1, the first
        document of its 1 MiB batch)."""
        address = ctypes.addressof((ctypes.c_char * len(block)).from_buffer(block))
        values = ctypes.c_int64(0)
        parse = self._dom if dom else self._stream
        return self._checked(parse(self._handle, address, size, len(block), ctypes.byref(values)))

    def strings(self, array: pa.Array) -> int:
        """Parses each element of a string array without nulls with the DOM parser, in place:
        its data buffer holds the documents one after another. The number of documents."""
        if array.null_count or not (
            pa.types.is_string(array.type) or pa.types.is_large_string(array.type)
        ):
            raise ValueError("parse floor: expects a string array without nulls")
        if len(array) == 0:
            return 0
        _, offsets, data = array.buffers()
        width = np.int64 if pa.types.is_large_string(array.type) else np.int32
        ends = np.frombuffer(offsets, width)[array.offset : array.offset + len(array) + 1]
        # Documents far enough from the data buffer's end for simdjson's padding are parsed in
        # place; the few after them from a padded copy (the decoder copies those too).
        cut = int(np.searchsorted(ends, data.size - PADDING, side="right")) - 1
        cut = max(cut, 0)
        values = ctypes.c_int64(0)
        n = 0
        first, middle, last = int(ends[0]), int(ends[cut]), int(ends[-1])
        if middle > first:
            n += self._checked(
                self._dom(
                    self._handle,
                    data.address + first,
                    middle - first,
                    data.size - first,
                    ctypes.byref(values),
                )
            )
        if last > middle:
            tail = bytearray(data[middle:last]) + bytearray(PADDING)
            address = ctypes.addressof((ctypes.c_char * len(tail)).from_buffer(tail))
            n += self._checked(
                self._dom(self._handle, address, last - middle, len(tail), ctypes.byref(values))
            )
        if n != len(array):
            raise ValueError(f"parse floor: {len(array)} strings held {n} documents")
        return n

    def file_blocks(
        self,
        path: str,
        block_size: int = 8 << 20,
        opener: Callable[[str], BinaryIO] | None = None,
    ) -> Iterator[int]:
        """Reads the NDJSON file ``path`` in blocks of ``block_size`` bytes cut after their last
        line end, as the sliceflow.json source reads a split, and parses each with the DOM
        parser: yields each block's number of documents. ``opener`` opens the file (a
        compressed one through ``sliceflow._io.codecs.open_input``, as the source does)."""
        block = bytearray(block_size + PADDING)
        carry = 0
        with open(path, "rb", buffering=0) if opener is None else opener(path) as f:
            while True:
                n = f.readinto(memoryview(block)[carry:block_size])
                size = carry + n
                if n == 0:
                    if carry:
                        yield self.lines(block, carry, dom=True)
                    return
                end = block.rfind(b"\n", 0, size) + 1
                if end == 0:
                    raise ValueError(f"parse floor: a line of {path} is longer than a block")
                yield self.lines(block, end, dom=True)
                block[: size - end] = block[end:size]
                carry = size - end

    @staticmethod
    def _checked(n: int) -> int:
        if n < 0:
            raise ValueError(f"parse floor: document {-1 - n} is not valid JSON")
        return n
