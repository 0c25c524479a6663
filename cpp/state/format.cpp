#include "state/format.h"

#include <cstring>
#include <limits>
#include <stdexcept>

#include "state/byte_order.h"
#include "state/checksum.h"

namespace sliceflow::state {
namespace {

constexpr char kMagic[4] = {'S', 'F', 'S', 'T'};
// The changelog state blob of releases before the versioned format ("SFCL", native order).
constexpr char kLegacyChangelogMagic[4] = {'S', 'F', 'C', 'L'};

[[noreturn]] void fail(const char* reader, const std::string& what) {
  throw std::invalid_argument(std::string(reader) + " state: " + what);
}

size_t identity_size(const Identity& identity) {
  size_t n = 4;
  for (const auto& [name, value] : identity) n += 2 + name.size() + 4 + value.size();
  return n;
}

size_t payload_size(const std::vector<std::string_view>& sections) {
  size_t n = 0;
  for (const std::string_view s : sections) n += 8 + s.size();
  return n;
}

template <typename T>
char* put(char* at, T v) {
  store_le(at, v);
  return at + sizeof(T);
}

char* put_bytes(char* at, std::string_view s) {
  if (!s.empty()) std::memcpy(at, s.data(), s.size());
  return at + s.size();
}

// A bounds-checked cursor over part of a value.
class Cursor {
 public:
  Cursor(std::string_view in, const char* reader, const char* part)
      : in_(in), reader_(reader), part_(part) {}
  template <typename T>
  T get() {
    need(sizeof(T));
    const T v = load_le<T>(in_.data() + at_);
    at_ += sizeof(T);
    return v;
  }
  std::string_view bytes(uint64_t n) {
    need(n);
    const std::string_view s = in_.substr(at_, static_cast<size_t>(n));
    at_ += static_cast<size_t>(n);
    return s;
  }
  size_t left() const { return in_.size() - at_; }

