// The reference reader (see reader.h): state, contexts, tokens, white space and comments, names,
// strings and literals. Numbers are in reader_numbers.cpp.
#include "json/reader.h"

#include "json/errors.h"
#include "json/java_text.h"

namespace sliceflow::json {
namespace {

// Jackson's ErrorReportConfiguration: an unrecognized token is read on for its message up to
// this many characters (which moves the input position).
constexpr size_t kMaxErrorTokenLength = 256;

// StreamReadConstraints.DEFAULT_MAX_NAME_LEN (Spark does not change it): in UTF-16 units.
constexpr size_t kMaxNameLength = 50000;

}  // namespace

Reader::Reader(const Options& options) : options_(options) { contexts_.resize(8); }

void Reader::reset(const char16_t* units, size_t size, size_t tail) {
  buf_ = units;
  end_ = size;
  tail_ = tail;
  ptr_ = 0;
  window_begin_ = 0;
  window_end_ = 0;
  current_ = Token::None;
  next_ = Token::None;
  token_incomplete_ = false;
  value_begin_ = 0;
  depth_ = 0;
  contexts_[0].kind = Context::Root;
  contexts_[0].index = -1;
  contexts_[0].has_name = false;
  non_numeric_ = kNotNonNumeric;
}

void Reader::reset_at_value(const char16_t* units, size_t size, size_t tail, size_t begin,
                            int depth) {
  reset(units, size, tail);
  ptr_ = begin;
  const size_t d = static_cast<size_t>(depth);
  if (contexts_.size() <= d + 1) contexts_.resize(d + 2);
  for (size_t k = 1; k <= d; ++k) {
    contexts_[k].kind = Context::Array;
    contexts_[k].index = -1;
    contexts_[k].has_name = false;
  }
  depth_ = d;
}

void Reader::fail(const char* what) const {
  throw SyntaxError(std::string(what) + " at character " + std::to_string(ptr_));
}

// ---------------------------------------------------------------------------------------------
// Text accumulation.

void Reader::begin_text(std::string& out) {
  out.clear();
  text_out_ = &out;
  pending_high_ = 0;
}

void Reader::add_unit(int unit) {
  const uint32_t u = static_cast<uint32_t>(unit);
  if (u >= 0xD800 && u <= 0xDBFF) {
    if (pending_high_ != 0) append_code_point(*text_out_, static_cast<uint32_t>(pending_high_));
    pending_high_ = unit;
    return;
  }
  if (pending_high_ != 0) {
    const uint32_t high = static_cast<uint32_t>(pending_high_);
    pending_high_ = 0;
    if (u >= 0xDC00 && u <= 0xDFFF) {
      append_code_point(*text_out_, 0x10000 + ((high - 0xD800) << 10) + (u - 0xDC00));
      return;
    }
    append_code_point(*text_out_, high);
  }
  append_code_point(*text_out_, u);
}

void Reader::add_units(size_t begin, size_t end) {
  for (size_t k = begin; k < end; ++k) {
    const char16_t u = buf_[k];
    if (u < 0x80 && pending_high_ == 0) {
      text_out_->push_back(static_cast<char>(u));
    } else {
      add_unit(u);
    }
  }
}

void Reader::end_text() {
  if (pending_high_ != 0) {
    append_code_point(*text_out_, static_cast<uint32_t>(pending_high_));
    pending_high_ = 0;
  }
}

// ---------------------------------------------------------------------------------------------
// Contexts.

bool Reader::expect_comma() {
  Context& c = context();
  const int ix = ++c.index;
  return c.kind != Context::Root && ix > 0;
}

void Reader::create_child(Context::Kind kind) {
  // Jackson enters the new context first and checks the depth limit afterwards.
  ++depth_;
  if (contexts_.size() <= depth_) contexts_.resize(depth_ * 2);
  Context& c = contexts_[depth_];
  c.kind = kind;
  c.index = -1;
  c.has_name = false;
  if (static_cast<int>(depth_) > options_.max_nesting_depth) {
    fail("Document nesting depth exceeds the maximum allowed");
  }
}

void Reader::close_scope(int c) {
  if (c == ']') {
    if (context().kind != Context::Array) fail("Unexpected close marker ']': expected '}'");
    --depth_;
    current_ = Token::EndArray;
  } else {
    if (context().kind != Context::Object) fail("Unexpected close marker '}': expected ']'");
    --depth_;
    current_ = Token::EndObject;
  }
}

const std::string* Reader::current_name() const {
  if ((current_ == Token::StartObject || current_ == Token::StartArray) && depth_ > 0) {
    const Context& parent = contexts_[depth_ - 1];
    return parent.has_name ? &parent.name : nullptr;
  }
  const Context& c = contexts_[depth_];
  return c.has_name ? &c.name : nullptr;
}

// ---------------------------------------------------------------------------------------------
// Tokens.

Token Reader::next_token() {
  if (current_ == Token::FieldName) return next_after_name();
  if (token_incomplete_) skip_string();
  int c = skip_ws_or_end();
  if (c < 0) {
    current_ = Token::None;
    return current_;
  }
  if (c == ']' || c == '}') {
    close_scope(c);
    return current_;
  }
  if (expect_comma()) c = skip_comma(c);
  const bool in_object = context().kind == Context::Object;
  if (in_object) {
    if (c == '"') {
      parse_name('"');
    } else {
      handle_odd_name(c);
    }
    current_ = Token::FieldName;
    c = skip_colon();
  }
  value_begin_ = ptr_ - 1;
  non_numeric_ = kNotNonNumeric;
  Token t = Token::None;
  switch (c) {
    case '"':
      token_incomplete_ = true;
      t = Token::String;
      break;
    case '[':
      if (!in_object) create_child(Context::Array);
      t = Token::StartArray;
      break;
    case '{':
      if (!in_object) create_child(Context::Object);
      t = Token::StartObject;
      break;
    case '}':
      fail("Unexpected character ('}'): expected a value");
    case 't':
      match_token("true", 1);
      t = Token::True;
      break;
    case 'f':
      match_token("false", 1);
      t = Token::False;
      break;
    case 'n':
      match_token("null", 1);
      t = Token::Null;
      break;
    case '-':
      t = parse_signed_number(true);
      break;
    case '0':
    case '1':
    case '2':
    case '3':
    case '4':
    case '5':
    case '6':
    case '7':
    case '8':
    case '9':
      t = parse_unsigned_number(c);
      break;
    default:  // '+' and '.' included: Spark allows neither a leading plus nor a leading point
      t = handle_odd_value(c);
      break;
  }
  if (in_object) {
    next_ = t;
    return current_;
  }
  current_ = t;
  return t;
}

Token Reader::next_after_name() {
  const Token t = next_;
  next_ = Token::None;
  if (t == Token::StartArray) {
    create_child(Context::Array);
  } else if (t == Token::StartObject) {
    create_child(Context::Object);
  }
  current_ = t;
  return t;
}

void Reader::skip_children() {
  if (current_ != Token::StartObject && current_ != Token::StartArray) return;
  int open = 1;
  for (;;) {
    const Token t = next_token();
    if (t == Token::None) {
      if (!in_root()) fail("Unexpected end-of-input: expected close marker");
      return;
    }
    if (t == Token::StartObject || t == Token::StartArray) {
      ++open;
    } else if (t == Token::EndObject || t == Token::EndArray) {
      if (--open == 0) return;
    }
  }
}

std::string_view Reader::text() {
  switch (current_) {
    case Token::String:
      if (token_incomplete_) {
        token_incomplete_ = false;
        finish_string();
      }
      // Jackson checks StreamReadConstraints.maxStringLength when it hands the text over,
      // after the string has been read: the parser stands behind it, and the caller's
      // conversion fails (UTF-8 bytes are at least the UTF-16 units, so short text is not
      // counted).
      if (string_text_.size() > static_cast<size_t>(options_.max_string_length)) {
        size_t units = 0;
        for (const char ch : string_text_) {
          const auto b = static_cast<unsigned char>(ch);
          if ((b & 0xC0) != 0x80) ++units;  // a code point starts here
          if (b >= 0xF0) ++units;           // ... and needs a surrogate pair
        }
        if (units > static_cast<size_t>(options_.max_string_length)) {
          throw ConversionError("String value length (" + std::to_string(units) +
                                ") exceeds the maximum length (" +
                                std::to_string(options_.max_string_length) +
                                ", from `StreamReadConstraints.getMaxStringLength()`)");
        }
      }
      return string_text_;
    case Token::FieldName: {
      const Context& c = contexts_[depth_];
      return c.has_name ? std::string_view(c.name) : std::string_view();
    }
    case Token::NumberInt:
    case Token::NumberFloat:
      return number_text_;
    case Token::StartObject:
      return "{";
    case Token::EndObject:
      return "}";
    case Token::StartArray:
      return "[";
    case Token::EndArray:
      return "]";
    case Token::True:
      return "true";
    case Token::False:
      return "false";
    case Token::Null:
      return "null";
    default:
      return {};
  }
}

// ---------------------------------------------------------------------------------------------
// White space, separators and comments.

void Reader::skip_cr() {
  if (ptr_ < end_ && buf_[ptr_] == '\n') ++ptr_;
}

int Reader::skip_ws_or_end() {
  for (;;) {
    if (ptr_ >= end_) {
      if (!in_root()) fail("Unexpected end-of-input: expected close marker");
      return -1;
    }
    const int c = buf_[ptr_++];
    if (c > ' ') {
      if (c == '/') {
        skip_comment();
        continue;
      }
      return c;  // '#' too: YAML comments are not enabled
    }
    if (c == ' ' || c == '\t' || c == '\n') continue;
    if (c == '\r') {
      skip_cr();
      continue;
    }
    fail("Illegal character: only regular white space (\\r, \\n, \\t) is allowed between tokens");
  }
}

int Reader::skip_comma(int c) {
  if (c != ',') {
    fail(context().kind == Context::Object
             ? "Unexpected character: was expecting comma to separate Object entries"
             : "Unexpected character: was expecting comma to separate Array entries");
  }
  return skip_after_comma();
}

int Reader::skip_after_comma() {
  for (;;) {
    if (ptr_ >= end_) fail("Unexpected end-of-input within/between entries");
    const int c = buf_[ptr_++];
    if (c > ' ') {
      if (c == '/') {
        skip_comment();
        continue;
      }
      return c;
    }
    if (c == ' ' || c == '\t' || c == '\n') continue;
    if (c == '\r') {
      skip_cr();
      continue;
    }
    fail("Illegal character: only regular white space (\\r, \\n, \\t) is allowed between tokens");
  }
}

int Reader::skip_colon() {
  bool got_colon = false;
  for (;;) {
    if (ptr_ >= end_) fail("Unexpected end-of-input within/between Object entries");
    const int c = buf_[ptr_++];
    if (c > ' ') {
      if (c == '/') {
        skip_comment();
        continue;
      }
      if (got_colon) return c;
      if (c != ':')
        fail("Unexpected character: was expecting a colon to separate field name and value");
      got_colon = true;
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\n') continue;
    if (c == '\r') {
      skip_cr();
      continue;
    }
    fail("Illegal character: only regular white space (\\r, \\n, \\t) is allowed between tokens");
  }
}

void Reader::skip_comment() {
  // At the character after '/'.
  if (!options_.allow_comments) fail("Unexpected character ('/'): comments are not allowed");
  if (ptr_ >= end_) fail("Unexpected end-of-input in a comment");
  const int c = buf_[ptr_++];
  if (c == '/') {
    skip_line();
  } else if (c == '*') {
    skip_c_comment();
  } else {
    fail("Unexpected character: was expecting either '*' or '/' for a comment");
  }
}

void Reader::skip_c_comment() {
  while (ptr_ < end_) {
    const int c = buf_[ptr_++];
    if (c <= '*') {
      if (c == '*') {
        if (ptr_ >= end_) break;
        if (buf_[ptr_] == '/') {
          ++ptr_;
          return;
        }
        continue;
      }
      if (c < ' ') {
        if (c == '\r') {
          skip_cr();
        } else if (c != '\n' && c != '\t') {
          fail("Illegal character in a comment");
        }
      }
    }
  }
  fail("Unexpected end-of-input in a comment");
}

void Reader::skip_line() {
  while (ptr_ < end_) {
    const int c = buf_[ptr_++];
    if (c < ' ') {
      if (c == '\n') return;
      if (c == '\r') {
        skip_cr();
        return;
      }
      if (c != '\t') fail("Illegal character in a comment");
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Names and strings.

void Reader::throw_unquoted_space(int c) {
  if (!options_.allow_unquoted_control_chars || c > ' ') {
    fail("Illegal unquoted character (CTRL-CHAR): has to be escaped using backslash");
  }
}

void Reader::set_name(size_t length) {
  // Like Jackson, the context takes the name only once it has been read completely, and
  // after the length check of its symbol table (StreamReadConstraints.maxNameLength).
  if (length > kMaxNameLength) fail("Name length exceeds the maximum allowed");
  if (options_.exact_string_text) {
    // Jackson's parser over bytes builds a name from UTF-8 and refuses a lone surrogate (an
    // escape such as \ud800 without its pair): read.json fails the record there.
    for (size_t i = 0; i + 1 < name_scratch_.size(); ++i) {
      if (static_cast<unsigned char>(name_scratch_[i]) == 0xED &&
          static_cast<unsigned char>(name_scratch_[i + 1]) >= 0xA0) {
        fail("Invalid UTF-16 surrogate in a field name");
      }
    }
  }
  Context& ctx = context();
  ctx.name.assign(name_scratch_);
  ctx.has_name = true;
}

void Reader::parse_name(int quote) {
  // At the character after the opening quote.
  begin_text(name_scratch_);
  size_t length = 0;
  for (;;) {
    if (ptr_ >= end_) fail("Unexpected end-of-input in field name");
    int c = buf_[ptr_++];
    if (c <= '\\') {
      if (c == '\\') {
        c = decode_escaped();
      } else if (c <= quote) {
        if (c == quote) break;
        if (c < ' ') throw_unquoted_space(c);
      }
    }
    add_unit(c);
    ++length;
  }
  end_text();
  set_name(length);
}

void Reader::handle_odd_name(int c) {
  if (c == '\'' && options_.allow_single_quotes) {
    parse_name('\'');
    return;
  }
  if (!options_.allow_unquoted_field_names) {
    fail("Unexpected character: was expecting double-quote to start field name");
  }
  if (!unquoted_name_char(c)) {
    fail(
        "Unexpected character: was expecting either valid name character (for unquoted name) or "
        "double-quote (for quoted) to start field name");
  }
  begin_text(name_scratch_);
  add_unit(c);
  size_t length = 1;
  while (ptr_ < end_ && unquoted_name_char(buf_[ptr_])) {
    add_unit(buf_[ptr_++]);
    ++length;
  }
  end_text();
  set_name(length);
}

int Reader::decode_escaped() {
  if (ptr_ >= end_) fail("Unexpected end-of-input in character escape sequence");
  const int c = buf_[ptr_++];
  switch (c) {
    case 'b':
      return '\b';
    case 't':
      return '\t';
    case 'n':
      return '\n';
    case 'f':
      return '\f';
    case 'r':
      return '\r';
    case '"':
    case '/':
    case '\\':
      return c;
    case 'u':
      break;
    default:
      if (options_.allow_backslash_escaping_any_character) return c;
      if (c == '\'' && options_.allow_single_quotes) return c;
      fail("Unrecognized character escape");
  }
  int value = 0;
  for (int k = 0; k < 4; ++k) {
    if (ptr_ >= end_) fail("Unexpected end-of-input in character escape sequence");
    const int ch = buf_[ptr_++];
    const int digit = hex_value(ch);
    if (digit < 0) fail("Unexpected character: expected a hex-digit for character escape sequence");
    value = (value << 4) | digit;
  }
  return value;
}

void Reader::finish_string() {
  // At the character after the opening quote.
  size_t ptr = ptr_;
  while (ptr < end_) {
    const int c = buf_[ptr];
    if (c == '"') {
      begin_text(string_text_);
      add_units(ptr_, ptr);
      end_text();
      ptr_ = ptr + 1;
      return;
    }
    if (c == '\\' || c < ' ') break;
    ++ptr;
  }
  begin_text(string_text_);
  add_units(ptr_, ptr);
  ptr_ = ptr;
  for (;;) {
    if (ptr_ >= end_)
      fail("Unexpected end-of-input: was expecting closing quote for a string value");
    int c = buf_[ptr_++];
    if (c == '"') break;
    if (c == '\\') {
      c = decode_escaped();
    } else if (c < ' ') {
      throw_unquoted_space(c);
    }
    add_unit(c);
  }
  end_text();
}

void Reader::skip_string() {
  token_incomplete_ = false;
  for (;;) {
    if (ptr_ >= end_)
      fail("Unexpected end-of-input: was expecting closing quote for a string value");
    const int c = buf_[ptr_++];
    if (c <= '\\') {
      if (c == '\\') {
        decode_escaped();
      } else if (c <= '"') {
        if (c == '"') return;
        if (c < ' ') throw_unquoted_space(c);
      }
    }
  }
}

Token Reader::handle_apos() {
  // A single-quoted string is read eagerly.
  begin_text(string_text_);
  for (;;) {
    if (ptr_ >= end_)
      fail("Unexpected end-of-input: was expecting closing quote for a string value");
    int c = buf_[ptr_++];
    if (c <= '\\') {
      if (c == '\\') {
        c = decode_escaped();
      } else if (c <= '\'') {
        if (c == '\'') break;
        if (c < ' ') throw_unquoted_space(c);
      }
    }
    add_unit(c);
  }
  end_text();
  return Token::String;
}

// ---------------------------------------------------------------------------------------------
// Literals.

void Reader::match_token(std::string_view word, size_t i) {
  const size_t len = word.size();
  do {
    if (ptr_ >= end_ || buf_[ptr_] != static_cast<char16_t>(word[i])) report_invalid_token(i);
    ++ptr_;
  } while (++i < len);
  if (ptr_ >= end_) return;
  const int c = buf_[ptr_];
  if (c >= '0' && c != ']' && c != '}' && java_identifier_part(c)) report_invalid_token(len);
}

void Reader::report_invalid_token(size_t matched_length) {
  // Jackson reads on over identifier characters to quote the token in its message.
  size_t length = matched_length;
  while (ptr_ < end_) {
    if (!java_identifier_part(buf_[ptr_])) break;
    ++ptr_;
    if (++length >= kMaxErrorTokenLength) break;
  }
  fail(
      "Unrecognized token: was expecting (JSON String, Number, Array, Object or token 'null', "
      "'true' or 'false')");
}

Token Reader::handle_odd_value(int c) {
  switch (c) {
    case '\'':
      if (options_.allow_single_quotes) return handle_apos();
      break;
    case 'N':
      match_token("NaN", 1);
      if (options_.allow_non_numeric_numbers) return reset_as_nan("NaN", 0);
      fail("Non-standard token 'NaN': enable `JsonReadFeature.ALLOW_NON_NUMERIC_NUMBERS` to allow");
    case 'I':
      match_token("Infinity", 1);
      if (options_.allow_non_numeric_numbers) return reset_as_nan("Infinity", 1);
      fail(
          "Non-standard token 'Infinity': enable `JsonReadFeature.ALLOW_NON_NUMERIC_NUMBERS` to "
          "allow");
    case '+':
      if (ptr_ >= end_) fail("Unexpected end-of-input in a Number value");
      return handle_invalid_number_start(buf_[ptr_++], false, true);
    default:
      break;
  }
  if (java_identifier_start(c)) report_invalid_token(1);
  fail(
      "Unexpected character: expected a valid value (JSON String, Number, Array, Object or token "
      "'null', 'true' or 'false')");
}

}  // namespace sliceflow::json
