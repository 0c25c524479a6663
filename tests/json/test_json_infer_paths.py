"""The two ways schema inference reads a line, and the way it reads files, agree.

* A well-formed line of at most 1,000 bytes is checked by simdjson against the schema merged
  so far (its scalars typed without building a type); any other line goes through the
  Jackson-compatible Reader. Padding a line with spaces past 1,000 bytes sends it down the
  second path without changing its record, so both paths must infer the same schema.
* Files are read in blocks, the next block while the current one is inferred, and each block
  is cut into parts the threads take as they come free: neither the block size, the thread
  count nor the timing may change the schema.
"""

from __future__ import annotations

import io
import json
import random
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from support.json_corpus import corpus
from test_json_infer import json_records, repeats_a_name

import sliceflow.json.infer as json_infer
from sliceflow._core import json as json_kernel
from sliceflow.errors import MalformedRecordError
from sliceflow.json import infer_schema

_READER_ONLY = 1001  # spaces after a record: past the simdjson path's 1,000-byte limit

_OPTION_SETS: list[dict[str, str]] = [
    {},
    {"primitivesAsString": "true"},
    {"prefersDecimal": "true"},
    {"inferTimestamp": "true"},
    {"mode": "DROPMALFORMED"},
    {"allowSingleQuotes": "false", "allowNumericLeadingZeros": "true"},
]


def _lines(docs: list[Any], pad: int = 0) -> bytes:
    out = []
    for d in docs:
        raw = d if isinstance(d, bytes) else d.encode("utf-8", "surrogatepass")
        out.append(raw + b" " * pad + b"\n")
    return b"".join(out)


def _outcome(data: bytes, **kwargs: Any) -> Any:
    try:
        return infer_schema(data, session={"caseSensitive": "true"}, **kwargs)
    except ValueError as e:  # FAILFAST, a negative scale: the error must be the same too
        return type(e).__name__ + ": " + str(e)


@pytest.mark.parametrize("options", _OPTION_SETS, ids=lambda o: ",".join(o) or "default")
def test_simdjson_path_equals_reader_path_on_the_corpus(options):
    docs = [
        d
        for d in corpus(2500, seed=11)
        if d is not None
        and b"\n" not in (d if isinstance(d, bytes) else d.encode("utf-8", "surrogatepass"))
        and not repeats_a_name(d)
    ]
    fast = _outcome(_lines(docs), options=options, threads=2)
    slow = _outcome(_lines(docs, _READER_ONLY), options=options, threads=2)
    assert fast == slow


def test_homogeneous_lines_take_the_simdjson_path():
    rng = random.Random(5)
    docs = [
        json.dumps({"id": i, "price": rng.random() * 100, "tag": rng.choice(["a", "", "c"])})
        for i in range(5000)
    ]
    data = _lines(docs)
    inference = json_kernel.SchemaInference({"timeZone": "UTC"})
    inference.add_lines(data + bytes(64), len(data), 2)
    assert inference.lines == 5000
    # A record that changes the schema is typed in full: a handful at the start of each part.
    assert inference.schema_changes < 40
    data = _lines(docs, _READER_ONLY)
    padded = json_kernel.SchemaInference({"timeZone": "UTC"})
    padded.add_lines(data + bytes(64), len(data), 2)
    assert padded.schema_changes == 5000
    assert padded.schema_json() == inference.schema_json()


@pytest.mark.parametrize(
    ("docs", "fails"),
    [
        # A STRING field still types its value (java.math.BigDecimal of the number's text):
        # a negative scale fails the query, as in Spark.
        (['{"c": false}', '{"c": []}', '{"c": [3.602879701896395e+16]}'], True),
        (['{"c": "x"}', '{"c": {"d": [1, {"e": 1e20}]}}'], True),
        (['{"c": "x"}', '{"c": 1.5e3}'], True),  # 15E+2: scale -2
        (['{"c": "x"}', '{"c": [1.25, 2, {"d": 1.5e1}]}'], False),  # 15: scale 0
    ],
)
def test_string_fields_type_their_values_with_prefers_decimal(docs, fails):
    fast = _outcome(_lines(docs), options={"prefersDecimal": "true"})
    assert fast == _outcome(_lines(docs, _READER_ONLY), options={"prefersDecimal": "true"})
    if fails:
        assert isinstance(fast, str) and "NEGATIVE_SCALE_DISALLOWED" in fast
    else:
        assert fast["fields"] == [{"name": "c", "type": "string", "nullable": True, "metadata": {}}]


