"""Compressed files by extension, as Spark (Hadoop 3's codec factory) recognises them.

:func:`open_input` opens a path of any scheme (see :mod:`sliceflow._io.filesystems`) and returns a
binary stream of its decompressed bytes. The codec comes from the file name's extension, case
ignored, as Spark finds it; the ``compression`` read option plays no part (Spark ignores it
when reading):

===========================  ===================================================  ==========
extension                    format                                               decoded by
===========================  ===================================================  ==========
``.gz``, ``.gzip``           gzip (concatenated members too)                      ISA-L [#]_
``.bz2``                     bzip2                                                pyarrow
``.zst``, ``.zstd``          zstd frames                                          pyarrow
``.deflate``                 zlib stream (Hadoop ``DefaultCodec``)                zlib
``.lz4``                     Hadoop block stream of raw LZ4 blocks (``Lz4Codec``)  pyarrow
``.snappy``                  Hadoop block stream of raw Snappy (``SnappyCodec``)  pyarrow
===========================  ===================================================  ==========

.. [#] ``isal`` (python-isal, ISA-L's inflate: about 3x zlib's rate on one core); pyarrow's
   zlib stream where the ``isal`` package is missing. Both take concatenated members and
   gzip or zlib headers alike.

Other extensions (``.xz``, ``.br`` ...) are read as they are, as Spark reads them. A
compressed file cannot be split: it is one partition. A stream that ends early or holds
damaged data raises :class:`sliceflow.errors.FileReadError` naming the path, never a silent
short read.

Cost: decompression runs in native code (ISA-L for gzip, pyarrow's C++ for the others, zlib in
CPython for ``.deflate``); the Python work is per block of at most a few hundred KiB, never per
line.
"""

from __future__ import annotations

import io
import os
import struct
import zlib
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from sliceflow._io.filesystems import resolve
from sliceflow.errors import FileReadError

if TYPE_CHECKING:
    from typing_extensions import Buffer

_isal_zlib: Any
try:  # ISA-L's inflate; pyarrow's zlib stream where the wheel is missing
    from isal import isal_zlib as _isal_zlib
except ImportError:  # pragma: no cover - isal is a dependency with wheels for every platform
    _isal_zlib = None

#: File extension (lower case) -> codec name used by :func:`open_input`.
CODECS: dict[str, str] = {
    ".gz": "gzip",
    ".gzip": "gzip",
    ".bz2": "bz2",
    ".zst": "zstd",
    ".zstd": "zstd",
    ".deflate": "deflate",
    ".lz4": "lz4-hadoop",
    ".snappy": "snappy-hadoop",
}

_ARROW_STREAM_CODECS = {"gzip": "gzip", "bz2": "bz2", "zstd": "zstd"}

#: Window bits for ISA-L's inflate: a gzip or a zlib header, found from the stream, as
#: pyarrow's gzip stream reads both.
_GZIP_OR_ZLIB = 32 + 15
#: What ISA-L's inflate raises on damaged data.
_INFLATE_ERROR: type[Exception] = _isal_zlib.error if _isal_zlib is not None else OSError


def codec_for(path: str) -> str | None:
    """The codec a file is compressed with, from its name; None for an uncompressed file.

    >>> codec_for("s3a://b/day=1/part-0.json.GZ"), codec_for("/data/x.json")
    ('gzip', None)
    """
    name = path.rsplit("/", 1)[-1].lower()
    _, ext = os.path.splitext(name)
    return CODECS.get(ext)


def is_splittable(path: str) -> bool:
    """Whether a file can be read in byte ranges (only uncompressed ones here).

    >>> is_splittable("x.json"), is_splittable("x.json.bz2")
    (True, False)
    """
    return codec_for(path) is None


class _ZlibStream(io.RawIOBase):
    """A zlib stream (Hadoop's ``.deflate``), decompressed as it is read."""

    def __init__(self, raw: Any, chunk: int = 1 << 18) -> None:
        self._raw = raw
        self._chunk = chunk
        self._inflate = zlib.decompressobj()
        self._pending = b""
        self._done = False

    def readable(self) -> bool:
        return True

    def readinto(self, b: Buffer) -> int:
        while not self._pending and not self._done:
            data = self._raw.read(self._chunk)
            if not data:
                if not self._inflate.eof:
                    raise OSError("Truncated compressed stream")
                self._done = True
                break
            if self._inflate.eof:  # concatenated streams
                data = self._inflate.unused_data + data
                self._inflate = zlib.decompressobj()
            self._pending = self._inflate.decompress(data)
        with memoryview(b) as view:
            n = min(len(view), len(self._pending))
            view[:n] = self._pending[:n]
        self._pending = self._pending[n:]
        return n


