// Number conversions with the results Jackson and Spark give for the same text.
#pragma once

#include <cstdint>
#include <string_view>

#include "arrow/int128.h"

namespace sliceflow::json {

// Parses an optionally signed run of decimal digits. false on overflow or bad syntax.
bool parse_int64(std::string_view text, int64_t& out);

// Java's Double.parseDouble / Float.parseFloat for JSON number text: correctly rounded,
// overflow to +-Infinity, underflow to +-0.
double parse_double(std::string_view text);
float parse_float(std::string_view text);

// java.math.BigDecimal(text) followed by Spark's Decimal.set(value, precision, scale):
// rescale with HALF_UP, then fail if more than `precision` digits remain.
// Returns false on bad syntax or overflow.
bool parse_decimal(std::string_view text, int precision, int scale, int128& unscaled);

// Java's Double.toString.
void format_java_double(double value, std::string& out);

}  // namespace sliceflow::json