@given(st.lists(json_records, min_size=1, max_size=12), st.sampled_from(_OPTION_SETS))
def test_simdjson_path_equals_reader_path_on_generated_records(records, options):
    docs = [json.dumps(r) for r in records]
    assert _outcome(_lines(docs), options=options) == _outcome(
        _lines(docs, _READER_ONLY), options=options
    )


def _file(tmp_path, rng: random.Random, bom: bool) -> tuple[Any, bytes]:
    ends = [b"\n", b"\r\n", b"\r"]
    parts = [b"\xef\xbb\xbf"] if bom else []
    for i in range(rng.randrange(1, 400)):
        size = rng.choice([0, 5, 40, 300, 5000])
        parts.append(b'{"k%d": "%s"}' % (i % 7, b"x" * size) + rng.choice(ends))
    if rng.random() < 0.5:
        parts.append(b'{"last": 1}')  # no line break at the end
    data = b"".join(parts)
    path = tmp_path / f"f{rng.randrange(1 << 30)}.json"
    path.write_bytes(data)
    return path, data


@pytest.mark.parametrize("seed", range(6))
def test_blocks_read_ahead_cover_the_file(tmp_path, seed):
    rng = random.Random(seed)
    path, data = _file(tmp_path, rng, bom=seed % 2 == 0)
    skip = 3 if data.startswith(b"\xef\xbb\xbf") else 0  # a BOM is dropped
    expected = data[skip:]
    for block_size in (64, 1000, 1 << 16, 16 << 20):
        seen = []
        for buf, used, offset in json_infer._read_ahead(
            json_infer._file_blocks(str(path), block_size, None)
        ):
            assert len(buf) - used >= 64  # simdjson's padding
            assert offset == skip + len(b"".join(seen))
            block = bytes(buf[:used])
            assert block[-1:] in (b"\n", b"\r") or len(b"".join(seen)) + used == len(expected)
            seen.append(block)
        assert b"".join(seen) == expected


