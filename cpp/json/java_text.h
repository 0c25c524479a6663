// How Java and Jackson see text, for the reference reader and the Spark converter: UTF-8 decoded
// into UTF-16 units the way Java's InputStreamReader does it, UTF-16 back to UTF-8 (lone
// surrogates in their 3-byte form), the character classes Jackson asks Java about (identifier
// characters, the characters of unquoted field names), and the text Java, Jackson's generator
// and Spark write (decimal digits BigDecimal reads, canonical integers, quoted strings, the
// strings Spark stores). The class tests are O(log ranges), the text functions O(length of the
// text); nothing here throws.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sliceflow::json {

// Decodes UTF-8 into UTF-16 units as Java's InputStreamReader does: each malformed sequence
// becomes one U+FFFD, with the lengths of Java's decoder (mostly Unicode's "maximal subpart";
// an encoded surrogate ED A0..BF xx is one replacement, and so is an incomplete sequence at
// the end of the input). Returns the index of that last replacement for an incomplete
// sequence at the end (Java's reader hands it over separately), else SIZE_MAX.
size_t decode_utf8_like_java(std::string_view bytes, std::vector<char16_t>& out);

inline bool is_digit(int c) { return c >= '0' && c <= '9'; }

inline int hex_value(int c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Java 17's Character.isJavaIdentifierPart / isJavaIdentifierStart (UTF-16 units).
bool java_identifier_part(int c);
bool java_identifier_start(int c);

// CharTypes.getInputCodeLatin1JsNames: characters allowed in unquoted field names.
inline bool unquoted_name_char(int c) {
  if (c < 256) {
    if (c < 33) return false;
    return java_identifier_part(c) || c == '@' || c == '#' || c == '*' || c == '-' || c == '+';
  }
  return java_identifier_part(c);
}

// UTF-8 for a code point; a lone surrogate gets its 3-byte form (as in WTF-8).
inline void append_code_point(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

// Spark's decimal parser for the default locale: all ',' removed, then java.math.BigDecimal,
// which takes any decimal digit of the BMP (Character.isDigit); out gets ASCII digits.
// False for any other non-ASCII character (BigDecimal rejects it).
bool java_decimal_text(std::string_view text, std::string& out);

// The text Jackson's generator writes for an integer token: canonical decimal digits,
// appended to out.
void canonical_integer(std::string_view text, std::string& out);

// Jackson's generator: s quoted, with short escapes for the usual control characters, \u00XX
// for the rest, supplementary characters and lone surrogates as escaped UTF-16 units, the rest
// as UTF-8; appended to out.
void append_quoted(std::string_view s, std::string& out);

// The string Spark stores: lone surrogates (kept by the Reader in WTF-8) become '?', as
// Java's String.getBytes(UTF_8) writes them. Returns s itself when it has none, else the
// text written into buffer.
std::string_view java_utf8(std::string_view s, std::string& buffer);

// The text of a malformed document for the corrupt record column: the document as decoded
// for reading (`units`, from decode_utf8_like_java: each malformed UTF-8 sequence one U+FFFD,
// as Java's decoder and so Spark's strings show it), so that the column is always valid UTF-8.
// Valid input is kept as is (doc is returned); otherwise the text is written into buffer.
// O(document), for malformed rows only.
std::string_view corrupt_record_text(std::string_view doc, const std::vector<char16_t>& units,
                                     std::string& buffer);

}  // namespace sliceflow::json
