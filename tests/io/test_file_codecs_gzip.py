"""gzip files through ISA-L's inflate give the bytes and the errors of pyarrow's zlib stream.

:func:`sliceflow._io.codecs.open_input` inflates ``.gz`` files with ``isal`` and falls back to
pyarrow's gzip stream where ``isal`` is missing; both are read here on the same files.
"""

from __future__ import annotations

import gzip
import random
import zlib

import pytest

from sliceflow._io import codecs as file_codecs
from sliceflow.errors import FileReadError

pytest.importorskip("isal")

DATA = b"".join(b'{"a": %d, "s": "%s"}\n' % (i, b"x" * (i % 50)) for i in range(200_000))


def _read_all(
    path, monkeypatch, *, isal: bool, block: int = 1 << 23
) -> tuple[bytes, Exception | None]:
    """What ``open_input`` hands out in ``block``-sized reads, and the error it ends with."""
    with monkeypatch.context() as m:
        if not isal:
            m.setattr(file_codecs, "_isal_zlib", None)
        out = bytearray()
        buf = bytearray(block)
        try:
            with file_codecs.open_input(str(path)) as f:
                while True:
                    n = f.readinto(buf)
                    if not n:
                        return bytes(out), None
                    out += buf[:n]
        except FileReadError as exc:
            return bytes(out), exc


GOOD = {
    "members": lambda: gzip.compress(DATA[:1000]) + gzip.compress(DATA[1000:]) + gzip.compress(b""),
    "one": lambda: gzip.compress(DATA),
    "zlib_header": lambda: zlib.compress(DATA),
    "empty": lambda: b"",
    "tiny_members": lambda: b"".join(gzip.compress(DATA[i : i + 7]) for i in range(0, 20_000, 7)),
}


@pytest.mark.parametrize("name", sorted(GOOD))
def test_whole_files_inflate_to_the_same_bytes(name, tmp_path, monkeypatch):
    blob = GOOD[name]()
    path = tmp_path / f"{name}.json.gz"
    path.write_bytes(blob)
    want = gzip.decompress(blob) if name != "zlib_header" else zlib.decompress(blob)
    for block in (1 << 23, 4096):
        got, err = _read_all(path, monkeypatch, isal=True, block=block)
        assert err is None and got == want
    assert _read_all(path, monkeypatch, isal=False) == (want, None)


BAD = {
    "cut_mid_stream": lambda: gzip.compress(DATA)[:200_000],
    "cut_in_trailer": lambda: gzip.compress(DATA)[:-2],
    "garbage_after": lambda: gzip.compress(DATA) + b"xyz",
    "zeros_after": lambda: gzip.compress(DATA) + b"\0" * 9,
    "damaged_body": lambda: b"\x1f\x8b" + random.Random(7).randbytes(5000),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_damaged_files_fail_naming_the_path_after_what_came_before(name, tmp_path, monkeypatch):
    path = tmp_path / f"{name}.json.gz"
    path.write_bytes(BAD[name]())
    got, err = _read_all(path, monkeypatch, isal=True)
    assert isinstance(err, FileReadError) and str(path) in str(err)
    fallback, fallback_err = _read_all(path, monkeypatch, isal=False)
    assert isinstance(fallback_err, FileReadError)
    # Both hand out a prefix of the file's text before failing; ISA-L at least as much.
    assert DATA.startswith(got) and DATA.startswith(fallback) and len(got) >= len(fallback)
