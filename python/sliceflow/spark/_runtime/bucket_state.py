"""A bucket's state in Spark's state store, read and written in proportion to the keys a
micro-batch touches (layout 2, :mod:`sliceflow._runtime.state_log`; docs/state.md).

Per logged state of an operator, three state variables of ``transformWithStateInPandas``:

* ``<name>``: the base (a ``ValueState`` of one sealed value: the one layout 1 kept);
* ``<name>_log``: the log (a ``MapState`` from the entry's sequence number to a sealed value
  whose sections are the link and the changes);
* ``<name>_head``: the head (a ``ValueState``: a sealed 48-byte section).

A call opens the bucket's :class:`BucketImage` (the operator's decoded state, e.g. its kernel
with the bucket's keys loaded), runs the operator on it, and commits it. Between calls each
Python worker keeps the images of the buckets it ran, with the version they hold, in a cache
bounded in bytes (:data:`CACHE_CONF`). Opening reads the head (one small value) and then:

* **hit**: the cached image holds the head's version: nothing more is read;
* **catch-up**: it holds an earlier version of the head's log (the bucket ran in another worker
  since, or the worker missed micro-batches): it reads only the entries after it, one state
  call each, checking each entry's link against the version before it;
* **cold**: anything else (no image, a compaction since, an image of an attempt Spark threw
  away, a restart, a moved partition): it reads the base and every log entry.

Committing writes only what changed: nothing when no key changed; else one log entry (the
changes) and the head, or, when the log outgrows a share of the base, a new base, an empty log
and the head. The image is taken out of the cache while a call runs and put back only after
its commit, so a call that fails leaves nothing behind that could be mistaken for the store.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

from pyspark.sql import types as T

from sliceflow._runtime.state_format import Identity, open_value, seal
from sliceflow._runtime.state_log import (
    COMPACT_SHARE,
    Head,
    entry_link,
    new_token,
    parse_link,
    section_bytes,
    should_compact,
)

__all__ = [
    "CACHE_CONF",
    "DEFAULT_CACHE_BYTES",
    "LOG_SHARE_CONF",
    "BucketImage",
    "LoggedState",
    "WorkerCache",
]

#: The Spark conf that bounds the decoded bucket states one Python worker keeps between calls.
CACHE_CONF = "spark.sliceflow.state.cacheBytes"
#: Its default: 512 MiB per worker.
DEFAULT_CACHE_BYTES = 512 << 20
#: The Spark conf of the share of a bucket's base its log may reach before a micro-batch writes
#: a new base instead (default ``state_log.COMPACT_SHARE``; 0: every write is a new base).
LOG_SHARE_CONF = "spark.sliceflow.state.logShare"

#: The schema of every value a logged state keeps: one sealed value.
BLOB_SCHEMA = T.StructType([T.StructField("blob", T.BinaryType(), False)])
#: The log's key: the entry's sequence number.
SEQ_SCHEMA = T.StructType([T.StructField("seq", T.LongType(), False)])


class BucketImage(Protocol):
    """An operator's decoded state of one bucket, as a logged state keeps it."""

    def load_base(self, sections: list[bytes]) -> None:
        """Starts from a base's sections (the image is empty before)."""

    def apply(self, sections: list[bytes]) -> None:
        """Applies a log entry's changes (written by :meth:`changes` of the version before);
        the keys it sets stay clean."""

    def changes(self) -> list[bytes] | None:
        """The changes since the image was last loaded, applied to or dumped (sections of a log
        entry), marking them clean; None when nothing changed."""

    def base(self) -> list[bytes]:
        """The whole state (sections of a base), marking every key clean."""

    def empty(self) -> bool:
        """Whether no key has state (the bucket's state is then cleared)."""

    def memory_usage(self) -> int:
        """Bytes the image holds."""


ImageT = TypeVar("ImageT", bound=BucketImage)


@dataclass
class _Cached:
    token: int
    seq: int
    image: Any
    nbytes: int


