// sliceflow's state format: every value a streaming operator keeps in Spark's state store is
// one sealed value (docs/state.md is the contract):
//
//   offset size
//   0      4    magic "SFST"
//   4      2    format version (kFormatVersion)
//   6      1    operator kind (Operator)
//   7      1    number of sections
//   8      4    identity length in bytes
//   12     4    reserved, 0
//   16     8    payload length in bytes (the sections with their length prefixes)
//   24     8    checksum (state/checksum.h) of bytes [0, 24) and of everything after byte 32
//   32     the plan identity: u32 field count, then per field u16 name length, the name,
//          u32 value length, the value
//   ...    the payload: per section a u64 length and its bytes
//
// Every integer is little-endian (state/byte_order.h). The plan identity is a list of named
// fields that together decide what the state means (keys, aggregates and their input types,
// window, bucket count, ...), never tuning knobs: open() refuses a value whose identity
// differs and names the fields that changed. Reading never trusts a length before checking
// it against what is there, so a forged or cut value gives std::invalid_argument, never a
// read past the end. Cost: one pass of the checksum over the value, no copy of the payload.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sliceflow::state {

enum class Operator : uint8_t {
  WindowAgg = 1,
  ChangelogAgg = 2,
  TopN = 3,
  Deduplicate = 4,
  Join = 5
};

// "window_agg", "changelog_agg", "topn", "deduplicate", "join".
const char* operator_name(Operator op);
// The inverse of operator_name; std::invalid_argument for an unknown name.
Operator operator_from_name(std::string_view name);

// Named fields in a fixed order (the operator's own).
using Identity = std::vector<std::pair<std::string, std::string>>;

constexpr uint16_t kFormatVersion = 1;
constexpr size_t kHeaderBytes = 32;
constexpr size_t kMaxSections = 255;

// The size of the sealed value of these sections.
size_t sealed_size(const Identity& identity, const std::vector<std::string_view>& sections);
// Writes the sealed value (sealed_size() bytes) to out.
void seal_into(char* out, Operator op, const Identity& identity,
               const std::vector<std::string_view>& sections);
// seal_into() into a new string.
std::string seal(Operator op, const Identity& identity,
                 const std::vector<std::string_view>& sections);

// A sealed value taken apart (views into the value).
struct Opened {
  Operator op = Operator::WindowAgg;
  uint16_t version = 0;
  Identity identity;
  std::vector<std::string_view> sections;
};

// Checks the header, lengths and checksum of a sealed value and takes it apart, without
// judging its operator or identity. `reader` names the operator reading it in errors.
Opened read(std::string_view value, const char* reader);

// read(), then: the value must be op's, have this identity (an error names the fields that
// changed) and `sections` sections. Returns the sections. `later_fields` names fields of
// `identity` that were added to the operator's identity after values were first written: a
// value that lacks one of them (written before it existed) is judged on the fields it has; a
// value that has it must match it. Cost: one compare per field pair (identities are a few
// fields).
std::vector<std::string_view> open(std::string_view value, Operator op, const Identity& identity,
                                   size_t sections,
                                   const std::vector<std::string>& later_fields = {});

// The fields of `now` that differ from `stored`, as "name: stored → now" phrases joined by
// "; " (fields only one side has say so; control bytes as \xNN); empty when equal.
std::string identity_changes(const Identity& stored, const Identity& now);

}  // namespace sliceflow::state
