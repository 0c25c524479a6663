// Parsed.resolve with ResolverStyle.STRICT in the ISO chronology, and Spark's
// DateTimeFormatterHelper.toLocalDate / toLocalTime defaults (see pattern_resolve.h). O(1) per
// value; allocates nothing and throws nothing.
#include "json/datetime/pattern_resolve.h"

#include <cstdint>

namespace sliceflow::json::dt {

bool resolve(Parsed& p, Resolved& r) {
  // resolveDateFields (AbstractChronology.resolveDate); first IsoChronology.resolveYearOfEra
  auto add_field_value = [&](int f, int64_t value) {
    if (p.has(f) && p.get(f) != value) return false;
    p.put(f, value);
    return true;
  };
  if (p.has(kYearOfEra)) {
    const int64_t yoe = p.get(kYearOfEra);
    if (!in_range(kYearOfEra, yoe)) return false;
    p.remove(kYearOfEra);
    if (!p.has(kEra)) {
      if (p.has(kYear)) {
        if (!add_field_value(kYear, p.get(kYear) > 0 ? yoe : 1 - yoe)) return false;
      } else {
        p.put(kYearOfEra, yoe);  // STRICT does not invent an era
      }
    } else {
      const int64_t era = p.get(kEra);
      p.remove(kEra);
      if (!add_field_value(kYear, era == 1 ? yoe : 1 - yoe)) return false;
    }
  }
  if (p.has(kYear)) {
    if (p.has(kMonth) && p.has(kDayOfMonth)) {
      if (!in_range(kYear, p.get(kYear)) || !in_range(kMonth, p.get(kMonth)) ||
          !in_range(kDayOfMonth, p.get(kDayOfMonth))) {
        return false;
      }
      if (!local_date_of(p.get(kYear), p.get(kMonth), p.get(kDayOfMonth), r.epoch_day))
        return false;
      r.has_date = true;
      p.remove(kYear);
      p.remove(kMonth);
      p.remove(kDayOfMonth);
    } else if (p.has(kDayOfYear)) {
      if (!in_range(kYear, p.get(kYear)) || !in_range(kDayOfYear, p.get(kDayOfYear))) return false;
      if (!local_date_of_year_day(p.get(kYear), p.get(kDayOfYear), r.epoch_day)) return false;
      r.has_date = true;
      p.remove(kYear);
      p.remove(kDayOfYear);
    }
  }
  // resolveTimeFields
  auto update_check_conflict = [&](int f, int64_t value) {
    bool conflict = p.has(f) && p.get(f) != value;
    p.put(f, value);
    return !conflict;
  };
  auto resolve_time = [&](int64_t hod, int64_t moh, int64_t som, int64_t nos) {
    if (!in_range(kMinute, moh) || !in_range(kNano, nos) || !in_range(kHourOfDay, hod) ||
        !in_range(kSecond, som)) {
      return false;
    }
    r.has_time = true;
    r.hour = hod;
    r.minute = moh;
    r.second = som;
    r.nano = nos;
    return true;
  };
  if (p.has(kClockHourOfDay)) {
    int64_t ch = p.get(kClockHourOfDay);
    p.remove(kClockHourOfDay);
    if (!in_range(kClockHourOfDay, ch)) return false;
    if (!update_check_conflict(kHourOfDay, ch == 24 ? 0 : ch)) return false;
  }
  if (p.has(kClockHourOfAmPm)) {
    int64_t ch = p.get(kClockHourOfAmPm);
    p.remove(kClockHourOfAmPm);
    if (!in_range(kClockHourOfAmPm, ch)) return false;
    if (!update_check_conflict(kHourOfAmPm, ch == 12 ? 0 : ch)) return false;
  }
  if (p.has(kAmPm) && p.has(kHourOfAmPm)) {
    int64_t ap = p.get(kAmPm), hap = p.get(kHourOfAmPm);
    p.remove(kAmPm);
    p.remove(kHourOfAmPm);
    if (!in_range(kAmPm, ap) || !in_range(kHourOfAmPm, hap)) return false;
    if (!update_check_conflict(kHourOfDay, ap * 12 + hap)) return false;
  }
  if (p.has(kNano) && !in_range(kNano, p.get(kNano))) return false;
  if (p.has(kHourOfDay) && p.has(kMinute) && p.has(kSecond) && p.has(kNano)) {
    int64_t hod = p.get(kHourOfDay), moh = p.get(kMinute), som = p.get(kSecond), nos = p.get(kNano);
    p.remove(kHourOfDay);
    p.remove(kMinute);
    p.remove(kSecond);
    p.remove(kNano);
    if (!resolve_time(hod, moh, som, nos)) return false;
  }
  // resolveTimeLenient
  bool validate = true;
  if (!r.has_time && p.has(kHourOfDay)) {
    const bool moh = p.has(kMinute), som = p.has(kSecond), nos = p.has(kNano);
    if ((!moh && (som || nos)) || (moh && !som && nos)) {
      validate = false;  // java returns early: the remaining fields are not validated
    } else {
      if (!resolve_time(p.get(kHourOfDay), moh ? p.get(kMinute) : 0, som ? p.get(kSecond) : 0,
                        nos ? p.get(kNano) : 0)) {
        return false;
      }
      p.remove(kHourOfDay);
      p.remove(kMinute);
      p.remove(kSecond);
      p.remove(kNano);
    }
  }
  if (validate) {
    for (int f = kHourOfDay; f <= kNano; ++f) {
      if (p.has(f) && !in_range(f, p.get(f))) return false;
    }
  }
  // crossCheck
  if (r.has_date) {
    int64_t y = year_of_epoch_day(r.epoch_day);
    const int64_t jan1 = epoch_day_of(y, 1, 1);
    const int64_t doy = r.epoch_day - jan1 + 1;
    int64_t m = 1;
    while (m < 12 && epoch_day_of(y, m + 1, 1) <= r.epoch_day) ++m;
    const int64_t dom = r.epoch_day - epoch_day_of(y, m, 1) + 1;
    const int64_t values[4] = {y, m, dom, doy};
    for (int f = kYear; f <= kDayOfYear; ++f) {
      if (!p.has(f)) continue;
      if (p.get(f) != values[f]) return false;
      p.remove(f);
    }
    if (p.has(kEra)) {
      if (p.get(kEra) != (y >= 1 ? 1 : 0)) return false;
      p.remove(kEra);
    }
    if (p.has(kYearOfEra)) {
      if (p.get(kYearOfEra) != (y >= 1 ? y : 1 - y)) return false;
      p.remove(kYearOfEra);
    }
  }
  // resolveInstant: with a date, a time and an offset java builds the instant, which
  // validates the offset (ZoneOffset.ofTotalSeconds) even when only the date is wanted.
  if (r.has_date && r.has_time && p.has(kOffsetSeconds) &&
      !in_range(kOffsetSeconds, p.get(kOffsetSeconds))) {
    return false;
  }
  if (r.has_time) {
    const int64_t h = r.hour;
    const int64_t values[kNano + 1] = {
        0,      0,        0,        0,     h, h == 0 ? 24 : h, h % 12, (h % 12 == 0) ? 12 : h % 12,
        h / 12, r.minute, r.second, r.nano};
    for (int f = kHourOfDay; f <= kNano; ++f) {
      if (!p.has(f)) continue;
      if (p.get(f) != values[f]) return false;
      p.remove(f);
    }
  }
  return true;
}

// DateTimeFormatterHelper.toLocalDate
bool to_local_date(const Parsed& p, const Resolved& r, int64_t& epoch_day) {
  if (r.has_date) {
    epoch_day = r.epoch_day;
    return true;
  }
  int64_t year = 1970;
  if (p.has(kYear)) {
    year = p.get(kYear);
    if (!in_range(kYear, year)) return false;
  }
  if (p.has(kDayOfYear)) {
    if (!in_range(kDayOfYear, p.get(kDayOfYear))) return false;
    if (!local_date_of_year_day(year, p.get(kDayOfYear), epoch_day)) return false;
    int64_t m = 1;
    while (m < 12 && epoch_day_of(year, m + 1, 1) <= epoch_day) ++m;
    const int64_t dom = epoch_day - epoch_day_of(year, m, 1) + 1;
    if (p.has(kMonth) && (!in_range(kMonth, p.get(kMonth)) || p.get(kMonth) != m)) return false;
    if (p.has(kDayOfMonth) &&
        (!in_range(kDayOfMonth, p.get(kDayOfMonth)) || p.get(kDayOfMonth) != dom)) {
      return false;
    }
    return true;
  }
  int64_t month = 1, day = 1;
  if (p.has(kMonth)) {
    month = p.get(kMonth);
    if (!in_range(kMonth, month)) return false;
  }
  if (p.has(kDayOfMonth)) {
    day = p.get(kDayOfMonth);
    if (!in_range(kDayOfMonth, day)) return false;
  }
  return local_date_of(year, month, day, epoch_day);
}

// DateTimeFormatterHelper.toLocalTime -> nanos of day
bool to_local_time(const Parsed& p, const Resolved& r, int64_t& second_of_day, int64_t& nano) {
  if (r.has_time) {
    second_of_day = r.hour * 3600 + r.minute * 60 + r.second;
    nano = r.nano;
    return true;
  }
  auto get = [&](int f, int64_t def, int64_t& out) {
    if (!p.has(f)) {
      out = def;
      return true;
    }
    out = p.get(f);
    return in_range(f, out);
  };
  int64_t hour = 0;
  if (p.has(kHourOfDay)) {
    if (!get(kHourOfDay, 0, hour)) return false;
  } else if (p.has(kHourOfAmPm)) {
    if (!get(kHourOfAmPm, 0, hour)) return false;
  } else if (p.has(kAmPm)) {
    int64_t ap = 0;
    if (!get(kAmPm, 0, ap)) return false;
    hour = ap == 1 ? 12 : 0;
  }
  int64_t minute = 0, second = 0;
  if (!get(kMinute, 0, minute) || !get(kSecond, 0, second) || !get(kNano, 0, nano)) return false;
  if (hour > 23 || minute > 59 || second > 59) return false;  // LocalTime.of
  second_of_day = hour * 3600 + minute * 60 + second;
  return true;
}

}  // namespace sliceflow::json::dt
