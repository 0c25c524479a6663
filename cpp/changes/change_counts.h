// The counters of emitted changes, one per change kind, with one name each ("inserts",
// "update_befores", "update_afters", "deletes"): the struct every kernel that emits changes
// (changelog aggregator, deduplicate, Top-N) keeps, so that the counters mean and are called
// the same in every kernel's stats(). Invariant: each counter is the number of rows emitted
// with that kind since the last reset. Cost: O(1) per change.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "changes/change_kind.h"

namespace sliceflow::changes {

struct ChangeCounts {
  int64_t inserts = 0;         // +I
  int64_t update_befores = 0;  // -U
  int64_t update_afters = 0;   // +U
  int64_t deletes = 0;         // -D

  void count(ChangeKind kind) {
    switch (kind) {
      case ChangeKind::Insert:
        ++inserts;
        break;
      case ChangeKind::UpdateBefore:
        ++update_befores;
        break;
      case ChangeKind::UpdateAfter:
        ++update_afters;
        break;
      case ChangeKind::Delete:
        ++deletes;
        break;
    }
  }

  // Appends the counters by name, as the bindings' stats() dicts show them.
  void append_named(std::vector<std::pair<const char*, int64_t>>& out) const {
    out.emplace_back("inserts", inserts);
    out.emplace_back("update_befores", update_befores);
    out.emplace_back("update_afters", update_afters);
    out.emplace_back("deletes", deletes);
  }
};

}  // namespace sliceflow::changes
