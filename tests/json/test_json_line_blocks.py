"""The input-buffer policy for NDJSON bytes (sliceflow.json.line_blocks): every block handed
to the C++ core is whole lines with PADDING readable bytes after it, a CRLF is never cut
between two blocks, a line longer than the block grows the buffer, a leading BOM is dropped,
and splits keep every line once."""

from __future__ import annotations

import io
import random
import re
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

import sliceflow.json.infer as json_infer
from sliceflow._core import json as json_kernel
from sliceflow.json import infer_schema
from sliceflow.json.line_blocks import PADDING, LineBlock, line_blocks, padded

BOM = b"\xef\xbb\xbf"


class _Unseekable(io.RawIOBase):
    """A stream that cannot seek and returns short reads (as a decompressing stream may)."""

    def __init__(self, data: bytes) -> None:
        self._data = io.BytesIO(data)

    def readable(self) -> bool:
        return True

    def readinto(self, b: Any) -> int:
        with memoryview(b) as view:
            step = self._data.read(min(len(view), 5))
            view[: len(step)] = step
            return len(step)


def _text(rng: random.Random, bom: bool) -> bytes:
    parts = [BOM] if bom else []
    for i in range(rng.randrange(1, 120)):
        size = rng.choice([0, 3, 40, 300])
        parts.append(b'{"k%d": "%s"}' % (i % 5, b"x" * size) + rng.choice([b"\n", b"\r\n", b"\r"]))
    if rng.random() < 0.5:
        parts.append(b'{"last": 1}')  # no line end at the end
    return b"".join(parts)


def _check(blocks: list[LineBlock], text: bytes, first_offset: int) -> None:
    offset = first_offset
    seen = []
    for i, (buf, size, at) in enumerate(blocks):
        assert len(buf) - size >= PADDING  # the slack after every block
        assert at == offset
        block = bytes(buf[:size])
        last = i == len(blocks) - 1
        assert last or block.endswith((b"\n", b"\r"))  # whole lines
        if not last and block.endswith(b"\r"):  # a CRLF is never cut between two blocks
            assert not text[offset - first_offset + size :].startswith(b"\n")
        seen.append(block)
        offset += size
    assert b"".join(seen) == text


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("buffers", [1, 2])
def test_blocks_are_whole_lines_with_slack(seed: int, buffers: int) -> None:
    rng = random.Random(seed)
    text = _text(rng, bom=seed % 2 == 0)
    skip = 3 if text.startswith(BOM) else 0
    for block_size in (1, 7, 64, 1000, 1 << 16):
        for stream in (io.BytesIO(text), _Unseekable(text)):
            # Copies: with one buffer a block is valid only until the next one is read.
            blocks = [
                LineBlock(bytearray(b.buffer), b.size, b.offset)
                for b in line_blocks(stream, block_size, buffers=buffers)
            ]
            _check(blocks, text[skip:], skip)


def test_a_line_longer_than_the_block_grows_the_buffer() -> None:
    long_line = b'{"s": "' + b"y" * 10_000 + b'"}\r\n'
    text = b'{"a": 1}\r\n' + long_line + b'{"a": 2}\r\n'
    blocks = [
        LineBlock(bytearray(b.buffer), b.size, b.offset) for b in line_blocks(io.BytesIO(text), 16)
    ]
    _check(blocks, text, 0)
    assert any(bytes(b.buffer[: b.size]).startswith(long_line) for b in blocks)


@pytest.mark.parametrize("sep", [b"\n", b"\r", b"\r\n"])
def test_splits_keep_every_line_once(sep: bytes) -> None:
    text = sep.join(b'{"a": %d}' % i for i in range(12))
    for first in range(len(text) + 1):
        for block_size in (1, 5, 1 << 10):
            lines = []
            for start, end in ((0, first), (first, None)):
                for b in line_blocks(io.BytesIO(text), block_size, start=start, end=end):
                    lines.extend(re.split(rb"\r\n|\r|\n", bytes(b.buffer[: b.size])))
            assert [x for x in lines if x] == text.split(sep), f"split at {first}"


def test_padded_text_drops_the_bom_and_has_the_slack() -> None:
    for given in (b'{"a": 1}\n', BOM + b'{"a": 1}\n', memoryview(BOM + b'{"a": 1}\n')):
        buf, size, _ = padded(given)
        assert bytes(buf[:size]) == b'{"a": 1}\n'
        assert len(buf) - size >= PADDING


def test_every_block_inference_hands_the_core_has_the_slack(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    slack: list[int] = []

    class Recording(json_kernel.SchemaInference):
        def add_lines(self, data: Any, size: Any = -1, threads: Any = 1) -> None:
            slack.append(len(data) - size)
            super().add_lines(data, size, threads)

    monkeypatch.setattr(json_infer, "json_kernel", SimpleNamespace(SchemaInference=Recording))
    text = _text(random.Random(5), bom=True) + b"\r\n"
    path = tmp_path / "f.json"
    path.write_bytes(text)
    expected = infer_schema(text)
    for threads in (1, 2):
        assert infer_schema(str(path), threads=threads, block_size=256) == expected
    assert len(slack) > 3
    assert min(slack) >= PADDING
