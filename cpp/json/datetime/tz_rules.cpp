// The offset history of a region: TZif files (RFC 8536, version 2+ data and the POSIX TZ footer
// that continues it), the SystemV zones java.time still has, and ZoneRules.getOffsetInfo's
// mapping of a local date-time to an instant (gaps shift forward, overlaps take the earlier
// offset). load_tzif reads one file (called once per zone, see zone_id.cpp); local_to_epoch is
// a binary search over the transitions, or O(1) arithmetic past the last one.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "json/datetime/calendar.h"
#include "json/datetime/zone.h"

namespace sliceflow::json::dt {
namespace {

// --- POSIX TZ strings (the TZif footer) -----------------------------------------------------

bool posix_parse_name(const char*& p, const char* end) {
  if (p < end && *p == '<') {
    ++p;
    while (p < end && *p != '>') ++p;
    if (p == end) return false;
    ++p;
    return true;
  }
  const char* start = p;
  while (p < end && ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z'))) ++p;
  return p - start >= 3;
}

// [+-]hh[:mm[:ss]] -> seconds (sign as written).
bool posix_parse_time(const char*& p, const char* end, int32_t& out) {
  int sign = 1;
  if (p < end && (*p == '+' || *p == '-')) {
    if (*p == '-') sign = -1;
    ++p;
  }
  int32_t parts[3] = {0, 0, 0};
  for (int i = 0; i < 3; ++i) {
    if (i > 0) {
      if (p < end && *p == ':') ++p;
      else break;
    }
    if (p >= end || !is_digit(*p)) return false;
    int32_t v = 0;
    int digits = 0;
    while (p < end && is_digit(*p) && digits < 3) {
      v = v * 10 + (*p - '0');
      ++p;
      ++digits;
    }
    parts[i] = v;
  }
  out = sign * (parts[0] * 3600 + parts[1] * 60 + parts[2]);
  return true;
}

bool posix_parse_int(const char*& p, const char* end, int& out) {
  if (p >= end || !is_digit(*p)) return false;
  int v = 0;
  while (p < end && is_digit(*p) && v < 10000) v = v * 10 + (*p++ - '0');
  out = v;
  return true;
}

bool posix_parse_rule(const char*& p, const char* end, RuleDate& r) {
  if (p < end && *p == 'M') {
    ++p;
    r.kind = 'M';
    if (!posix_parse_int(p, end, r.month) || p >= end || *p++ != '.') return false;
    if (!posix_parse_int(p, end, r.week) || p >= end || *p++ != '.') return false;
    if (!posix_parse_int(p, end, r.wday)) return false;
    if (r.month < 1 || r.month > 12 || r.week < 1 || r.week > 5 || r.wday > 6) return false;
  } else if (p < end && *p == 'J') {
    ++p;
    r.kind = 'J';
    if (!posix_parse_int(p, end, r.day) || r.day < 1 || r.day > 365) return false;
  } else {
    r.kind = 'N';
    if (!posix_parse_int(p, end, r.day) || r.day > 365) return false;
  }
  r.time = 7200;
  if (p < end && *p == '/') {
    ++p;
    if (!posix_parse_time(p, end, r.time)) return false;
  }
  return true;
}

PosixTz parse_posix_tz(std::string_view s) {
  PosixTz tz;
  const char* p = s.data();
  const char* end = p + s.size();
  int32_t off = 0;
  if (!posix_parse_name(p, end) || !posix_parse_time(p, end, off)) return tz;
  tz.std_offset = -off;
  if (p == end) {
    tz.valid = true;
    return tz;
  }
  if (!posix_parse_name(p, end)) return tz;
  tz.has_dst = true;
  tz.dst_offset = tz.std_offset + 3600;
  if (p < end && *p != ',') {
    if (!posix_parse_time(p, end, off)) return tz;
    tz.dst_offset = -off;
  }
  if (p == end) {  // POSIX default rules (US)
    tz.start = RuleDate{'M', 3, 2, 0, 0, 7200};
    tz.end = RuleDate{'M', 11, 1, 0, 0, 7200};
    tz.valid = true;
    return tz;
  }
  if (*p++ != ',' || !posix_parse_rule(p, end, tz.start)) return tz;
  if (p >= end || *p++ != ',' || !posix_parse_rule(p, end, tz.end)) return tz;
  tz.valid = p == end;
  return tz;
}

// Epoch day on which a POSIX rule falls in `year`.
int64_t rule_epoch_day(const RuleDate& r, int64_t year) {
  if (r.kind == 'J') {
    int64_t doy = r.day + ((is_leap(year) && r.day >= 60) ? 1 : 0);
    return epoch_day_of(year, 1, 1) + doy - 1;
  }
  if (r.kind == 'N') return epoch_day_of(year, 1, 1) + r.day;
  int64_t first = epoch_day_of(year, r.month, 1);
  int64_t wday_first = ((first + 4) % 7 + 7) % 7;  // 1970-01-01 was a Thursday; 0 = Sunday
  int64_t day = 1 + ((r.wday - wday_first) % 7 + 7) % 7 + (r.week - 1) * 7;
  int len = month_length(year, r.month);
  while (day > len) day -= 7;
  return first + day - 1;
}

// --- TZif files -----------------------------------------------------------------------------

int64_t be_int(const unsigned char* p, int n) {
  uint64_t v = 0;
  for (int i = 0; i < n; ++i) v = (v << 8) | p[i];
  if (n == 4) return static_cast<int32_t>(static_cast<uint32_t>(v));
  return static_cast<int64_t>(v);
}

bool read_file(const std::string& path, std::string& out) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return false;
  char buf[8192];
  size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, n);
  std::fclose(f);
  return true;
}

}  // namespace

