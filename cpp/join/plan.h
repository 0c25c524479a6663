// The plan of a regular join of two changelogs (Flink SQL's streaming equi-join): how many key
// columns, how many further columns each side's rows have (the identity a retraction is matched
// on), which sides retract, the join type and the bundle settings. Written by
// sliceflow.join.plan as a dict, parsed here (agg::PlanFields), so that the bindings, the C++
// tests and the fuzzer run the same checks. Cost: plan time only.
#pragma once

#include <cstdint>

#include "agg/plan_fields.h"

namespace sliceflow::join {

enum class How : uint8_t { Inner, Left, Right, Full };

// The two inputs of a join.
enum Side : int { kLeft = 0, kRight = 1 };

struct Plan {
  // Kernel columns of one side, in this order: the key columns [0, num_keys), then the side's
  // other columns (its identity: a retraction takes back a live row equal on the key and on
  // these), then, in the new rows' batch of a retracting side only, the op codes (int8, the
  // codes of changes/change_kind.h).
  int32_t num_keys = 0;
  int32_t identity[2] = {0, 0};
  bool retracting[2] = {false, false};
  How how = How::Inner;
  bool mini_batch = true;
  int64_t bundle_rows = 5000;

  // Whether a side's rows are emitted null-padded while nothing matches them.
  bool outer(int side) const {
    return side == kLeft ? (how == How::Left || how == How::Full)
                         : (how == How::Right || how == How::Full);
  }
  int32_t state_columns(int side) const { return num_keys + identity[side]; }
  int32_t input_columns(int side) const { return state_columns(side) + (retracting[side] ? 1 : 0); }

  // Throws std::invalid_argument naming the field at fault.
  void validate() const;
};

// Reads and validates the plan fields (num_keys, left_identity, right_identity,
// left_retracting, right_retracting, how: "inner" | "left" | "right" | "full", mini_batch,
// bundle_rows).
Plan parse_plan(const agg::PlanFields& fields);

}  // namespace sliceflow::join
