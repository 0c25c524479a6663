// One part of NDJSON text (whole lines) inferred record by record into a RecordInference, the
// lines parsed by simdjson a batch at a time: spark.read.json's reading of each line, at the
// cost of simdjson's parse_many rather than one parse per line.
//
// Spark reads the first JSON value of each line and never looks past it; parse_many reads a
// stream of values whatever the lines. The two agree on a document alone on its line (blanks
// only around it): that is the line's record, as a parse of the line alone finds it. LineBatch
// checks that of every document (a cheap compare of offsets against the line ends it finds
// anyway). A line with more than one value is read on its own (Jackson reads its first value
// but may refuse what follows it: no space after a root-level number), and its later documents
// are skipped. At the first thing it cannot place (a document spanning lines, text before a
// document, a parse error), the rest of the batch is read line by line as
// RecordInference::add reads it, which gives every line the reading it had without batches
// (and the Reader the lines simdjson refuses). So the schema is the same with or without
// batches, for every text; the fuzzer and a randomized test compare the two.
//
// Invariants: a batch is at most kBatchBytes plus the rest of its last line; a batch over
// kBatchCapacity (a last line of over 64 KiB) is read line by line, so the parser never grows
// past kBatchCapacity.
// simdjson reads up to SIMDJSON_PADDING past a batch: a batch without that many readable
// bytes after it is read line by line. Cost: one stage-1 pass and one tape per batch, plus a
// scan for line ends; memory: one parser of kBatchCapacity per thread (~14 bytes per byte of
// capacity: tape, strings and structural indexes, ~4.5 MiB).
#pragma once

#include <simdjson.h>

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace sliceflow::json {

class RecordInference;

// Which lines are read: every line, or a sample (samplingRatio).
struct LineSample {
  double ratio = 1.0;
  uint64_t seed = 0;
  // Whether line `line` (0-based over every block) is in the sample: a SplitMix64 hash of the
  // line number and the seed compared with the ratio.
  bool take(int64_t line) const;
};

class LineBatch {
 public:
  static constexpr size_t kBatchBytes = 256 << 10;
  static constexpr size_t kBatchCapacity = kBatchBytes + (64 << 10);

  // `batches`: false reads every line on its own (RecordInference::add), the reference the
  // batches are tested against.
  explicit LineBatch(bool batches);

  // Infers every line of `part` into `record`. `readable` bytes may be read from part.data();
  // `line` is the 0-based number of the part's first line over every block, advanced past
  // each line read (so it also counts lines when an exception leaves early); records are
  // named to FAILFAST by line + 1. `sample` picks the lines read when `sampling`.
  void add_lines(RecordInference& record, std::string_view part, size_t readable, int64_t& line,
                 bool sampling, const LineSample& sample);

  // Lines whose record a batch placed (not read on their own), for tests.
  int64_t batched_lines() const { return batched_lines_; }

 private:
  // Reads what it can of [begin, end) as one parse_many batch; returns where the lines it
  // could not place begin (end when it placed them all).
  const char* add_batch(RecordInference& record, const char* begin, const char* end, int64_t& line,
                        bool sampling, const LineSample& sample);

  simdjson::dom::parser parser_;
  bool batches_;
  int64_t batched_lines_ = 0;
};

}  // namespace sliceflow::json
