#include "json/decoder.h"

#include <functional>

#include "json/errors.h"
#include "json/line_breaks.h"

namespace sliceflow::json {

namespace {

// Rows decoded before the builders reserve room for the whole input.
constexpr int64_t kSampleRows = 1024;

// Bytes ahead of the current document to prefetch: a few documents of typical size.
constexpr size_t kPrefetchDistance = 1024;

// Spark's JSON BINARY (base64 text) is not modelled: refuse it before any field decoder sees it.
std::unique_ptr<arrow::Type> json_decodable(std::unique_ptr<arrow::Type> type) {
  const std::function<void(const arrow::Type&)> check = [&](const arrow::Type& t) {
    if (t.kind == arrow::Kind::Binary) {
      throw std::invalid_argument("sliceflow cannot decode JSON into BINARY (field '" + t.name +
                                  "')");
    }
    for (const auto& child : t.children) check(*child);
  };
  check(*type);
  return type;
}

// `text` with every byte that is not part of a well-formed UTF-8 sequence (nor of an encoded
// surrogate, which Python refuses) replaced by '?': an exception message must be valid text.
std::string valid_utf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    const auto b = static_cast<unsigned char>(text[i]);
    size_t len = b < 0x80                 ? 1
                 : b >= 0xC2 && b <= 0xDF ? 2
                 : b >= 0xE0 && b <= 0xEF ? 3
                 : b >= 0xF0 && b <= 0xF4 ? 4
                                          : 0;
    bool ok = len > 0 && i + len <= text.size();
    for (size_t k = 1; ok && k < len; ++k) {
      ok = (static_cast<unsigned char>(text[i + k]) & 0xC0) == 0x80;
    }
    if (ok && len >= 3) {
      const auto b1 = static_cast<unsigned char>(text[i + 1]);
      ok = !(b == 0xE0 && b1 < 0xA0) && !(b == 0xED && b1 >= 0xA0) && !(b == 0xF0 && b1 < 0x90) &&
           !(b == 0xF4 && b1 >= 0x90);
    }
    if (ok) {
      out.append(text.data() + i, len);
      i += len;
    } else {
      out.push_back('?');
      ++i;
    }
  }
  return out;
}

}  // namespace

Decoder::Decoder(std::unique_ptr<arrow::Type> row_type, Options options)
    : row_type_(json_decodable(std::move(row_type))),
      options_(std::move(options)),
      row_(*row_type_),
      fast_(*row_type_, options_),
      reference_(*row_type_, options_) {
  if (row_type_->kind != arrow::Kind::Struct) {
    throw std::invalid_argument("the JSON schema must be a struct (a row of fields)");
  }
  const int corrupt = options_.corrupt_column;
  if (corrupt >= 0 &&
      (static_cast<size_t>(corrupt) >= row_type_->children.size() ||
       row_type_->children[static_cast<size_t>(corrupt)]->kind != arrow::Kind::Utf8)) {
    throw std::invalid_argument("the corrupt record column must be a STRING field of the schema");
  }
  if (options_.root_value) {
    const auto& children = row_type_->children;
    if (children.size() != 1 ||
        (children[0]->kind != arrow::Kind::List && children[0]->kind != arrow::Kind::Map)) {
      throw std::invalid_argument("a document-wide value must be one ARRAY or MAP field");
    }
  }
}

void Decoder::decode_one(std::string_view doc, size_t readable) {
  ++stats_.rows;
  const int64_t slot = row_.length();
  // read.json skips a byte order mark at the start of a record of 4 bytes or more (the
  // reference path skips it itself, keeping it in the corrupt record's text).
  std::string_view fast_doc = doc;
  if (options_.skip_byte_order_mark && doc.size() >= 4 && doc.compare(0, 3, "\xEF\xBB\xBF") == 0) {
    fast_doc.remove_prefix(3);
    readable -= 3;
  }
  // A document-wide ARRAY or MAP is read by the reference path only.
  if (!options_.root_value && fast_.decode(fast_doc, readable, row_)) {
    ++stats_.fast_rows;
    return;
  }
  row_.truncate(slot);
  decode_reference(doc);
}

