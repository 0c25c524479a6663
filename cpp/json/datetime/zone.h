// Time zones as java.time resolves them for Spark (namespace dt: internal to datetime/*.cpp).
// A Zone is a fixed offset or a pointer to a region's TzRules, which are read once from the
// TZif file java.time's rules live in (see zone_ids.inc) and then cached for the whole
// process: lookups after the first are lock-free, and TzRules are immutable once published.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "json/datetime.h"

namespace sliceflow::json::dt {

// A POSIX TZ rule date ("Mm.w.d", "Jn" or "n") with its transition time in seconds.
struct RuleDate {
  char kind = 'M';
  int month = 0, week = 0, wday = 0, day = 0;
  int32_t time = 7200;
};

struct PosixTz {
  bool valid = false;
  int32_t std_offset = 0;  // seconds east of UTC
  bool has_dst = false;
  int32_t dst_offset = 0;
  RuleDate start, end;
};

// The wall-offset history of one region, laid out like java.time.zone.ZoneRules:
// local_trans holds, per transition, the earlier and the later local date-time (seconds),
// wall_offsets[k] is the offset before transition k (and wall_offsets.back() after the last).
struct TzRules {
  std::vector<int64_t> local_trans;
  std::vector<int32_t> wall_offsets;
  PosixTz footer;  // used after the last explicit transition, like ZoneRules.lastRules
};

struct Zone {
  const TzRules* rules = nullptr;  // nullptr: fixed offset
  int64_t offset = 0;              // seconds east of UTC when fixed
};

// ZonedDateTime.of(localDateTime, zone).toEpochSecond() for a local time given in seconds.
int64_t local_to_epoch(const Zone& z, int64_t local);

// The rules of a TZif file (nullptr if it cannot be read or is malformed). Cost: reads the file.
std::unique_ptr<TzRules> load_tzif(const std::string& path);
// The retired "SystemV/XSTnXDT" zones java.time still knows (nullptr for any other id).
std::unique_ptr<TzRules> systemv_rules(std::string_view id);

// Longest java.time zone id that is a case-insensitive prefix of `text` (its index, or -1).
int find_zone_id_prefix_ci(std::string_view text, size_t& len);
// The id at an index find_zone_id_prefix_ci returned.
std::string_view zone_id_at(int index);
// ZoneRegion.ofId: the id must be a known region whose rules this machine has.
bool zone_region(std::string_view id, Zone& z);
// SparkDateTimeUtils.getZoneId applied to the zone part of a CAST string (already trimmed the
// way java.lang.String.trim does).
bool spark_get_zone_id(std::string_view tz, Zone& z);

}  // namespace sliceflow::json::dt

namespace sliceflow::json {

struct ZoneAccess {
  static dt::Zone get(const TimeZone& z) {
    return dt::Zone{static_cast<const dt::TzRules*>(z.rules_), z.offset_};
  }
  static TimeZone make(const dt::Zone& z) {
    TimeZone out;
    out.rules_ = z.rules;
    out.offset_ = z.offset;
    return out;
  }
};

}  // namespace sliceflow::json
