#include "agg/agg_fn.h"

#include <stdexcept>

namespace sliceflow::agg {

AggFn agg_fn_from_name(const std::string& name) {
  if (name == "count") return AggFn::Count;
  if (name == "sum") return AggFn::Sum;
  if (name == "avg") return AggFn::Avg;
  if (name == "min") return AggFn::Min;
  if (name == "max") return AggFn::Max;
  if (name == "count_distinct") return AggFn::CountDistinct;
  if (name == "first_value") return AggFn::FirstValue;
  if (name == "last_value") return AggFn::LastValue;
  throw std::invalid_argument("unknown aggregate function '" + name + "'");
}

const char* agg_fn_name(AggFn fn) {
  switch (fn) {
    case AggFn::Count:
      return "count";
    case AggFn::Sum:
      return "sum";
    case AggFn::Avg:
      return "avg";
    case AggFn::Min:
      return "min";
    case AggFn::Max:
      return "max";
    case AggFn::CountDistinct:
      return "count_distinct";
    case AggFn::FirstValue:
      return "first_value";
    case AggFn::LastValue:
      return "last_value";
  }
  return "?";
}

}  // namespace sliceflow::agg