class _IsalGzipStream(io.RawIOBase):
    """A gzip file (members one after another) inflated by ISA-L as it is read.

    Each member gets its own inflater; the bytes after a member's end start the next one. A
    stream that ends inside a member, and bytes after a member that are no member, raise
    ``OSError`` (so :class:`_NamedErrors` names the path), as pyarrow's gzip stream does.
    Cost: one copy of the inflated bytes into the caller's buffer.
    """

    def __init__(self, raw: Any, chunk: int = 1 << 18) -> None:
        self._raw = raw
        self._chunk = chunk
        self._inflate = _isal_zlib.decompressobj(_GZIP_OR_ZLIB)
        self._member_fed = False  # has the current member been given any input?
        self._pending: bytes = b""
        self._at = 0  # bytes of _pending handed out
        self._done = False
        self._failed: OSError | None = None  # raised once what came before it is handed out

    def readable(self) -> bool:
        return True

    def _refill(self) -> None:
        """Inflates the next chunk of input into ``_pending`` (called once it is used up)."""
        if self._failed is not None:
            raise self._failed
        data = self._raw.read(self._chunk)
        if not data:
            if self._member_fed and not self._inflate.eof:
                raise OSError("Truncated compressed stream")
            self._done = True
            return
        data = bytes(data)
        parts = []
        while data:
            if self._inflate.eof:  # the next member
                self._inflate = _isal_zlib.decompressobj(_GZIP_OR_ZLIB)
            self._member_fed = True
            try:
                parts.append(self._inflate.decompress(data))
            except _INFLATE_ERROR as exc:
                self._failed = OSError(f"gzip inflate failed: {exc}")
                if not parts:
                    raise self._failed from None
                break
            data = self._inflate.unused_data if self._inflate.eof else b""
        self._pending = parts[0] if len(parts) == 1 else b"".join(parts)
        self._at = 0

    def readinto(self, b: Buffer) -> int:
        while self._at >= len(self._pending) and not self._done:
            self._refill()
        with memoryview(b) as view:
            n = min(len(view), len(self._pending) - self._at)
            if n:
                view[:n] = memoryview(self._pending)[self._at : self._at + n]
        self._at += n
        return n


def _lz4_block_size(block: bytes) -> int:
    """The decompressed size of a raw LZ4 block (its sequences' literal and match lengths)."""
    pos, out, end = 0, 0, len(block)
    while pos < end:
        token = block[pos]
        pos += 1
        literals = token >> 4
        if literals == 15:
            while True:
                extra = block[pos]
                pos += 1
                literals += extra
                if extra != 255:
                    break
        pos += literals
        out += literals
        if pos >= end:
            break
        pos += 2
        match = token & 15
        if match == 15:
            while True:
                extra = block[pos]
                pos += 1
                match += extra
                if extra != 255:
                    break
        out += match + 4
    return out


class _HadoopBlockStream(io.RawIOBase):
    """Hadoop's ``BlockCompressorStream`` format: per block, its decompressed length (4 bytes,
    big-endian), then chunks of (compressed length, raw codec bytes) adding up to it."""

    def __init__(self, raw: Any, codec: str) -> None:
        self._raw = raw
        self._codec = pa.Codec(codec)
        self._lz4 = codec == "lz4_raw"
        self._pending = b""

    def readable(self) -> bool:
        return True

    def _exact(self, n: int) -> bytes:
        data = self._raw.read(n)
        if len(data) != n:
            raise OSError("Truncated compressed stream")
        return bytes(data)

    def _next_block(self) -> bool:
        head = self._raw.read(4)
        if not head:
            return False
        if len(head) != 4:
            raise OSError("Truncated compressed stream")
        (remaining,) = struct.unpack(">I", head)
        parts = []
        while remaining > 0:
            (length,) = struct.unpack(">I", self._exact(4))
            chunk = self._exact(length)
            if self._lz4:
                size = _lz4_block_size(chunk)
            else:  # a raw Snappy chunk starts with its decompressed length (a varint)
                size, shift, i = 0, 0, 0
                while True:
                    size |= (chunk[i] & 0x7F) << shift
                    shift += 7
                    i += 1
                    if chunk[i - 1] < 0x80:
                        break
            if size > remaining:
                raise OSError("Corrupt compressed block: longer than its block says")
            parts.append(self._codec.decompress(chunk, decompressed_size=size, asbytes=True))
            remaining -= size
        self._pending = b"".join(parts)
        return True

    def readinto(self, b: Buffer) -> int:
        while not self._pending:
            if not self._next_block():
                return 0
        with memoryview(b) as view:
            n = min(len(view), len(self._pending))
            view[:n] = self._pending[:n]
        self._pending = self._pending[n:]
        return n


