"""Layout 2 of a bucket's state (spark/_runtime/bucket_state.py) against a model, without Spark:
an in-memory state store that commits or throws away each micro-batch's writes as Spark's does,
Python workers that each keep their own cache and run whichever buckets they are given, and
attempts that fail after they wrote. Whatever the order, the state a call opens is the state
the committed micro-batches made, and a micro-batch writes bytes in proportion to the keys it
changed."""

from __future__ import annotations

import pickle
import struct

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sliceflow._runtime import state_log
from sliceflow._runtime.state_log import Head
from sliceflow.spark._runtime import bucket_state
from sliceflow.spark._runtime.bucket_state import LoggedState, WorkerCache

IDENTITY = [("keys", "BIGINT"), ("buckets", "2")]


class Store:
    """Spark's state store for one query: committed values, and the writes of the attempt in
    progress (committed or thrown away at its end)."""

    def __init__(self) -> None:
        self.committed: dict[tuple, object] = {}
        self.pending: dict[tuple, object] | None = None
        self.calls = 0

    def begin(self) -> None:
        self.pending = dict(self.committed)

    def end(self, commit: bool) -> None:
        assert self.pending is not None
        if commit:
            self.committed = self.pending
        self.pending = None

    @property
    def now(self) -> dict[tuple, object]:
        assert self.pending is not None
        return self.pending


class Handle:
    """The ``StatefulProcessorHandle`` calls a logged state makes, for one bucket's key."""

    def __init__(self, store: Store, bucket: int) -> None:
        self.store = store
        self.bucket = bucket

    def getValueState(self, name, schema):
        return Value(self, name)

    def getMapState(self, name, key_schema, value_schema):
        return Map(self, name)


class Value:
    def __init__(self, handle: Handle, name: str) -> None:
        self.h, self.name = handle, name

    def _key(self):
        return ("v", self.name, self.h.bucket)

    def exists(self):
        self.h.store.calls += 1
        return self._key() in self.h.store.now

    def get(self):
        self.h.store.calls += 1
        return self.h.store.now.get(self._key())

    def update(self, value):
        self.h.store.calls += 1
        self.h.store.now[self._key()] = value

    def clear(self):
        self.h.store.now.pop(self._key(), None)


class Map:
    def __init__(self, handle: Handle, name: str) -> None:
        self.h, self.name = handle, name

    def getValue(self, key):
        self.h.store.calls += 1
        return self.h.store.now.get(("m", self.name, self.h.bucket, key))

    def updateValue(self, key, value):
        self.h.store.calls += 1
        self.h.store.now[("m", self.name, self.h.bucket, key)] = value

    def clear(self):
        now = self.h.store.now
        for k in [k for k in now if k[:3] == ("m", self.name, self.h.bucket)]:
            del now[k]


class DictImage:
    """An image of a dict state: a base is the whole dict pickled, changes the changed keys
    (None: gone)."""

    def __init__(self) -> None:
        self.state: dict[int, int] = {}
        self.dirty: set[int] = set()

    def load_base(self, sections):
        self.state = pickle.loads(sections[0])

    def apply(self, sections):
        for k, v in pickle.loads(sections[0]).items():
            if v is None:
                self.state.pop(k, None)
            else:
                self.state[k] = v

    def changes(self):
        if not self.dirty:
            return None
        out = {k: self.state.get(k) for k in sorted(self.dirty)}
        self.dirty.clear()
        return [pickle.dumps(out)]

    def base(self):
        self.dirty.clear()
        return [pickle.dumps(dict(sorted(self.state.items())))]

    def empty(self):
        return not self.state

    def memory_usage(self):
        return 64 * len(self.state) + 64

    def set(self, k: int, v: int | None) -> None:
        if v is None:
            self.state.pop(k, None)
        else:
            self.state[k] = v
        self.dirty.add(k)


def logged(store: Store, bucket: int, cache_bytes: int = 1 << 30) -> LoggedState[DictImage]:
    return LoggedState(
        Handle(store, bucket),
        "s",
        operator="changelog_agg",
        identity=IDENTITY,
        new_image=DictImage,
        base_sections=1,
        change_sections=1,
        scope="query",
        cache_bytes=cache_bytes,
    )


@pytest.fixture(autouse=True)
def own_cache():
    """Each test swaps the worker caches it simulates in; the process's cache comes back."""
    saved = bucket_state._CACHE
    yield
    bucket_state._CACHE = saved


def run_call(store, bucket, writes, cache, commit=True, cache_bytes=1 << 30):
    """One call of ``bucket`` in the worker whose cache is ``cache``: opens, checks nothing,
    applies ``writes``; returns the state it opened and the call's counters."""
    bucket_state._CACHE = cache
    stats: dict[str, int] = {}
    store.begin()
    state = logged(store, bucket, cache_bytes)
    image = state.open(bucket, stats)
    opened = dict(image.state)
    for k, v in writes:
        image.set(k, v)
    state.commit(image, stats)
    store.end(commit)
    return opened, stats


micro_batches = st.lists(
    st.tuples(
        st.integers(0, 1),  # bucket
        st.integers(0, 2),  # worker
        st.lists(
            st.tuples(st.integers(0, 40), st.one_of(st.none(), st.integers(0, 9))), max_size=8
        ),
        st.booleans(),  # the attempt commits
        st.sampled_from([1 << 30, 300, 0]),  # cache budget
    ),
    max_size=40,
)


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(micro_batches)
def test_every_call_opens_the_committed_state(batches):
    store = Store()
    caches = [WorkerCache() for _ in range(3)]
    model: dict[int, dict[int, int]] = {0: {}, 1: {}}
    for bucket, worker, writes, commit, budget in batches:
        opened, _ = run_call(store, bucket, writes, caches[worker], commit, budget)
        assert opened == model[bucket]
        if commit:
            for k, v in writes:
                if v is None:
                    model[bucket].pop(k, None)
                else:
                    model[bucket][k] = v
    for bucket in (0, 1):
        for cache in caches:
            opened, _ = run_call(store, bucket, [], cache)
            assert opened == model[bucket]


