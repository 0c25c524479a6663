// SchemaInference: blocks of lines split across threads, partial schemas merged (infer.h).
#include "json/infer/infer.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <exception>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "json/infer/infer_lines.h"
#include "json/infer/infer_record.h"
#include "json/line_breaks.h"

namespace sliceflow::json {
namespace {

bool flag(std::map<std::string, std::string>& options, const char* key, bool fallback) {
  const auto it = options.find(key);
  if (it == options.end()) return fallback;
  const std::string value = it->second;
  options.erase(it);
  if (value == "true") return true;
  if (value == "false") return false;
  throw std::invalid_argument(std::string("option '") + key + "' must be 'true' or 'false', got '" +
                              value + "'");
}

// Parts per thread a block is cut into (see add_lines).
constexpr size_t kPartsPerThread = 4;

struct Part {
  const char* begin;
  const char* end;
  int64_t first_line = 0;  // 0-based index of the part's first line in the block
};

}  // namespace

InferOptions parse_infer_options(const std::map<std::string, std::string>& given) {
  std::map<std::string, std::string> options = given;
  InferOptions out;
  const auto mode = options.find("mode");
  if (mode != options.end()) {
    if (mode->second == "PERMISSIVE") {
      out.mode = InferMode::Permissive;
    } else if (mode->second == "DROPMALFORMED") {
      out.mode = InferMode::DropMalformed;
    } else if (mode->second == "FAILFAST") {
      out.mode = InferMode::FailFast;
    } else {
      throw std::invalid_argument("unsupported mode '" + mode->second + "'");
    }
    options.erase(mode);
  }
  const auto corrupt = options.find("columnNameOfCorruptRecord");
  if (corrupt != options.end()) {
    out.corrupt_column = corrupt->second;
    options.erase(corrupt);
  }
  out.prefers_decimal = flag(options, "prefersDecimal", false);
  out.primitives_as_string = flag(options, "primitivesAsString", false);
  out.drop_field_if_all_null = flag(options, "dropFieldIfAllNull", false);
  out.infer_timestamp = flag(options, "inferTimestamp", false);
  out.case_sensitive = flag(options, "caseSensitive", false);
  const auto ratio = options.find("samplingRatio");
  if (ratio != options.end()) {
    size_t used = 0;
    try {
      out.sampling_ratio = std::stod(ratio->second, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != ratio->second.size() || !(out.sampling_ratio > 0)) {
      throw std::invalid_argument("samplingRatio must be a number above 0, got '" + ratio->second +
                                  "'");
    }
    options.erase(ratio);
  }
  const auto type = options.find("timestampType");
  if (type != options.end()) {
    if (type->second == "TIMESTAMP_NTZ") {
      out.timestamp_ntz_default = true;
    } else if (type->second != "TIMESTAMP_LTZ") {
      throw std::invalid_argument("timestampType must be TIMESTAMP_LTZ or TIMESTAMP_NTZ, got '" +
                                  type->second + "'");
    }
    options.erase(type);
  }
  out.json = parse_options(options);
  return out;
}

SchemaInference::SchemaInference(InferOptions options) : options_(std::move(options)) {
  workers_.push_back(std::make_unique<RecordInference>(options_));
}

SchemaInference::~SchemaInference() = default;

void SchemaInference::add_lines(std::string_view block, size_t readable, int threads) {
  const char* const begin = block.data();
  const char* const end = begin + block.size();
  const size_t thread_count = static_cast<size_t>(std::max(1, threads));
  // kPartsPerThread parts per thread, taken by whichever thread is free (another process or
  // the caller's next read may hold a core for a while), of at least 64 KiB: below that a
  // part costs more than it saves. Part k always goes to workers_[k], so the partial schemas
  // and their merge order do not depend on timing.
  const size_t wanted = thread_count == 1 ? 1 : thread_count * kPartsPerThread;
  const size_t count = std::max<size_t>(1, std::min(wanted, block.size() / (64 << 10)));
  std::vector<Part> parts;
  const char* p = begin;
  for (size_t i = 0; i < count && p < end; ++i) {
    const char* cut = i + 1 == count ? end : begin + block.size() * (i + 1) / count;
    if (cut < p) cut = p;
    if (cut < end && cut > begin) cut = skip_line_break(find_line_break(cut, end), end);
    parts.push_back({p, cut});
    p = cut;
  }
  const bool sampling = options_.sampling_ratio <= 0.99;
  // Lines are numbered before reading when the number matters (the sample; FAILFAST's error).
  const bool need_lines = sampling || options_.mode == InferMode::FailFast;
  int64_t line_count = 0;
  if (need_lines) {
    for (Part& part : parts) {
      part.first_line = line_count;
      line_count += count_lines(part.begin, part.end);
    }
  }
  while (workers_.size() < parts.size()) {
    workers_.push_back(std::make_unique<RecordInference>(options_));
  }
  // At least one: the caller's thread takes parts even when there are none.
  while (batches_.size() < std::max<size_t>(1, std::min(thread_count, parts.size()))) {
    batches_.push_back(std::make_unique<LineBatch>(options_.line_batches));
  }
  const int64_t base_line = lines_;
  const LineSample sample{options_.sampling_ratio, options_.sample_seed};
  std::vector<int64_t> part_lines(parts.size(), 0);
  auto run = [&](size_t k, LineBatch& batch) {
    const Part& part = parts[k];
    int64_t line = base_line + part.first_line;
    // Counted as the part is read (a separate pass would cost a fifth of the time).
    struct Count {
      int64_t& out;
      const int64_t& line;
      int64_t first;
      ~Count() { out = line - first; }
    } count_on_exit{part_lines[k], line, line};
    batch.add_lines(*workers_[k],
                    std::string_view(part.begin, static_cast<size_t>(part.end - part.begin)),
                    readable - static_cast<size_t>(part.begin - begin), line, sampling, sample);
  };
  std::vector<std::exception_ptr> errors(parts.size());
  std::atomic<size_t> next_part{0};
  auto take_parts = [&](LineBatch& batch) {
    for (size_t k = next_part++; k < parts.size(); k = next_part++) {
      try {
        run(k, batch);
      } catch (...) {
        errors[k] = std::current_exception();
      }
    }
  };
  std::vector<std::thread> pool;
  for (size_t t = 1; t < std::min(thread_count, parts.size()); ++t) {
    pool.emplace_back(take_parts, std::ref(*batches_[t]));
  }
  take_parts(*batches_[0]);
  for (std::thread& t : pool) t.join();
  int64_t read_lines = 0;
  for (const int64_t n : part_lines) read_lines += n;
  lines_ += need_lines ? line_count : read_lines;
  for (const std::exception_ptr& e : errors) {
    if (e) std::rethrow_exception(e);
  }
}

void SchemaInference::add_document(std::string_view doc) {
  workers_[0]->add(doc, doc.size(), lines_ + 1);
  ++lines_;
}

InferredType SchemaInference::root() const {
  InferredType root = workers_[0]->root();
  for (size_t k = 1; k < workers_.size(); ++k) {
    merge_compatible(root, workers_[k]->root(), options_.case_sensitive);
  }
  for (const InferredType& other : merged_) merge_compatible(root, other, options_.case_sensitive);
  return root;
}

void SchemaInference::merge(const SchemaInference& other) {
  merged_.push_back(other.root());
  lines_ += other.lines_;
}

std::string SchemaInference::schema_json() const {
  InferredType root = this->root();
  if (!canonicalize(root, options_.drop_field_if_all_null)) {
    root = InferredType::scalar(InferredKind::Struct);
  }
  std::string out;
  append_spark_json(root, out);
  return out;
}

int64_t SchemaInference::schema_changes() const {
  int64_t n = 0;
  for (const auto& w : workers_) n += w->slow_records();
  return n;
}

int64_t SchemaInference::batched_lines() const {
  int64_t n = 0;
  for (const auto& b : batches_) n += b->batched_lines();
  return n;
}

}  // namespace sliceflow::json
