#include "json/reader.h"

#include "json/errors.h"

namespace sliceflow::json {
namespace {

bool is_identifier_part(int c) {
  // Jackson ends a literal (true, NaN, ...) at the first character that cannot continue a
  // Java identifier; non-ASCII bytes count as identifier parts.
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '$' || c >= 0x80;
}

int hex_value(int c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

Reader::Reader(std::string_view doc, const Options& options) : doc_(doc), options_(options) {}

void Reader::fail(const std::string& what) const {
  throw SyntaxError(what + " at byte " + std::to_string(pos_));
}

int Reader::peek_char() {
  return pos_ < doc_.size() ? static_cast<unsigned char>(doc_[pos_]) : -1;
}

void Reader::skip_comment() {
  // At '/'; Spark's allowComments enables Java/C++ style comments only.
  if (!options_.allow_comments) fail("Unexpected character '/' (comments are not allowed)");
  ++pos_;
  const int c = peek_char();
  if (c == '/') {
    while (pos_ < doc_.size() && doc_[pos_] != '\n' && doc_[pos_] != '\r') ++pos_;
  } else if (c == '*') {
    ++pos_;
    for (;;) {
      if (pos_ + 1 >= doc_.size()) {
        pos_ = doc_.size();
        fail("Unexpected end-of-input in a comment");
      }
      if (doc_[pos_] == '*' && doc_[pos_ + 1] == '/') {
        pos_ += 2;
        return;
      }
      ++pos_;
    }
  } else {
    fail("Unexpected character after '/' (not a comment)");
  }
}

void Reader::skip_whitespace() {
  for (;;) {
    const int c = peek_char();
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      ++pos_;
    } else if (c == '/') {
      skip_comment();
    } else {
      return;
    }
  }
}

void Reader::append_utf8(uint32_t cp) {
  if (cp < 0x80) {
    scratch_.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    scratch_.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    scratch_.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    scratch_.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    scratch_.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    scratch_.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    scratch_.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    scratch_.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    scratch_.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    scratch_.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

// Copies one UTF-8 character from the input; a malformed sequence becomes U+FFFD per maximal
// subpart, as Java's UTF-8 decoder (InputStreamReader in Spark's from_json) replaces it.
void Reader::append_raw_utf8_char() {
  const auto byte = [&](size_t i) -> int {
    return i < doc_.size() ? static_cast<unsigned char>(doc_[i]) : -1;
  };
  const int b0 = byte(pos_);
  int need = 0;
  int lo = 0x80;
  int hi = 0xBF;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    need = 1;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    need = 2;
    if (b0 == 0xE0) lo = 0xA0;
    if (b0 == 0xED) hi = 0x9F;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    need = 3;
    if (b0 == 0xF0) lo = 0x90;
    if (b0 == 0xF4) hi = 0x8F;
  } else {
    ++pos_;
    append_utf8(0xFFFD);
    return;
  }
  if (b0 == 0xED && byte(pos_ + 1) >= 0xA0 && byte(pos_ + 1) <= 0xBF && byte(pos_ + 2) >= 0x80 &&
      byte(pos_ + 2) <= 0xBF) {
    // Java's decoder replaces an encoded surrogate as one malformed sequence of 3 bytes.
    pos_ += 3;
    append_utf8(0xFFFD);
    return;
  }
  size_t i = pos_ + 1;
  for (int k = 0; k < need; ++k, ++i) {
    const int b = byte(i);
    const int min = k == 0 ? lo : 0x80;
    const int max = k == 0 ? hi : 0xBF;
    if (b < min || b > max) {
      pos_ = i;
      append_utf8(0xFFFD);
      return;
    }
  }
  scratch_.append(doc_.data() + pos_, i - pos_);
  pos_ = i;
}

void Reader::read_string(char quote) {
  ++pos_;  // opening quote
  scratch_.clear();
  uint32_t pending_high = 0;  // an escaped high surrogate waiting for its low half
  // A lone surrogate is kept in its 3-byte (WTF-8) form: valid input never produces one, and
  // the converter turns it into '?' (Java's UTF-8 encoder) or "\\uD800" (Jackson's generator).
  auto flush_high = [&] {
    if (pending_high != 0) {
      append_utf8(pending_high);
      pending_high = 0;
    }
  };
  for (;;) {
    if (pos_ >= doc_.size()) fail("Unexpected end-of-input in a string value");
    const unsigned char c = static_cast<unsigned char>(doc_[pos_]);
    if (c == static_cast<unsigned char>(quote)) {
      ++pos_;
      flush_high();
      break;
    }
    if (c == '\\') {
      ++pos_;
      if (pos_ >= doc_.size()) fail("Unexpected end-of-input in a character escape");
      const char e = doc_[pos_++];
      if (e == 'u') {
        if (pos_ + 4 > doc_.size()) {
          pos_ = doc_.size();
          fail("Unexpected end-of-input in a \\u escape");
        }
        uint32_t unit = 0;
        for (int k = 0; k < 4; ++k) {
          const int h = hex_value(static_cast<unsigned char>(doc_[pos_ + static_cast<size_t>(k)]));
          if (h < 0) fail("Unexpected character in a \\u escape (expected a hex digit)");
          unit = (unit << 4) | static_cast<uint32_t>(h);
        }
        pos_ += 4;
        if (unit >= 0xD800 && unit <= 0xDBFF) {
          flush_high();
          pending_high = unit;
        } else if (unit >= 0xDC00 && unit <= 0xDFFF) {
          if (pending_high != 0) {
            append_utf8(0x10000 + ((pending_high - 0xD800) << 10) + (unit - 0xDC00));
            pending_high = 0;
          } else {
            append_utf8(unit);
          }
        } else {
          flush_high();
          append_utf8(unit);
        }
        continue;
      }
      flush_high();
      switch (e) {
        case '"':
        case '\\':
        case '/':
          scratch_.push_back(e);
          break;
        case 'b':
          scratch_.push_back('\b');
          break;
        case 'f':
          scratch_.push_back('\f');
          break;
        case 'n':
          scratch_.push_back('\n');
          break;
        case 'r':
          scratch_.push_back('\r');
          break;
        case 't':
          scratch_.push_back('\t');
          break;
        default:
          if ((e == '\'' && options_.allow_single_quotes) ||
              options_.allow_backslash_escaping_any_character) {
            // Any character may follow; a multi-byte one is copied whole.
            --pos_;
            if (static_cast<unsigned char>(e) >= 0x80) {
              append_raw_utf8_char();
            } else {
              scratch_.push_back(e);
              ++pos_;
            }
          } else {
            --pos_;
            fail("Unrecognized character escape");
          }
      }
      continue;
    }
    flush_high();
    if (c < 0x20) {
      if (!options_.allow_unquoted_control_chars) {
        fail("Illegal unquoted character (CTRL-CHAR): has to be escaped to be included in a string");
      }
      scratch_.push_back(static_cast<char>(c));
      ++pos_;
    } else if (c < 0x80) {
      // Copy a run of plain ASCII at once.
      size_t end = pos_ + 1;
      while (end < doc_.size()) {
        const unsigned char d = static_cast<unsigned char>(doc_[end]);
        if (d < 0x20 || d >= 0x80 || d == '\\' || d == static_cast<unsigned char>(quote)) break;
        ++end;
      }
      scratch_.append(doc_.data() + pos_, end - pos_);
      pos_ = end;
    } else {
      append_raw_utf8_char();
    }
  }
  text_ = scratch_;
}

void Reader::read_unquoted_name() {
  const size_t begin = pos_;
  while (pos_ < doc_.size() && is_identifier_part(static_cast<unsigned char>(doc_[pos_]))) ++pos_;
  scratch_.assign(doc_.data() + begin, pos_ - begin);
  text_ = scratch_;
}

void Reader::read_literal(std::string_view word) {
  if (doc_.substr(pos_, word.size()) != word) {
    fail("Unrecognized token: was expecting (JSON String, Number, Array, Object or token "
         "'null', 'true' or 'false')");
  }
  pos_ += word.size();
  if (is_identifier_part(peek_char())) fail("Unrecognized token");
}

void Reader::read_number() {
  const size_t begin = pos_;
  non_numeric_ = kNotNonNumeric;
  bool negative = false;
  if (doc_[pos_] == '-' || doc_[pos_] == '+') {
    negative = doc_[pos_] == '-';
    const bool plus = doc_[pos_] == '+';
    ++pos_;
    const int c = peek_char();
    if (c == 'I') {
      if (!options_.allow_non_numeric_numbers) fail("Non-standard token 'Infinity'");
      if (doc_.substr(pos_, 8) == "Infinity") {
        pos_ += 8;
      } else if (doc_.substr(pos_, 3) == "INF") {
        pos_ += 3;
      } else {
        fail("Unrecognized token");
      }
      if (is_identifier_part(peek_char())) fail("Unrecognized token");
      non_numeric_ = negative ? -1 : 1;
      token_ = Token::NumberFloat;
      text_ = doc_.substr(begin, pos_ - begin);
      return;
    }
    if (plus) fail("Unexpected character '+' (leading plus sign is not allowed)");
    if (c < '0' || c > '9') fail("Unexpected character after '-' (expected a digit)");
  }
  // Integer part.
  size_t int_begin = pos_;
  if (doc_[pos_] == '0' && pos_ + 1 < doc_.size() && doc_[pos_ + 1] >= '0' && doc_[pos_ + 1] <= '9') {
    if (!options_.allow_numeric_leading_zeros) fail("Invalid numeric value: Leading zeroes not allowed");
    while (pos_ + 1 < doc_.size() && doc_[pos_] == '0' && doc_[pos_ + 1] >= '0' && doc_[pos_ + 1] <= '9') {
      ++pos_;
    }
    int_begin = pos_;
  }
  while (pos_ < doc_.size() && doc_[pos_] >= '0' && doc_[pos_] <= '9') ++pos_;
  if (static_cast<int>(pos_ - int_begin) > options_.max_number_length) {
    fail("Number value length exceeds the maximum allowed");
  }
  bool is_float = false;
  if (peek_char() == '.') {
    is_float = true;
    ++pos_;
    const size_t frac = pos_;
    while (pos_ < doc_.size() && doc_[pos_] >= '0' && doc_[pos_] <= '9') ++pos_;
    if (pos_ == frac) fail("Unexpected character: Decimal point not followed by a digit");
  }
  if (peek_char() == 'e' || peek_char() == 'E') {
    is_float = true;
    ++pos_;
    if (peek_char() == '+' || peek_char() == '-') ++pos_;
    const size_t exp = pos_;
    while (pos_ < doc_.size() && doc_[pos_] >= '0' && doc_[pos_] <= '9') ++pos_;
    if (pos_ == exp) fail("Unexpected character: Exponent indicator not followed by a digit");
  }
  if (is_float && static_cast<int>(pos_ - begin) > options_.max_number_length) {
    fail("Number value length exceeds the maximum allowed");
  }
  token_ = is_float ? Token::NumberFloat : Token::NumberInt;
  if (int_begin != begin + (negative ? 1 : 0)) {
    // Leading zeros were skipped: the value's text is what Jackson keeps, the sign kept.
    scratch_.assign(negative ? "-" : "");
    scratch_.append(doc_.data() + int_begin, pos_ - int_begin);
    text_ = scratch_;
  } else {
    text_ = doc_.substr(begin, pos_ - begin);
  }
  if (stack_.empty()) {
    // Jackson requires white space (or the end) after a root-level number.
    const int c = peek_char();
    if (c != -1 && c != ' ' && c != '\t' && c != '\n' && c != '\r') {
      fail("Unexpected character after a root-level number");
    }
  }
}

Token Reader::read_value(int c) {
  non_numeric_ = kNotNonNumeric;
  switch (c) {
    case '{':
      ++pos_;
      return token_ = Token::StartObject;
    case '[':
      ++pos_;
      return token_ = Token::StartArray;
    case '"':
      read_string('"');
      return token_ = Token::String;
    case '\'':
      if (!options_.allow_single_quotes) fail("Unexpected character (single quotes are not allowed)");
      read_string('\'');
      return token_ = Token::String;
    case 't':
      read_literal("true");
      return token_ = Token::True;
    case 'f':
      read_literal("false");
      return token_ = Token::False;
    case 'n':
      read_literal("null");
      return token_ = Token::Null;
    case 'N':
    case 'I': {
      const std::string_view word = c == 'N' ? "NaN" : "Infinity";
      const size_t begin = pos_;
      read_literal(word);
      if (!options_.allow_non_numeric_numbers) {
        pos_ = begin;
        fail("Non-standard token '" + std::string(word) + "'");
      }
      non_numeric_ = c == 'N' ? 0 : 1;
      text_ = doc_.substr(begin, word.size());
      return token_ = Token::NumberFloat;
    }
    default:
      if (c == '-' || c == '+' || (c >= '0' && c <= '9')) {
        read_number();
        return token_;
      }
      if (c == -1) fail("Unexpected end-of-input: expected a value");
      fail("Unexpected character: expected a JSON value");
  }
}

// Hands out a value token: containers open their context now, scalars end a value.
Token Reader::begin_value(Token t) {
  token_ = t;
  if (t == Token::StartObject || t == Token::StartArray) {
    const size_t depth = stack_.size() + 1;
    if (static_cast<int>(depth) > options_.max_nesting_depth) {
      fail("Document nesting depth exceeds the maximum allowed");
    }
    stack_.push_back(t == Token::StartObject ? 'o' : 'a');
    if (names_.size() < depth) names_.resize(depth);
    if (has_name_.size() < depth) has_name_.resize(depth);
    has_name_[depth - 1] = false;
    expect_ = t == Token::StartObject ? Expect::NameOrEnd : Expect::ValueOrEnd;
  } else {
    expect_ = stack_.empty() ? Expect::Value : Expect::CommaOrEnd;
  }
  return token_;
}

Token Reader::close_container() {
  ++pos_;
  token_ = stack_.back() == 'o' ? Token::EndObject : Token::EndArray;
  stack_.pop_back();
  expect_ = stack_.empty() ? Expect::Value : Expect::CommaOrEnd;
  return token_;
}

Token Reader::next() {
  if (pending_ != Token::None) {
    const Token t = pending_;
    pending_ = Token::None;
    token_begin_ = pending_begin_;
    text_ = pending_text_;
    non_numeric_ = pending_non_numeric_;
    return begin_value(t);
  }
  skip_whitespace();
  int c = peek_char();
  token_begin_ = pos_;
  if (stack_.empty()) {
    // Jackson reads a sequence of root-level values.
    if (c == -1) return token_ = Token::None;
    return begin_value(read_value(c));
  }
  const char closer = stack_.back() == 'o' ? '}' : ']';
  switch (expect_) {
    case Expect::CommaOrEnd:
      if (c == closer) return close_container();
      if (c != ',') {
        if (c == -1) fail("Unexpected end-of-input: expected close marker");
        fail(std::string("Unexpected character: was expecting comma to separate ") +
             (closer == '}' ? "Object entries" : "Array entries"));
      }
      ++pos_;
      skip_whitespace();
      c = peek_char();
      token_begin_ = pos_;
      expect_ = closer == '}' ? Expect::Name : Expect::Value;
      break;
    case Expect::NameOrEnd:
    case Expect::ValueOrEnd:
      if (c == closer) return close_container();
      expect_ = closer == '}' ? Expect::Name : Expect::Value;
      break;
    default:
      break;
  }
  if (expect_ == Expect::Name) {
    if (c == '"') {
      read_string('"');
    } else if (c == '\'' && options_.allow_single_quotes) {
      read_string('\'');
    } else if (options_.allow_unquoted_field_names && c != -1 && is_identifier_part(c)) {
      read_unquoted_name();
    } else {
      if (c == -1) fail("Unexpected end-of-input: expected a field name");
      fail("Unexpected character: was expecting double-quote to start field name");
    }
    const size_t depth = stack_.size();
    names_[depth - 1].assign(text_.data(), text_.size());
    has_name_[depth - 1] = true;
    skip_whitespace();
    if (peek_char() != ':') {
      fail("Unexpected character: was expecting a colon to separate field name and value");
    }
    ++pos_;
    // Like Jackson, read the value with its name, so a bad value fails the name's token.
    skip_whitespace();
    pending_begin_ = pos_;
    pending_ = read_value(peek_char());
    pending_text_ = text_;
    pending_non_numeric_ = non_numeric_;
    token_ = Token::FieldName;
    text_ = names_[depth - 1];
    return token_;
  }
  return begin_value(read_value(c));
}

const std::string* Reader::current_name() const {
  size_t context = stack_.size();
  if ((token_ == Token::StartObject || token_ == Token::StartArray) && context > 0) --context;
  if (context == 0 || stack_[context - 1] != 'o' || !has_name_[context - 1]) return nullptr;
  return &names_[context - 1];
}

void Reader::skip_children() {
  if (token_ != Token::StartObject && token_ != Token::StartArray) return;
  int open = 1;
  while (open > 0) {
    const Token t = next();
    if (t == Token::None) fail("Unexpected end-of-input while skipping a value");
    if (t == Token::StartObject || t == Token::StartArray) ++open;
    if (t == Token::EndObject || t == Token::EndArray) --open;
  }
}

}  // namespace sliceflow::json
