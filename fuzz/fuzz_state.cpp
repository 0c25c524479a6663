// libFuzzer harness for the state format (state/format.h). Three ways into the reader:
//  * the input bytes as a stored value: read() either throws std::invalid_argument or takes it
//    apart, and then sealing what it read again gives the input back byte for byte (so every
//    accepted value is one seal() can write: nothing in it goes unchecked);
//  * the input split into an identity and sections, sealed: open() with the same operator and
//    identity gives the sections back, and with another identity or operator throws, naming
//    the fields that changed; a field named a later one opens a value that lacks it and is
//    checked in one that has it;
//  * that sealed value damaged by the input (bytes flipped, cut or extended): open() throws
//    std::invalid_argument (the checksum and lengths catch every such change the fuzzer makes)
//    or, for no change at all, succeeds.
// Built by scripts/sanitize.sh with clang -fsanitize=fuzzer,address,undefined.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "state/format.h"

namespace {

namespace st = sliceflow::state;

// window_agg, changelog_agg, topn, deduplicate, join (cpp/state/format.h).
constexpr size_t kOperatorKinds = 5;

// The stored value as is.
void as_stored_value(std::string_view in) {
  st::Opened got;
  try {
    got = st::read(in, "fuzz");
  } catch (const std::invalid_argument&) {
    return;
  }
  if (st::seal(got.op, got.identity, got.sections) != in) __builtin_trap();
  try {
    st::open(in, got.op, got.identity, got.sections.size());
  } catch (const std::invalid_argument&) {
    __builtin_trap();
  }
}

// Pieces of the input: an identity of up to 4 fields and up to 4 sections.
struct Parts {
  st::Identity identity;
  std::vector<std::string> sections;
};

Parts split(std::string_view in) {
  Parts p;
  size_t at = 0;
  auto take = [&](size_t n) {
    const std::string_view s = in.substr(std::min(at, in.size()), n);
    at += s.size();
    return std::string(s);
  };
  auto len = [&]() {
    return at < in.size() ? static_cast<size_t>(static_cast<uint8_t>(in[at++])) % 24 : 0;
  };
  const size_t fields = len() % 5;
  for (size_t f = 0; f < fields; ++f) {
    std::string name = take(len());
    std::string value = take(len());
    p.identity.emplace_back(std::move(name), std::move(value));
  }
  const size_t sections = len() % 5;
  for (size_t i = 0; i < sections; ++i) p.sections.push_back(take(len() * 3));
  return p;
}

void sealed_then_damaged(std::string_view in, std::string_view damage) {
  const Parts p = split(in);
  std::vector<std::string_view> views(p.sections.begin(), p.sections.end());
  // Every operator kind (1 .. kOperatorKinds), by the input's length.
  const auto op = static_cast<st::Operator>(1 + in.size() % kOperatorKinds);
  const std::string value = st::seal(op, p.identity, views);
  if (value.size() != st::sealed_size(p.identity, views)) __builtin_trap();
  if (st::open(value, op, p.identity, views.size()) != views) __builtin_trap();

  // Another operator, another identity: refused.
  const auto other_op = static_cast<st::Operator>(1 + (in.size() + 1) % kOperatorKinds);
  bool refused = false;
  try {
    st::open(value, other_op, p.identity, views.size());
  } catch (const std::invalid_argument&) {
    refused = true;
  }
  if (!refused) __builtin_trap();
  // A field name the identity does not have yet (identities have distinct names).
  std::string extra = "extra";
  for (bool taken = true; taken;) {
    taken = false;
    for (const auto& field : p.identity) taken = taken || field.first == extra;
    if (taken) extra += '+';
  }
  st::Identity other = p.identity;
  other.emplace_back(extra, "field");
  refused = false;
  try {
    st::open(value, op, other, views.size());
  } catch (const std::invalid_argument& e) {
    refused = std::string_view(e.what()).find(extra + ": not in the checkpoint") !=
              std::string_view::npos;
  }
  if (!refused) __builtin_trap();
  // The same field named a later one: the value, written before it existed, opens; a value
  // that has it with another value is refused.
  if (st::open(value, op, other, views.size(), {extra}) != views) __builtin_trap();
  const std::string with_extra = st::seal(op, other, views);
  st::Identity changed = p.identity;
  changed.emplace_back(extra, "moved");
  refused = false;
  try {
    st::open(with_extra, op, changed, views.size(), {extra});
  } catch (const std::invalid_argument& e) {
    refused = std::string_view(e.what()).find(extra + ": field in the checkpoint, now moved") !=
              std::string_view::npos;
  }
  if (!refused) __builtin_trap();

  // Damage: pairs of (position, xor) bytes; a zero xor cuts the value there, 0xFF pads it.
  std::string damaged = value;
  for (size_t i = 0; i + 1 < damage.size() && !damaged.empty(); i += 2) {
    const size_t pos = static_cast<size_t>(static_cast<uint8_t>(damage[i])) * damaged.size() / 256;
    const auto x = static_cast<uint8_t>(damage[i + 1]);
    if (x == 0) {
      damaged.resize(pos);
    } else if (x == 0xFF) {
      damaged.push_back('\0');
    } else {
      damaged[pos] = static_cast<char>(static_cast<uint8_t>(damaged[pos]) ^ x);
    }
  }
  try {
    const auto got = st::open(damaged, op, p.identity, views.size());
    if (damaged != value || got != views) __builtin_trap();
  } catch (const std::invalid_argument&) {
    // A flip that cancels an earlier one may restore the value: that must open.
    if (damaged == value) __builtin_trap();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  as_stored_value(in);
  const size_t cut = size == 0 ? 0 : static_cast<size_t>(data[0]) % (size + 1);
  sealed_then_damaged(in.substr(cut), in.substr(0, cut));
  return 0;
}
