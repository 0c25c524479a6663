#include "agg/plan_fields.h"

#include <limits>
#include <stdexcept>

namespace sliceflow::agg {

void PlanFields::fail(const std::string& what) const {
  throw std::invalid_argument(who_ + ": " + what);
}

const PlanFields::Value& PlanFields::get(const char* key, Value::Kind kind) const {
  const auto it = values_.find(key);
  if (it == values_.end()) fail(std::string("missing '") + key + "'");
  if (it->second.kind != kind) {
    static const char* const kNames[] = {"an int", "a bool", "a string"};
    fail(std::string("'") + key + "' must be " + kNames[kind]);
  }
  return it->second;
}

int64_t PlanFields::int64(const char* key) const { return get(key, Value::Int).i; }

int64_t PlanFields::int64(const char* key, int64_t fallback) const {
  return values_.count(key) != 0 ? int64(key) : fallback;
}

int32_t PlanFields::int32(const char* key) const {
  const int64_t v = int64(key);
  if (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max()) {
    fail(std::string("'") + key + "' does not fit an int: " + std::to_string(v));
  }
  return static_cast<int32_t>(v);
}

bool PlanFields::boolean(const char* key) const { return get(key, Value::Bool).i != 0; }

bool PlanFields::boolean(const char* key, bool fallback) const {
  return values_.count(key) != 0 ? boolean(key) : fallback;
}

const std::string& PlanFields::string(const char* key) const { return get(key, Value::Str).s; }

std::vector<AggPlan> PlanFields::aggs() const {
  if (!has_aggs_) fail("missing 'aggs'");
  std::vector<AggPlan> out;
  for (const auto& [fn, arg] : aggs_) {
    if (arg < -1 || arg > std::numeric_limits<int32_t>::max()) {
      fail("aggregate argument column " + std::to_string(arg) + " out of range");
    }
    out.push_back({agg_fn_from_name(fn), static_cast<int>(arg)});
  }
  return out;
}

}  // namespace sliceflow::agg
