"""The changelogs the join tests share: one side of a join as a random changelog of rows,
inserts, updates and deletes of live rows, and a few retractions of rows never added."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any

Row = dict[str, Any]


def random_changelog(
    rng: random.Random,
    n: int,
    fresh: Callable[[], Row],
    key: Sequence[str],
    *,
    stray: float = 0.05,
) -> list[Row]:
    """``n`` steps over rows made by ``fresh()``: about 30 % take back a live row (half as a
    ``-D``, half as a ``-U``/``+U`` pair whose new row keeps the ``key`` columns), ``stray``
    retract a fresh row (most likely never added), the rest add one (op ``+I`` or null). Each
    row has its ``op``."""
    live: list[Row] = []
    out: list[Row] = []
    for _ in range(n):
        r = rng.random()
        if live and r < 0.3:
            old = live.pop(rng.randrange(len(live)))
            if rng.random() < 0.5:
                out.append({**old, "op": "-D"})
            else:
                new = {**fresh(), **{c: old[c] for c in key}}
                out += [{**old, "op": "-U"}, {**new, "op": "+U"}]
                live.append(new)
        elif r < 0.3 + stray:
            out.append({**fresh(), "op": "-D"})
        else:
            row = fresh()
            out.append({**row, "op": rng.choice(["+I", None])})
            live.append(row)
    return out
