// Spark's hash(): Murmur3 x86_32 as org.apache.spark.unsafe.hash.Murmur3_x86_32 computes it
// (its byte hash keeps Spark's own tail: each of the last len % 4 bytes mixed on its own, as a
// signed byte), chained over columns and nested values as the Murmur3Hash expression chains
// them, seed 42. The rows of a batch get the value `F.hash(c1, ..., cn)` gives in Spark, so a
// task outside the JVM computes the bucket `pmod(hash(keys), n)` that a Spark plan computes.
//
// Invariants: a null value (a null column value, struct field or array element) leaves the
// running hash unchanged; -0.0 hashes as 0 and every NaN as Java's canonical NaN; a DECIMAL of
// precision <= 18 hashes its unscaled value as a long, a wider one the minimal big-endian
// two's-complement bytes of it (BigInteger.toByteArray). Maps and the types ColumnView does not
// read are refused when the view is made. Cost: O(bytes of the key values) per batch, no allocation
// but the caller's output.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "arrow/column_view.h"

namespace sliceflow::hash {

// Spark's seed for hash() and hash partitioning.
constexpr int32_t kSparkSeed = 42;

int32_t hash_int(int32_t value, int32_t seed);
int32_t hash_long(int64_t value, int32_t seed);
// Murmur3_x86_32.hashUnsafeBytes: 4-byte little-endian words, then each tail byte alone.
int32_t hash_bytes(std::string_view bytes, int32_t seed);

// hash(columns...) of rows [0, length) into out (length values), starting from `seed`.
void spark_hash(const std::vector<const arrow::ColumnView*>& columns, int64_t length, int32_t* out,
                int32_t seed = kSparkSeed);

}  // namespace sliceflow::hash
