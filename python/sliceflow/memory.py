"""Limits of the memory sliceflow keeps for reuse in this process.

Two process-wide caches keep freed memory for the next batch, which spares the kernel's
page faults and page clearing on every batch:

* ``buffer_cache`` -- byte buffers of 64 KiB and more that the kernels allocate: the Arrow
  output columns of ``sliceflow.json`` decodes, window and changelog results (kept once
  Arrow has released them), and the kernels' bundle buffers;
* ``huge_page_cache`` -- 2 MB-aligned blocks of the window local phase's bundle arrays.

Each keeps at most ``*_bytes`` bytes in at most ``*_blocks`` blocks; ``0`` in either keeps
nothing. The limits come from, latest first: :func:`set_limits` (and the Spark conf
``spark.sliceflow.memory.*``, applied in each Python worker before its first kernel call),
the environment variables read when ``sliceflow._core`` loads, and the defaults: 128 MiB each
in a process (:func:`default_limits`), 32 MiB each in a Spark Python worker that runs
sliceflow's Spark operators (:data:`SPARK_WORKER_DEFAULTS`). Sizes accept an int or Spark's
byte strings (``"64m"``, ``"1g"``).

The limits, each with its environment variable and Spark conf:

* ``buffer_cache_bytes``: ``SLICEFLOW_BUFFER_CACHE_BYTES``,
  ``spark.sliceflow.memory.bufferCacheBytes``
* ``buffer_cache_blocks``: ``SLICEFLOW_BUFFER_CACHE_BLOCKS``,
  ``spark.sliceflow.memory.bufferCacheBlocks``
* ``huge_page_cache_bytes``: ``SLICEFLOW_HUGE_PAGE_CACHE_BYTES``,
  ``spark.sliceflow.memory.hugePageCacheBytes``
* ``huge_page_cache_blocks``: ``SLICEFLOW_HUGE_PAGE_CACHE_BLOCKS``,
  ``spark.sliceflow.memory.hugePageCacheBlocks``

>>> import sliceflow.memory
>>> before = sliceflow.memory.limits()
>>> sliceflow.memory.set_limits(buffer_cache_bytes="16m")["buffer_cache_bytes"]
16777216
>>> freed = sliceflow.memory.release()  # what the caches held: depends on what ran before
>>> sliceflow.memory.cached_bytes()
{'buffer_cache': 0, 'huge_page_cache': 0}
>>> _ = sliceflow.memory.set_limits(**before)

docs/memory.md accounts for all the memory a Python worker holds, cache and otherwise.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from sliceflow._core import memory as _core

__all__ = [
    "LIMITS",
    "SPARK_WORKER_DEFAULTS",
    "apply",
    "cached_blocks",
    "cached_bytes",
    "default_limits",
    "limits",
    "parse_limit",
    "release",
    "set_limits",
]

#: Cache name -> the core's name for it.
_CACHES = {"buffer_cache": "buffers", "huge_page_cache": "huge_pages"}

#: The limits by name, each as (cache, "bytes" or "blocks", environment variable, Spark conf).
LIMITS: dict[str, tuple[str, str, str, str]] = {
    "buffer_cache_bytes": (
        "buffer_cache",
        "bytes",
        "SLICEFLOW_BUFFER_CACHE_BYTES",
        "spark.sliceflow.memory.bufferCacheBytes",
    ),
    "buffer_cache_blocks": (
        "buffer_cache",
        "blocks",
        "SLICEFLOW_BUFFER_CACHE_BLOCKS",
        "spark.sliceflow.memory.bufferCacheBlocks",
    ),
    "huge_page_cache_bytes": (
        "huge_page_cache",
        "bytes",
        "SLICEFLOW_HUGE_PAGE_CACHE_BYTES",
        "spark.sliceflow.memory.hugePageCacheBytes",
    ),
    "huge_page_cache_blocks": (
        "huge_page_cache",
        "blocks",
        "SLICEFLOW_HUGE_PAGE_CACHE_BLOCKS",
        "spark.sliceflow.memory.hugePageCacheBlocks",
    ),
}


#: The limits sliceflow's Spark operators give a Python worker before its first kernel call,
#: where neither the ``spark.sliceflow.memory.*`` conf nor the worker's environment sets them:
#: smaller than a process's defaults (:func:`default_limits`), since an executor runs one
#: worker per core and Spark's 10,000-row Arrow batches fit them several times over.
SPARK_WORKER_DEFAULTS: dict[str, int] = {
    "buffer_cache_bytes": 32 << 20,
    "buffer_cache_blocks": 64,
    "huge_page_cache_bytes": 32 << 20,
    "huge_page_cache_blocks": 16,
}


def parse_limit(name: str, value: int | str, source: str | None = None) -> int:
    """A limit's value in bytes (or blocks), from an int or a byte string like ``"64m"``.

    ``source`` names where the value came from in the error (default: ``name``).
    """
    if name not in LIMITS:
        raise ValueError(f"unknown memory limit {name!r}; the limits are {', '.join(LIMITS)}")
    what = source or name
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise TypeError(f"{what} takes an int or a string, not {type(value).__name__}")
    if isinstance(value, int):
        if value < 0:
            raise ValueError(f"{what} = {value}: must be >= 0 (0 keeps nothing)")
        value = str(value)
    if LIMITS[name][1] == "bytes":
        return int(_core.parse_byte_size(value, what))
    return int(_core.parse_count(value, what))


def _by_limit_name(read: Callable[[str], tuple[int, int]]) -> dict[str, int]:
    """``read(core cache name) -> (blocks, bytes)`` of every cache, by limit name."""
    out: dict[str, int] = {}
    for cache, core_name in _CACHES.items():
        blocks, size = read(core_name)
        out[f"{cache}_bytes"] = size
        out[f"{cache}_blocks"] = blocks
    return out


def limits() -> dict[str, int]:
    """The limits in force in this process, by name (bytes, and blocks)."""
    return _by_limit_name(_core.limits)


def default_limits() -> dict[str, int]:
    """The limits that hold when neither the environment nor a call sets them."""
    return _by_limit_name(_core.default_limits)


def set_limits(
    buffer_cache_bytes: int | str | None = None,
    buffer_cache_blocks: int | str | None = None,
    huge_page_cache_bytes: int | str | None = None,
    huge_page_cache_blocks: int | str | None = None,
) -> dict[str, int]:
    """Sets the limits given (``None`` leaves one as it is); returns the limits now in force.

    Sizes are ints or Spark byte strings (``"64m"``); ``0`` keeps nothing. Lowering a limit
    frees at once what the cache holds beyond it. Applies to this process only: in Spark, set
    the ``spark.sliceflow.memory.*`` conf instead, which reaches every Python worker.
    """
    given = {
        "buffer_cache_bytes": buffer_cache_bytes,
        "buffer_cache_blocks": buffer_cache_blocks,
        "huge_page_cache_bytes": huge_page_cache_bytes,
        "huge_page_cache_blocks": huge_page_cache_blocks,
    }
    apply({name: value for name, value in given.items() if value is not None})
    return limits()


def apply(values: Mapping[str, int | str], source: Mapping[str, str] | None = None) -> None:
    """Sets limits from a mapping of limit name to value; all are checked before any is set.

    ``source`` maps a limit name to where its value came from, for error messages.
    """
    parsed = {n: parse_limit(n, v, (source or {}).get(n)) for n, v in values.items()}
    current = limits()
    for cache, core_name in _CACHES.items():
        blocks = parsed.get(f"{cache}_blocks", current[f"{cache}_blocks"])
        size = parsed.get(f"{cache}_bytes", current[f"{cache}_bytes"])
        if f"{cache}_blocks" in parsed or f"{cache}_bytes" in parsed:
            _core.set_limits(core_name, blocks, size)


def cached_bytes() -> dict[str, int]:
    """What each cache holds now, in bytes."""
    return {cache: _core.held(core_name)[1] for cache, core_name in _CACHES.items()}


def cached_blocks() -> dict[str, int]:
    """What each cache holds now, in blocks."""
    return {cache: _core.held(core_name)[0] for cache, core_name in _CACHES.items()}


def release() -> int:
    """Frees what the caches hold now (their limits stay); returns the bytes freed."""
    return sum(int(_core.release(core_name)) for core_name in _CACHES.values())