 private:
  void need(uint64_t n) const {
    if (in_.size() - at_ < n)
      fail(reader_, std::string("the ") + part_ + " is cut short (damaged value)");
  }
  std::string_view in_;
  size_t at_ = 0;
  const char* reader_;
  const char* part_;
};

// Text of an identity for an error message: control bytes (a forged value's) as \xNN, so that
// the message is one printable line and no NUL cuts it short.
std::string printable(std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (const char c : s) {
    const auto b = static_cast<uint8_t>(c);
    if (b < 0x20 || b == 0x7F) {
      out += "\\x";
      out += kHex[b >> 4];
      out += kHex[b & 15];
    } else {
      out += c;
    }
  }
  return out;
}

std::string shown(const Identity& identity) {
  std::string out;
  for (const auto& [name, value] : identity) {
    if (!out.empty()) out += ", ";
    out += printable(name);
  }
  return out;
}

}  // namespace

const char* operator_name(Operator op) {
  switch (op) {
    case Operator::WindowAgg:
      return "window_agg";
    case Operator::ChangelogAgg:
      return "changelog_agg";
    case Operator::Deduplicate:
      return "deduplicate";
    case Operator::TopN:
      return "topn";
    case Operator::Join:
      return "join";
  }
  return "unknown operator";
}

Operator operator_from_name(std::string_view name) {
  if (name == "window_agg") return Operator::WindowAgg;
  if (name == "changelog_agg") return Operator::ChangelogAgg;
  if (name == "deduplicate") return Operator::Deduplicate;
  if (name == "topn") return Operator::TopN;
  if (name == "join") return Operator::Join;
  throw std::invalid_argument(
      "state: unknown operator '" + std::string(name) +
      "' (expected 'window_agg', 'changelog_agg', 'topn', 'deduplicate' or 'join')");
}

size_t sealed_size(const Identity& identity, const std::vector<std::string_view>& sections) {
  return kHeaderBytes + identity_size(identity) + payload_size(sections);
}

void seal_into(char* out, Operator op, const Identity& identity,
               const std::vector<std::string_view>& sections) {
  if (sections.size() > kMaxSections) throw std::invalid_argument("state: at most 255 sections");
  for (const auto& [name, value] : identity) {
    if (name.size() > std::numeric_limits<uint16_t>::max() ||
        value.size() > std::numeric_limits<uint32_t>::max()) {
      throw std::invalid_argument("state: an identity field is too long");
    }
  }
  const size_t id_bytes = identity_size(identity);
  if (id_bytes > std::numeric_limits<uint32_t>::max())
    throw std::invalid_argument("state: the identity is too long");
  char* at = put_bytes(out, std::string_view(kMagic, 4));
  at = put<uint16_t>(at, kFormatVersion);
  at = put<uint8_t>(at, static_cast<uint8_t>(op));
  at = put<uint8_t>(at, static_cast<uint8_t>(sections.size()));
  at = put<uint32_t>(at, static_cast<uint32_t>(id_bytes));
  at = put<uint32_t>(at, 0);
  at = put<uint64_t>(at, static_cast<uint64_t>(payload_size(sections)));
  char* const sum_at = at;
  at += 8;
  at = put<uint32_t>(at, static_cast<uint32_t>(identity.size()));
  for (const auto& [name, value] : identity) {
    at = put<uint16_t>(at, static_cast<uint16_t>(name.size()));
    at = put_bytes(at, name);
    at = put<uint32_t>(at, static_cast<uint32_t>(value.size()));
    at = put_bytes(at, value);
  }
  for (const std::string_view s : sections) {
    at = put<uint64_t>(at, static_cast<uint64_t>(s.size()));
    at = put_bytes(at, s);
  }
  const uint64_t sum = checksum(out + kHeaderBytes, static_cast<size_t>(at - out) - kHeaderBytes,
                                checksum(out, 24, 0));
  put<uint64_t>(sum_at, sum);
}

std::string seal(Operator op, const Identity& identity,
                 const std::vector<std::string_view>& sections) {
  std::string out(sealed_size(identity, sections), '\0');
  seal_into(out.data(), op, identity, sections);
  return out;
}

Opened read(std::string_view value, const char* reader) {
  if (value.size() >= 4 && std::memcmp(value.data(), kLegacyChangelogMagic, 4) == 0) {
    fail(reader,
         "the checkpoint was written by a sliceflow release before the versioned state format "
         "(docs/state.md), which this release cannot read; restart the query with a new checkpoint "
         "location");
  }
  if (value.size() < 4 || std::memcmp(value.data(), kMagic, 4) != 0) {
    fail(reader,
         "the stored value is not sliceflow state (no 'SFST' header): another program's state, or "
         "damaged");
  }
  if (value.size() < kHeaderBytes) {
    fail(reader, "the stored value is cut short: " + std::to_string(value.size()) +
                     " bytes, less than its " + std::to_string(kHeaderBytes) + "-byte header");
  }
  Cursor h(value.substr(0, kHeaderBytes), reader, "header");
  h.bytes(4);
  Opened out;
  out.version = h.get<uint16_t>();
  const auto kind = h.get<uint8_t>();
  const auto sections = h.get<uint8_t>();
  const auto id_bytes = h.get<uint32_t>();
  const auto reserved = h.get<uint32_t>();
  const auto payload_bytes = h.get<uint64_t>();
  const auto stored_sum = h.get<uint64_t>();
  if (out.version != kFormatVersion) {
    fail(reader, "the checkpoint holds state format version " + std::to_string(out.version) +
                     "; this release reads version " + std::to_string(kFormatVersion) +
                     (out.version > kFormatVersion ? " (it was written by a newer sliceflow)"
                                                   : " (damaged value?)"));
  }
  if (kind != static_cast<uint8_t>(Operator::WindowAgg) &&
      kind != static_cast<uint8_t>(Operator::ChangelogAgg) &&
      kind != static_cast<uint8_t>(Operator::TopN) &&
      kind != static_cast<uint8_t>(Operator::Deduplicate) &&
      kind != static_cast<uint8_t>(Operator::Join)) {
    fail(reader, "the header names operator kind " + std::to_string(kind) +
                     ", which this release does not know");
  }
  out.op = static_cast<Operator>(kind);
  if (reserved != 0) fail(reader, "the header's reserved field is not 0 (damaged value)");
  const uint64_t body = value.size() - kHeaderBytes;
  if (id_bytes > body || payload_bytes != body - id_bytes) {
    fail(reader, "the stored value has " + std::to_string(body) +
                     " bytes after its header, but the header says " + std::to_string(id_bytes) +
                     " of identity and " + std::to_string(payload_bytes) +
                     " of payload (cut short or damaged)");
  }
  const uint64_t sum = checksum(value.data() + kHeaderBytes, value.size() - kHeaderBytes,
                                checksum(value.data(), 24, 0));
  if (sum != stored_sum) fail(reader, "the checksum does not match: the stored value is damaged");

  Cursor id(value.substr(kHeaderBytes, id_bytes), reader, "plan identity");
  const auto fields = id.get<uint32_t>();
  for (uint32_t f = 0; f < fields; ++f) {
    const std::string_view name = id.bytes(id.get<uint16_t>());
    const std::string_view text = id.bytes(id.get<uint32_t>());
    out.identity.emplace_back(std::string(name), std::string(text));
  }
  if (id.left() != 0) fail(reader, "trailing bytes after the plan identity (damaged value)");

  Cursor payload(value.substr(kHeaderBytes + id_bytes), reader, "payload");
  for (unsigned s = 0; s < sections; ++s)
    out.sections.push_back(payload.bytes(payload.get<uint64_t>()));
  if (payload.left() != 0) fail(reader, "trailing bytes after the last section (damaged value)");
  return out;
}

std::string identity_changes(const Identity& stored, const Identity& now) {
  std::string out;
  auto add = [&out](const std::string& phrase) {
    if (!out.empty()) out += "; ";
    out += phrase;
  };
  for (const auto& [name, value] : now) {
    const std::string* before = nullptr;
    for (const auto& [n, v] : stored) {
      if (n == name) before = &v;
    }
    if (before == nullptr) {
      add(printable(name) + ": not in the checkpoint, now " + printable(value));
    } else if (*before != value) {
      add(printable(name) + ": " + printable(*before) + " in the checkpoint, now " +
          printable(value));
    }
  }
  for (const auto& [name, value] : stored) {
    bool kept = false;
    for (const auto& [n, v] : now) kept = kept || n == name;
    if (!kept)
      add(printable(name) + ": " + printable(value) +
          " in the checkpoint, no longer part of the plan");
  }
  return out;
}

namespace {

// `identity` without the later fields that `stored` lacks: what a value written before those
// fields existed is judged on.
Identity judged_on(const Identity& identity, const Identity& stored,
                   const std::vector<std::string>& later_fields) {
  Identity out;
  out.reserve(identity.size());
  for (const auto& field : identity) {
    bool later = false;
    for (const auto& name : later_fields) later = later || name == field.first;
    bool stored_has = false;
    for (const auto& s : stored) stored_has = stored_has || s.first == field.first;
    if (!later || stored_has) out.push_back(field);
  }
  return out;
}

}  // namespace

std::vector<std::string_view> open(std::string_view value, Operator op, const Identity& identity,
                                   size_t sections, const std::vector<std::string>& later_fields) {
  const char* reader = operator_name(op);
  Opened got = read(value, reader);
  if (got.op != op) {
    fail(reader, std::string("the checkpoint holds the state of a ") + operator_name(got.op) +
                     ", not of a " + reader + " (another query wrote this checkpoint location)");
  }
  const Identity expected =
      later_fields.empty() ? identity : judged_on(identity, got.identity, later_fields);
  if (got.identity != expected) {
    std::string changes = identity_changes(got.identity, expected);
    if (changes.empty()) changes = "the fields are in another order";
    fail(reader, "the checkpoint holds the state of a different query (" + changes +
                     "). The state's identity covers " + shown(identity) +
                     "; tuning options (bundle sizes, mini-batch settings) may change on restart. "
                     "Restart with the "
                     "query that wrote the checkpoint, or with a new checkpoint location");
  }
  if (got.sections.size() != sections) {
    fail(reader, "the stored value has " + std::to_string(got.sections.size()) +
                     " sections, expected " + std::to_string(sections) + " (damaged value)");
  }
  return std::move(got.sections);
}

}  // namespace sliceflow::state