std::unique_ptr<TzRules> load_tzif(const std::string& path) {
  std::string data;
  if (!read_file(path, data) || data.size() < 44 || data.compare(0, 4, "TZif") != 0) return nullptr;
  const auto* base = reinterpret_cast<const unsigned char*>(data.data());
  const size_t size = data.size();
  auto counts = [&](size_t at, int64_t c[6]) {
    for (int i = 0; i < 6; ++i) c[i] = be_int(base + at + 20 + 4 * i, 4);
  };
  int64_t c[6];  // isutcnt, isstdcnt, leapcnt, timecnt, typecnt, charcnt
  auto sane = [&]() {
    for (int64_t v : c) {
      if (v < 0 || v > 1'000'000) return false;
    }
    return true;
  };
  counts(0, c);
  if (!sane()) return nullptr;
  char version = data[4];
  size_t at = 44;
  int time_size = 4;
  if (version >= '2') {
    // Skip the version-1 block and use the 64-bit one.
    at += static_cast<size_t>(c[3] * 5 + c[4] * 6 + c[5] + c[2] * 8 + c[1] + c[0]);
    if (at + 44 > size || data.compare(at, 4, "TZif") != 0) return nullptr;
    counts(at, c);
    if (!sane()) return nullptr;
    at += 44;
    time_size = 8;
  }
  const int64_t isutcnt = c[0], isstdcnt = c[1], leapcnt = c[2], timecnt = c[3], typecnt = c[4],
                charcnt = c[5];
  if (typecnt < 1 || leapcnt != 0 || timecnt < 0)
    return nullptr;  // leap-second ("right/") zones unsupported
  size_t need = static_cast<size_t>(timecnt * time_size + timecnt + typecnt * 6 + charcnt +
                                    leapcnt * (time_size + 4) + isstdcnt + isutcnt);
  if (at + need > size) return nullptr;
  const unsigned char* times = base + at;
  const unsigned char* idx = times + timecnt * time_size;
  const unsigned char* types = idx + timecnt;
  auto utoff = [&](int64_t t) { return static_cast<int32_t>(be_int(types + 6 * t, 4)); };

  auto rules = std::make_unique<TzRules>();
  int32_t before = utoff(0);
  rules->wall_offsets.push_back(before);
  for (int64_t i = 0; i < timecnt; ++i) {
    int64_t t = be_int(times + i * time_size, time_size);
    int64_t type = idx[i];
    if (type >= typecnt) return nullptr;
    int32_t after = utoff(type);
    if (after == before) continue;  // java.time only records real offset changes
    rules->local_trans.push_back(t + std::min(before, after));
    rules->local_trans.push_back(t + std::max(before, after));
    rules->wall_offsets.push_back(after);
    before = after;
  }
  if (time_size == 8) {
    size_t footer = at + need;
    if (footer < size && data[footer] == '\n') {
      size_t nl = data.find('\n', footer + 1);
      if (nl != std::string::npos) {
        rules->footer = parse_posix_tz(std::string_view(data).substr(footer + 1, nl - footer - 1));
      }
    }
  }
  return rules;
}

