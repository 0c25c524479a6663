"""Timing helpers of the benchmarks: interleaved rounds (every contender once per round, so a
noisy neighbour slows all of them alike), round-by-round ratios, and pinning this process to
one CPU. bench_json.py re-exports them for the other benchmarks."""

from __future__ import annotations

import gc
import os
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any


def interleaved(
    jobs: list[tuple[str, Callable[[], Any]]], repeats: int, warmups: int = 1
) -> dict[str, list[float]]:
    """Runs every job once per round, ``warmups`` untimed rounds first; seconds per job."""
    times: dict[str, list[float]] = {label: [] for label, _ in jobs}
    for round_ in range(warmups + repeats):
        for label, job in jobs:
            gc.collect()
            start = time.perf_counter()
            result = job()
            elapsed = time.perf_counter() - start
            del result
            if round_ >= warmups:
                times[label].append(elapsed)
        print(
            f"  round {round_ + 1}/{warmups + repeats}"
            + (" (warm-up)" if round_ < warmups else "")
            + ": "
            + ", ".join(f"{label} {times_or(times, label, round_, warmups)}" for label, _ in jobs),
            file=sys.stderr,
            flush=True,
        )
    return times


def times_or(times: dict[str, list[float]], label: str, round_: int, warmups: int) -> str:
    return f"{times[label][-1]:.3f}s" if round_ >= warmups else "done"


def ratio(base: float, other: float) -> str:
    return f"{base / other:.2f}x"


def paired(times: dict[str, list[float]], base: str, label: str) -> str:
    """The ratio base/label round by round (same round = same background load): median, range."""
    ratios = [b / t for b, t in zip(times[base], times[label], strict=True)]
    return f"{statistics.median(ratios):.2f}x ({min(ratios):.2f}-{max(ratios):.2f})"


def spread(samples: list[float]) -> str:
    return f"{min(samples):.3f}-{max(samples):.3f}"


def pin_to_one_cpu(cpu: int) -> dict[int, set[int]]:
    """Pins every thread of this process to ``cpu``; returns the old masks to restore."""
    old: dict[int, set[int]] = {}
    for name in os.listdir("/proc/self/task"):
        tid = int(name)
        try:
            old[tid] = os.sched_getaffinity(tid)
            os.sched_setaffinity(tid, {cpu})
        except OSError:  # a thread that ended meanwhile
            pass
    os.sched_setaffinity(0, {cpu})
    return old


def unpin(old: dict[int, set[int]]) -> None:
    main = old.get(os.getpid()) or set(range(os.cpu_count() or 1))
    for tid, mask in old.items():
        try:
            os.sched_setaffinity(tid, mask)
        except OSError:
            pass
    os.sched_setaffinity(0, main)


@contextmanager
def one_core(cpu: int) -> Iterator[None]:
    """The block runs with this process pinned to ``cpu`` and pyarrow's CPU and I/O pools at
    one thread; the masks and pool sizes are restored after it."""
    import pyarrow as pa

    old_mask = pin_to_one_cpu(cpu)
    old_cpu_count = pa.cpu_count()
    old_io_count = pa.io_thread_count()
    pa.set_cpu_count(1)
    pa.set_io_thread_count(1)
    try:
        yield
    finally:
        pa.set_cpu_count(old_cpu_count)
        pa.set_io_thread_count(old_io_count)
        unpin(old_mask)
