// An operator's plan as Python's plans write it (sliceflow.window.plan, changelog_plan): named
// ints, bools and strings, and the list of aggregates. The bindings copy a Python dict into it
// and each operator's parser (window::parse_plan, changelog::parse_plan) reads it, so the
// field names, their defaults and their checks live in the core, where the fuzzers and C++
// tests fill the same fields and run the same parser. Cost: plan time only.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "agg/agg_fn.h"

namespace sliceflow::agg {

class PlanFields {
 public:
  // `who` names the plan in messages ("window plan").
  explicit PlanFields(std::string who) : who_(std::move(who)) {}

  void set_int(const std::string& key, int64_t v) { values_[key] = Value{Value::Int, v, {}}; }
  void set_bool(const std::string& key, bool v) {
    values_[key] = Value{Value::Bool, v ? 1 : 0, {}};
  }
  void set_string(const std::string& key, std::string v) {
    values_[key] = Value{Value::Str, 0, std::move(v)};
  }
  // The aggregates: each function's name and its argument's input column (-1: count(*)).
  using AggNames = std::vector<std::pair<std::string, int64_t>>;
  void set_aggs(AggNames aggs) {
    aggs_ = std::move(aggs);
    has_aggs_ = true;
  }

  // The field's value. Throws std::invalid_argument("<who>: missing '<key>'") when it is absent
  // and has no default, and when it has another kind or (int32) does not fit.
  int64_t int64(const char* key) const;
  int64_t int64(const char* key, int64_t fallback) const;
  int32_t int32(const char* key) const;
  bool boolean(const char* key) const;
  bool boolean(const char* key, bool fallback) const;
  const std::string& string(const char* key) const;
  // The aggregates, in order. Throws std::invalid_argument for an unknown function or an
  // argument column that does not fit an int.
  std::vector<AggPlan> aggs() const;

 private:
  struct Value {
    enum Kind { Int, Bool, Str } kind;
    int64_t i;
    std::string s;
  };
  const Value& get(const char* key, Value::Kind kind) const;
  [[noreturn]] void fail(const std::string& what) const;

  std::string who_;
  std::map<std::string, Value> values_;
  AggNames aggs_;
  bool has_aggs_ = false;
};

}  // namespace sliceflow::agg
