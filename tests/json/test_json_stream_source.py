"""The streaming ``sliceflow.json`` source's planning (offsets, read limits, file order,
``Trigger.AvailableNow``, ``cleanSource``) on its reader alone, without Spark: the calls Spark's
micro-batch engine makes, made here in the same order."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadMaxBytes, ReadMaxFiles
from pyspark.sql.types import IntegerType, StringType, StructField, StructType

from sliceflow.json.schemas import resolve_schema
from sliceflow.spark.json.source import JsonDataSource
from sliceflow.spark.json.stream_source import FailedStream, JsonStreamReader, StreamOptions

SCHEMA = StructType([StructField("f", StringType()), StructField("i", IntegerType())])


def write(folder: Path, name: str, mtime: int, lines: int = 3) -> str:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text("".join(f'{{"f":"{name}","i":{i}}}\n' for i in range(lines)))
    os.utime(path, (mtime, mtime))
    return str(path)


def reader(folder: Path, **options: Any) -> JsonStreamReader:
    source = JsonDataSource({"path": str(folder), **{k: str(v) for k, v in options.items()}})
    stream = source.streamReader(SCHEMA)
    if isinstance(stream, FailedStream):  # a refused stream raises at its first call
        stream.initialOffset()
    assert isinstance(stream, JsonStreamReader)
    return stream


def batches(r: JsonStreamReader, start: dict[str, Any] | None = None) -> list[list[str]]:
    """Runs micro-batches until the source has nothing new: the file names of each."""
    offset = start or r.initialOffset()
    out = []
    while True:
        end = r.latestOffset(offset, r.getDefaultReadLimit())
        if end == offset:
            return out
        json.dumps(end)  # the checkpoint holds it as JSON
        out.append([os.path.basename(p) for p, *_ in end["files"]])
        r.commit(end)
        offset = end


def test_oldest_first_one_file_per_trigger(tmp_path):
    for name, mtime in (("c", 1000), ("a", 3000), ("b", 2000), ("d", 2000)):
        write(tmp_path, name, mtime)
    write(tmp_path, "_hidden", 10)
    write(tmp_path, ".crc", 10)
    assert batches(reader(tmp_path, maxFilesPerTrigger=1)) == [["c"], ["b"], ["d"], ["a"]]
    assert batches(reader(tmp_path, maxFilesPerTrigger=3)) == [["c", "b", "d"], ["a"]]
    assert batches(reader(tmp_path)) == [["c", "b", "d", "a"]]
    # The batch source's listing options hold too.
    assert batches(reader(tmp_path, pathGlobFilter="[ab]")) == [["b", "a"]]
    assert batches(reader(tmp_path, latestFirst="true", maxFilesPerTrigger=2)) == [
        ["a", "d"],
        ["b", "c"],
    ]


def test_max_bytes_per_trigger_takes_one_file_at_least(tmp_path):
    for k, lines in enumerate((2, 2, 20, 2)):
        write(tmp_path, f"f{k}", 1000 + k, lines)
    one = os.path.getsize(tmp_path / "f0")
    got = batches(reader(tmp_path, maxBytesPerTrigger=2 * one))
    assert got == [["f0", "f1"], ["f2"], ["f3"]]


def test_new_files_come_in_later_batches_and_none_twice(tmp_path):
    with pytest.raises(FileNotFoundError, match="PATH_NOT_FOUND"):  # as Spark's load(path)
        reader(tmp_path / "in").latestOffset(reader(tmp_path).initialOffset(), ReadAllAvailable())
    glob = reader(tmp_path / "i[n]")  # a glob may match nothing yet: the stream waits
    start = glob.initialOffset()
    assert glob.latestOffset(start, ReadAllAvailable()) == start
    r = reader(tmp_path / "in")
    write(tmp_path / "in", "a", 1000)
    first = r.latestOffset(start, ReadAllAvailable())
    write(tmp_path / "in", "b", 500)  # arrives late with an older time: still read
    write(tmp_path / "in", "c", 1500)  # (a plain subfolder is not read: Spark reads none)
    second = r.latestOffset(first, ReadAllAvailable())
    assert [os.path.basename(p) for p, *_ in second["files"]] == ["b", "c"]
    assert r.latestOffset(second, ReadAllAvailable()) == second
    # A restarted query plans the batch the checkpoint holds: exactly its files.
    again = reader(tmp_path / "in")
    parts = again.partitions(first, second)
    assert sorted(os.path.basename(p.path) for p in parts) == ["b", "c"]
    assert again.partitions(second, second) == []


def test_file_name_only_reads_a_name_once(tmp_path):
    write(tmp_path / "x", "a", 1000)
    # A glob over the folders: a plain subfolder of a folder named is not read (as in Spark).
    by_name, by_path = reader(tmp_path / "*", fileNameOnly="true"), reader(tmp_path / "*")
    first = by_name.latestOffset(by_name.initialOffset(), ReadAllAvailable())
    first_path = by_path.latestOffset(by_path.initialOffset(), ReadAllAvailable())
    write(tmp_path / "y", "a", 2000)  # the same name in another folder (as Spark: "a" is seen)
    write(tmp_path / "y", "b", 3000)
    assert batches(by_name, first) == [["b"]]
    assert batches(by_path, first_path) == [["a", "b"]]


def test_seen_files_are_forgotten_after_max_file_age(tmp_path):
    day = 86_400
    write(tmp_path, "old", 1_000_000)
    r = reader(tmp_path, maxFileAge="1d")
    first = r.latestOffset(r.initialOffset(), ReadAllAvailable())
    assert first["files"][0][0].endswith("old")  # the first batch takes every file
    write(tmp_path, "new", 1_000_000 + 2 * day)
    second = r.latestOffset(first, ReadAllAvailable())
    # The offset keeps only what is younger than maxFileAge before the newest file ...
    assert [os.path.basename(k) for k in second["seen"]] == ["new"]
    write(tmp_path, "stale", 1_000_000 + day // 2)  # ... and older files are ignored, as in Spark
    assert r.latestOffset(second, ReadAllAvailable()) == second
    # latestFirst with a limit never forgets: old files may still be waiting.
    keep = reader(tmp_path, maxFileAge="1d", latestFirst="true", maxFilesPerTrigger=5)
    assert len(keep.latestOffset(keep.initialOffset(), keep.getDefaultReadLimit())["seen"]) == 3


def test_available_now_reads_only_the_files_there_at_start(tmp_path):
    write(tmp_path, "a", 1000)
    write(tmp_path, "b", 2000)
    r = reader(tmp_path, maxFilesPerTrigger=1)
    r.prepareForTriggerAvailableNow()
    first = r.latestOffset(r.initialOffset(), ReadMaxFiles(1))
    write(tmp_path, "c", 500)
    assert batches(r, first) == [["b"]]


def test_engine_limit_wins_over_the_options(tmp_path):
    for k in range(3):
        write(tmp_path, f"f{k}", 1000 + k)
    r = reader(tmp_path, maxFilesPerTrigger=1)
    assert r.getDefaultReadLimit() == ReadMaxFiles(1)
    assert len(r.latestOffset(r.initialOffset(), ReadAllAvailable())["files"]) == 3
    assert len(r.latestOffset(r.initialOffset(), ReadMaxBytes(1))["files"]) == 1


@pytest.mark.parametrize("mode", ["delete", "archive"])
def test_clean_source_after_commit(tmp_path, mode):
    src, archive = tmp_path / "in", tmp_path / "archive"
    a = write(src, "a", 1000)
    write(src, "b", 2000)
    extra = {"sourceArchiveDir": str(archive)} if mode == "archive" else {}
    r = reader(src, cleanSource=mode, maxFilesPerTrigger=1, **extra)
    first = r.latestOffset(r.initialOffset(), r.getDefaultReadLimit())
    assert os.path.exists(a)  # planned, not committed: still there
    r.commit(first)
    assert not os.path.exists(a)
    assert os.path.exists(src / "b")
    moved = archive / os.path.abspath(a).lstrip(os.sep)
    assert moved.exists() == (mode == "archive")
    r.commit(first)  # committed again after a restart: the file is gone, nothing fails


def test_options_are_checked(tmp_path):
    with pytest.raises(ValueError, match="can't be both set"):
        reader(tmp_path, maxFilesPerTrigger=1, maxBytesPerTrigger="1m")
    with pytest.raises(ValueError, match="'maxFilesPerTrigger' must be a positive number"):
        reader(tmp_path, maxFilesPerTrigger=0)
    with pytest.raises(ValueError, match="needs the option 'sourceArchiveDir'"):
        reader(tmp_path, cleanSource="archive")
    with pytest.raises(ValueError, match="inside the source path"):
        reader(tmp_path, cleanSource="archive", sourceArchiveDir=str(tmp_path / "done"))
    with pytest.raises(ValueError, match="'cleanSource' must be off, delete or archive"):
        reader(tmp_path, cleanSource="move")
    with pytest.raises(ValueError, match="'latestFirst' must be true or false"):
        reader(tmp_path, latestFirst="yes")
    with pytest.raises(ValueError, match="'maxFileAge' must be a time"):
        reader(tmp_path, maxFileAge="a week")
    # The JSON options are the batch reader's, checked the same way.
    with pytest.raises(ValueError, match=r"option .encoding. expects one of iso-8859-1"):
        reader(tmp_path, encoding="latin1")
    options = {"MAXFILESPERTRIGGER": "4", "maxbytespertrigger": None}
    assert StreamOptions.pop({k: v for k, v in options.items() if v}).max_files == 4


def test_large_files_split_over_the_cores(tmp_path):
    path = write(tmp_path, "big", 1000, lines=400_000)
    r = reader(tmp_path, maxPartitionBytes="1m")
    end = r.latestOffset(r.initialOffset(), ReadAllAvailable())
    parts = r.partitions(r.initialOffset(), end)
    size = os.path.getsize(path)
    assert len(parts) == -(-size // (1 << 20)) > 1
    arrow_schema, _ = resolve_schema(SCHEMA)
    rows = sum(b.num_rows for p in parts for b in r.read(p))
    assert rows == 400_000
    assert all(b.schema.equals(arrow_schema) for b in r.read(parts[0]))


def test_partition_folders_fill_the_columns_the_schema_names(tmp_path):
    """As Spark's file stream source: partition values fill the schema's partition columns
    (typed by the schema); partition columns the schema leaves out are not added."""
    for day in (1, 2):
        write(tmp_path / f"day={day}" / "kind=bid", f"part{day}", 1000 + day, lines=2)
    schema = StructType([*SCHEMA.fields, StructField("day", IntegerType())])
    source = JsonDataSource({"path": str(tmp_path)})
    r = source.streamReader(schema)
    assert isinstance(r, JsonStreamReader)
    end = r.latestOffset(r.initialOffset(), ReadAllAvailable())
    json.dumps(end)
    rows = [
        row
        for p in r.partitions(r.initialOffset(), end)
        for b in r.read(p)
        for row in b.to_pylist()
    ]
    assert sorted((row["f"], row["i"], row["day"]) for row in rows) == [
        ("part1", 0, 1),
        ("part1", 1, 1),
        ("part2", 0, 2),
        ("part2", 1, 2),
    ]
