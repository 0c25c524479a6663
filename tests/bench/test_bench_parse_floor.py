"""The JSON benchmarks' floor of parsing (``bench/parse_floor.py``, ``bench/parse_floor.cpp``):
it builds with the g++ and simdjson the package builds with, parses exactly the documents it is
given (NDJSON bytes, files read block by block, string arrays sliced or not), and refuses what
is not JSON, naming the document: a floor that skipped or misread input would flatter every
ratio measured against it.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from typing import Any

import pyarrow as pa
import pytest
from support import ROOT


@pytest.fixture(scope="module")
def parse_floor() -> Iterator[Any]:
    sys.path.insert(0, os.path.join(ROOT, "bench"))
    try:
        import parse_floor

        yield parse_floor
    finally:
        sys.path.remove(os.path.join(ROOT, "bench"))


@pytest.fixture(scope="module")
def floor(parse_floor: Any) -> Any:
    path = parse_floor.build()
    assert path is not None, "bench/parse_floor.cpp did not build (see stderr)"
    return parse_floor.ParseFloor(path)


def padded(text: bytes) -> bytearray:
    return bytearray(text) + bytearray(64)  # SIMDJSON_PADDING (parse_floor.PADDING)


DOCS = [
    '{"a":1,"b":[1,2.5,{"c":"x\\n"}],"d":null,"e":true}',
    "[1]",
    '{"s":"' + "y" * 300 + '"}',
    '{"n":-1234567890123456789,"f":1e308}',
]


@pytest.mark.parametrize("dom", [True, False])
def test_lines_counts_every_document(floor: Any, dom: bool) -> None:
    text = ("\r\n".join(DOCS) + "\n\n").encode()
    assert floor.lines(padded(text), len(text), dom=dom) == len(DOCS)
    # Only the first `size` bytes are read: the last document is left out.
    cut = text.rindex(b"\n", 0, len(text) - 2)
    assert floor.lines(padded(text), cut, dom=dom) == len(DOCS) - 1
    # No padding past the text: parsed from a padded copy.
    assert floor.lines(bytearray(text), len(text), dom=dom) == len(DOCS)


@pytest.mark.parametrize("dom", [True, False])
@pytest.mark.parametrize(
    ("text", "bad"),
    [
        (b'{"a":1}\n{"a":', 1),
        (b'{"a":1}\n{"a":1}}\n', 1),
        (b'{"a":tru}\n', 0),
        # An unclosed string fails simdjson's stage 1, which runs over a whole 1 MiB batch:
        # the error names the batch's first document.
        (b'{"a":1}\n{"a":"unterminated}\n', 0),
    ],
)
def test_invalid_json_names_the_document(floor: Any, text: bytes, bad: int, dom: bool) -> None:
    with pytest.raises(ValueError, match=f"document {bad} is not valid JSON"):
        floor.lines(padded(text), len(text), dom=dom)


def test_strings_parses_each_element_in_place(floor: Any) -> None:
    docs = [f'{{"i":{i},"s":"{"z" * (i % 70)}"}}' for i in range(1000)]
    for array in (pa.array(docs), pa.array(docs, pa.large_string())):
        assert floor.strings(array) == 1000
        assert floor.strings(array.slice(123, 456)) == 456
        assert floor.strings(array.slice(999, 1)) == 1
    assert floor.strings(pa.array([], pa.string())) == 0
    # Two documents in one element, or one split over two, are not one document per string.
    with pytest.raises(ValueError, match="2 strings held 3 documents"):
        floor.strings(pa.array(['{"a":1}', '{"b":2}{"c":3}']))
    with pytest.raises(ValueError):
        floor.strings(pa.array(['{"a":1}', None]))


def test_file_blocks_reads_every_line(floor: Any, tmp_path: Any) -> None:
    lines = [f'{{"i":{i},"s":"{"q" * (i % 97)}"}}' for i in range(5000)]
    path = tmp_path / "bids.json"
    path.write_text("\n".join(lines))  # no line end after the last line
    assert sum(floor.file_blocks(str(path), block_size=1000)) == 5000
    assert sum(floor.file_blocks(str(path))) == 5000
    with pytest.raises(ValueError, match="longer than a block"):
        sum(floor.file_blocks(str(path), block_size=64))
