"""Cutting JSON files into records as ``spark.read.json`` does: by a ``lineSep`` byte string
(in the file's encoding), split by split, and transcoding other encodings to UTF-8.

A record belongs to the split its first byte lies in (Hadoop's rule), so splits of one file
read every record once. Memory is bounded by the block size (plus the longest record); the
text is scanned with ``bytes.find`` / ``rfind`` per block, never per row in Python.

>>> import io
>>> [chunk for _, chunk in separated_chunks(io.BytesIO(b"a;bb;c"), b";", 0, 6, 4)]
[b'a;', b'bb;', b'c']
"""

from __future__ import annotations

import codecs
import os
from collections.abc import Iterator

from sliceflow.json.line_blocks import ReadableBytes, skip_file_bom


def _first_record_start(f: ReadableBytes, sep: bytes, start: int) -> int | None:
    """The first record start at or after ``start`` (> 0): just past the first separator that
    ends at or after it; None if there is none (the split owns no record)."""
    back = max(start - len(sep), 0)  # the earliest separator whose end is >= start
    f.seek(back)
    carry = b""
    offset = back
    while block := f.read(1 << 16):
        data = carry + block
        found = data.find(sep)
        if found >= 0:
            return offset + found + len(sep)
        keep = len(sep) - 1
        carry = data[len(data) - keep :] if keep else b""
        offset += len(data) - len(carry)
    return None


def separated_chunks(
    f: ReadableBytes, sep: bytes, start: int, end: int, block_size: int
) -> Iterator[tuple[int, bytes]]:
    """Yields ``(file offset, chunk)``: runs of whole records (each with its separator, the
    last one of the file without) that start in ``[start, end)`` of the file ``f``."""
    if start > 0:
        first = _first_record_start(f, sep, start)
        if first is None or first >= end:
            return
        start = first
        f.seek(start)
    else:
        start, f = skip_file_bom(f)
    pending = b""  # an unfinished record, from pending_at
    pending_at = start
    while True:
        block = f.read(block_size)
        if not block:
            if pending:
                yield pending_at, pending
            return
        data = pending + block
        cut = data.rfind(sep)
        if cut < 0:
            pending = data
            continue
        cut += len(sep)
        # Records that start at or after `end` belong to the next split: stop at the first
        # separator that ends at or after it.
        limit = end - pending_at
        if cut >= limit:
            stop = data.find(sep, max(limit - len(sep), 0))
            yield pending_at, data[: stop + len(sep)]
            return
        yield pending_at, data[:cut]
        pending = data[cut:]
        pending_at += cut


def transcode(chunk: bytes, codec: str) -> bytes:
    """``chunk`` (whole records in ``codec``) as UTF-8. Malformed input becomes U+FFFD. UTF-16
    and UTF-32 without a byte order mark are read big-endian, as Java's decoders read them."""
    if codec in ("utf-16", "utf-32"):
        boms = (
            (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)
            if codec == "utf-16"
            else (codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE)
        )
        if not chunk.startswith(boms):
            codec += "-be"
    return chunk.decode(codec, "replace").encode("utf-8")


def count_separators(path: str | os.PathLike[str], stop: int, sep: bytes | None) -> int:
    """How many record separators lie in the first ``stop`` bytes of a file (``sep`` None:
    CR, LF and CRLF each count once). Read block by block; used to name a failed line."""
    count = 0
    with open(path, "rb") as f:
        left = stop
        last_cr = False
        while left > 0:
            block = f.read(min(left, 1 << 20))
            if not block:
                break
            left -= len(block)
            if sep is not None:
                count += block.count(sep)  # a separator across blocks is rare: not worth it
                continue
            count += block.count(b"\n") + block.count(b"\r") - block.count(b"\r\n")
            if last_cr and block.startswith(b"\n"):
                count -= 1
            last_cr = block.endswith(b"\r")
    return count
