"""Nexmark bid events as NDJSON (the benchmark stream of Flink and Spark streaming papers)."""

from __future__ import annotations

import os
import random
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone

#: The bid schema as Spark DDL.
BID_DDL = (
    "auction BIGINT, bidder BIGINT, price BIGINT, channel STRING, url STRING, "
    "dateTime TIMESTAMP, extra STRING"
)

_CHANNELS = ("Google", "Facebook", "Baidu", "Apple")
_EPOCH = datetime(2026, 11, 23, tzinfo=timezone.utc)


def bid_lines(
    n: int,
    *,
    seed: int = 42,
    auctions: int = 1000,
    start: datetime = _EPOCH,
    events_per_second: int = 1000,
) -> Iterator[str]:
    """Yields ``n`` bid documents, one JSON object per string, in event-time order.

    >>> next(bid_lines(1))[:30]
    '{"auction":1654,"bidder":24592'
    """
    rng = random.Random(seed)
    step = timedelta(microseconds=1_000_000 // events_per_second)
    t = start
    for i in range(n):
        auction = 1000 + rng.randrange(auctions)
        bidder = 10000 + rng.randrange(100_000)
        price = rng.randrange(100, 10_000_000)
        channel = _CHANNELS[i & 3]
        stamp = t.strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]
        extra = "x" * (i % 17)
        yield (
            f'{{"auction":{auction},"bidder":{bidder},"price":{price},"channel":"{channel}",'
            f'"url":"https://www.nexmark.com/{channel.lower()}/item.htm'
            f'?query=1&channel_id={i % 9973}",'
            f'"dateTime":"{stamp}","extra":"{extra}"}}'
        )
        t += step


def write_bids(
    path: str | os.PathLike[str],
    n: int,
    *,
    seed: int = 42,
    files: int = 1,
    events_per_second: int = 1000,
) -> list[str]:
    """Writes ``n`` bids as NDJSON into ``files`` files under the folder ``path``, in
    event-time order, ``events_per_second`` bids per second of event time from 2026-11-23
    00:00 UTC (:func:`bid_lines`)."""
    os.makedirs(path, exist_ok=True)
    lines = bid_lines(n, seed=seed, events_per_second=events_per_second)
    written = []
    per_file = -(-n // files)
    for k in range(files):
        name = os.path.join(path, f"bids-{k:04d}.json")
        with open(name, "w", encoding="utf-8") as f:
            for _ in range(min(per_file, n - k * per_file)):
                f.write(next(lines))
                f.write("\n")
        written.append(name)
    return written
