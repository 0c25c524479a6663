"""The input-buffer policy for NDJSON bytes handed to the C++ core: how a file (or a byte
string) becomes blocks of whole lines. The decoder's split reader
(:func:`sliceflow.json.iter_ndjson`) and schema inference (:mod:`sliceflow.json.infer`) both
read through :func:`line_blocks` (or :func:`padded` for text given whole), so the rules below
hold for every block either hands to ``sliceflow._core.json``:

* **Whole lines.** A line ends at LF, CR or CRLF. A block ends just after the last line end
  read so far; a CR that ends the bytes read is held back until the next byte shows whether
  an LF follows, so a CRLF never straddles two blocks (the core counts lines block by block).
* **Slack.** Every block has at least :data:`PADDING` readable bytes after it in its buffer:
  simdjson reads up to ``SIMDJSON_PADDING`` (64) bytes past a document, and
  ``SchemaInference.add_lines(buffer, size)`` parses a batch in place only when they are
  there (``cpp/json/infer/infer_lines.h``; else line by line, slower). The buffer guarantees them:
  it is always :data:`PADDING` bytes longer than the text it takes in. ``Decoder.decode_lines``
  reads only the bytes it is given (its binding passes their length as the readable size), so
  the decoder gets ``buffer[:size]`` and needs no slack.
* **Carry.** The unfinished last line of a block moves to the front of the next buffer and the
  next read goes in after it, so the text is copied once by the read (plus the carried line).
* **Growth.** A buffer takes ``block_size`` bytes of text; it doubles only when one line fills
  it, so memory stays at ``buffers * (block_size + PADDING)`` unless a line is longer.
* **Buffers.** ``buffers=1``: a block is valid until the next one is asked for (the decoder).
  ``buffers=2``: buffers take turns, so a block stays unchanged while the next one is read on
  another thread (inference's read-ahead).
* **BOM.** A UTF-8 BOM at the very start of a file is dropped (Hadoop's line reader drops it
  before Jackson sees the first line): the first block then starts at file offset 3.
* **Splits.** ``[start, end)``: a line belongs to the split its first byte lies in (Hadoop's
  ``LineRecordReader``). A split from ``start > 0`` skips the line that straddles ``start``;
  the last line that starts before ``end`` is read to its line end.

Records cut by a ``lineSep`` option or read in another encoding
(:func:`sliceflow.json.records.separated_chunks`) follow the BOM rule from here; they are
separator-delimited and transcoded, and reach the decoder without slack, which it does not
need.

>>> import io
>>> [bytes(b.buffer[: b.size]) for b in line_blocks(io.BytesIO(b"ab\\r\\ncd\\ne"), 4)]
[b'ab\\r\\n', b'cd\\n', b'e']
"""

from __future__ import annotations

import codecs
import io
import os
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING, Final, NamedTuple, Protocol, cast

if TYPE_CHECKING:
    from typing_extensions import Buffer

__all__ = ["PADDING", "LineBlock", "ReadableBytes", "line_blocks", "padded", "skip_file_bom"]

#: Readable bytes after every block (simdjson's ``SIMDJSON_PADDING``).
PADDING: Final = 64

_BOM: Final = codecs.BOM_UTF8
_LF: Final = 0x0A
_CR: Final = 0x0D


class ReadableBytes(Protocol):
    """A binary stream as the readers use it: a local file, a decompressing stream
    (:func:`sliceflow._io.codecs.open_input`) or a pyarrow file. ``seek``/``tell`` are called
    only for a split that starts past 0 or ends before the end of the file."""

    def readinto(self, buffer: memoryview, /) -> int | None: ...
    def read(self, size: int = -1, /) -> bytes | None: ...
    def seek(self, offset: int, whence: int = 0, /) -> int: ...
    def tell(self) -> int: ...
    def seekable(self) -> bool: ...
    def close(self) -> None: ...


class LineBlock(NamedTuple):
    """Whole lines: ``buffer[:size]``, with at least :data:`PADDING` readable bytes after them;
    ``offset`` is the file offset of ``buffer[0]``."""

    buffer: bytes | bytearray
    size: int
    offset: int


class _Prefixed(io.RawIOBase):
    """A stream that cannot seek, with bytes already read from it put back in front."""

    def __init__(self, head: bytes, stream: ReadableBytes) -> None:
        self._head = head
        self._stream = stream

    def readable(self) -> bool:
        return True

    def readinto(self, b: Buffer) -> int:
        with memoryview(b) as view:
            if self._head:
                n = min(len(view), len(self._head))
                view[:n] = self._head[:n]
                self._head = self._head[n:]
                return n
            return self._stream.readinto(view) or 0

    def close(self) -> None:
        try:
            self._stream.close()
        finally:
            super().close()