def _track_closes(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """The files inference opens from now on, each appending to the list when closed."""
    closed: list[bool] = []

    class Tracked(io.FileIO):
        def close(self) -> None:
            closed.append(True)
            super().close()

    monkeypatch.setattr(json_infer, "_open", lambda p, s: Tracked(p, "rb"))
    return closed


def test_read_ahead_closes_the_file_when_the_caller_stops(tmp_path, monkeypatch):
    path = tmp_path / "f.json"
    path.write_bytes(b'{"a": 1}\n' * 50_000)
    closed = _track_closes(monkeypatch)
    blocks = json_infer._read_ahead(json_infer._file_blocks(str(path), 4096, None))
    next(blocks)
    blocks.close()
    assert closed


def test_parts_give_one_schema_whatever_thread_takes_them(tmp_path):
    # Names equal but for case merge position by position and keep the first one's spelling
    # (Spark's findTypeForComplex): the merge order shows in the result, which therefore
    # must not depend on which thread read which part.
    lines = [b'{"A": 1}\n' if i % 2 else b'{"a": 2}\n' for i in range(200_000)]
    path = tmp_path / "case.json"
    path.write_bytes(b"".join(lines))
    results = {
        json.dumps(infer_schema(str(path), threads=threads, block_size=1 << 20))
        for threads in (2, 3, 2, 3, 2)
    }
    assert len(results) == 1


def test_small_file_buffer_is_the_file_size(tmp_path):
    path = tmp_path / "tiny.json"
    path.write_bytes(b'{"a": 1}\n')
    ((buf, used, _),) = list(json_infer._file_blocks(str(path), 16 << 20, None))
    assert used == 9
    assert len(buf) <= (64 << 10) + 64


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_line_breaks_of_every_kind_across_parts(threads):
    rng = random.Random(threads)
    docs = [json.dumps({f"k{i % 50}": i, "s": "x" * rng.randrange(200)}) for i in range(20_000)]
    ends = [b"\n", b"\r\n", b"\r"]
    mixed = b"".join(d.encode() + rng.choice(ends) for d in docs)
    assert len(mixed) > 8 * (64 << 10)  # cut into parts
    plain = infer_schema(_lines(docs))
    assert infer_schema(mixed, threads=threads) == plain
    # FAILFAST numbers the lines before reading them: a bad line far into the block is named.
    bad = mixed + b'{"k0": \r' + b"".join(d.encode() + b"\r\n" for d in docs[:100])
    with pytest.raises(MalformedRecordError, match=f"line {len(docs) + 1}\\b"):
        infer_schema(bad, threads=threads, options={"mode": "FAILFAST"})


@pytest.mark.parametrize("threads", [1, 2, 3, 5])
def test_files_merge_in_list_order_whatever_thread_infers_them(tmp_path, threads):
    # Names equal but for case keep the first one's spelling: the merge order shows in the
    # result. Files are inferred on their own threads and merged in the list's order, so the
    # schema is the one of the files' text read one after the other.
    rng = random.Random(threads)
    paths, text = [], b""
    for i in range(11):  # more than two files per thread in flight
        name = "a" if i else "A"  # the first file's spelling is kept
        lines = [json.dumps({name: rng.choice([1, 2.5])}) for _ in range(rng.randrange(1, 300))]
        data = "\n".join(lines).encode() + b"\n"
        path = tmp_path / f"part-{i:02d}.json"
        path.write_bytes(data)
        paths.append(str(path))
        text += data
    expected = infer_schema(text, threads=1)
    assert infer_schema(paths, threads=threads) == expected
    assert infer_schema(list(reversed(paths)), threads=threads) == infer_schema(
        b"".join(open(p, "rb").read() for p in reversed(paths)), threads=1
    )


def test_failfast_names_the_first_failing_file_and_its_own_line(tmp_path):
    files = {
        "a.json": b'{"a": 1}\n' * 500,
        "b.json": b'{"a": 1}\n{"a": 2}\n{"a": \n',
        "c.json": b"{oops\n",
    }
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
    paths = [str(tmp_path / name) for name in files]
    for threads in (1, 2, 3):
        with pytest.raises(MalformedRecordError, match=r"b\.json: .*\(line 3\b"):
            infer_schema(paths, threads=threads, options={"mode": "FAILFAST"})


def test_sampled_files_take_different_lines(tmp_path):
    data = b"".join(b'{"f%d": 1}\n' % i for i in range(2000))
    paths = []
    for i in range(4):
        (tmp_path / f"{i}.json").write_bytes(data)
        paths.append(str(tmp_path / f"{i}.json"))
    one = infer_schema(paths[:1], options={"samplingRatio": 0.5})
    four = infer_schema(paths, options={"samplingRatio": 0.5})
    assert 800 < len(one["fields"]) < 1200
    # Each file samples its own lines (2000 x (1 - 0.5^4) expected), the same ones each run.
    assert len(four["fields"]) > 1700
    assert four == infer_schema(paths, options={"samplingRatio": 0.5}, threads=1)


@pytest.mark.parametrize("threads", [1, 2])
def test_a_failing_file_is_closed_when_its_error_is_raised(tmp_path, monkeypatch, threads):
    path = tmp_path / "bad.json"
    path.write_bytes(b'{"a": 1}\n' * 50_000 + b"{oops\n" + b'{"a": 1}\n' * 50_000)
    closed = _track_closes(monkeypatch)
    with pytest.raises(MalformedRecordError, match="line 50001") as failure:
        infer_schema(str(path), threads=threads, block_size=4096, options={"mode": "FAILFAST"})
    # The error (and its traceback, which holds the reading frames) is still alive here.
    assert failure.value is not None
    assert closed