// java.time keeps the retired "SystemV/XSTnXDT" zones (tzdata's old `systemv` file): standard
// offset -n hours, US-style DST from 1900 on (last Sunday of April to last Sunday of October,
// 1974 and 1975 excepted). No TZif file has them any more, so they are built here.
std::unique_ptr<TzRules> systemv_rules(std::string_view id) {
  size_t k = id.find_first_of("0123456789");
  if (k == std::string_view::npos) return nullptr;
  const int32_t std_off = -3600 * (id[k] - '0');
  const int32_t dst_off = std_off + 3600;
  auto rules = std::make_unique<TzRules>();
  rules->wall_offsets.push_back(std_off);
  const RuleDate last_sun_apr{'M', 4, 5, 0, 0, 7200}, last_sun_oct{'M', 10, 5, 0, 0, 7200},
      last_sun_nov{'M', 11, 5, 0, 0, 7200};
  for (int64_t y = 1900; y <= 1977; ++y) {
    int64_t start_day = y == 1974   ? epoch_day_of(1974, 1, 6)
                        : y == 1975 ? epoch_day_of(1975, 2, 23)
                                    : rule_epoch_day(last_sun_apr, y);
    int64_t end_day = rule_epoch_day(y == 1974 ? last_sun_nov : last_sun_oct, y);
    int64_t start = start_day * kSecondsPerDay + 7200 - std_off;
    int64_t end = end_day * kSecondsPerDay + 7200 - dst_off;
    rules->local_trans.push_back(start + std_off);
    rules->local_trans.push_back(start + dst_off);
    rules->wall_offsets.push_back(dst_off);
    rules->local_trans.push_back(end + std_off);
    rules->local_trans.push_back(end + dst_off);
    rules->wall_offsets.push_back(std_off);
  }
  rules->footer.valid = true;
  rules->footer.std_offset = std_off;
  rules->footer.has_dst = true;
  rules->footer.dst_offset = dst_off;
  rules->footer.start = last_sun_apr;
  rules->footer.end = last_sun_oct;
  return rules;
}

namespace {

// The year-rule part of ZoneRules.getOffsetInfo(LocalDateTime): returns the epoch second.
int64_t footer_local_to_epoch(const PosixTz& tz, int64_t local) {
  int64_t year = year_of_epoch_day(floor_div(local, kSecondsPerDay));
  struct Trans {
    int64_t epoch;
    int32_t before, after;
  };
  Trans t[2];
  t[0] = {rule_epoch_day(tz.start, year) * kSecondsPerDay + tz.start.time - tz.std_offset,
          tz.std_offset, tz.dst_offset};
  t[1] = {rule_epoch_day(tz.end, year) * kSecondsPerDay + tz.end.time - tz.dst_offset,
          tz.dst_offset, tz.std_offset};
  if (t[1].epoch < t[0].epoch) std::swap(t[0], t[1]);
  int32_t info = 0;
  for (const Trans& tr : t) {
    // findOffsetInfo(dt, trans)
    int64_t local_before = tr.epoch + tr.before;
    int64_t local_after = tr.epoch + tr.after;
    if (tr.after > tr.before) {  // gap
      if (local < local_before) info = tr.before;
      else if (local < local_after) return local - tr.before;  // shifted forward by the gap
      else info = tr.after;
    } else {  // overlap
      if (local >= local_before) info = tr.after;
      else if (local < local_after) info = tr.before;
      else return local - tr.before;  // the earlier offset
    }
    if (info == tr.before) break;
  }
  return local - info;
}

}  // namespace

// ZonedDateTime.of(localDateTime, zone).toEpochSecond() for a local time given in seconds.
int64_t local_to_epoch(const Zone& z, int64_t local) {
  if (z.rules == nullptr) return local - z.offset;
  const TzRules& r = *z.rules;
  const auto& lt = r.local_trans;
  if (lt.empty()) return local - r.wall_offsets[0];
  if (r.footer.valid && r.footer.has_dst && local > lt.back()) {
    return footer_local_to_epoch(r.footer, local);
  }
  // Arrays.binarySearch + the index arithmetic of ZoneRules.getOffsetInfo.
  auto it = std::lower_bound(lt.begin(), lt.end(), local);
  int64_t index;
  if (it != lt.end() && *it == local) {
    index = it - lt.begin();
    // java's binarySearch may return either of two equal entries; prefer the later one as
    // java does through its "overlap immediately following gap" adjustment.
    if (index + 1 < static_cast<int64_t>(lt.size()) && lt[static_cast<size_t>(index + 1)] == local)
      ++index;
  } else {
    int64_t insertion = it - lt.begin();
    if (insertion == 0) return local - r.wall_offsets[0];
    index = insertion - 1;
  }
  if ((index & 1) == 0) {  // inside a gap or an overlap: use the offset before
    return local - r.wall_offsets[static_cast<size_t>(index / 2)];
  }
  return local - r.wall_offsets[static_cast<size_t>(index / 2 + 1)];
}

}  // namespace sliceflow::json::dt
