// The reference reader's numbers (see reader.h): Jackson's _parseUnsignedNumber,
// _parseSignedNumber, _parseFloat and _parseNumber2, with where each leaves the input position.
#include "json/errors.h"
#include "json/java_text.h"
#include "json/reader.h"

namespace sliceflow::json {

// Numbers. The fast routines read ahead with a local pointer and hand over to parse_number2()
// at the end of Jackson's input buffer; where each of them leaves the input position on an
// error matters for Spark's recovery, so the buffer boundaries are reproduced.

size_t Reader::buffer_end(size_t pos) const {
  // Jackson fills a 4000-character buffer from the InputStreamReader, which stops one short
  // when a surrogate pair would not fit, and hands over an incomplete UTF-8 sequence at the
  // very end (one U+FFFD) in a read of its own.
  //
  // The buffer boundaries depend only on the input, so the walk resumes from the last buffer
  // found: numbers come in input order, and a document of many numbers costs O(units / 4000)
  // in all here instead of that much per number (quadratic on a multi-MB array).
  constexpr size_t kBuffer = 4000;
  if (end_ <= kBuffer && tail_ >= end_) return end_;
  size_t begin = 0;
  if (pos >= window_begin_ && window_end_ > window_begin_) {
    if (pos < window_end_) return window_end_;
    begin = window_end_;
  }
  for (;;) {
    size_t e = begin + kBuffer;
    if (e >= end_) {
      e = end_;
      if (tail_ > begin && tail_ < end_) e = tail_;
    } else if (buf_[e - 1] >= 0xD800 && buf_[e - 1] <= 0xDBFF) {
      --e;
    }
    if (pos < e) {
      window_begin_ = begin;
      window_end_ = e;
      return e;
    }
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

// The character `c` (read just before `ptr`) ended a number the fast routines read from
// `start`: it is pushed back, checked when at the root, and the number's text is kept.
inline void Reader::end_fast_number(int c, size_t start, size_t ptr) {
  ptr_ = ptr - 1;
  if (in_root()) verify_root_space(c);
  set_number_text(start, ptr - 1);
}

// After the integer digits of the fast routines: a '.' or an exponent goes on as a float,
// anything else ends an integer.
inline Token Reader::after_fast_digits(int c, size_t start, size_t ptr, bool negative,
                                       int int_len) {
  if (c == '.' || (c | 0x20) == 'e') {
    ptr_ = ptr;
    return parse_float(c, start, ptr, negative, int_len);
  }
  end_fast_number(c, start, ptr);
  return reset_int(int_len);
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
  return after_fast_digits(c, start, ptr, false, int_len);
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
    if (fract_len == 0)
      fail("Unexpected character in numeric value: Decimal point not followed by a digit");
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
    if (exp_len == 0)
      fail("Unexpected character in numeric value: Exponent indicator not followed by a digit");
  }
  end_fast_number(c, start, ptr);
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
  return after_fast_digits(c, start, ptr, negative, int_len);
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
    if (fract_len == 0)
      fail("Unexpected character in numeric value: Decimal point not followed by a digit");
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
    if (exp_len == 0)
      fail("Unexpected character in numeric value: Exponent indicator not followed by a digit");
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
  if (!options_.allow_numeric_leading_zeros)
    fail("Invalid numeric value: Leading zeroes not allowed");
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
      const char* word =
          c == 'N' ? (negative ? "-INF" : "+INF") : (negative ? "-Infinity" : "+Infinity");
      match_token(word, 3);
      if (options_.allow_non_numeric_numbers) return reset_as_nan(word, negative ? -1 : 1);
      fail("Non-standard token: enable `JsonReadFeature.ALLOW_NON_NUMERIC_NUMBERS` to allow");
    }
  }
  if (has_sign && !negative) {
    fail(
        "Unexpected character ('+') in numeric value: JSON spec does not allow numbers to have "
        "plus signs");
  }
  fail(negative
           ? "Unexpected character in numeric value: expected digit (0-9) to follow minus sign"
           : "Unexpected character in numeric value: expected digit (0-9) for valid numeric value");
}

}  // namespace sliceflow::json
