// What an aggregate keeps between an operator's phases, and what it gives: the state (partial)
// columns of each aggregate function for its argument's type, and Spark's result type. Every
// operator derives its schemas here (window: window::partial_schema; changelog:
// changelog::delta_schema), Python asks the core for them through the bindings, the kernels
// check the schemas they are given against them, and the fuzzers build theirs with them: one
// rule, one place (docs/window-kernel.md "Partial schema", docs/changelog-kernel.md "Delta
// schema").
// Invariants: argument types are the types the kernels read (Arrow "carried" types: a
// large_string column arrives as string), nullptr for count(*); aggregate i's state columns are
// named __a<i>_<role>. Cost: plan time only (a few small allocations per aggregate).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "agg/agg_fn.h"
#include "arrow/type.h"

namespace sliceflow::agg {

// The state an operator keeps per aggregate.
enum class StateForm : uint8_t {
  // Sliced windows: the partial of one (key, slice), merged with other slices' partials.
  // count_distinct keeps its distinct values and their multiplicities, first_value and
  // last_value their value's event time.
  SlicePartial,
  // Changelog: the signed contribution of one row, or of one key's rows folded before the
  // shuffle. min, max, first_value, last_value and count_distinct carry the value alone.
  Delta,
};

// An argument type an aggregate function does not take (Python: TypeError). The message is the
// rule, e.g. "sum takes a numeric column (TINYINT … BIGINT, FLOAT, DOUBLE, DECIMAL)".
class UnsupportedArgument : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// The message of UnsupportedArgument for `fn`.
std::string unsupported_argument_message(AggFn fn);

// How many state columns `fn` writes in `form`.
int state_columns(StateForm form, AggFn fn);

// Appends aggregate `index`'s state columns for an argument of type `arg` (nullptr: count(*))
// to `out`. Throws UnsupportedArgument for an argument type `fn` does not take.
void append_state_columns(StateForm form, size_t index, AggFn fn, const arrow::Type* arg,
                          std::vector<std::unique_ptr<arrow::Type>>& out);

// Spark's result type of `fn` over an argument of type `arg` (nullptr: count(*)), named `name`;
// nullable unless the function counts. Throws UnsupportedArgument as above.
std::unique_ptr<arrow::Type> result_type(AggFn fn, const arrow::Type* arg,
                                         const std::string& name = "");

// The argument type that an aggregate's first state column and result type imply: what a phase
// that never sees the input (the window sweep, the changelog aggregator) checks its schemas
// with, by deriving them again from it. nullptr for count (its state and result do not depend
// on the argument). For a type no rule gives, some type whose derived columns differ.
std::unique_ptr<arrow::Type> implied_argument(StateForm form, AggFn fn,
                                              const arrow::Type& first_state,
                                              const arrow::Type& result);

// How an operator lays out its state schema: its own leading columns (not null), then each
// aggregate's state columns in `form`; `kernel` and `what` name it in messages ("window
// kernel", "partial").
struct StateLayout {
  StateForm form;
  const char* kernel;
  const char* what;
  std::vector<std::pair<const char*, arrow::Kind>> prefix;
};

// An operator's state schema: `layout`'s leading columns, then each aggregate's state columns
// for its argument's type (`args[a]`; nullptr: count(*)). Throws std::invalid_argument("<kernel>:
// aggregate <a>: <rule>") for an argument type its function does not take.
std::unique_ptr<arrow::Type> state_schema(const StateLayout& layout,
                                          const std::vector<AggPlan>& aggs,
                                          const std::vector<const arrow::Type*>& args);

// Throws std::invalid_argument("<kernel>: the <what> schema does not match the plan: ...")
// unless `given` is state_schema(layout, aggs, args).
void check_state_schema(const StateLayout& layout, const std::vector<AggPlan>& aggs,
                        const std::vector<const arrow::Type*>& args, const arrow::Type& given);

// The argument types of `aggs` in an operator's input `input`: input.children[arg], nullptr for
// count(*). Throws std::invalid_argument unless `input` is a struct of columns that holds every
// argument column.
std::vector<const arrow::Type*> argument_types(const std::vector<AggPlan>& aggs,
                                               const arrow::Type& input);

// For a phase that sees no input: the argument types that `state`'s columns (aggregate 0's
// first at `first_state`) and `output`'s result columns (from `first_result`) imply, aggregate
// by aggregate (implied_argument). Both must have the columns the plan asks for.
std::vector<std::unique_ptr<arrow::Type>> implied_arguments(
    StateForm form, const std::vector<AggPlan>& aggs, const arrow::Type& state, size_t first_state,
    const arrow::Type& output, size_t first_result);

// How `output`'s result columns (from `first_result`) differ from the aggregates' result types
// over `args` (types only: the names are the user's); empty when they match.
std::string result_difference(const std::vector<AggPlan>& aggs,
                              const std::vector<const arrow::Type*>& args,
                              const arrow::Type& output, size_t first_result);

// The check of a phase that never sees the input (the window sweep, the changelog aggregator):
// `state` must be state_schema(layout, aggs, args) and `output`'s result columns (from
// `first_result`) the result types over args, for the argument types `args` the two imply.
// Throws std::invalid_argument("<kernel>: the <what> schema does not match the plan: ..." or
// "<kernel>: the output schema does not match the plan: ...") naming what differs.
void check_implied_schemas(const StateLayout& layout, const std::vector<AggPlan>& aggs,
                           const arrow::Type& state, const arrow::Type& output,
                           size_t first_result);

// Where one aggregate's columns are in an operator's state and output schemas.
struct AggColumns {
  AggPlan plan;
  int column = 0;                       // its first state column
  const arrow::Type* state = nullptr;   // that column's type
  const arrow::Type* result = nullptr;  // its output column's type
  std::string name;                     // its output column's name, for messages
  bool ansi = true;                     // ANSI mode: an overflowing result is an error
};

// The columns of every aggregate: aggregate 0's first state column is `first_state` of `state`,
// its output column `first_result` of `output` (both checked against the plan already).
std::vector<AggColumns> agg_columns(StateForm form, const std::vector<AggPlan>& aggs,
                                    const arrow::Type& state, size_t first_state,
                                    const arrow::Type& output, size_t first_result, bool ansi);

// The raw pointers of `types` (an argument list for the functions above).
std::vector<const arrow::Type*> pointers(const std::vector<std::unique_ptr<arrow::Type>>& types);

// A struct type of the given fields (an operator's schema).
std::unique_ptr<arrow::Type> struct_of(std::vector<std::unique_ptr<arrow::Type>> fields);
// A column (or field) of `kind`.
std::unique_ptr<arrow::Type> column_type(const std::string& name, arrow::Kind kind,
                                         bool nullable = true);
std::unique_ptr<arrow::Type> decimal_type(const std::string& name, int precision, int scale,
                                          bool nullable = true);
std::unique_ptr<arrow::Type> clone_type(const arrow::Type& t);

// Equal as types: kind, precision, scale, time zone and children; with `fields`, also the
// names and nullability of the children (what a state schema must match exactly).
bool same_type(const arrow::Type& a, const arrow::Type& b, bool fields);
// The type as pyarrow prints it ("decimal128(38, 2)", "list<element: string>"), for messages.
std::string type_text(const arrow::Type& t);

// How `given` (a schema: a struct) differs from `expected`: the first column whose name, type or
// nullability differs, or the column counts; empty when it has exactly `expected`'s fields.
std::string schema_difference(const arrow::Type& expected, const arrow::Type& given);

}  // namespace sliceflow::agg
