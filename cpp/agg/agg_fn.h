// The aggregate functions every operator computes (window, changelog and the operators after
// them), by id: the plan of an aggregate is its function and the operator input column of its
// argument. Names are the ones Python's plans write ("count", "sum", ...). Cost: none (ids and a
// name lookup at plan time).
#pragma once

#include <cstdint>
#include <string>

namespace sliceflow::agg {

enum class AggFn : uint8_t { Count, Sum, Avg, Min, Max, CountDistinct, FirstValue, LastValue };

struct AggPlan {
  AggFn fn = AggFn::Count;
  int arg = -1;  // the operator's input column of the argument; -1: count(*)
};

// Throws std::invalid_argument("unknown aggregate function '<name>'").
AggFn agg_fn_from_name(const std::string& name);
const char* agg_fn_name(AggFn fn);

}  // namespace sliceflow::agg
