// The sliceflow._core module: makes one submodule per feature and hands it to its
// register_*.cpp; nothing else.
#include <pybind11/pybind11.h>

#include "bindings/register.h"

PYBIND11_MODULE(_core, m) {
  m.doc() = "sliceflow's C++ kernels";
  auto json =
      m.def_submodule("json", "simdjson -> Arrow decoding with Spark's from_json semantics");
  sliceflow::bindings::register_json(json);
  sliceflow::bindings::register_json_infer(json);
  auto agg = m.def_submodule("agg", "The aggregates every operator shares: Spark's result types");
  sliceflow::bindings::register_agg(agg);
  auto window = m.def_submodule(
      "window", "Sliced window aggregation: local (bundle) and global (sweep) phases");
  sliceflow::bindings::register_window(window);
  auto changes = m.def_submodule(
      "changes", "Change kinds (+I/-U/+U/-D): the error for an op value that is not one");
  sliceflow::bindings::register_changes(changes);
  auto changelog = m.def_submodule(
      "changelog", "Changelog group aggregation: encoder (local) and aggregator (global) phases");
  sliceflow::bindings::register_changelog(changelog);
  auto memory = m.def_submodule("memory", "Limits of the process-wide caches of freed memory");
  sliceflow::bindings::register_memory(memory);
  auto state =
      m.def_submodule("state", "The versioned state format of streaming operators (docs/state.md)");
  sliceflow::bindings::register_state(state);
  auto dedup = m.def_submodule(
      "dedup", "Deduplication (ROW_NUMBER() = 1 per key): changes and retained rows");
  sliceflow::bindings::register_dedup(dedup);
  auto topn = m.def_submodule("topn", "Top-N per key: sort keys and ranks over whole batches");
  sliceflow::bindings::register_topn(topn);
  auto hash = m.def_submodule("hash", "Spark's hash() (Murmur3, seed 42) of rows: its buckets");
  sliceflow::bindings::register_hash(hash);
  auto join = m.def_submodule(
      "join", "The regular join of two changelogs: changes and each side's live rows");
  sliceflow::bindings::register_join(join);
}