class WorkerCache:
    """The images one Python worker keeps, least recently used first, within a byte budget."""

    def __init__(self) -> None:
        self.entries: OrderedDict[tuple[str, str, int], _Cached] = OrderedDict()
        self.nbytes = 0

    def take(self, key: tuple[str, str, int]) -> _Cached | None:
        entry = self.entries.pop(key, None)
        if entry is not None:
            self.nbytes -= entry.nbytes
        return entry

    def put(self, key: tuple[str, str, int], entry: _Cached, budget: int) -> None:
        if entry.nbytes > budget:
            return
        self.entries[key] = entry
        self.nbytes += entry.nbytes
        while self.nbytes > budget:
            _, evicted = self.entries.popitem(last=False)
            self.nbytes -= evicted.nbytes


_CACHE = WorkerCache()


class LoggedState(Generic[ImageT]):
    """One state of an operator (``name``) kept in layout 2, with this worker's cache.

    ``new_image()`` makes an empty image; ``scope`` tells one query's operator from another's
    in the worker's cache (a fresh id per operator instance built on the driver).
    """

    def __init__(
        self,
        handle: Any,
        name: str,
        *,
        operator: str,
        identity: Identity,
        new_image: Callable[[], ImageT],
        base_sections: int,
        change_sections: int,
        scope: str,
        cache_bytes: int,
        log_share: float = COMPACT_SHARE,
    ) -> None:
        self._base = handle.getValueState(name, BLOB_SCHEMA)
        self._head = handle.getValueState(name + "_head", BLOB_SCHEMA)
        self._log = handle.getMapState(name + "_log", SEQ_SCHEMA, BLOB_SCHEMA)
        self._name = name
        self._operator = operator
        self._identity = identity
        self._new_image = new_image
        self._base_sections = base_sections
        self._entry_sections = 1 + change_sections
        self._scope = scope
        self._cache_bytes = cache_bytes
        self._log_share = log_share
        # The call in progress: its bucket, the head it opened and its version.
        self._bucket = -1
        self._opened: Head | None = None

    # -- sealed values -------------------------------------------------------------------

    def _open(self, value: Any, sections: int, stats: dict[str, int]) -> list[bytes]:
        blob = bytes(value[0])
        stats["state_bytes_read"] += len(blob)
        return open_value(self._operator, self._identity, blob, sections)

    def _seal(self, sections: Sequence[bytes], stats: dict[str, int]) -> tuple[bytes]:
        blob = seal(self._operator, self._identity, sections)
        stats["state_bytes_written"] += len(blob)
        return (blob,)

    def _read(self, state: Any, sections: int, stats: dict[str, int]) -> list[bytes] | None:
        # exists() first: Spark's state server logs a warning for every get() of an empty value.
        if not state.exists():
            return None
        value = state.get()
        return None if value is None else self._open(value, sections, stats)

    # -- a call ----------------------------------------------------------------------------

    def open(self, bucket: int, stats: dict[str, int]) -> ImageT:
        """The bucket's image at its committed version (hit, catch-up or cold: module doc)."""
        self._bucket = bucket
        for counter in ("state_bytes_read", "state_bytes_written"):
            stats.setdefault(counter, 0)
        cached = _CACHE.take((self._scope, self._name, bucket))
        stored = self._read(self._head, 1, stats)
        head = None if stored is None else Head.decode(stored[0])
        self._opened = head
        if head is None:
            # No head: an empty bucket, or a layout-1 value (a base alone).
            image = self._new_image()
            base = self._read(self._base, self._base_sections, stats)
            if base is not None:
                image.load_base(base)
            _count(stats, "state_cold_reads")
            return image
        if cached is not None and cached.token == head.token and cached.seq == head.seq:
            _count(stats, "state_cache_hits")
            return cached.image  # type: ignore[no-any-return]
        if cached is not None and head.base_seq <= cached.seq < head.seq:
            caught_up = self._catch_up(cached, head, stats)
            if caught_up is not None:
                _count(stats, "state_catch_ups")
                return caught_up
        _count(stats, "state_cold_reads")
        return self._cold(head, stats)

    def _catch_up(self, cached: _Cached, head: Head, stats: dict[str, int]) -> ImageT | None:
        """The cached image brought to the head by the entries after it; None when they do not
        continue it (it holds a version Spark threw away)."""
        entries = self._log_after(cached.seq, cached.token, head, stats)
        if entries is None:
            return None
        image: ImageT = cached.image
        for changes in entries:
            image.apply(changes)
        return image

    def _cold(self, head: Head, stats: dict[str, int]) -> ImageT:
        image = self._new_image()
        base = self._read(self._base, self._base_sections, stats)
        if base is None:
            raise ValueError(
                f"{self._operator} state of bucket {self._bucket}: the head names a base "
                f"(log entry {head.base_seq}) that is missing (damaged checkpoint)"
            )
        image.load_base(base)
        entries = self._log_after(head.base_seq, None, head, stats)
        if entries is None:
            raise ValueError(
                f"{self._operator} state of bucket {self._bucket}: the log does not lead from "
                "its base to the head's version (damaged checkpoint)"
            )
        for changes in entries:
            image.apply(changes)
        return image

    def _log_after(
        self, seq: int, token: int | None, head: Head, stats: dict[str, int]
    ) -> list[list[bytes]] | None:
        """The changes of log entries ``seq + 1 .. head.seq``, read in order; None unless
        each continues the one before (the first, version ``token``: None when the base's
        version is not known) and the last makes the head's version."""
        entries = []
        for n in range(seq + 1, head.seq + 1):
            sections = self._entry(n, stats)
            parent, token_after = parse_link(sections[0])
            if token is not None and parent != token:
                return None
            entries.append(sections[1:])
            token = token_after
        if token is not None and token != head.token:
            return None
        stats["state_log_entries_read"] = stats.get("state_log_entries_read", 0) + len(entries)
        return entries

    def _entry(self, seq: int, stats: dict[str, int]) -> list[bytes]:
        value = self._log.getValue((seq,))
        if value is None:
            raise ValueError(
                f"{self._operator} state of bucket {self._bucket}: log entry {seq} is missing "
                "(damaged checkpoint)"
            )
        return self._open(value, self._entry_sections, stats)

    def commit(self, image: ImageT, stats: dict[str, int]) -> None:
        """Writes what the call changed (module doc) and keeps the image in the cache."""
        head = self._opened
        key = (self._scope, self._name, self._bucket)
        if image.empty():
            if head is not None or self._base.exists():
                self._base.clear()
                self._head.clear()
                self._log.clear()
                _count(stats, "state_clears")
            return
        changes = image.changes()
        if changes is None and head is not None:
            # Nothing changed: the stored version stands, and so does the image.
            self._keep(key, head.token, head.seq, image)
            return
        token = new_token()
        seq = 0 if head is None else head.seq + 1
        change_bytes = 0 if changes is None else section_bytes(changes)
        if should_compact(head, change_bytes, self._log_share):
            base = image.base()
            self._base.update(self._seal(base, stats))
            if head is not None and head.log_entries:
                self._log.clear()
            new_head = Head(token, seq, seq, section_bytes(base), 0, 0)
            _count(stats, "state_compactions")
        else:
            assert head is not None and changes is not None
            entry = self._seal([entry_link(head.token, token), *changes], stats)
            self._log.updateValue((seq,), entry)
            new_head = Head(
                token,
                seq,
                head.base_seq,
                head.base_bytes,
                head.log_bytes + change_bytes,
                head.log_entries + 1,
            )
            _count(stats, "state_log_appends")
        self._head.update(self._seal([new_head.encode()], stats))
        self._keep(key, token, seq, image)

    def _keep(self, key: tuple[str, str, int], token: int, seq: int, image: ImageT) -> None:
        _CACHE.put(key, _Cached(token, seq, image, image.memory_usage()), self._cache_bytes)


def _count(stats: dict[str, int], name: str) -> None:
    stats[name] = stats.get(name, 0) + 1
