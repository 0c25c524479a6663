"""How often the streaming ``sliceflow.json`` source lists its folder, and what Spark's file
source does with the files a listing found beyond a micro-batch: ``Trigger.AvailableNow``
lists once, ``maxFilesPerTrigger`` keeps the unread files for the next micro-batches
(``maxCachedFiles``, ``discardCachedInputRatio``). Reader calls only, without Spark."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql.types import IntegerType, StringType, StructField, StructType

from sliceflow.spark.json.source import JsonDataSource
from sliceflow.spark.json.stream_source import FailedStream, JsonStreamReader

SCHEMA = StructType([StructField("f", StringType()), StructField("i", IntegerType())])


def write(folder: Path, name: str, mtime: int) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(f'{{"f":"{name}","i":1}}\n')
    os.utime(path, (mtime, mtime))


def counted_reader(folder: Path, **options: Any) -> tuple[JsonStreamReader, list[int]]:
    """The source's stream reader and a list that grows by one per listing of the folder."""
    source = JsonDataSource({"path": str(folder), **{k: str(v) for k, v in options.items()}})
    reader = source.streamReader(SCHEMA)
    if isinstance(reader, FailedStream):  # a refused stream raises at its first call
        reader.initialOffset()
    assert isinstance(reader, JsonStreamReader)
    listings: list[int] = []
    listing = reader._list

    def counting() -> Any:
        listings.append(1)
        return listing()

    reader._list = counting  # type: ignore[method-assign]
    return reader, listings


def run(r: JsonStreamReader, on_batch: Any = None) -> list[list[str]]:
    """Micro-batches until nothing is new: each one's file names; ``on_batch(k)`` after the
    k-th."""
    offset, out = r.initialOffset(), []
    while True:
        end = r.latestOffset(offset, r.getDefaultReadLimit())
        if end == offset:
            return out
        offset = json.loads(json.dumps(end))  # as the checkpoint hands it back
        out.append([os.path.basename(p) for p, *_ in end["files"]])
        if on_batch:
            on_batch(len(out))


def test_available_now_lists_once(tmp_path):
    for k in range(5):
        write(tmp_path, f"f{k}", 1000 + k)
    r, listings = counted_reader(tmp_path, maxFilesPerTrigger=1)
    r.prepareForTriggerAvailableNow()
    # A file arriving mid-run is not read (it was not there at the start).
    got = run(r, lambda k: k == 2 and write(tmp_path, "late", 500))
    assert got == [["f0"], ["f1"], ["f2"], ["f3"], ["f4"]]
    assert len(listings) == 1


def test_unread_files_serve_the_next_micro_batches(tmp_path):
    for k in range(10):
        write(tmp_path, f"f{k}", 1000 + k)
    r, listings = counted_reader(tmp_path, maxFilesPerTrigger=2)
    # Spark's order with its cache: an older file arriving after the first listing waits
    # until the cached files are read (without the cache it would come next).
    got = run(r, lambda k: k == 1 and write(tmp_path, "early", 500))
    assert got == [["f0", "f1"], ["f2", "f3"], ["f4", "f5"], ["f6", "f7"], ["f8", "f9"], ["early"]]
    # The first listing, the one after the cache ran out, the one that found nothing new.
    assert len(listings) == 3


def test_cache_discarded_below_the_ratio_and_limited(tmp_path):
    for k in range(5):
        write(tmp_path, f"f{k}", 1000 + k)
    # 1 file left after the first batch: kept by default (>= 0.2 x 4), dropped below 0.8 x 4,
    # and then the next micro-batch lists again.
    r, listings = counted_reader(tmp_path, maxFilesPerTrigger=4)
    assert run(r) == [["f0", "f1", "f2", "f3"], ["f4"]]
    assert len(listings) == 2
    r, listings = counted_reader(tmp_path, maxFilesPerTrigger=4, discardCachedInputRatio=0.8)
    assert run(r) == [["f0", "f1", "f2", "f3"], ["f4"]]
    assert len(listings) == 3
    # maxCachedFiles=1 keeps one of the 3 unread files: one micro-batch without a listing.
    r, listings = counted_reader(tmp_path, maxFilesPerTrigger=2, maxCachedFiles=1)
    assert run(r) == [["f0", "f1"], ["f2"], ["f3", "f4"]]
    assert len(listings) == 3
    # No cache with latestFirst or without maxFilesPerTrigger (Spark caches only then).
    r, listings = counted_reader(tmp_path, maxFilesPerTrigger=2, latestFirst="true")
    assert run(r) == [["f4", "f3"], ["f2", "f1"], ["f0"]]
    assert len(listings) == 4


@pytest.mark.parametrize(
    ("name", "value"),
    [("maxCachedFiles", "-1"), ("maxCachedFiles", "x"), ("discardCachedInputRatio", "1.5")],
)
def test_cache_options_are_checked(tmp_path, name, value):
    with pytest.raises(ValueError, match=name):
        counted_reader(tmp_path, **{name: value})