def skip_file_bom(f: ReadableBytes) -> tuple[int, ReadableBytes]:
    """The BOM rule: reads past a UTF-8 BOM at the very start of ``f``. Returns the position
    after it (3 or 0) and the stream to read on from: ``f`` itself, or, when ``f`` cannot seek
    back (a decompressing stream) and holds no BOM, a wrapper that gives the bytes looked at
    first."""
    if f.seekable():
        f.seek(0)
        if f.read(3) == _BOM:
            return 3, f
        f.seek(0)
        return 0, f
    head = f.read(3) or b""
    if head == _BOM:
        return 3, f
    return 0, cast(ReadableBytes, _Prefixed(head, f))


def read_through_line_end(f: ReadableBytes, chunk: int = 1 << 16) -> bytes:
    """Reads up to and including the next CR or LF (or to the end of the file); ``f`` must be
    seekable. (``readline`` of a binary file stops only at LF, so with CR line ends it would
    read on into lines that belong to the next split.)"""
    parts = []
    while block := f.read(chunk):
        ends = [i for i in (block.find(b"\n"), block.find(b"\r")) if i >= 0]
        if ends:
            stop = min(ends)
            parts.append(block[: stop + 1])
            f.seek(stop + 1 - len(block), os.SEEK_CUR)
            break
        parts.append(block)
    return b"".join(parts)


def _whole_lines(buf: bytearray, filled: int) -> int:
    """How many bytes of ``buf[:filled]`` are whole lines (0: none). A CR is looked for only
    after the last LF (a block rarely holds one: no second full scan); a CR that ends the
    bytes is held back (the LF of its CRLF may come next)."""
    lf = buf.rfind(b"\n", 0, filled)
    cut = max(lf, buf.rfind(b"\r", lf + 1, filled)) + 1
    if cut == filled and buf[filled - 1] == _CR:
        lf = buf.rfind(b"\n", 0, filled - 1)
        cut = max(lf, buf.rfind(b"\r", lf + 1, filled - 1)) + 1
    return cut


def _ensure(buf: bytearray, size: int) -> None:
    """Grows ``buf`` to at least ``size`` bytes."""
    if len(buf) < size:
        buf.extend(bytes(size - len(buf)))


def line_blocks(
    f: ReadableBytes,
    block_size: int,
    *,
    start: int = 0,
    end: int | None = None,
    buffers: int = 1,
) -> Iterator[LineBlock]:
    """``f`` as blocks of whole lines by the rules of this module: the lines that start in
    ``[start, end)`` of the file (``end`` None: to the end of the stream), about
    ``block_size`` bytes at a time, on ``buffers`` buffers taking turns."""
    if block_size <= 0:
        raise ValueError("block_size must be positive")
    if start > 0:
        # A line belongs to the split it starts in: skip the one straddling `start`.
        f.seek(start - 1)
        if f.read(1) not in (b"\n", b"\r"):
            read_through_line_end(f)
        pos = f.tell()
    else:
        pos, f = skip_file_bom(f)
    limit = sys.maxsize if end is None else end
    ring = [bytearray(block_size + PADDING) for _ in range(buffers)]
    turn = 0
    buf = ring[0]
    carry = 0  # bytes of an unfinished line at the front of buf
    while True:
        if carry == len(buf) - PADDING:  # a line longer than the buffer
            buf.extend(bytes(len(buf)))
        want = min(len(buf) - PADDING - carry, limit - pos)
        got = 0
        if want > 0:
            with memoryview(buf) as view:
                got = f.readinto(view[carry : carry + want]) or 0
        pos += got
        filled = carry + got
        if got == 0 or pos >= limit:
            if got and buf[filled - 1] not in (_LF, _CR):
                tail = read_through_line_end(f)  # the last line starting in the split
                _ensure(buf, filled + len(tail) + PADDING)
                buf[filled : filled + len(tail)] = tail
                filled += len(tail)
            if filled:
                yield LineBlock(buf, filled, pos - carry - got)
            return
        cut = _whole_lines(buf, filled)
        if cut == 0:
            carry = filled
            continue
        yield LineBlock(buf, cut, pos - filled)
        turn = (turn + 1) % buffers
        following = ring[turn]
        _ensure(following, len(buf))
        following[: filled - cut] = buf[cut:filled]
        buf = following
        carry = filled - cut


def padded(text: bytes | bytearray | memoryview) -> LineBlock:
    """NDJSON text given whole as one block: without a leading BOM, with the slack after it."""
    data = text if isinstance(text, (bytes, bytearray)) else text.tobytes()
    skip = len(_BOM) if data.startswith(_BOM) else 0
    # One copy: bytes.join of a view and the slack (a zero-filled buffer written over would
    # touch every page twice).
    return LineBlock(b"".join((memoryview(data)[skip:], bytes(PADDING))), len(data) - skip, skip)