void Decoder::decode_reference(std::string_view doc) {
  const int64_t slot = row_.length();
  ++stats_.reference_rows;
  // The fast path leaves missing fields behind; the reference path writes every column.
  row_.settle();
  const RowOutcome outcome = reference_.convert(doc, row_, reason_);
  if (outcome == RowOutcome::Ok || outcome == RowOutcome::Empty) return;
  if (outcome == RowOutcome::Partial) {
    ++stats_.partial_rows;
  } else {
    ++stats_.malformed_rows;
  }
  if (options_.mode == Mode::DropMalformed) {
    row_.truncate(slot);
    return;
  }
  if (options_.mode == Mode::FailFast) {
    row_.truncate(slot);
    // Spark's message (error class MALFORMED_RECORD_IN_PARSING), with the record's text (at
    // most kShownRecord bytes) where Spark's from_json shows "[null]", and the cause.
    constexpr size_t kShownRecord = 1000;
    std::string record(reference_.record_text(doc));
    if (record.size() > kShownRecord) {
      size_t cut = kShownRecord;
      while (cut > 0 && (static_cast<unsigned char>(record[cut]) & 0xC0) == 0x80) --cut;
      record.resize(cut);
      record += "...";
    }
    throw MalformedRecord(
        "[MALFORMED_RECORD_IN_PARSING.WITHOUT_SUGGESTION] Malformed records are detected in "
        "record parsing: " +
        record +
        ".\nParse Mode: FAILFAST. To process malformed records as "
        "null result, try setting the option 'mode' as 'PERMISSIVE'. Cause: " +
        valid_utf8(reason_) + ".");
  }
}

void Decoder::decode_array(const arrow::StringArrayView& docs) {
  const int64_t n = docs.size();
  const int64_t start = row_.length();
  for (int64_t i = 0; i < n; ++i) {
    if (i == kSampleRows) {
      row_.settle();
      row_.reserve_like(start + n);
    }
    if (docs.is_null(i)) {
      ++stats_.rows;
      row_.append_null();
      continue;
    }
    const std::string_view doc = docs.get(i);
    const size_t readable = docs.readable_from(doc.data());
    // The documents lie in order in one buffer; the hardware prefetcher alone left a tenth of
    // the time in waits for their first bytes. (NDJSON lines are scanned for their end first.)
    if (readable > kPrefetchDistance) __builtin_prefetch(doc.data() + kPrefetchDistance);
    decode_one(doc, readable);
  }
}

void Decoder::maybe_reserve(int64_t start_rows, size_t consumed, size_t remaining, bool& reserved) {
  if (reserved || row_.length() - start_rows != kSampleRows) return;
  // Extrapolate the rows still to come from the bytes used by the sample.
  const double per_row = static_cast<double>(consumed) / static_cast<double>(kSampleRows);
  row_.settle();
  row_.reserve_like(row_.length() + static_cast<int64_t>(static_cast<double>(remaining) / per_row));
  reserved = true;
}

void Decoder::decode_record(std::string_view record, size_t padded_size) {
  failed_offset_ = 0;
  decode_one(record, padded_size);
  failed_offset_ = -1;
}

void Decoder::decode_separated(std::string_view buffer, size_t padded_size) {
  const std::string_view separator = options_.line_separator;
  size_t pos = 0;
  const int64_t start_rows = row_.length();
  bool reserved = false;
  while (pos < buffer.size()) {
    maybe_reserve(start_rows, pos, buffer.size() - pos, reserved);
    size_t stop = buffer.find(separator, pos);
    if (stop == std::string_view::npos) stop = buffer.size();
    // A record of white space only gives no row (Jackson finds no token in it).
    size_t first = pos;
    while (first < stop && (buffer[first] == ' ' || buffer[first] == '\t' ||
                            buffer[first] == '\r' || buffer[first] == '\n')) {
      ++first;
    }
    if (first < stop) {
      failed_offset_ = static_cast<int64_t>(pos);
      decode_one(buffer.substr(pos, stop - pos), padded_size - pos);
    }
    pos = stop == buffer.size() ? stop : stop + separator.size();
  }
  failed_offset_ = -1;
}

void Decoder::decode_lines(std::string_view buffer, size_t padded_size) {
  if (!options_.line_separator.empty()) {
    decode_separated(buffer, padded_size);
    return;
  }
  const char* const begin = buffer.data();
  const char* const end = begin + buffer.size();
  const char* pos = begin;
  const int64_t start_rows = row_.length();
  bool reserved = false;
  while (pos < end) {
    maybe_reserve(start_rows, static_cast<size_t>(pos - begin), static_cast<size_t>(end - pos),
                  reserved);
    // Lines end at \n, \r\n or a lone \r (as Spark's text reader splits them).
    const char* const line_end = find_line_break(pos, end);
    // A line of only white space gives no row (Jackson finds no token in it).
    const char* first = pos;
    while (first < line_end && (*first == ' ' || *first == '\t')) ++first;
    if (first < line_end) {
      failed_offset_ = pos - begin;
      decode_one(std::string_view(pos, static_cast<size_t>(line_end - pos)),
                 padded_size - static_cast<size_t>(pos - begin));
    }
    pos = skip_line_break(line_end, end);
  }
  failed_offset_ = -1;
}

}  // namespace sliceflow::json
