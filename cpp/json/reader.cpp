#include "json/reader.h"

#include "json/errors.h"

namespace sliceflow::json {
namespace {

// Jackson's ErrorReportConfiguration: an unrecognized token is read on for its message up to
// this many characters (which moves the input position).
constexpr size_t kMaxErrorTokenLength = 256;

// StreamReadConstraints.DEFAULT_MAX_NAME_LEN (Spark does not change it): in UTF-16 units.
constexpr size_t kMaxNameLength = 50000;

bool is_digit(int c) { return c >= '0' && c <= '9'; }

int hex_value(int c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool in_range(int c, int lo, int hi) { return c >= lo && c <= hi; }

// Java's Character.isJavaIdentifierPart for one UTF-16 unit: exact for Latin-1, by blocks
// above (letters and marks are parts, punctuation and symbols are not).
bool java_identifier_part(int c) {
  if (c < 0x80) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || is_digit(c) || c == '_' ||
           c == '$' || c <= 0x08 || in_range(c, 0x0E, 0x1B) || c == 0x7F;
  }
  if (c < 0xA0) return true;  // C1 controls are "identifier ignorable"
  if (c < 0x100) {
    return in_range(c, 0xA2, 0xA5) || c == 0xAA || c == 0xAD || c == 0xB5 || c == 0xBA ||
           (c >= 0xC0 && c != 0xD7 && c != 0xF7);
  }
  if (in_range(c, 0xD800, 0xDFFF)) return false;
  if (in_range(c, 0x02C2, 0x02C5) || in_range(c, 0x02D2, 0x02DF) || in_range(c, 0x02E5, 0x02EB) ||
      c == 0x02ED || in_range(c, 0x02EF, 0x02FF) || c == 0x0375 || c == 0x037E ||
      in_range(c, 0x0384, 0x0385) || c == 0x0387 || c == 0x03F6) {
    return false;
  }
  if (in_range(c, 0x2000, 0x206F)) {
    return in_range(c, 0x200B, 0x200F) || in_range(c, 0x202A, 0x202E) ||
           in_range(c, 0x203F, 0x2040) || c == 0x2054 || in_range(c, 0x2060, 0x2064) ||
           in_range(c, 0x2066, 0x206F);
  }
  if (in_range(c, 0x2070, 0x209F)) return c == 0x2071 || c == 0x207F || in_range(c, 0x2090, 0x209C);
  if (in_range(c, 0x20A0, 0x20FF)) return true;  // currency symbols, combining marks
  if (in_range(c, 0x2100, 0x2BFF)) return in_range(c, 0x2160, 0x2188);
  if (in_range(c, 0x2E00, 0x2E7F)) return false;
  if (in_range(c, 0x3000, 0x303F)) {
    return in_range(c, 0x3005, 0x3007) || in_range(c, 0x3021, 0x3029) ||
           in_range(c, 0x3031, 0x3035) || in_range(c, 0x3038, 0x303C);
  }
  if (in_range(c, 0xFE30, 0xFE4F)) return in_range(c, 0xFE33, 0xFE34) || in_range(c, 0xFE4D, 0xFE4F);
  if (in_range(c, 0xFF00, 0xFFEF)) {
    return c == 0xFF04 || in_range(c, 0xFF10, 0xFF19) || in_range(c, 0xFF21, 0xFF3A) ||
           c == 0xFF3F || in_range(c, 0xFF41, 0xFF5A) || in_range(c, 0xFF66, 0xFFDC) ||
           in_range(c, 0xFFE0, 0xFFE1) || in_range(c, 0xFFE5, 0xFFE6);
  }
  if (in_range(c, 0xFFF0, 0xFFFF)) return in_range(c, 0xFFF9, 0xFFFB);
  return true;
}

// Character.isJavaIdentifierStart: parts that are not digits, marks or ignorable.
bool java_identifier_start(int c) {
  if (c < 0x80) return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '$';
  if (c < 0xA0 || c == 0xAD) return false;
  if (in_range(c, 0x0300, 0x036F) || in_range(c, 0x20D0, 0x20FF) || in_range(c, 0x200B, 0x200F) ||
      in_range(c, 0x202A, 0x202E) || in_range(c, 0x2060, 0x206F) || c == 0xFEFF ||
      in_range(c, 0xFF10, 0xFF19) || in_range(c, 0xFFF9, 0xFFFB)) {
    return false;
  }
  return java_identifier_part(c);
}

// CharTypes.getInputCodeLatin1JsNames: characters allowed in unquoted field names.
bool unquoted_name_char(int c) {
  if (c < 256) {
    if (c < 33) return false;
    return java_identifier_part(c) || c == '@' || c == '#' || c == '*' || c == '-' || c == '+';
  }
  return java_identifier_part(c);
}

bool continuation(unsigned b) { return (b & 0xC0) == 0x80; }

// UTF-8 for a code point; a lone surrogate gets its 3-byte form (as in WTF-8).
void append_code_point(std::string& out, uint32_t cp) {
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

}  // namespace

size_t decode_utf8_like_java(std::string_view bytes, std::vector<char16_t>& out) {
  const size_t n = bytes.size();
  if (out.size() < n) out.resize(n);
  char16_t* const dst = out.data();
  size_t w = 0;
  size_t i = 0;
  const auto at = [&](size_t k) { return static_cast<unsigned>(static_cast<unsigned char>(bytes[k])); };
  constexpr char16_t kReplacement = 0xFFFD;
  size_t tail = SIZE_MAX;
  while (i < n) {
    const unsigned b0 = at(i);
    if (b0 < 0x80) {
      dst[w++] = static_cast<char16_t>(b0);
      ++i;
      continue;
    }
    const size_t remaining = n - i;
    if (b0 >= 0xC2 && b0 <= 0xDF) {
      if (remaining < 2) {
        tail = w;
        dst[w++] = kReplacement;
        i = n;
      } else if (!continuation(at(i + 1))) {
        dst[w++] = kReplacement;
        i += 1;
      } else {
        dst[w++] = static_cast<char16_t>(((b0 & 0x1F) << 6) | (at(i + 1) & 0x3F));
        i += 2;
      }
    } else if (b0 >= 0xE0 && b0 <= 0xEF) {
      if (remaining < 3) {
        const bool bad_second =
            remaining > 1 && ((b0 == 0xE0 && (at(i + 1) & 0xE0) == 0x80) || !continuation(at(i + 1)));
        if (!bad_second) tail = w;
        dst[w++] = kReplacement;
        i = bad_second ? i + 1 : n;  // an incomplete tail is one malformed sequence
        continue;
      }
      const unsigned b1 = at(i + 1);
      const unsigned b2 = at(i + 2);
      const bool overlong = b0 == 0xE0 && (b1 & 0xE0) == 0x80;
      if (overlong || !continuation(b1) || !continuation(b2)) {
        dst[w++] = kReplacement;
        i += (overlong || !continuation(b1)) ? 1 : 2;
        continue;
      }
      const unsigned c = ((b0 & 0x0F) << 12) | ((b1 & 0x3F) << 6) | (b2 & 0x3F);
      dst[w++] = (c >= 0xD800 && c <= 0xDFFF) ? kReplacement : static_cast<char16_t>(c);
      i += 3;
    } else if (b0 >= 0xF0 && b0 <= 0xF7) {
      const auto bad_second = [&](unsigned b1) {
        return (b0 == 0xF0 && (b1 < 0x90 || b1 > 0xBF)) || (b0 == 0xF4 && (b1 & 0xF0) != 0x80) ||
               !continuation(b1);
      };
      if (remaining < 4) {
        dst[w++] = kReplacement;
        if (b0 > 0xF4 || (remaining > 1 && bad_second(at(i + 1)))) {
          i += 1;
        } else if (remaining > 2 && !continuation(at(i + 2))) {
          i += 2;
        } else {
          tail = w - 1;
          i = n;
        }
        continue;
      }
      const unsigned b1 = at(i + 1);
      const unsigned b2 = at(i + 2);
      const unsigned b3 = at(i + 3);
      const unsigned cp = ((b0 & 0x07) << 18) | ((b1 & 0x3F) << 12) | ((b2 & 0x3F) << 6) | (b3 & 0x3F);
      if (!continuation(b1) || !continuation(b2) || !continuation(b3) || cp < 0x10000 || cp > 0x10FFFF) {
        dst[w++] = kReplacement;
        if (b0 > 0xF4 || bad_second(b1)) {
          i += 1;
        } else if (!continuation(b2)) {
          i += 2;
        } else {
          i += 3;
        }
        continue;
      }
      dst[w++] = static_cast<char16_t>(0xD800 + ((cp - 0x10000) >> 10));
      dst[w++] = static_cast<char16_t>(0xDC00 + ((cp - 0x10000) & 0x3FF));
      i += 4;
    } else {
      dst[w++] = kReplacement;
      i += 1;
    }
  }
  out.resize(w);
  return tail;
}

Reader::Reader(const Options& options) : options_(options) { contexts_.resize(8); }

void Reader::reset(const char16_t* units, size_t size, size_t tail) {
  buf_ = units;
  end_ = size;
  tail_ = tail;
  ptr_ = 0;
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

void Reader::reset_at_value(const char16_t* units, size_t size, size_t tail, size_t begin, int depth) {
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
    fail(context().kind == Context::Object ? "Unexpected character: was expecting comma to separate Object entries"
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
      if (c != ':') fail("Unexpected character: was expecting a colon to separate field name and value");
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
    fail("Unexpected character: was expecting either valid name character (for unquoted name) or "
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
    if (ptr_ >= end_) fail("Unexpected end-of-input: was expecting closing quote for a string value");
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
    if (ptr_ >= end_) fail("Unexpected end-of-input: was expecting closing quote for a string value");
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
    if (ptr_ >= end_) fail("Unexpected end-of-input: was expecting closing quote for a string value");
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
  fail("Unrecognized token: was expecting (JSON String, Number, Array, Object or token 'null', "
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
      fail("Non-standard token 'Infinity': enable `JsonReadFeature.ALLOW_NON_NUMERIC_NUMBERS` to allow");
    case '+':
      if (ptr_ >= end_) fail("Unexpected end-of-input in a Number value");
      return handle_invalid_number_start(buf_[ptr_++], false, true);
    default:
      break;
  }
  if (java_identifier_start(c)) report_invalid_token(1);
  fail("Unexpected character: expected a valid value (JSON String, Number, Array, Object or token "
       "'null', 'true' or 'false')");
}

// ---------------------------------------------------------------------------------------------
// Numbers. The fast routines read ahead with a local pointer and hand over to parse_number2()
// at the end of Jackson's input buffer; where each of them leaves the input position on an
// error matters for Spark's recovery, so the buffer boundaries are reproduced.

size_t Reader::buffer_end(size_t pos) const {
  // Jackson fills a 4000-character buffer from the InputStreamReader, which stops one short
  // when a surrogate pair would not fit, and hands over an incomplete UTF-8 sequence at the
  // very end (one U+FFFD) in a read of its own.
  constexpr size_t kBuffer = 4000;
  if (end_ <= kBuffer && tail_ >= end_) return end_;
  size_t begin = 0;
  for (;;) {
    size_t e = begin + kBuffer;
    if (e >= end_) {
      e = end_;
      if (tail_ > begin && tail_ < end_) e = tail_;
    } else if (buf_[e - 1] >= 0xD800 && buf_[e - 1] <= 0xDBFF) {
      --e;
    }
    if (pos < e) return e;
    begin = e;
  }
}

void Reader::set_number_text(size_t begin, size_t end) {
  number_text_.clear();
  for (size_t k = begin; k < end; ++k) number_text_.push_back(static_cast<char>(buf_[k]));
}

Token Reader::reset_int(int int_len) {
  if (int_len > options_.max_number_length) fail("Number value length exceeds the maximum allowed");
  return Token::NumberInt;
}

Token Reader::reset_float(int int_len, int fract_len, int exp_len) {
  if (int_len + fract_len + exp_len > options_.max_number_length) {
    fail("Number value length exceeds the maximum allowed");
  }
  return Token::NumberFloat;
}

Token Reader::reset_as_nan(const char* text, int sign) {
  number_text_.assign(text);
  non_numeric_ = sign;
  return Token::NumberFloat;
}

void Reader::verify_root_space(int c) {
  ++ptr_;
  switch (c) {
    case ' ':
    case '\t':
    case '\n':
      return;
    case '\r':
      --ptr_;
      return;
    default:
      fail("Expected space separating root-level values");
  }
}

Token Reader::parse_unsigned_number(int c) {
  size_t ptr = ptr_;
  const size_t input_end = buffer_end(ptr - 1);
  const size_t start = ptr - 1;
  if (c == '0') return parse_number2(false, start);
  int int_len = 1;
  for (;;) {
    if (ptr >= input_end) {
      ptr_ = start;
      return parse_number2(false, start);
    }
    c = buf_[ptr++];
    if (!is_digit(c)) break;
    ++int_len;
  }
  if (c == '.' || (c | 0x20) == 'e') {
    ptr_ = ptr;
    return parse_float(c, start, ptr, false, int_len);
  }
  --ptr;
  ptr_ = ptr;
  if (in_root()) verify_root_space(c);
  set_number_text(start, ptr);
  return reset_int(int_len);
}

Token Reader::parse_float(int c, size_t start, size_t ptr, bool negative, int int_len) {
  const size_t input_end = buffer_end(start);
  int fract_len = 0;
  if (c == '.') {
    for (;;) {
      if (ptr >= input_end) return parse_number2(negative, start);
      c = buf_[ptr++];
      if (!is_digit(c)) break;
      ++fract_len;
    }
    if (fract_len == 0) fail("Unexpected character in numeric value: Decimal point not followed by a digit");
  }
  int exp_len = 0;
  if ((c | 0x20) == 'e') {
    if (ptr >= input_end) return parse_number2(negative, start);
    c = buf_[ptr++];
    if (c == '-' || c == '+') {
      if (ptr >= input_end) return parse_number2(negative, start);
      c = buf_[ptr++];
    }
    while (is_digit(c)) {
      ++exp_len;
      if (ptr >= input_end) return parse_number2(negative, start);
      c = buf_[ptr++];
    }
    if (exp_len == 0) fail("Unexpected character in numeric value: Exponent indicator not followed by a digit");
  }
  --ptr;
  ptr_ = ptr;
  if (in_root()) verify_root_space(c);
  set_number_text(start, ptr);
  return reset_float(int_len, fract_len, exp_len);
}

Token Reader::parse_signed_number(bool negative) {
  size_t ptr = ptr_;
  const size_t input_end = buffer_end(ptr - 1);
  const size_t start = negative ? ptr - 1 : ptr;
  if (ptr >= input_end) return parse_number2(negative, start);
  int c = buf_[ptr++];
  if (!is_digit(c)) {
    ptr_ = ptr;
    if (c == '.') return handle_odd_value('.');
    return handle_invalid_number_start(c, negative, true);
  }
  if (c == '0') return parse_number2(negative, start);
  int int_len = 1;
  for (;;) {
    if (ptr >= input_end) return parse_number2(negative, start);
    c = buf_[ptr++];
    if (!is_digit(c)) break;
    ++int_len;
  }
  if (c == '.' || (c | 0x20) == 'e') {
    ptr_ = ptr;
    return parse_float(c, start, ptr, negative, int_len);
  }
  --ptr;
  ptr_ = ptr;
  if (in_root()) verify_root_space(c);
  set_number_text(start, ptr);
  return reset_int(int_len);
}

Token Reader::parse_number2(bool negative, size_t start) {
  ptr_ = negative ? start + 1 : start;
  number_text_.clear();
  if (negative) number_text_.push_back('-');
  int int_len = 0;
  if (ptr_ >= end_) fail("Unexpected end-of-input: No digit following sign");
  int c = buf_[ptr_++];
  if (c == '0') c = verify_no_leading_zeroes();
  bool eof = false;
  while (is_digit(c)) {
    ++int_len;
    number_text_.push_back(static_cast<char>(c));
    if (ptr_ >= end_) {
      c = 0;
      eof = true;
      break;
    }
    c = buf_[ptr_++];
  }
  if (int_len == 0) return handle_invalid_number_start(c, negative, false);
  int fract_len = -1;
  if (c == '.') {
    fract_len = 0;
    number_text_.push_back('.');
    for (;;) {
      if (ptr_ >= end_) {
        eof = true;
        break;
      }
      c = buf_[ptr_++];
      if (!is_digit(c)) break;
      ++fract_len;
      number_text_.push_back(static_cast<char>(c));
    }
    if (fract_len == 0) fail("Unexpected character in numeric value: Decimal point not followed by a digit");
  }
  int exp_len = -1;
  if ((c | 0x20) == 'e') {
    exp_len = 0;
    number_text_.push_back(static_cast<char>(c));
    if (ptr_ >= end_) fail("Unexpected end-of-input: expected a digit for number exponent");
    c = buf_[ptr_++];
    if (c == '-' || c == '+') {
      number_text_.push_back(static_cast<char>(c));
      if (ptr_ >= end_) fail("Unexpected end-of-input: expected a digit for number exponent");
      c = buf_[ptr_++];
    }
    while (is_digit(c)) {
      ++exp_len;
      number_text_.push_back(static_cast<char>(c));
      if (ptr_ >= end_) {
        eof = true;
        break;
      }
      c = buf_[ptr_++];
    }
    if (exp_len == 0) fail("Unexpected character in numeric value: Exponent indicator not followed by a digit");
  }
  if (!eof) {
    --ptr_;
    if (in_root()) verify_root_space(c);
  }
  if (fract_len < 0 && exp_len < 0) return reset_int(int_len);
  return reset_float(int_len, fract_len, exp_len);
}

int Reader::verify_no_leading_zeroes() {
  if (ptr_ >= end_) return '0';
  int c = buf_[ptr_];
  if (!is_digit(c)) return '0';
  if (!options_.allow_numeric_leading_zeros) fail("Invalid numeric value: Leading zeroes not allowed");
  ++ptr_;
  if (c == '0') {
    while (ptr_ < end_) {
      c = buf_[ptr_];
      if (!is_digit(c)) return '0';
      ++ptr_;
      if (c != '0') break;
    }
  }
  return c;
}

Token Reader::handle_invalid_number_start(int c, bool negative, bool has_sign) {
  if (c == 'I') {
    if (ptr_ >= end_) fail("Unexpected end-of-input in a Number value");
    c = buf_[ptr_++];
    if (c == 'N' || c == 'n') {
      const char* word = c == 'N' ? (negative ? "-INF" : "+INF") : (negative ? "-Infinity" : "+Infinity");
      match_token(word, 3);
      if (options_.allow_non_numeric_numbers) return reset_as_nan(word, negative ? -1 : 1);
      fail("Non-standard token: enable `JsonReadFeature.ALLOW_NON_NUMERIC_NUMBERS` to allow");
    }
  }
  if (has_sign && !negative) {
    fail("Unexpected character ('+') in numeric value: JSON spec does not allow numbers to have plus signs");
  }
  fail(negative ? "Unexpected character in numeric value: expected digit (0-9) to follow minus sign"
                : "Unexpected character in numeric value: expected digit (0-9) for valid numeric value");
}

}  // namespace sliceflow::json
