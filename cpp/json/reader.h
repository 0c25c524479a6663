// A JSON tokenizer that behaves like Jackson's ReaderBasedJsonParser as Spark configures it
// (single quotes, NaN/Infinity, leading zeros, comments, ... per Options). It is the
// reference path: every document the simdjson fast path does not take is read here.
//
// Spark's from_json recovers from syntax errors by catching Jackson's exception and going on
// reading, so what Spark returns for a broken document depends on exactly where Jackson's
// parser stands after each error: its input position, its current token, its context stack
// and whether a string token is still unread. This class keeps the same state and changes it
// in the same order as Jackson does, including at every error. Like Jackson, it reads UTF-16
// code units, decoded from the bytes the way Java's UTF-8 decoder does it (java_text.h).
// reader.cpp holds the tokenizer, reader_numbers.cpp its number parsing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "json/java_text.h"  // decode_utf8_like_java gives the units a Reader reads
#include "json/options.h"

namespace sliceflow::json {

enum class Token : uint8_t {
  None,  // Jackson's null token: end of input (or no pending value after a failed name)
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
  explicit Reader(const Options& options);

  // Starts reading a document (UTF-16 units; they must outlive the reading); `tail` is what
  // decode_utf8_like_java returned.
  void reset(const char16_t* units, size_t size, size_t tail);
  // Starts reading the single value that begins at `begin`, as if it sat `depth` levels deep.
  void reset_at_value(const char16_t* units, size_t size, size_t tail, size_t begin, int depth);

  // Jackson's nextToken(). Throws SyntaxError, leaving the state as Jackson leaves it.
  Token next_token();
  Token current() const { return current_; }
  // Jackson's currentName(): for Start* tokens the name of the container's field.
  // Names are UTF-8, lone surrogates in their 3-byte form. nullptr: no name.
  const std::string* current_name() const;
  // Jackson's getText(): a string token is decoded on first access (which may throw);
  // numbers give their text (the sign kept, leading zeros dropped).
  std::string_view text();
  // Jackson's skipChildren().
  void skip_children();
  // Where the value of the last field name, or the last value token, starts (a unit index).
  size_t value_begin() const { return value_begin_; }
  // Jackson's currentLocation(): the unit just after what has been read (after skip_children,
  // just after the container's closing bracket).
  size_t position() const { return ptr_; }
  // Nesting depth of the current context (0 = root).
  int depth() const { return static_cast<int>(depth_); }

  // NaN / Infinity literals (VALUE_NUMBER_FLOAT tokens): 0 for NaN, +1 / -1 for the infinities.
  bool is_non_numeric() const { return non_numeric_ != kNotNonNumeric; }
  int non_numeric_sign() const { return non_numeric_; }

 private:
  static constexpr int kNotNonNumeric = 2;

  struct Context {
    enum Kind : uint8_t { Root, Array, Object };
    Kind kind = Root;
    int index = -1;
    bool has_name = false;
    std::string name;
  };

  Context& context() { return contexts_[depth_]; }
  bool in_root() const { return contexts_[depth_].kind == Context::Root; }
  bool expect_comma();
  void create_child(Context::Kind kind);
  void close_scope(int c);
  Token next_after_name();

  int skip_ws_or_end();
  int skip_comma(int c);
  int skip_after_comma();
  int skip_colon();
  void skip_comment();
  void skip_c_comment();
  void skip_line();
  void skip_cr();

  void parse_name(int quote);
  void set_name(size_t length);
  void handle_odd_name(int c);
  Token handle_odd_value(int c);
  Token handle_apos();
  void finish_string();
  void skip_string();
  int decode_escaped();
  void throw_unquoted_space(int c);
  void match_token(std::string_view word, size_t i);
  [[noreturn]] void report_invalid_token(size_t matched_length);

  Token parse_unsigned_number(int c);
  Token parse_signed_number(bool negative);
  Token parse_float(int c, size_t start, size_t ptr, bool negative, int int_len);
  Token parse_number2(bool negative, size_t start);
  Token after_fast_digits(int c, size_t start, size_t ptr, bool negative, int int_len);
  void end_fast_number(int c, size_t start, size_t ptr);
  int verify_no_leading_zeroes();
  Token handle_invalid_number_start(int c, bool negative, bool has_sign);
  void verify_root_space(int c);
  Token reset_int(int int_len);
  Token reset_float(int int_len, int fract_len, int exp_len);
  Token reset_as_nan(const char* text, int sign);
  void set_number_text(size_t begin, size_t end);
  size_t buffer_end(size_t pos) const;

  // UTF-16 units to UTF-8, pairing surrogates; lone surrogates get their 3-byte form.
  void begin_text(std::string& out);
  void add_unit(int unit);
  void add_units(size_t begin, size_t end);
  void end_text();

  [[noreturn]] void fail(const char* what) const;

  const Options& options_;
  const char16_t* buf_ = nullptr;
  size_t end_ = 0;
  size_t tail_ = SIZE_MAX;
  size_t ptr_ = 0;
  // The last of Jackson's 4000-unit input buffers that buffer_end() found: [begin, end).
  mutable size_t window_begin_ = 0;
  mutable size_t window_end_ = 0;

  Token current_ = Token::None;
  Token next_ = Token::None;  // the value token read together with a field name
  bool token_incomplete_ = false;
  size_t value_begin_ = 0;

  std::vector<Context> contexts_;
  size_t depth_ = 0;

  std::string string_text_;
  std::string name_scratch_;
  std::string number_text_;
  int non_numeric_ = kNotNonNumeric;

  std::string* text_out_ = nullptr;
  int pending_high_ = 0;
};

}  // namespace sliceflow::json
