// A JSON tokenizer with the grammar of Jackson's ReaderBasedJsonParser as Spark configures
// it (single quotes, NaN/Infinity, leading zeros, comments, ... per Options). It is the
// reference path: every document the simdjson fast path does not take is read here.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "json/options.h"

namespace sliceflow::json {

enum class Token : uint8_t {
  None,  // end of input
  StartObject,
  EndObject,
  StartArray,
  EndArray,
  FieldName,
  String,
  NumberInt,
  NumberFloat,
  True,
  False,
  Null,
};

class Reader {
 public:
  Reader(std::string_view doc, const Options& options);

  // The next token; Token::None at the end of the root value or of the input.
  Token next();
  Token current() const { return token_; }
  // Field names and strings: the unescaped text (UTF-8, lone surrogates as '?').
  // Numbers: their text as written (after the sign handling of NaN/Infinity).
  std::string_view text() const { return text_; }
  // Non-numeric numbers: +1 for Infinity, -1 for -Infinity, 0 for NaN; only valid for
  // NumberFloat tokens that were NaN/Infinity literals.
  bool is_non_numeric() const { return non_numeric_ != kNotNonNumeric; }
  int non_numeric_sign() const { return non_numeric_; }
  // With the current token a Start*, skips to the matching End*.
  void skip_children();
  // Byte offsets of the current token in the document.
  size_t token_begin() const { return token_begin_; }
  size_t position() const { return pos_; }
  // Jackson's currentName(): the field the current token belongs to; for Start* tokens the
  // field of the container itself; nullptr inside arrays and at the root.
  const std::string* current_name() const;

 private:
  static constexpr int kNotNonNumeric = 2;

  [[noreturn]] void fail(const std::string& what) const;
  int peek_char();
  void skip_whitespace();
  void skip_comment();
  void read_string(char quote);
  void read_unquoted_name();
  void read_number();
  void read_literal(std::string_view word);
  Token read_value(int c);
  Token begin_value(Token t);
  Token close_container();
  void append_utf8(uint32_t cp);
  void append_raw_utf8_char();

  std::string_view doc_;
  const Options& options_;
  size_t pos_ = 0;
  size_t token_begin_ = 0;
  Token token_ = Token::None;
  int non_numeric_ = kNotNonNumeric;
  std::string_view text_;
  std::string scratch_;
  // Jackson reads the value after a field name together with the name; it is handed out by
  // the following next() call.
  Token pending_ = Token::None;
  size_t pending_begin_ = 0;
  std::string_view pending_text_;
  int pending_non_numeric_ = kNotNonNumeric;

  // Container stack: 'o' object, 'a' array, with the current field name of each object.
  std::vector<char> stack_;
  std::vector<std::string> names_;
  std::vector<bool> has_name_;
  enum class Expect : uint8_t { Value, NameOrEnd, Name, ColonValue, CommaOrEnd, ValueOrEnd };
  Expect expect_ = Expect::Value;
};

}  // namespace sliceflow::json
