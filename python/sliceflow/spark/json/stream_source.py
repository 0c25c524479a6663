"""The streaming form of the ``sliceflow.json`` source: NDJSON files arriving in a folder.

>>> import sliceflow.spark
>>> sliceflow.spark.register(spark)  # doctest: +SKIP
>>> bids = spark.readStream.format("sliceflow.json").schema(BID_DDL).load(folder)  # doctest: +SKIP

Files are taken as Spark's file stream source takes them: oldest modification time first (newest
first with ``latestFirst``), at most ``maxFilesPerTrigger`` files or ``maxBytesPerTrigger`` bytes
per micro-batch (one file at least), every file read once (by full path, or by name with
``fileNameOnly``), files older than ``maxFileAge`` before the newest one seen ignored after the
first batch, and ``cleanSource`` (``archive`` to ``sourceArchiveDir`` / ``delete``) applied to a
micro-batch's files once Spark has committed it. ``Trigger.AvailableNow`` reads the files there at
the start (listed once) and stops; with ``maxFilesPerTrigger``, the new files a listing found
beyond a micro-batch serve the next ones without listing again (Spark's ``maxCachedFiles`` and
``discardCachedInputRatio``; not with ``latestFirst``). Each file is decoded by the batch
source's reader (``JsonDataSourceReader``, handed over by ``JsonDataSource.streamReader``), so
the JSON options, schema and results are the batch source's.

Offsets (in the query's checkpoint, JSON): ``{"batch": n, "files": [[path, size, partition
values, mtime_ms], ...], "seen": {key: mtime_ms, ...}, "purgedBefore": ms}``. ``files`` are the
micro-batch's own files, so a batch replayed after a restart reads exactly them; hive-style
partition folders (``day=2026-11-24/``) fill the partition columns the schema names, as in
Spark's file stream source (the others are not added); ``seen`` is Spark's seen-files map, which
keeps only files modified at most ``maxFileAge`` (default 7 days) before the newest file seen, so
an offset holds the files that arrived within ``maxFileAge`` of the newest one. As in Spark, with
``latestFirst`` and a per-trigger limit nothing is forgotten (old files must still be read) and the
map grows with the folder; set ``maxFileAge`` smaller for folders of many small files.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NoReturn, Protocol, TypeVar

import pyarrow as pa
from pyspark.sql.datasource import DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import (
    ReadAllAvailable,
    ReadLimit,
    ReadMaxBytes,
    ReadMaxFiles,
    SupportsTriggerAvailableNow,
)

from sliceflow._io.codecs import is_splittable
from sliceflow._io.filesystems import resolve, split_scheme
from sliceflow._io.listing import FileEntry, list_files
from sliceflow.spark.json.source_errors import spark_shaped
from sliceflow.spark.json.source_options import (
    parse_bytes,
    parse_time_ms,
    pop_flag,
    pop_option,
)

__all__ = [
    "FailedStream",
    "JsonStreamReader",
    "StreamOptions",
    "list_stream_files",
    "split_ranges",
]

#: Spark's default ``maxFileAge``.
DEFAULT_MAX_FILE_AGE = "7d"
#: Spark's ``spark.sql.files.openCostInBytes``: the smallest split worth a task of its own.
OPEN_COST_BYTES = 4 << 20


def list_stream_files(
    path: str, options: Mapping[str, str], settings: Mapping[str, str] | None, time_zone: str
) -> list[FileEntry]:
    """The data files under ``path`` now, found as the batch source finds them
    (:func:`sliceflow._io.listing.list_files`: any filesystem, globs, ``pathGlobFilter``,
    ``recursiveFileLookup``, ``modifiedBefore/After``, hidden names skipped). A glob that
    matches nothing yet is an empty folder (the stream waits, as Spark's does); a missing path
    that is no glob fails, as ``readStream...load(path)`` fails in Spark.

    >>> list_stream_files("/no/such/folder/*.json", {}, None, "UTC")
    []
    """
    try:
        return list_files(path, options, settings, time_zone=time_zone)
    except FileNotFoundError:
        if any(c in path.split("://", 1)[-1] for c in "*?[{"):
            return []
        raise


def _positive(options: dict[str, str], name: str, parse: Callable[[str], int]) -> int | None:
    value = pop_option(options, name)
    if value is None:
        return None
    try:
        number = int(parse(value))
    except ValueError:
        number = 0
    if number <= 0:
        raise ValueError(
            f"sliceflow.json: option {name!r} must be a positive number, got {value!r}"
        )
    return number


_Number = TypeVar("_Number", int, float)


def _number(
    options: dict[str, str],
    name: str,
    kind: Callable[[str], _Number],
    low: float,
    high: float | None,
    default: _Number,
) -> _Number:
    """An option that must be a number of type ``kind`` in [low, high]; ``default`` if absent."""
    value = pop_option(options, name)
    if value is None:
        return default
    number: _Number | None
    try:
        number = kind(value.strip())
    except ValueError:
        number = None
    if number is None or number < low or (high is not None and number > high):
        bound = f"between {low} and {high}" if high is not None else f"at least {low}"
        raise ValueError(f"sliceflow.json: option {name!r} must be a number {bound}, got {value!r}")
    return number


@dataclass(frozen=True)
class StreamOptions:
    """The file stream source's options, as Spark's ``FileStreamOptions`` reads them."""

    max_files: int | None = None
    max_bytes: int | None = None
    latest_first: bool = False
    file_name_only: bool = False
    max_file_age_ms: int = 7 * 24 * 3600 * 1000
    clean_source: str = "off"
    archive_dir: str | None = None
    max_cached_files: int = 10_000
    discard_cached_input_ratio: float = 0.2

    @classmethod
    def pop(cls, options: dict[str, str]) -> StreamOptions:
        """Removes the streaming options from ``options`` and validates them; the rest are the
        JSON reader's."""
        max_files = _positive(options, "maxFilesPerTrigger", int)
        max_bytes = _positive(options, "maxBytesPerTrigger", parse_bytes)
        if max_files is not None and max_bytes is not None:
            raise ValueError(
                "sliceflow.json: options 'maxFilesPerTrigger' and 'maxBytesPerTrigger' can't be "
                "both set"
            )
        age_text = pop_option(options, "maxFileAge") or DEFAULT_MAX_FILE_AGE
        max_age = parse_time_ms(age_text, "maxFileAge")
        clean = (pop_option(options, "cleanSource") or "off").strip().lower()
        if clean not in ("off", "delete", "archive"):
            raise ValueError(
                "sliceflow.json: option 'cleanSource' must be off, delete or archive, "
                f"got {clean!r}"
            )
        archive = pop_option(options, "sourceArchiveDir")
        if clean == "archive" and not archive:
            raise ValueError(
                "sliceflow.json: cleanSource=archive needs the option 'sourceArchiveDir'"
            )
        return cls(
            max_cached_files=_number(options, "maxCachedFiles", int, 0, None, 10_000),
            discard_cached_input_ratio=_number(
                options, "discardCachedInputRatio", float, 0.0, 1.0, 0.2
            ),
            max_files=max_files,
            max_bytes=max_bytes,
            latest_first=pop_flag(options, "latestFirst"),
            file_name_only=pop_flag(options, "fileNameOnly"),
            max_file_age_ms=max_age,
            clean_source=clean,
            archive_dir=_absolute(archive) if archive else None,
        )


def _take(files: Sequence[FileEntry], limit: ReadLimit) -> list[FileEntry]:
    """The files one micro-batch takes from ``files`` (already in reading order)."""
    if isinstance(limit, ReadMaxFiles):
        return list(files[: limit.max_files])
    if isinstance(limit, ReadMaxBytes):
        taken: list[FileEntry] = []
        total = 0
        for f in files:
            if taken and total + f.size > limit.max_bytes:
                break
            taken.append(f)
            total += f.size
        return taken
    if isinstance(limit, ReadAllAvailable):
        return list(files)
    raise ValueError(f"sliceflow.json: the streaming source has no read limit {limit!r}")


def split_ranges(
    files: Sequence[tuple[str, int]], cores: int, split_bytes: int
) -> list[list[tuple[int, int]]]:
    """The byte ranges each of a micro-batch's ``files`` (path, size) is read in, one task each.

    Spark's ``FilePartition.maxSplitBytes``: a batch spreads over the ``cores`` when its files
    are few, but no split is smaller than the open cost (4 MiB) nor larger than
    ``split_bytes``; a compressed file is one piece.

    >>> split_ranges([("a.json", 20_000_000), ("b.json.gz", 6_000_000)], 2, 128 << 20)
    [[(0, 13000000), (13000000, 20000000)], [(0, 6000000)]]
    """
    split = min(split_bytes, max(OPEN_COST_BYTES, -(-sum(size for _, size in files) // cores)))
    out = []
    for path, size in files:
        step = split if is_splittable(path) else max(size, 1)
        out.append([(a, min(a + step, size)) for a in range(0, max(size, 1), step)])
    return out


def _absolute(path: str) -> str:
    """A local path made absolute; a URI as it is."""
    return path if split_scheme(path)[0] not in ("", "file", "local") else os.path.abspath(path)


class SplitDecoder(Protocol):
    """What the stream needs of the batch source's reader: its path and options, and the
    decoding of one split of a file."""

    path: str
    options: dict[str, str]
    time_zone: str
    split_bytes: int
    settings: dict[str, str]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]: ...


class JsonStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """Micro-batches of the NDJSON files arriving under a folder (see the module docstring)."""

    def __init__(
        self,
        stream: StreamOptions,
        decoder: SplitDecoder,
        make_split: Callable[
            [str, int, int, tuple[tuple[str, str], ...], int, int | None], InputPartition
        ],
        session_defaults: Mapping[str, str],
    ) -> None:
        """``stream``: the streaming options (:meth:`StreamOptions.pop`); ``decoder``: the batch
        source's reader over the other options, which decodes each split; ``make_split``: its
        split type (path, start, end, hive-style partition values, file size, modification
        time in ms or None)."""
        self.stream = stream
        self.decoder = decoder
        self.make_split = make_split
        self.root = decoder.path
        #: Cores a micro-batch spreads over (Spark's ``spark.sql.files.minPartitionNum``).
        self.cores = int(session_defaults.get("parallelism") or os.cpu_count() or 1)
        archive = self.stream.archive_dir
        if archive is not None:
            root = _absolute(self.root).rstrip("/")
            if archive.rstrip("/") == root or archive.startswith(root + "/"):
                raise ValueError(
                    f"sliceflow.json: sourceArchiveDir {archive!r} is inside the source path "
                    f"{self.root!r}; archived files would be read again"
                )
        #: Hadoop settings (``fs.s3a.*`` ...) for the filesystems, as the batch source has them.
        self.settings: dict[str, str] = decoder.settings
        #: The listing taken when ``Trigger.AvailableNow`` started (``None`` otherwise): as in
        #: Spark's file stream source, every micro-batch of the run picks from it, and the
        #: folder is listed once per run instead of once per micro-batch.
        self.available_now: list[FileEntry] | None = None
        #: Spark's unread-files cache: with ``maxFilesPerTrigger`` (and neither ``latestFirst``
        #: nor ``Trigger.AvailableNow``), the new files a listing found beyond a micro-batch's
        #: (at most ``maxCachedFiles``) serve the next micro-batches without listing again,
        #: until fewer than ``discardCachedInputRatio`` x ``maxFilesPerTrigger`` are left.
        self.unread: list[FileEntry] = []

    # -- offsets ----------------------------------------------------------------------------

    def initialOffset(self) -> dict[str, Any]:
        return {"batch": -1, "files": [], "purgedBefore": 0, "seen": {}}

    def getDefaultReadLimit(self) -> ReadLimit:
        if self.stream.max_files is not None:
            return ReadMaxFiles(self.stream.max_files)
        if self.stream.max_bytes is not None:
            return ReadMaxBytes(self.stream.max_bytes)
        return ReadAllAvailable()

    def prepareForTriggerAvailableNow(self) -> None:
        self.available_now = self._list()

    def _list(self) -> list[FileEntry]:
        return list_stream_files(
            self.root, self.decoder.options, self.settings, self.decoder.time_zone
        )

    def _key(self, path: str) -> str:
        return os.path.basename(path) if self.stream.file_name_only else path

    def latestOffset(self, start: dict[str, Any], limit: ReadLimit) -> dict[str, Any]:
        seen: dict[str, int] = dict(start["seen"])
        purged_before = int(start["purgedBefore"])
        if self.available_now is not None:
            files = self.available_now
        elif self.unread:
            files, self.unread = self.unread, []
        else:
            files = self._list()
        new = [
            f
            for f in files
            if f.modification_time_ms >= purged_before and self._key(f.path) not in seen
        ]
        # Spark's order: by modification time (newest first with latestFirst); the path breaks
        # ties so that every listing gives the same order.
        new.sort(key=lambda f: (f.modification_time_ms, f.path), reverse=self.stream.latest_first)
        batch = _take(new, limit)
        if (
            isinstance(limit, ReadMaxFiles)
            and not self.stream.latest_first
            and self.available_now is None
        ):
            rest = new[len(batch) :]
            if len(rest) >= limit.max_files * self.stream.discard_cached_input_ratio:
                self.unread = rest[: self.stream.max_cached_files]
        if not batch:
            return start
        for f in batch:
            seen[self._key(f.path)] = f.modification_time_ms
        keep_all = self.stream.latest_first and (
            self.stream.max_files is not None or self.stream.max_bytes is not None
        )
        if not keep_all:
            purged_before = max(seen.values()) - self.stream.max_file_age_ms
            seen = {k: t for k, t in seen.items() if t >= purged_before}
        return {
            "batch": int(start["batch"]) + 1,
            # Each file's partition values too: the columns a user schema names are filled
            # from them (Spark's file stream source fills those, and only those).
            # And its modification time, for includeMetadata's _metadata column.
            "files": [
                [f.path, f.size, [list(v) for v in f.partition_values], f.modification_time_ms]
                for f in batch
            ],
            "purgedBefore": purged_before,
            "seen": dict(sorted(seen.items())),
        }

    # -- reading ----------------------------------------------------------------------------

    def partitions(self, start: dict[str, Any], end: dict[str, Any]) -> Sequence[InputPartition]:
        if end["batch"] == start["batch"]:
            return []
        files = [(str(entry[0]), int(entry[1])) for entry in end["files"]]
        ranges = split_ranges(files, self.cores, self.decoder.split_bytes)
        splits: list[InputPartition] = []
        for entry, pieces in zip(end["files"], ranges, strict=True):
            values = tuple((str(k), str(v)) for k, v in entry[2]) if len(entry) > 2 else ()
            # Offsets written before the modification time was kept have none.
            mtime = int(entry[3]) if len(entry) > 3 else None
            splits.extend(
                self.make_split(entry[0], a, b, values, int(entry[1]), mtime) for a, b in pieces
            )
        return splits

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        return self.decoder.read(partition)

    def commit(self, end: dict[str, Any]) -> None:
        """Archives or deletes the committed micro-batch's files (``cleanSource``); best effort,
        as in Spark: a file that cannot be moved or removed stays and the query goes on."""
        if self.stream.clean_source == "off":
            return
        for entry in end["files"]:
            path = entry[0]
            try:
                fs, inner = resolve(path, self.settings)
                if self.stream.clean_source == "delete":
                    fs.delete_file(inner)
                    continue
                assert self.stream.archive_dir is not None
                archive_fs, archive = resolve(self.stream.archive_dir, self.settings)
                # Spark keeps the file's whole path under the archive folder.
                target = archive.rstrip("/") + "/" + inner.lstrip("/")
                archive_fs.create_dir(target.rsplit("/", 1)[0], recursive=True)
                fs.move(inner, target)
            except OSError:
                continue


class FailedStream(DataSourceStreamReader):
    """A stream that raises ``error`` at its first call: ``streamReader()`` returns it instead of
    raising, because pyspark 4.3's streaming source runner hides an error raised by
    ``streamReader()`` behind its own (``UnboundLocalError: ... 'reader'``, from ``reader.stop()``
    in a ``finally``); raised from the reader's methods, the error reaches the query as it is."""

    def __init__(self, error: Exception) -> None:
        self.error = error

    def _fail(self) -> NoReturn:
        with spark_shaped():
            raise self.error

    def initialOffset(self) -> NoReturn:
        self._fail()

    def latestOffset(self, start: dict[str, Any], limit: ReadLimit) -> NoReturn:
        self._fail()

    def getDefaultReadLimit(self) -> NoReturn:
        self._fail()

    def partitions(self, start: dict[str, Any], end: dict[str, Any]) -> NoReturn:
        self._fail()

    def read(self, partition: InputPartition) -> NoReturn:
        self._fail()

    def commit(self, end: dict[str, Any]) -> None:
        return None
