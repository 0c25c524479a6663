"""Layout 2 of a bucket's state: a base value, a log of changes and a head (docs/state.md).

Layout 1 kept a bucket's whole state in one value, read and written whole in every micro-batch
that touched the bucket: with keys touched at random every bucket is touched, so every
micro-batch read and wrote the whole state. Layout 2 keeps, per bucket and state:

* the **base**: the state as of log entry ``base_seq``, a sealed value of the operator's full
  payload (the same value layout 1 kept, so a layout-1 value is a base without a head);
* the **log**: one entry per micro-batch that changed the bucket since the base, keyed by its
  sequence number ``base_seq + 1 .. seq``; an entry holds the *changes* of that micro-batch
  (each changed key with its new state, or gone) and links the version it was written on to
  the version it makes (``parent`` and ``token``);
* the **head**: a small value naming the current version (a random ``token`` per write, so a
  version written by an attempt Spark threw away never matches the committed one), ``seq``,
  ``base_seq`` and the byte sizes that decide the next compaction.

A micro-batch writes its changes as one log entry and the head; when the log outgrows a share
of the base (:func:`should_compact`), it writes a new base instead and clears the log. So the
bytes written per micro-batch follow the keys it changed, and the base is rewritten once per
many micro-batches. Reads follow the same keys only through a worker's cache of decoded
buckets (``sliceflow.spark._runtime.bucket_state``), validated by the head's token.

This module holds what is layout alone (the head's and an entry's bytes, the compaction rule);
every value is sealed with the operator's plan identity (:mod:`~sliceflow._runtime.state_format`).

>>> head = Head(token=7, seq=3, base_seq=1, base_bytes=10**6, log_bytes=120_000, log_entries=2)
>>> Head.decode(head.encode()) == head
True
>>> should_compact(head, 100_000), should_compact(head, 400_000)
(False, True)
"""

from __future__ import annotations

import secrets
import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

import pyarrow as pa

__all__ = [
    "COMPACT_SHARE",
    "LAYOUT_VERSION",
    "MAX_LOG_ENTRIES",
    "MIN_COMPACT_BYTES",
    "Head",
    "entry_link",
    "new_token",
    "parse_link",
    "read_entry",
    "section_bytes",
    "should_compact",
]

T = TypeVar("T")

#: The layout a head names (layout 1: one whole value per bucket, no head).
LAYOUT_VERSION = 2
#: A bucket's log is folded into a new base once its bytes would pass this share of the base's
#: (the default of ``spark.sliceflow.state.logShare``): a cold read is then at most 1.5 x the
#: base, and each micro-batch's changes are written about three times in all (the entry, then
#: their share of the next base).
COMPACT_SHARE = 0.5
#: ... or once it would hold more entries than this (a cold read reads every entry, one state
#: call each).
MAX_LOG_ENTRIES = 64
#: A log smaller than this is never worth a compaction (a bucket with a small base).
MIN_COMPACT_BYTES = 64 << 10

_HEAD = struct.Struct("<HHIQQQQQ")  # layout, reserved, entries, token, seq, base_seq, sizes
_LINK = struct.Struct("<QQ")  # parent token, token


def new_token() -> int:
    """A random, nonzero 64-bit version token."""
    return secrets.randbits(64) | 1


@dataclass(frozen=True)
class Head:
    """What a bucket's head value says of its current version."""

    #: The current version's token (random per write).
    token: int
    #: The number of the last log entry (0: none ever).
    seq: int
    #: The log entry the base includes: the log holds ``base_seq + 1 .. seq``.
    base_seq: int
    #: The base payload's bytes.
    base_bytes: int
    #: The log entries' payload bytes.
    log_bytes: int
    #: ``seq - base_seq``.
    log_entries: int

    def encode(self) -> bytes:
        """The head's payload section (little-endian, 48 bytes)."""
        return _HEAD.pack(
            LAYOUT_VERSION,
            0,
            self.log_entries,
            self.token,
            self.seq,
            self.base_seq,
            self.base_bytes,
            self.log_bytes,
        )

    @classmethod
    def decode(cls, data: bytes) -> Head:
        """The head a section holds; ``ValueError`` naming what is wrong otherwise."""
        if len(data) != _HEAD.size:
            raise ValueError(f"state head: {len(data)} bytes, not {_HEAD.size}")
        layout, _, entries, token, seq, base_seq, base_bytes, log_bytes = _HEAD.unpack(data)
        if layout != LAYOUT_VERSION:
            raise ValueError(
                f"state head: layout {layout}, which this release does not read (it reads "
                f"layout {LAYOUT_VERSION}); restart the query from a new checkpoint"
            )
        if base_seq > seq or entries != seq - base_seq or token == 0:
            raise ValueError("state head: damaged (its sequence numbers disagree)")
        return cls(token, seq, base_seq, base_bytes, log_bytes, entries)


def entry_link(parent: int, token: int) -> bytes:
    """A log entry's first section: the version it was written on and the one it makes."""
    return _LINK.pack(parent, token)


def parse_link(section: bytes) -> tuple[int, int]:
    """``(parent, token)`` of a log entry's first section; ``ValueError`` if damaged."""
    if len(section) != _LINK.size:
        raise ValueError(f"state log entry: a link of {len(section)} bytes, not {_LINK.size}")
    parent, token = _LINK.unpack(section)
    return int(parent), int(token)


def should_compact(head: Head | None, change_bytes: int, share: float = COMPACT_SHARE) -> bool:
    """Whether a micro-batch whose changes take ``change_bytes`` writes a new base rather than
    a log entry: always without a head (a bucket's first write, or a layout-1 value) or with
    ``share`` 0, else when the log would pass ``share`` of the base (and
    :data:`MIN_COMPACT_BYTES`) or :data:`MAX_LOG_ENTRIES` entries."""
    if head is None or share <= 0:
        return True
    log = head.log_bytes + change_bytes
    if head.log_entries + 1 > MAX_LOG_ENTRIES:
        return True
    return log > MIN_COMPACT_BYTES and log > share * head.base_bytes


def section_bytes(sections: Sequence[bytes]) -> int:
    """The payload bytes of a value's sections."""
    return sum(len(s) for s in sections)


def read_entry(what: str, read: Callable[[], T]) -> T:
    """``read()`` (the decoding of a log entry's section, e.g. an Arrow IPC stream), with any
    error of a damaged section (pyarrow raises ``ArrowInvalid`` or ``OSError``) as a
    ``ValueError`` that names ``what`` and says the checkpoint is damaged.

    >>> read_entry("topn state log entry", lambda: pa.ipc.open_stream(b"junk").read_all())
    Traceback (most recent call last):
    ...
    ValueError: topn state log entry: damaged (damaged checkpoint): ...
    """
    try:
        return read()
    except (pa.ArrowException, OSError, ValueError, EOFError) as error:
        raise ValueError(f"{what}: damaged (damaged checkpoint): {error}") from error