class _NamedErrors(io.RawIOBase):
    """Reads through ``stream``; any error becomes a :class:`FileReadError` naming ``path``."""

    #: Bytes asked of the decompressor at a time: when the stream breaks, what was decoded
    #: before the break (up to this much less) is handed out first, and the error comes with
    #: the next read, as a Hadoop stream gives the lines before a damaged block.
    STEP = 1 << 16

    def __init__(self, stream: Any, path: str, codec: str | None) -> None:
        self._stream = stream
        self._path = path
        self._codec = codec
        self._failed: FileReadError | None = None

    def readable(self) -> bool:
        return True

    def _error(self, exc: Exception) -> FileReadError:
        what = f"{self._codec} file" if self._codec else "file"
        return FileReadError(f"cannot read the {what} {self._path}: {exc}", path=self._path)

    def _read_step(self, view: memoryview) -> int:
        if hasattr(self._stream, "readinto"):
            return int(self._stream.readinto(view))
        data = self._stream.read(len(view))
        view[: len(data)] = data
        return len(data)

    def readinto(self, b: Buffer) -> int:
        if self._failed is not None:
            raise self._failed
        with memoryview(b) as view:
            filled = 0
            while filled < len(view):
                try:
                    got = self._read_step(view[filled : filled + self.STEP])
                except (OSError, ValueError, IndexError, struct.error) as exc:
                    # Kept without its traceback: the frames would hold a view of `b` and
                    # keep the caller from resizing its buffer.
                    self._failed = self._error(exc.with_traceback(None))
                    if filled:
                        return filled
                    raise self._failed from None
                if not got:
                    break
                filled += got
            return filled

    def close(self) -> None:
        try:
            self._stream.close()
        finally:
            super().close()


def open_input(
    path: str,
    settings: Mapping[str, str] | None = None,
    *,
    buffer_size: int = 1 << 20,
) -> io.RawIOBase:
    """A binary stream of a file's bytes, decompressed by its extension (see :data:`CODECS`).

    A missing file raises ``FileNotFoundError`` naming it; damaged or cut-short compressed
    data raises :class:`sliceflow.errors.FileReadError` naming it, when it is read.

    >>> import gzip, tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "x.json.gz")
    >>> _ = open(p, "wb").write(gzip.compress(b'{"a": 1}\\n'))
    >>> with open_input(p) as f:
    ...     f.read()
    b'{"a": 1}\\n'
    """
    fs, inner = resolve(path, settings)
    codec = codec_for(path)
    try:
        raw = fs.open_input_stream(inner, compression=None, buffer_size=buffer_size)
    except FileNotFoundError:
        raise FileNotFoundError(f"File does not exist: {path}") from None
    except OSError as exc:
        if "not found" in str(exc).lower() or "does not exist" in str(exc).lower():
            raise FileNotFoundError(f"File does not exist: {path}") from None
        raise FileReadError(f"cannot open {path}: {exc}", path=path) from exc
    stream: Any
    if codec == "gzip" and _isal_zlib is not None:
        stream = _IsalGzipStream(raw)
    elif codec in _ARROW_STREAM_CODECS:
        stream = pa.CompressedInputStream(raw, _ARROW_STREAM_CODECS[codec])
    elif codec == "deflate":
        stream = _ZlibStream(raw)
    elif codec == "lz4-hadoop":
        stream = _HadoopBlockStream(raw, "lz4_raw")
    elif codec == "snappy-hadoop":
        stream = _HadoopBlockStream(raw, "snappy")
    else:
        stream = raw
    # Not wrapped in io.BufferedReader: its large reads loop over readinto and drop what an
    # earlier step decoded when a later one fails; _NamedErrors fills whole requests itself.
    return _NamedErrors(stream, path, codec)
