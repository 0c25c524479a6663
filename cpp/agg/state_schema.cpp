#include "agg/state_schema.h"

#include <algorithm>
#include <utility>

namespace sliceflow::agg {
namespace {

using arrow::Kind;
using arrow::Type;

bool is_signed_int(const Type& t) {
  return t.kind == Kind::Int8 || t.kind == Kind::Int16 || t.kind == Kind::Int32 ||
         t.kind == Kind::Int64;
}

bool is_float(const Type& t) { return t.kind == Kind::Float32 || t.kind == Kind::Float64; }

// Types min/max/first_value/last_value/count_distinct take (and grouping keys).
bool is_comparable(const Type& t) {
  switch (t.kind) {
    case Kind::Bool:
    case Kind::Int8:
    case Kind::Int16:
    case Kind::Int32:
    case Kind::Int64:
    case Kind::Float32:
    case Kind::Float64:
    case Kind::Decimal128:
    case Kind::Utf8:
    case Kind::Date32:
    case Kind::TimestampUs:
      return true;
    default:
      return false;
  }
}

// The argument of a value aggregate, as a state or result column: its type, renamed, nullable.
std::unique_ptr<Type> value_column(const Type& arg, const std::string& name) {
  auto t = clone_type(arg);
  t->name = name;
  t->nullable = true;
  return t;
}

// The type of a sum's running total: integers exactly as DECIMAL(38, 0), floats as DOUBLE,
// decimals as DECIMAL(38, s).
std::unique_ptr<Type> sum_column(AggFn fn, const Type* arg, const std::string& name) {
  if (arg != nullptr && is_signed_int(*arg)) return decimal_type(name, 38, 0);
  if (arg != nullptr && is_float(*arg)) return column_type(name, Kind::Float64);
  if (arg != nullptr && arg->kind == Kind::Decimal128) return decimal_type(name, 38, arg->scale);
  throw UnsupportedArgument(unsupported_argument_message(fn));
}

std::unique_ptr<Type> list_of(const std::string& name, std::unique_ptr<Type> element) {
  auto t = column_type(name, Kind::List);
  element->name = "element";
  element->nullable = true;
  t->children.push_back(std::move(element));
  return t;
}

const char* kind_text(Kind kind) {
  switch (kind) {
    case Kind::Bool:
      return "bool";
    case Kind::Int8:
      return "int8";
    case Kind::Int16:
      return "int16";
    case Kind::Int32:
      return "int32";
    case Kind::Int64:
      return "int64";
    case Kind::Float32:
      return "float";
    case Kind::Float64:
      return "double";
    case Kind::Utf8:
      return "string";
    case Kind::Binary:
      return "binary";
    case Kind::Date32:
      return "date32[day]";
    default:
      return "?";
  }
}

std::string field_text(const Type& t) {
  return "'" + t.name + "' " + type_text(t) + (t.nullable ? "" : " not null");
}

}  // namespace

std::string unsupported_argument_message(AggFn fn) {
  const std::string name = agg_fn_name(fn);
  if (fn == AggFn::Sum || fn == AggFn::Avg) {
    return name + " takes a numeric column (TINYINT \u2026 BIGINT, FLOAT, DOUBLE, DECIMAL)";
  }
  return name +
         " takes BOOLEAN, integer, FLOAT, DOUBLE, DECIMAL, STRING, DATE, TIMESTAMP or "
         "TIMESTAMP_NTZ columns";
}

int state_columns(StateForm form, AggFn fn) {
  switch (fn) {
    case AggFn::Count:
      return 1;
    case AggFn::Sum:
    case AggFn::Avg:
      return 2;
    case AggFn::Min:
    case AggFn::Max:
      return 1;
    default:
      return form == StateForm::SlicePartial ? 2 : 1;
  }
}

void append_state_columns(StateForm form, size_t index, AggFn fn, const Type* arg,
                          std::vector<std::unique_ptr<Type>>& out) {
  const std::string p = "__a" + std::to_string(index) + "_";
  if (fn == AggFn::Count) {
    out.push_back(column_type(p + "n", Kind::Int64, false));
    return;
  }
  if (fn == AggFn::Sum || fn == AggFn::Avg) {
    out.push_back(sum_column(fn, arg, p + "s"));
    // A slice's count may be null in the partial schema; a delta row's never is.
    out.push_back(column_type(p + "n", Kind::Int64, form == StateForm::SlicePartial));
    return;
  }
  if (arg == nullptr || !is_comparable(*arg))
    throw UnsupportedArgument(unsupported_argument_message(fn));
  if (form == StateForm::Delta) {
    out.push_back(value_column(*arg, p + "v"));
    return;
  }
  switch (fn) {
    case AggFn::Min:
    case AggFn::Max:
      out.push_back(value_column(*arg, p + "v"));
      return;
    case AggFn::FirstValue:
    case AggFn::LastValue:
      out.push_back(value_column(*arg, p + "v"));
      out.push_back(column_type(p + "t", Kind::Int64));
      return;
    default:  // count_distinct: the distinct values and their multiplicities
      out.push_back(list_of(p + "v", clone_type(*arg)));
      out.push_back(list_of(p + "c", column_type("", Kind::Int64)));
      return;
  }
}

std::unique_ptr<Type> result_type(AggFn fn, const Type* arg, const std::string& name) {
  if (fn == AggFn::Count) return column_type(name, Kind::Int64, false);
  if (arg == nullptr) throw UnsupportedArgument(unsupported_argument_message(fn));
  if (fn == AggFn::Sum || fn == AggFn::Avg) {
    const bool avg = fn == AggFn::Avg;
    if (is_signed_int(*arg)) return column_type(name, avg ? Kind::Float64 : Kind::Int64);
    if (is_float(*arg)) return column_type(name, Kind::Float64);
    if (arg->kind == Kind::Decimal128) {
      // Spark: sum DECIMAL(p + 10, s), avg DECIMAL(p + 4, s + 4), bounded by 38 digits.
      if (!avg) return decimal_type(name, std::min(38, arg->precision + 10), arg->scale);
      return decimal_type(name, std::min(38, arg->precision + 4), std::min(38, arg->scale + 4));
    }
    throw UnsupportedArgument(unsupported_argument_message(fn));
  }
  if (!is_comparable(*arg)) throw UnsupportedArgument(unsupported_argument_message(fn));
  if (fn == AggFn::CountDistinct) return column_type(name, Kind::Int64, false);
  return value_column(*arg, name);
}

std::unique_ptr<Type> implied_argument(StateForm form, AggFn fn, const Type& first_state,
                                       const Type& result) {
  switch (fn) {
    case AggFn::Count:
      return nullptr;
    case AggFn::Sum:
    case AggFn::Avg: {
      if (first_state.kind == Kind::Float64) return column_type("", Kind::Float64);
      if (first_state.kind == Kind::Decimal128 && result.kind == Kind::Decimal128) {
        // The precision the result was widened from (any of 28..38 widens a sum to 38).
        const int widen = fn == AggFn::Avg ? 4 : 10;
        const int p = result.precision < 38 ? result.precision - widen : 38;
        return decimal_type("", std::clamp(p, std::max(1, first_state.scale), 38),
                            first_state.scale);
      }
      return column_type("", Kind::Int64);
    }
    case AggFn::CountDistinct:
      if (form == StateForm::SlicePartial && first_state.kind == Kind::List &&
          first_state.children.size() == 1) {
        return clone_type(*first_state.children[0]);
      }
      return clone_type(first_state);
    default:
      return clone_type(first_state);
  }
}

std::unique_ptr<Type> state_schema(const StateLayout& layout, const std::vector<AggPlan>& aggs,
                                   const std::vector<const Type*>& args) {
  std::vector<std::unique_ptr<Type>> fields;
  for (const auto& [name, kind] : layout.prefix) fields.push_back(column_type(name, kind, false));
  for (size_t a = 0; a < aggs.size(); ++a) {
    try {
      append_state_columns(layout.form, a, aggs[a].fn, args.at(a), fields);
    } catch (const UnsupportedArgument& e) {
      throw std::invalid_argument(std::string(layout.kernel) + ": aggregate " + std::to_string(a) +
                                  ": " + e.what());
    }
  }
  return struct_of(std::move(fields));
}

void check_state_schema(const StateLayout& layout, const std::vector<AggPlan>& aggs,
                        const std::vector<const Type*>& args, const Type& given) {
  const std::string diff = schema_difference(*state_schema(layout, aggs, args), given);
  if (!diff.empty()) {
    throw std::invalid_argument(std::string(layout.kernel) + ": the " + layout.what +
                                " schema does not match the plan: " + diff);
  }
}

std::vector<const Type*> argument_types(const std::vector<AggPlan>& aggs, const Type& input) {
  if (input.kind != Kind::Struct)
    throw std::invalid_argument("the input schema must be a struct of columns");
  std::vector<const Type*> out;
  for (const AggPlan& agg : aggs) {
    if (agg.arg >= static_cast<int>(input.children.size())) {
      throw std::invalid_argument("an aggregate's argument column is out of range");
    }
    out.push_back(agg.arg < 0 ? nullptr : input.children[static_cast<size_t>(agg.arg)].get());
  }
  return out;
}

std::vector<std::unique_ptr<Type>> implied_arguments(StateForm form,
                                                     const std::vector<AggPlan>& aggs,
                                                     const Type& state, size_t first_state,
                                                     const Type& output, size_t first_result) {
  std::vector<std::unique_ptr<Type>> out;
  size_t column = first_state;
  for (size_t a = 0; a < aggs.size(); ++a) {
    const AggFn fn = aggs[a].fn;
    out.push_back(implied_argument(form, fn, *state.children.at(column),
                                   *output.children.at(first_result + a)));
    column += static_cast<size_t>(state_columns(form, fn));
  }
  return out;
}

std::string result_difference(const std::vector<AggPlan>& aggs,
                              const std::vector<const Type*>& args, const Type& output,
                              size_t first_result) {
  for (size_t a = 0; a < aggs.size(); ++a) {
    const Type& given = *output.children.at(first_result + a);
    std::unique_ptr<Type> expected;
    try {
      expected = result_type(aggs[a].fn, args[a], given.name);
    } catch (const UnsupportedArgument& e) {
      return "column '" + given.name + "': " + e.what();
    }
    if (!same_type(*expected, given, false)) {
      return "column '" + given.name + "' is " + type_text(given) + ", but " +
             agg_fn_name(aggs[a].fn) + " gives " + type_text(*expected);
    }
  }
  return "";
}

void check_implied_schemas(const StateLayout& layout, const std::vector<AggPlan>& aggs,
                           const Type& state, const Type& output, size_t first_result) {
  const std::string kernel = std::string(layout.kernel) + ": ";
  const size_t first_state = layout.prefix.size();
  size_t columns = first_state;
  for (const AggPlan& agg : aggs)
    columns += static_cast<size_t>(state_columns(layout.form, agg.fn));
  if (state.kind != Kind::Struct || state.children.size() != columns) {
    throw std::invalid_argument(
        kernel + "the " + layout.what + " schema does not match the plan: it has " +
        std::to_string(state.children.size()) + " columns, expected " + std::to_string(columns));
  }
  const auto implied =
      implied_arguments(layout.form, aggs, state, first_state, output, first_result);
  const auto args = pointers(implied);
  check_state_schema(layout, aggs, args, state);
  const std::string diff = result_difference(aggs, args, output, first_result);
  if (!diff.empty()) {
    throw std::invalid_argument(kernel + "the output schema does not match the plan: " + diff);
  }
}

std::vector<AggColumns> agg_columns(StateForm form, const std::vector<AggPlan>& aggs,
                                    const Type& state, size_t first_state, const Type& output,
                                    size_t first_result, bool ansi) {
  std::vector<AggColumns> out;
  size_t column = first_state;
  for (size_t a = 0; a < aggs.size(); ++a) {
    const Type* result = output.children.at(first_result + a).get();
    out.push_back({aggs[a], static_cast<int>(column), state.children.at(column).get(), result,
                   result->name, ansi});
    column += static_cast<size_t>(state_columns(form, aggs[a].fn));
  }
  return out;
}

std::vector<const Type*> pointers(const std::vector<std::unique_ptr<Type>>& types) {
  std::vector<const Type*> out;
  for (const auto& t : types) out.push_back(t.get());
  return out;
}

std::unique_ptr<Type> struct_of(std::vector<std::unique_ptr<Type>> fields) {
  auto t = column_type("", Kind::Struct, false);
  t->children = std::move(fields);
  return t;
}

std::unique_ptr<Type> column_type(const std::string& name, Kind kind, bool nullable) {
  auto t = std::make_unique<Type>();
  t->name = name;
  t->kind = kind;
  t->nullable = nullable;
  return t;
}

std::unique_ptr<Type> decimal_type(const std::string& name, int precision, int scale,
                                   bool nullable) {
  auto t = column_type(name, Kind::Decimal128, nullable);
  t->precision = precision;
  t->scale = scale;
  return t;
}

std::unique_ptr<Type> clone_type(const Type& t) {
  auto c = std::make_unique<Type>();
  c->kind = t.kind;
  c->name = t.name;
  c->nullable = t.nullable;
  c->precision = t.precision;
  c->scale = t.scale;
  c->timezone = t.timezone;
  for (const auto& child : t.children) c->children.push_back(clone_type(*child));
  return c;
}

bool same_type(const Type& a, const Type& b, bool fields) {
  if (a.kind != b.kind || a.precision != b.precision || a.scale != b.scale ||
      a.timezone != b.timezone || a.children.size() != b.children.size()) {
    return false;
  }
  for (size_t i = 0; i < a.children.size(); ++i) {
    const Type& x = *a.children[i];
    const Type& y = *b.children[i];
    if (fields && (x.name != y.name || x.nullable != y.nullable)) return false;
    if (!same_type(x, y, fields)) return false;
  }
  return true;
}

std::string type_text(const Type& t) {
  switch (t.kind) {
    case Kind::Decimal128:
      return "decimal128(" + std::to_string(t.precision) + ", " + std::to_string(t.scale) + ")";
    case Kind::TimestampUs:
      return t.timezone.empty() ? "timestamp[us]" : "timestamp[us, tz=" + t.timezone + "]";
    case Kind::List:
      return "list<" +
             (t.children.empty() ? std::string("?")
                                 : t.children[0]->name + ": " + type_text(*t.children[0])) +
             ">";
    case Kind::Map:
      return "map<" +
             (t.children.size() == 2 ? type_text(*t.children[0]) + ", " + type_text(*t.children[1])
                                     : std::string("?")) +
             ">";
    case Kind::Struct: {
      std::string s = "struct<";
      for (size_t i = 0; i < t.children.size(); ++i) {
        s += (i ? ", " : "") + t.children[i]->name + ": " + type_text(*t.children[i]);
      }
      return s + ">";
    }
    default:
      return kind_text(t.kind);
  }
}

std::string schema_difference(const Type& expected, const Type& given) {
  if (given.kind != Kind::Struct) return "it is " + type_text(given) + ", not a struct of columns";
  const auto& e = expected.children;
  const auto& g = given.children;
  for (size_t i = 0; i < std::min(e.size(), g.size()); ++i) {
    if (e[i]->name == g[i]->name && e[i]->nullable == g[i]->nullable &&
        same_type(*e[i], *g[i], true))
      continue;
    return "column " + std::to_string(i) + " is " + field_text(*g[i]) + ", expected " +
           field_text(*e[i]);
  }
  if (e.size() != g.size()) {
    return "it has " + std::to_string(g.size()) + " columns, expected " + std::to_string(e.size());
  }
  return "";
}

}  // namespace sliceflow::agg
