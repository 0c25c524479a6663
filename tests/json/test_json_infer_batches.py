"""Schema inference parses NDJSON lines with simdjson's parse_many, a batch of lines at a time
(cpp/json/infer/infer_lines.h), and must give exactly the schema, or the error, that parsing each
line on its own gives (the reading the Spark differential tests check). The texts are built
from what tells the two apart: two values on one line, a value across lines, text before or
after a value, blank lines, byte-order marks, every line end, malformed, over-long and deep
lines; under every parse mode and the options that change the reading."""

from __future__ import annotations

import random

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from sliceflow._core import json as json_kernel

_PADDING = 64  # simdjson::SIMDJSON_PADDING: batches need it after the text

_PIECES = [
    # records
    '{"a": 1}',
    '{"b": "x", "c": [1, 2.5]}',
    '{"a": {"d": null, "e": [{"f": true}]}}',
    '{"A": false}',
    '{"big": 123456789012345678901234}',
    '{"huge": 1234567890123456789012345678901234567890}',
    '{"z": -0}',
    '{"z": -0.0}',
    '{"e": ""}',
    '{"t": "2026-11-25T10:00:00", "n": "12.50"}',
    '{"g": 1.5e3, "h": 1e400}',
    '{"a": "text", "a": 2}',
    '{"é": "ü", "\\u00e9x": "\\n"}',
    '[{"a": 2}, {"h": 3}]',
    "[]",
    # scalars and arrays of scalars: corrupt records in PERMISSIVE
    "1",
    '"s"',
    "true",
    "null",
    "[1, 2]",
    # malformed, or read only by Jackson's leniency
    '{"a": ',
    '{"a": 1',
    '"unterminated',
    "{a: 1}",
    "{'a': 1}",
    '{"a": tru}',
    '{"a": 01}',
    '{"a": NaN}',
    '{"a": 1} // note',
    '/* c */ {"c": 1}',
    '{"a": "\x01"}',
    "}",
    ",",
    "xyz",
    # more than the first value on a line: Spark reads the first only
    '{"a": 1} {"b": 2}',
    '{"a": 1}xyz',
    '{"a": 1}]',
    "1 2",
    "1}",
    "1[",
    "1.5]",
    "true}",
    '"s"x',
    '"s"}',
    '{"a": 1} {"b": ',
    '{"a": 1} [',
    # values across lines: each line is a record of its own for Spark
    '{"a":\n1}',
    '[{"a": 1},\n{"b": 2}]',
    '{"a": 1} {"q":\n2}',
    # blank lines
    "",
    "   ",
    "\t",
    # byte-order marks, in the middle of the text
    '\ufeff{"bom": 1}',
    # over-long (the Reader takes lines over 1,000 bytes) and deep
    '{"long": "' + "x" * 1200 + '"}',
    '{"wide": {' + ", ".join(f'"k{i}": {i}' for i in range(120)) + "}}",
    "[" * 300 + "]" * 300,
    '{"deep": ' + "[" * 200 + "1" + "]" * 200 + "}",
]

_OPTIONS = [
    {},
    {"prefersDecimal": "true"},
    {"primitivesAsString": "true"},
    {"inferTimestamp": "true"},
    {"dropFieldIfAllNull": "true"},
    {
        "allowComments": "true",
        "allowUnquotedFieldNames": "true",
        "allowSingleQuotes": "true",
        "allowNumericLeadingZeros": "true",
        "allowNonNumericNumbers": "true",
        "allowUnquotedControlChars": "true",
    },
    {"samplingRatio": "0.5"},
]


def _text(lines: list[tuple[str, str, str]]) -> bytes:
    return "".join(lead + piece + end for piece, lead, end in lines).encode(
        "utf-8", "surrogatepass"
    )


def _outcome(text: bytes, options: dict[str, str], batches: bool, threads: int) -> object:
    inference = json_kernel.SchemaInference({"timeZone": "UTC", **options}, line_batches=batches)
    try:
        inference.add_lines(text + bytes(_PADDING), len(text), threads)
    except ValueError as e:
        return (type(e).__name__, str(e))
    return inference.schema_json(), inference.lines


_lines = st.lists(
    st.tuples(
        st.sampled_from(_PIECES),
        st.sampled_from(["", " ", "\t "]),
        st.sampled_from(["\n", "\r\n", "\r"]),
    ),
    min_size=1,
    max_size=12,
)


# A root-level number with more on its line (Jackson wants a space after it), where the batch
# has placed the number before it learns what follows: found by the fuzzer.
@example([("1}", "  ", "\r"), ("xyz", "", "\n")], {}, "FAILFAST", True)
@example([("1.5]", "", "\n"), ('{"a": 1}', "", "\n")], {}, "FAILFAST", True)
# ... and with an unclosed array after it, which parse_many drops without an error.
@example([("1[", "", "\n")], {"primitivesAsString": "true"}, "FAILFAST", True)
@given(
    _lines,
    st.sampled_from(_OPTIONS),
    st.sampled_from(["PERMISSIVE", "DROPMALFORMED", "FAILFAST"]),
    st.booleans(),
)
def test_batches_read_as_lines_do(lines, options, mode, last_break):
    text = _text(lines)
    if not last_break:
        text = text.rstrip(b"\r\n")
    opts = {**options, "mode": mode}
    assert _outcome(text, opts, True, 1) == _outcome(text, opts, False, 1)


@pytest.mark.parametrize("mode", ["PERMISSIVE", "DROPMALFORMED", "FAILFAST"])
@pytest.mark.parametrize("bad_share", [0.0, 0.002, 0.3])
def test_batches_read_as_lines_do_over_many_batches(mode, bad_share):
    """Megabytes of text: many batches per part, parts on several threads, a batch cut in
    the middle of the malformed lines and the lines that span two. The well-formed pieces are
    the common case (most batches place every line)."""
    rng = random.Random(f"{mode}{bad_share}")
    good = [p for p in _PIECES[:15] if p]
    pieces = []
    size = 0
    while size < 3 << 20:
        piece = rng.choice(_PIECES) if rng.random() < bad_share else rng.choice(good)
        end = rng.choice(["\n", "\n", "\r\n", "\r"])
        pieces.append((piece, "", end))
        size += len(piece) + 2
    text = _text(pieces)
    opts = {"mode": mode}
    reference = _outcome(text, opts, False, 1)
    for threads in (1, 3):
        assert _outcome(text, opts, True, threads) == reference, threads


def test_batches_place_the_lines_of_padded_text():
    """The batch path is the one taken for padded text, and the reference takes none."""
    text = b'{"a": 1}\n{"b": [1, 2]}\n\n{"c": "x"}\r\n' * 1000
    for batches, placed in ((True, 3000), (False, 0)):
        inference = json_kernel.SchemaInference({"timeZone": "UTC"}, line_batches=batches)
        inference.add_lines(text + bytes(_PADDING), len(text), 2)
        assert inference.batched_lines == placed
        assert inference.lines == 4000
