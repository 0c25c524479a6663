#include "json/decoder.h"

#include <algorithm>
#include <cstring>
#include <functional>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "json/errors.h"

namespace sliceflow::json {

namespace {

// Rows decoded before the builders reserve room for the whole input.
constexpr int64_t kSampleRows = 1024;
// NDJSON buffers at least this long go through one simdjson document stream.
constexpr size_t kStreamMinBytes = 1 << 14;
// simdjson's stage-1 window for document streams (documents longer than this take the
// line-by-line path). A window that stays in L2 between stage 1 and the documents' parse
// measured faster than 1 MiB (and than 128 KiB).
constexpr size_t kStreamBatchBytes = 1 << 18;

// Spark's JSON BINARY (base64 text) is not modelled: refuse it before any field decoder sees it.
std::unique_ptr<arrow::Type> json_decodable(std::unique_ptr<arrow::Type> type) {
  const std::function<void(const arrow::Type&)> check = [&](const arrow::Type& t) {
    if (t.kind == arrow::Kind::Binary) {
      throw std::invalid_argument("sliceflow cannot decode JSON into BINARY (field '" + t.name + "')");
    }
    for (const auto& child : t.children) check(*child);
  };
  check(*type);
  return type;
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
  if (corrupt >= 0 && (static_cast<size_t>(corrupt) >= row_type_->children.size() ||
                       row_type_->children[static_cast<size_t>(corrupt)]->kind != arrow::Kind::Utf8)) {
    throw std::invalid_argument("the corrupt record column must be a STRING field of the schema");
  }
}

void Decoder::decode_one(std::string_view doc, size_t readable) {
  const int64_t row_number = stats_.rows++;
  const int64_t slot = row_.length();
  if (fast_.decode(doc, readable, row_)) {
    ++stats_.fast_rows;
    return;
  }
  row_.truncate(slot);
  decode_reference(doc, row_number);
}

void Decoder::decode_reference(std::string_view doc, int64_t row_number) {
  const int64_t slot = row_.length();
  ++stats_.reference_rows;
  const RowOutcome outcome = reference_.convert(doc, row_, reason_);
  if (outcome == RowOutcome::Ok || outcome == RowOutcome::Empty) return;
  if (outcome == RowOutcome::Partial) {
    ++stats_.partial_rows;
  } else {
    ++stats_.malformed_rows;
  }
  if (options_.mode == Mode::FailFast) {
    row_.truncate(slot);
    throw MalformedRecord("Malformed records are detected in record parsing (mode FAILFAST): row " +
                          std::to_string(row_number) + ": " + reason_ +
                          ". To process malformed records as null result, set the option 'mode' "
                          "to 'PERMISSIVE'.");
  }
}

void Decoder::decode_array(const arrow::StringArrayView& docs) {
  const int64_t n = docs.size();
  const int64_t start = row_.length();
  for (int64_t i = 0; i < n; ++i) {
    if (i == kSampleRows) row_.reserve_like(start + n);
    if (docs.is_null(i)) {
      ++stats_.rows;
      row_.append_null();
      continue;
    }
    const std::string_view doc = docs.get(i);
    decode_one(doc, docs.readable_from(doc.data()));
  }
}

void Decoder::maybe_reserve(int64_t start_rows, size_t consumed, size_t remaining, bool& reserved) {
  if (reserved || row_.length() - start_rows != kSampleRows) return;
  // Extrapolate the rows still to come from the bytes used by the sample.
  const double per_row = static_cast<double>(consumed) / static_cast<double>(kSampleRows);
  row_.reserve_like(row_.length() + static_cast<int64_t>(static_cast<double>(remaining) / per_row));
  reserved = true;
}

namespace {

// Whether [p, p + n) holds a '\n' or a '\r'. Called once per streamed document, so it is
// inlined and vectorised rather than two memchr calls, whose setup costs more than the scan.
inline bool has_line_break(const char* p, size_t n) {
#if defined(__SSE2__)
  if (n >= 16) {
    const __m128i nl = _mm_set1_epi8('\n');
    const __m128i cr = _mm_set1_epi8('\r');
    __m128i hits = _mm_setzero_si128();
    const auto scan = [&](const char* q) {
      const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(q));
      hits = _mm_or_si128(hits, _mm_or_si128(_mm_cmpeq_epi8(bytes, nl), _mm_cmpeq_epi8(bytes, cr)));
    };
    for (size_t i = 0; i + 16 <= n; i += 16) scan(p + i);
    scan(p + n - 16);  // the tail, overlapping what the loop has seen
    return _mm_movemask_epi8(hits) != 0;
  }
  for (size_t i = 0; i < n; ++i) {
    if (p[i] == '\n' || p[i] == '\r') return true;
  }
  return false;
#else
  return std::memchr(p, '\n', n) != nullptr || std::memchr(p, '\r', n) != nullptr;
#endif
}

}  // namespace

size_t Decoder::decode_stream(std::string_view buffer, size_t padded_size) {
  // parse_many reads up to SIMDJSON_PADDING bytes past what it is given: only lines that end
  // that far before the readable end are streamed. The stream stops at the first line that
  // holds a \r (Spark's reader splits lines there too): the line-by-line loop takes the rest.
  // That is checked document by document rather than by a scan of the whole buffer ahead,
  // which would read the input from memory twice.
  const size_t limit = std::min(buffer.size(), padded_size >= simdjson::SIMDJSON_PADDING
                                                   ? padded_size - simdjson::SIMDJSON_PADDING
                                                   : 0);
  const char* const begin = buffer.data();
  if (limit < kStreamMinBytes) return 0;
  const char* last_nl = static_cast<const char*>(memrchr(begin, '\n', limit));
  if (last_nl == nullptr) return 0;
  const char* const end = last_nl + 1;
  const size_t region = static_cast<size_t>(end - begin);
  simdjson::dom::document_stream stream;
  if (fast_.stream_parser().parse_many(begin, region, kStreamBatchBytes).get(stream) != simdjson::SUCCESS) {
    return 0;
  }
  const int64_t start_rows = row_.length();
  bool reserved = false;
  const char* pos = begin;  // start of the first line not decoded yet
  for (auto it = stream.begin(); it != stream.end(); ++it) {
    simdjson::dom::element element;
    if ((*it).get(element) != simdjson::SUCCESS) break;
    const char* const doc = begin + it.current_index();
    // The document must be the only thing on its line, blank lines aside: what precedes it is
    // blank lines and blanks, it holds no line break, and blanks then a '\n' follow it. A \r
    // anywhere stops the stream.
    const char* p = pos;
    for (; p < doc; ++p) {
      if (*p == '\n') {
        pos = p + 1;
      } else if (*p != ' ' && *p != '\t') {
        break;
      }
    }
    if (p < doc) break;
    const std::string_view source = it.source();
    if (source.size() > static_cast<size_t>(end - doc) || has_line_break(doc, source.size())) break;
    const char* line_end = doc + source.size();
    while (line_end < end && (*line_end == ' ' || *line_end == '\t')) ++line_end;
    if (line_end == end || *line_end != '\n') break;
    maybe_reserve(start_rows, static_cast<size_t>(pos - begin),
                  buffer.size() - static_cast<size_t>(pos - begin), reserved);
    const int64_t row_number = stats_.rows++;
    const int64_t slot = row_.length();
    if (fast_.decode_element(element, source, row_)) {
      ++stats_.fast_rows;
    } else {
      row_.truncate(slot);
      decode_reference(std::string_view(pos, static_cast<size_t>(line_end - pos)), row_number);
    }
    pos = line_end + 1;
  }
  return static_cast<size_t>(pos - begin);
}

void Decoder::decode_lines(std::string_view buffer, size_t padded_size) {
  const size_t streamed = fast_.enabled() ? decode_stream(buffer, padded_size) : 0;
  const char* const begin = buffer.data();
  const char* const end = begin + buffer.size();
  const char* pos = begin + streamed;
  const char* next_cr = begin;  // the next \r at or after pos, or end, once scanned
  bool cr_scanned = false;
  const int64_t start_rows = row_.length();
  bool reserved = streamed > 0;
  while (pos < end) {
    maybe_reserve(start_rows, static_cast<size_t>(pos - begin) - streamed,
                  static_cast<size_t>(end - pos), reserved);
    // Lines end at \n, \r\n or a lone \r (as Spark's text reader splits them).
    const char* nl = static_cast<const char*>(std::memchr(pos, '\n', static_cast<size_t>(end - pos)));
    const char* line_end = nl != nullptr ? nl : end;
    if (!cr_scanned || next_cr < pos) {
      cr_scanned = true;
      // One forward scan for \r serves every line it passes (most inputs have none).
      next_cr = static_cast<const char*>(std::memchr(pos, '\r', static_cast<size_t>(end - pos)));
      if (next_cr == nullptr) next_cr = end;
    }
    if (next_cr < line_end) line_end = next_cr;
    const std::string_view line(pos, static_cast<size_t>(line_end - pos));
    // A line of only white space gives no row (Jackson finds no token in it).
    const size_t first = line.find_first_not_of(" \t");
    if (first != std::string_view::npos) {
      decode_one(line, padded_size - static_cast<size_t>(pos - begin));
    }
    pos = line_end;
    if (pos < end && *pos == '\r') {
      ++pos;
      if (pos < end && *pos == '\n') ++pos;
    } else if (pos < end) {
      ++pos;  // the \n
    }
  }
}

}  // namespace sliceflow::json
