// LineBatch: NDJSON lines inferred through simdjson's parse_many (see infer_lines.h).
#include "json/infer/infer_lines.h"

#include "json/infer/infer_record.h"
#include "json/line_breaks.h"

namespace sliceflow::json {

bool LineSample::take(int64_t line) const {
  uint64_t z = static_cast<uint64_t>(line) + 0x9E3779B97F4A7C15ULL * (seed + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  z ^= z >> 31;
  return static_cast<double>(z >> 11) * 0x1.0p-53 < ratio;
}

LineBatch::LineBatch(bool batches) : batches_(batches) {
  // Allocated on first use: a part read line by line never needs it.
}

void LineBatch::add_lines(RecordInference& record, std::string_view part, size_t readable,
                          int64_t& line, bool sampling, const LineSample& sample) {
  const char* const begin = part.data();
  const char* const end = begin + part.size();
  const char* p = begin;
  while (p < end) {
    const char* batch_end = end;
    const char* from = p;  // where this batch's lines are read one by one
    if (batches_) {
      if (static_cast<size_t>(end - p) > kBatchBytes) {
        batch_end = skip_line_break(find_line_break(p + kBatchBytes, end), end);
      }
      const size_t padded_to = static_cast<size_t>(batch_end - begin) + simdjson::SIMDJSON_PADDING;
      if (static_cast<size_t>(batch_end - p) <= kBatchCapacity && padded_to <= readable) {
        from = add_batch(record, p, batch_end, line, sampling, sample);
      }
    }
    for (const char* q = from; q < batch_end; ++line) {
      const char* line_end = find_line_break(q, batch_end);
      if (!sampling || sample.take(line)) {
        record.add(std::string_view(q, static_cast<size_t>(line_end - q)),
                   readable - static_cast<size_t>(q - begin), line + 1);
      }
      q = skip_line_break(line_end, batch_end);
    }
    p = batch_end;
  }
}

const char* LineBatch::add_batch(RecordInference& record, const char* begin, const char* end,
                                 int64_t& line, bool sampling, const LineSample& sample) {
  using simdjson::dom::element_type;
  simdjson::dom::document_stream docs;
  if (parser_.parse_many(begin, static_cast<size_t>(end - begin), kBatchCapacity).get(docs) !=
      simdjson::SUCCESS) {
    return begin;
  }
  // Whether a document ends on its line: objects and arrays end at their last structural
  // character (source() spans it); a scalar is one token, and no token holds a line break.
  auto ends_by = [](simdjson::dom::document_stream::iterator& it, element_type type,
                    const char* start, const char* line_end) {
    return (type != element_type::OBJECT && type != element_type::ARRAY) ||
           start + it.source().size() <= line_end;
  };
  const char* q = begin;  // the first line not read yet
  auto it = docs.begin();
  while (it != docs.end()) {
    simdjson::dom::element root;
    if ((*it).get(root) != simdjson::SUCCESS) return q;
    const char* const start = begin + it.current_index();
    // Documents come in order, inside the batch (checked: what a batch places must not rest
    // on simdjson's bookkeeping alone).
    if (start < q || start >= end) return q;
    // Lines before the document's own hold blanks only (parse_many skips nothing else).
    const char* line_end = find_line_break(q, end);
    while (line_end < start) {
      q = skip_line_break(line_end, end);
      ++line;
      line_end = find_line_break(q, end);
    }
    for (const char* c = q; c < start; ++c) {
      if (*c != ' ' && *c != '\t') return q;  // such as a byte-order mark
    }
    const element_type type = root.type();
    if (!ends_by(it, type, start, line_end)) return q;
    // An object or array alone on its line (blanks after it) is the line's record, as a parse
    // of the line finds it. Any other line is read on its own: with more on the line, Jackson
    // reads the first value but may refuse what follows it (no space after a root-level
    // number); a root-level scalar is a corrupt record, rare, and where it ends is not known
    // here (parse_many may drop an incomplete document after it without a word).
    bool alone = false;
    if (type == element_type::OBJECT || type == element_type::ARRAY) {
      alone = true;
      for (const char* c = start + it.source().size(); c < line_end && alone; ++c) {
        alone = *c == ' ' || *c == '\t';
      }
    }
    const std::string_view text(q, static_cast<size_t>(line_end - q));
    if (!sampling || sample.take(line)) {
      if (alone) {
        ++batched_lines_;
        record.add_parsed(root, text, line + 1);
      } else {
        record.add(text, static_cast<size_t>(end - q) + simdjson::SIMDJSON_PADDING, line + 1);
      }
    }
    q = skip_line_break(line_end, end);
    ++line;
    // The line's later documents are skipped, as long as they end on it too (else the next
    // lines are not what parse_many made of them).
    for (++it; it != docs.end() && begin + it.current_index() < line_end; ++it) {
      if ((*it).get(root) != simdjson::SUCCESS) return q;
      if (!ends_by(it, root.type(), begin + it.current_index(), line_end)) return q;
    }
  }
  // What follows the last document is blank, or text parse_many left out (an incomplete last
  // document): the caller reads it line by line, which skips blank lines at no cost.
  return q;
}

}  // namespace sliceflow::json