def test_a_hit_reads_only_the_head_and_writes_the_changes():
    store = Store()
    cache = WorkerCache()
    run_call(store, 0, [(k, k) for k in range(5000)], cache)  # the base
    store.calls = 0
    opened, stats = run_call(store, 0, [(1, 7), (2, None)], cache)
    assert len(opened) == 5000
    assert stats["state_cache_hits"] == 1 and stats["state_log_appends"] == 1
    # Read: the head; written: one log entry and the head.
    assert stats["state_bytes_read"] < 400
    assert stats["state_bytes_written"] < 1000
    assert store.calls == 4  # head exists + get, entry update, head update
    # Another worker catches up from the base and the entry.
    other = WorkerCache()
    opened, stats = run_call(store, 0, [], other)
    assert opened[1] == 7 and 2 not in opened and stats["state_cold_reads"] == 1
    # Nothing changed: nothing written.
    _, stats = run_call(store, 0, [], other)
    assert stats["state_bytes_written"] == 0


def test_a_worker_behind_reads_only_the_entries_it_lacks():
    store = Store()
    a, b = WorkerCache(), WorkerCache()
    run_call(store, 0, [(k, k) for k in range(5000)], a)
    run_call(store, 0, [(1, 1)], b)  # b cold, writes entry 1
    run_call(store, 0, [(2, 2)], b)  # b hit, entry 2
    opened, stats = run_call(store, 0, [(3, 3)], a)  # a at the base: entries 1, 2
    assert stats["state_catch_ups"] == 1 and stats["state_log_entries_read"] == 2
    assert opened[1] == 1 and opened[2] == 2
    assert stats["state_bytes_read"] < 1500


def test_an_attempt_thrown_away_is_never_taken_for_the_store():
    store = Store()
    cache = WorkerCache()
    run_call(store, 0, [(1, 1)], cache)
    run_call(store, 0, [(1, 2)], cache, commit=False)  # the cache now holds 1 -> 2
    opened, stats = run_call(store, 0, [(5, 5)], cache)
    assert opened == {1: 1} and stats["state_cold_reads"] == 1
    # The same sequence number again, written by another attempt: still not taken.
    run_call(store, 0, [(1, 3)], cache, commit=False)
    opened, _ = run_call(store, 0, [], WorkerCache())
    assert opened == {1: 1, 5: 5}
    opened, _ = run_call(store, 0, [], cache)
    assert opened == {1: 1, 5: 5}


def test_the_log_is_folded_into_a_new_base():
    store = Store()
    cache = WorkerCache()
    run_call(store, 0, [(k, k) for k in range(20_000)], cache)
    compactions = 0
    for i in range(300):
        _, stats = run_call(store, 0, [(k, i) for k in range(i % 50, 20_000, 400)], cache)
        compactions += stats.get("state_compactions", 0)
    head = Head.decode(
        bucket_state.open_value(
            "changelog_agg", IDENTITY, store.committed[("v", "s_head", 0)][0], 1
        )[0]
    )
    assert head.log_entries <= state_log.MAX_LOG_ENTRIES
    assert head.log_bytes <= state_log.COMPACT_SHARE * head.base_bytes
    assert 1 <= compactions < 300 // 10
    entries = [k for k in store.committed if k[0] == "m"]
    assert len(entries) == head.log_entries


def test_an_emptied_bucket_leaves_nothing_in_the_store():
    store = Store()
    run_call(store, 0, [(1, 1), (2, 2)], WorkerCache())
    run_call(store, 0, [(3, 3)], WorkerCache())
    _, stats = run_call(store, 0, [(1, None), (2, None), (3, None)], WorkerCache())
    assert stats["state_clears"] == 1 and store.committed == {}


def test_a_layout_1_value_is_a_base():
    store = Store()
    store.committed[("v", "s", 0)] = (
        bucket_state.seal("changelog_agg", IDENTITY, [pickle.dumps({4: 4})]),
    )
    opened, _ = run_call(store, 0, [(5, 5)], WorkerCache())
    assert opened == {4: 4}
    opened, _ = run_call(store, 0, [], WorkerCache())
    assert opened == {4: 4, 5: 5}


def test_damaged_logs_are_refused_naming_the_bucket():
    store = Store()
    run_call(store, 1, [(1, 1)], WorkerCache())
    run_call(store, 1, [(2, 2)], WorkerCache())
    del store.committed[("m", "s_log", 1, (1,))]
    with pytest.raises(ValueError, match="bucket 1: log entry 1 is missing"):
        run_call(store, 1, [], WorkerCache())


@pytest.mark.parametrize(
    "data, message",
    [
        (b"", "0 bytes"),
        (struct.pack("<HHIQQQQQ", 3, 0, 0, 1, 0, 0, 0, 0), "layout 3"),
        (struct.pack("<HHIQQQQQ", 2, 0, 1, 1, 0, 0, 0, 0), "damaged"),
        (struct.pack("<HHIQQQQQ", 2, 0, 0, 0, 0, 0, 0, 0), "damaged"),
    ],
)
def test_a_damaged_head_is_refused(data, message):
    with pytest.raises(ValueError, match=message):
        Head.decode(data)


@given(st.binary(max_size=64))
def test_head_decode_never_crashes(data):
    try:
        Head.decode(data)
    except ValueError:
        pass
