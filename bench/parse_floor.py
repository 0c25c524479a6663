"""The floor of JSON parsing for the JSON benchmarks: ``bench/parse_floor.cpp`` (simdjson's DOM
and On-Demand parsers reading every value once, building nothing) compiled for this CPU with the
system's g++ and simdjson (``libsimdjson-dev``), loaded with ctypes. Not part of sliceflow: it
measures how fast simdjson alone parses the text any decoder has to read, on this machine.

:func:`build` compiles it once per source and returns the library's path (None, with the reason
on stderr, when g++ or simdjson is missing); :class:`ParseFloor` loads a built library in any
process (Spark's Python workers load it by path) and parses NDJSON bytes.
ctypes releases the GIL during a call.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import subprocess
import sys
import tempfile

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
        self._stream = lib.sf_parse_stream
        self._stream.restype = ctypes.c_int64
        self._stream.argtypes = [
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

    def lines(self, block: bytearray, size: int, *, dom: bool = False) -> int:
        """Parses the NDJSON text ``block[:size]`` (the rest of ``block`` may be read as
        padding) with On-Demand, or with ``dom`` the DOM parser; the number of documents.
        ValueError naming the first invalid one."""
        address = ctypes.addressof((ctypes.c_char * len(block)).from_buffer(block))
        values = ctypes.c_int64(0)
        parse = self._dom if dom else self._stream
        return self._checked(parse(address, size, len(block), ctypes.byref(values)))

    @staticmethod
    def _checked(n: int) -> int:
        if n < 0:
            raise ValueError(f"parse floor: document {-1 - n} is not valid JSON")
        return n
