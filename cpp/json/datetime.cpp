// Spark 4.x string -> DATE / TIMESTAMP / TIMESTAMP_NTZ conversions. See datetime.h and
// docs/json-datetime.md. The code follows Spark's SparkDateTimeUtils, DateTimeFormatterHelper
// and the parts of java.time (DateTimeFormatterBuilder, Parsed, ZoneId, ZoneRules) that they
// rely on, step by step, so that every accept/reject decision and every value matches.
#include "json/datetime.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

namespace sliceflow::json {
namespace {

constexpr int64_t kMicrosPerSecond = 1'000'000;
constexpr int64_t kSecondsPerDay = 86'400;
constexpr int64_t kMaxYear = 999'999'999;  // java.time.Year.MAX_VALUE
constexpr int32_t kMaxOffset = 18 * 3600;  // ZoneOffset.MAX

inline bool is_digit(char c) { return c >= '0' && c <= '9'; }
inline char ascii_upper(char c) { return (c >= 'a' && c <= 'z') ? static_cast<char>(c - 32) : c; }
// Java's case-insensitive char comparison, restricted to ASCII (see the doc for non-ASCII).
inline bool ci_equal(char a, char b) { return a == b || ascii_upper(a) == ascii_upper(b); }

inline int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

inline bool is_leap(int64_t y) { return (y % 4 == 0) && (y % 100 != 0 || y % 400 == 0); }

inline int month_length(int64_t y, int64_t m) {
  static constexpr int kDays[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return (m == 2 && is_leap(y)) ? 29 : kDays[m - 1];
}

// Days since 1970-01-01 of a proleptic Gregorian date (any int64 year that does not overflow).
int64_t epoch_day_of(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2 ? 1 : 0;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

int64_t year_of_epoch_day(int64_t z) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const int64_t doe = z - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  const int64_t m = mp < 10 ? mp + 3 : mp - 9;
  return yoe + era * 400 + (m <= 2 ? 1 : 0);
}

// java.time.LocalDate.of(year, month, day).toEpochDay(); false = DateTimeException.
bool local_date_of(int64_t y, int64_t m, int64_t d, int64_t& epoch_day) {
  if (y < -kMaxYear || y > kMaxYear || m < 1 || m > 12 || d < 1 || d > 31) return false;
  if (d > month_length(y, m)) return false;
  epoch_day = epoch_day_of(y, m, d);
  return true;
}

// java.time.LocalDate.ofYearDay(year, dayOfYear).toEpochDay().
bool local_date_of_year_day(int64_t y, int64_t doy, int64_t& epoch_day) {
  if (y < -kMaxYear || y > kMaxYear || doy < 1 || doy > 366) return false;
  if (doy == 366 && !is_leap(y)) return false;
  epoch_day = epoch_day_of(y, 1, 1) + doy - 1;
  return true;
}

bool fits_int32(int64_t v) {
  return v >= std::numeric_limits<int32_t>::min() && v <= std::numeric_limits<int32_t>::max();
}

// SparkDateTimeUtils.instantToMicros (note the special case for the smallest second).
bool instant_to_micros(int64_t secs, int64_t micros_of_second, int64_t& out) {
  constexpr int64_t kMinSeconds = -9'223'372'036'855LL;  // floorDiv(Long.MIN_VALUE, 1e6)
  int64_t us = 0;
  if (secs == kMinSeconds) {
    if (__builtin_mul_overflow(secs + 1, kMicrosPerSecond, &us)) return false;
    return !__builtin_add_overflow(us, micros_of_second - kMicrosPerSecond, &out);
  }
  if (__builtin_mul_overflow(secs, kMicrosPerSecond, &us)) return false;
  return !__builtin_add_overflow(us, micros_of_second, &out);
}

// Iso8601TimestampFormatter.extractMicros: multiplyExact(epochSecond, 1e6) + microOfSecond.
bool exact_micros(int64_t secs, int64_t micros_of_second, int64_t& out) {
  int64_t us = 0;
  if (__builtin_mul_overflow(secs, kMicrosPerSecond, &us)) return false;
  return !__builtin_add_overflow(us, micros_of_second, &out);
}

// ============================================================================================
// Time zones
// ============================================================================================

// java.time.ZoneId.getAvailableZoneIds() of the JDK 17 that runs Spark (tzdb 2025a), sorted.
const char* const kJavaZoneIds[] = {
    "Africa/Abidjan", "Africa/Accra", "Africa/Addis_Ababa", "Africa/Algiers", "Africa/Asmara",
    "Africa/Asmera", "Africa/Bamako", "Africa/Bangui", "Africa/Banjul", "Africa/Bissau",
    "Africa/Blantyre", "Africa/Brazzaville", "Africa/Bujumbura", "Africa/Cairo",
    "Africa/Casablanca", "Africa/Ceuta", "Africa/Conakry", "Africa/Dakar", "Africa/Dar_es_Salaam",
    "Africa/Djibouti", "Africa/Douala", "Africa/El_Aaiun", "Africa/Freetown", "Africa/Gaborone",
    "Africa/Harare", "Africa/Johannesburg", "Africa/Juba", "Africa/Kampala", "Africa/Khartoum",
    "Africa/Kigali", "Africa/Kinshasa", "Africa/Lagos", "Africa/Libreville", "Africa/Lome",
    "Africa/Luanda", "Africa/Lubumbashi", "Africa/Lusaka", "Africa/Malabo", "Africa/Maputo",
    "Africa/Maseru", "Africa/Mbabane", "Africa/Mogadishu", "Africa/Monrovia", "Africa/Nairobi",
    "Africa/Ndjamena", "Africa/Niamey", "Africa/Nouakchott", "Africa/Ouagadougou",
    "Africa/Porto-Novo", "Africa/Sao_Tome", "Africa/Timbuktu", "Africa/Tripoli", "Africa/Tunis",
    "Africa/Windhoek", "America/Adak", "America/Anchorage", "America/Anguilla", "America/Antigua",
    "America/Araguaina", "America/Argentina/Buenos_Aires", "America/Argentina/Catamarca",
    "America/Argentina/ComodRivadavia", "America/Argentina/Cordoba", "America/Argentina/Jujuy",
    "America/Argentina/La_Rioja", "America/Argentina/Mendoza", "America/Argentina/Rio_Gallegos",
    "America/Argentina/Salta", "America/Argentina/San_Juan", "America/Argentina/San_Luis",
    "America/Argentina/Tucuman", "America/Argentina/Ushuaia", "America/Aruba", "America/Asuncion",
    "America/Atikokan", "America/Atka", "America/Bahia", "America/Bahia_Banderas",
    "America/Barbados", "America/Belem", "America/Belize", "America/Blanc-Sablon",
    "America/Boa_Vista", "America/Bogota", "America/Boise", "America/Buenos_Aires",
    "America/Cambridge_Bay", "America/Campo_Grande", "America/Cancun", "America/Caracas",
    "America/Catamarca", "America/Cayenne", "America/Cayman", "America/Chicago",
    "America/Chihuahua", "America/Ciudad_Juarez", "America/Coral_Harbour", "America/Cordoba",
    "America/Costa_Rica", "America/Creston", "America/Cuiaba", "America/Curacao",
    "America/Danmarkshavn", "America/Dawson", "America/Dawson_Creek", "America/Denver",
    "America/Detroit", "America/Dominica", "America/Edmonton", "America/Eirunepe",
    "America/El_Salvador", "America/Ensenada", "America/Fort_Nelson", "America/Fort_Wayne",
    "America/Fortaleza", "America/Glace_Bay", "America/Godthab", "America/Goose_Bay",
    "America/Grand_Turk", "America/Grenada", "America/Guadeloupe", "America/Guatemala",
    "America/Guayaquil", "America/Guyana", "America/Halifax", "America/Havana",
    "America/Hermosillo", "America/Indiana/Indianapolis", "America/Indiana/Knox",
    "America/Indiana/Marengo", "America/Indiana/Petersburg", "America/Indiana/Tell_City",
    "America/Indiana/Vevay", "America/Indiana/Vincennes", "America/Indiana/Winamac",
    "America/Indianapolis", "America/Inuvik", "America/Iqaluit", "America/Jamaica",
    "America/Jujuy", "America/Juneau", "America/Kentucky/Louisville",
    "America/Kentucky/Monticello", "America/Knox_IN", "America/Kralendijk", "America/La_Paz",
    "America/Lima", "America/Los_Angeles", "America/Louisville", "America/Lower_Princes",
    "America/Maceio", "America/Managua", "America/Manaus", "America/Marigot",
    "America/Martinique", "America/Matamoros", "America/Mazatlan", "America/Mendoza",
    "America/Menominee", "America/Merida", "America/Metlakatla", "America/Mexico_City",
    "America/Miquelon", "America/Moncton", "America/Monterrey", "America/Montevideo",
    "America/Montreal", "America/Montserrat", "America/Nassau", "America/New_York",
    "America/Nipigon", "America/Nome", "America/Noronha", "America/North_Dakota/Beulah",
    "America/North_Dakota/Center", "America/North_Dakota/New_Salem", "America/Nuuk",
    "America/Ojinaga", "America/Panama", "America/Pangnirtung", "America/Paramaribo",
    "America/Phoenix", "America/Port-au-Prince", "America/Port_of_Spain", "America/Porto_Acre",
    "America/Porto_Velho", "America/Puerto_Rico", "America/Punta_Arenas", "America/Rainy_River",
    "America/Rankin_Inlet", "America/Recife", "America/Regina", "America/Resolute",
    "America/Rio_Branco", "America/Rosario", "America/Santa_Isabel", "America/Santarem",
    "America/Santiago", "America/Santo_Domingo", "America/Sao_Paulo", "America/Scoresbysund",
    "America/Shiprock", "America/Sitka", "America/St_Barthelemy", "America/St_Johns",
    "America/St_Kitts", "America/St_Lucia", "America/St_Thomas", "America/St_Vincent",
    "America/Swift_Current", "America/Tegucigalpa", "America/Thule", "America/Thunder_Bay",
    "America/Tijuana", "America/Toronto", "America/Tortola", "America/Vancouver",
    "America/Virgin", "America/Whitehorse", "America/Winnipeg", "America/Yakutat",
    "America/Yellowknife", "Antarctica/Casey", "Antarctica/Davis", "Antarctica/DumontDUrville",
    "Antarctica/Macquarie", "Antarctica/Mawson", "Antarctica/McMurdo", "Antarctica/Palmer",
    "Antarctica/Rothera", "Antarctica/South_Pole", "Antarctica/Syowa", "Antarctica/Troll",
    "Antarctica/Vostok", "Arctic/Longyearbyen", "Asia/Aden", "Asia/Almaty", "Asia/Amman",
    "Asia/Anadyr", "Asia/Aqtau", "Asia/Aqtobe", "Asia/Ashgabat", "Asia/Ashkhabad", "Asia/Atyrau",
    "Asia/Baghdad", "Asia/Bahrain", "Asia/Baku", "Asia/Bangkok", "Asia/Barnaul", "Asia/Beirut",
    "Asia/Bishkek", "Asia/Brunei", "Asia/Calcutta", "Asia/Chita", "Asia/Choibalsan",
    "Asia/Chongqing", "Asia/Chungking", "Asia/Colombo", "Asia/Dacca", "Asia/Damascus",
    "Asia/Dhaka", "Asia/Dili", "Asia/Dubai", "Asia/Dushanbe", "Asia/Famagusta", "Asia/Gaza",
    "Asia/Harbin", "Asia/Hebron", "Asia/Ho_Chi_Minh", "Asia/Hong_Kong", "Asia/Hovd",
    "Asia/Irkutsk", "Asia/Istanbul", "Asia/Jakarta", "Asia/Jayapura", "Asia/Jerusalem",
    "Asia/Kabul", "Asia/Kamchatka", "Asia/Karachi", "Asia/Kashgar", "Asia/Kathmandu",
    "Asia/Katmandu", "Asia/Khandyga", "Asia/Kolkata", "Asia/Krasnoyarsk", "Asia/Kuala_Lumpur",
    "Asia/Kuching", "Asia/Kuwait", "Asia/Macao", "Asia/Macau", "Asia/Magadan", "Asia/Makassar",
    "Asia/Manila", "Asia/Muscat", "Asia/Nicosia", "Asia/Novokuznetsk", "Asia/Novosibirsk",
    "Asia/Omsk", "Asia/Oral", "Asia/Phnom_Penh", "Asia/Pontianak", "Asia/Pyongyang", "Asia/Qatar",
    "Asia/Qostanay", "Asia/Qyzylorda", "Asia/Rangoon", "Asia/Riyadh", "Asia/Saigon",
    "Asia/Sakhalin", "Asia/Samarkand", "Asia/Seoul", "Asia/Shanghai", "Asia/Singapore",
    "Asia/Srednekolymsk", "Asia/Taipei", "Asia/Tashkent", "Asia/Tbilisi", "Asia/Tehran",
    "Asia/Tel_Aviv", "Asia/Thimbu", "Asia/Thimphu", "Asia/Tokyo", "Asia/Tomsk",
    "Asia/Ujung_Pandang", "Asia/Ulaanbaatar", "Asia/Ulan_Bator", "Asia/Urumqi", "Asia/Ust-Nera",
    "Asia/Vientiane", "Asia/Vladivostok", "Asia/Yakutsk", "Asia/Yangon", "Asia/Yekaterinburg",
    "Asia/Yerevan", "Atlantic/Azores", "Atlantic/Bermuda", "Atlantic/Canary",
    "Atlantic/Cape_Verde", "Atlantic/Faeroe", "Atlantic/Faroe", "Atlantic/Jan_Mayen",
    "Atlantic/Madeira", "Atlantic/Reykjavik", "Atlantic/South_Georgia", "Atlantic/St_Helena",
    "Atlantic/Stanley", "Australia/ACT", "Australia/Adelaide", "Australia/Brisbane",
    "Australia/Broken_Hill", "Australia/Canberra", "Australia/Currie", "Australia/Darwin",
    "Australia/Eucla", "Australia/Hobart", "Australia/LHI", "Australia/Lindeman",
    "Australia/Lord_Howe", "Australia/Melbourne", "Australia/NSW", "Australia/North",
    "Australia/Perth", "Australia/Queensland", "Australia/South", "Australia/Sydney",
    "Australia/Tasmania", "Australia/Victoria", "Australia/West", "Australia/Yancowinna",
    "Brazil/Acre", "Brazil/DeNoronha", "Brazil/East", "Brazil/West", "CET", "CST6CDT",
    "Canada/Atlantic", "Canada/Central", "Canada/Eastern", "Canada/Mountain",
    "Canada/Newfoundland", "Canada/Pacific", "Canada/Saskatchewan", "Canada/Yukon",
    "Chile/Continental", "Chile/EasterIsland", "Cuba", "EET", "EST5EDT", "Egypt", "Eire",
    "Etc/GMT", "Etc/GMT+0", "Etc/GMT+1", "Etc/GMT+10", "Etc/GMT+11", "Etc/GMT+12", "Etc/GMT+2",
    "Etc/GMT+3", "Etc/GMT+4", "Etc/GMT+5", "Etc/GMT+6", "Etc/GMT+7", "Etc/GMT+8", "Etc/GMT+9",
    "Etc/GMT-0", "Etc/GMT-1", "Etc/GMT-10", "Etc/GMT-11", "Etc/GMT-12", "Etc/GMT-13",
    "Etc/GMT-14", "Etc/GMT-2", "Etc/GMT-3", "Etc/GMT-4", "Etc/GMT-5", "Etc/GMT-6", "Etc/GMT-7",
    "Etc/GMT-8", "Etc/GMT-9", "Etc/GMT0", "Etc/Greenwich", "Etc/UCT", "Etc/UTC", "Etc/Universal",
    "Etc/Zulu", "Europe/Amsterdam", "Europe/Andorra", "Europe/Astrakhan", "Europe/Athens",
    "Europe/Belfast", "Europe/Belgrade", "Europe/Berlin", "Europe/Bratislava", "Europe/Brussels",
    "Europe/Bucharest", "Europe/Budapest", "Europe/Busingen", "Europe/Chisinau",
    "Europe/Copenhagen", "Europe/Dublin", "Europe/Gibraltar", "Europe/Guernsey",
    "Europe/Helsinki", "Europe/Isle_of_Man", "Europe/Istanbul", "Europe/Jersey",
    "Europe/Kaliningrad", "Europe/Kiev", "Europe/Kirov", "Europe/Kyiv", "Europe/Lisbon",
    "Europe/Ljubljana", "Europe/London", "Europe/Luxembourg", "Europe/Madrid", "Europe/Malta",
    "Europe/Mariehamn", "Europe/Minsk", "Europe/Monaco", "Europe/Moscow", "Europe/Nicosia",
    "Europe/Oslo", "Europe/Paris", "Europe/Podgorica", "Europe/Prague", "Europe/Riga",
    "Europe/Rome", "Europe/Samara", "Europe/San_Marino", "Europe/Sarajevo", "Europe/Saratov",
    "Europe/Simferopol", "Europe/Skopje", "Europe/Sofia", "Europe/Stockholm", "Europe/Tallinn",
    "Europe/Tirane", "Europe/Tiraspol", "Europe/Ulyanovsk", "Europe/Uzhgorod", "Europe/Vaduz",
    "Europe/Vatican", "Europe/Vienna", "Europe/Vilnius", "Europe/Volgograd", "Europe/Warsaw",
    "Europe/Zagreb", "Europe/Zaporozhye", "Europe/Zurich", "GB", "GB-Eire", "GMT", "GMT0",
    "Greenwich", "Hongkong", "Iceland", "Indian/Antananarivo", "Indian/Chagos",
    "Indian/Christmas", "Indian/Cocos", "Indian/Comoro", "Indian/Kerguelen", "Indian/Mahe",
    "Indian/Maldives", "Indian/Mauritius", "Indian/Mayotte", "Indian/Reunion", "Iran", "Israel",
    "Jamaica", "Japan", "Kwajalein", "Libya", "MET", "MST7MDT", "Mexico/BajaNorte",
    "Mexico/BajaSur", "Mexico/General", "NZ", "NZ-CHAT", "Navajo", "PRC", "PST8PDT",
    "Pacific/Apia", "Pacific/Auckland", "Pacific/Bougainville", "Pacific/Chatham",
    "Pacific/Chuuk", "Pacific/Easter", "Pacific/Efate", "Pacific/Enderbury", "Pacific/Fakaofo",
    "Pacific/Fiji", "Pacific/Funafuti", "Pacific/Galapagos", "Pacific/Gambier",
    "Pacific/Guadalcanal", "Pacific/Guam", "Pacific/Honolulu", "Pacific/Johnston",
    "Pacific/Kanton", "Pacific/Kiritimati", "Pacific/Kosrae", "Pacific/Kwajalein",
    "Pacific/Majuro", "Pacific/Marquesas", "Pacific/Midway", "Pacific/Nauru", "Pacific/Niue",
    "Pacific/Norfolk", "Pacific/Noumea", "Pacific/Pago_Pago", "Pacific/Palau", "Pacific/Pitcairn",
    "Pacific/Pohnpei", "Pacific/Ponape", "Pacific/Port_Moresby", "Pacific/Rarotonga",
    "Pacific/Saipan", "Pacific/Samoa", "Pacific/Tahiti", "Pacific/Tarawa", "Pacific/Tongatapu",
    "Pacific/Truk", "Pacific/Wake", "Pacific/Wallis", "Pacific/Yap", "Poland", "Portugal", "ROK",
    "Singapore", "SystemV/AST4", "SystemV/AST4ADT", "SystemV/CST6", "SystemV/CST6CDT",
    "SystemV/EST5", "SystemV/EST5EDT", "SystemV/HST10", "SystemV/MST7", "SystemV/MST7MDT",
    "SystemV/PST8", "SystemV/PST8PDT", "SystemV/YST9", "SystemV/YST9YDT", "Turkey", "UCT",
    "US/Alaska", "US/Aleutian", "US/Arizona", "US/Central", "US/East-Indiana", "US/Eastern",
    "US/Hawaii", "US/Indiana-Starke", "US/Michigan", "US/Mountain", "US/Pacific", "US/Samoa",
    "UTC", "Universal", "W-SU", "WET", "Zulu",
};
constexpr size_t kNumZoneIds = sizeof(kJavaZoneIds) / sizeof(kJavaZoneIds[0]);

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

int find_zone_id_exact(std::string_view id) {
  size_t lo = 0, hi = kNumZoneIds;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    int c = std::string_view(kJavaZoneIds[mid]).compare(id);
    if (c == 0) return static_cast<int>(mid);
    if (c < 0) lo = mid + 1; else hi = mid;
  }
  return -1;
}

// Longest zone id that is a case-insensitive prefix of `text` (java.time's PrefixTree.CI).
int find_zone_id_prefix_ci(std::string_view text, size_t& len) {
  int best = -1;
  len = 0;
  for (size_t i = 0; i < kNumZoneIds; ++i) {
    std::string_view id(kJavaZoneIds[i]);
    if (id.size() <= len || id.size() > text.size()) continue;
    bool ok = true;
    for (size_t k = 0; k < id.size() && ok; ++k) ok = ci_equal(id[k], text[k]);
    if (ok) {
      best = static_cast<int>(i);
      len = id.size();
    }
  }
  return best;
}

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
      if (p < end && *p == ':') ++p; else break;
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

std::unique_ptr<TzRules> load_tzif(const std::string& path) {
  std::string data;
  if (!read_file(path, data) || data.size() < 44 || data.compare(0, 4, "TZif") != 0) return nullptr;
  const auto* base = reinterpret_cast<const unsigned char*>(data.data());
  const size_t size = data.size();
  auto counts = [&](size_t at, int64_t c[6]) {
    for (int i = 0; i < 6; ++i) c[i] = be_int(base + at + 20 + 4 * i, 4);
  };
  int64_t c[6];  // isutcnt, isstdcnt, leapcnt, timecnt, typecnt, charcnt
  counts(0, c);
  char version = data[4];
  size_t at = 44;
  int time_size = 4;
  if (version >= '2') {
    // Skip the version-1 block and use the 64-bit one.
    at += static_cast<size_t>(c[3] * 5 + c[4] * 6 + c[5] + c[2] * 8 + c[1] + c[0]);
    if (at + 44 > size || data.compare(at, 4, "TZif") != 0) return nullptr;
    counts(at, c);
    at += 44;
    time_size = 8;
  }
  const int64_t isutcnt = c[0], isstdcnt = c[1], leapcnt = c[2], timecnt = c[3], typecnt = c[4],
                charcnt = c[5];
  if (typecnt < 1 || leapcnt != 0 || timecnt < 0) return nullptr;  // leap-second ("right/") zones unsupported
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

std::mutex g_zone_mutex;
std::array<std::atomic<const TzRules*>, kNumZoneIds> g_zone_rules{};
std::array<std::atomic<bool>, kNumZoneIds> g_zone_loaded{};

const TzRules* zone_rules(int index) {
  if (g_zone_loaded[static_cast<size_t>(index)].load(std::memory_order_acquire)) {
    return g_zone_rules[static_cast<size_t>(index)].load(std::memory_order_acquire);
  }
  std::lock_guard<std::mutex> lock(g_zone_mutex);
  if (!g_zone_loaded[static_cast<size_t>(index)].load(std::memory_order_relaxed)) {
    const char* dir = std::getenv("TZDIR");
    std::string path = (dir != nullptr && *dir != '\0') ? dir : "/usr/share/zoneinfo";
    path += '/';
    path += kJavaZoneIds[index];
    // Leaked on purpose: rules live for the whole process.
    const TzRules* r = load_tzif(path).release();
    g_zone_rules[static_cast<size_t>(index)].store(r, std::memory_order_release);
    g_zone_loaded[static_cast<size_t>(index)].store(true, std::memory_order_release);
  }
  return g_zone_rules[static_cast<size_t>(index)].load(std::memory_order_acquire);
}

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
    if (index + 1 < static_cast<int64_t>(lt.size()) && lt[static_cast<size_t>(index + 1)] == local) ++index;
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

// java.time.ZoneOffset.of(String) -> total seconds.
bool zone_offset_of(std::string_view s, int32_t& secs) {
  if (s == "Z") {
    secs = 0;
    return true;
  }
  char buf[3];
  auto num = [&](std::string_view t, size_t pos, bool colon, int& out) {
    if (colon && t[pos - 1] != ':') return false;
    if (!is_digit(t[pos]) || !is_digit(t[pos + 1])) return false;
    out = (t[pos] - '0') * 10 + (t[pos + 1] - '0');
    return true;
  };
  int h = 0, m = 0, sec = 0;
  std::string_view t = s;
  switch (s.size()) {
    case 2:
      buf[0] = s[0];
      buf[1] = '0';
      buf[2] = s[1];
      t = std::string_view(buf, 3);
      [[fallthrough]];
    case 3:
      if (!num(t, 1, false, h)) return false;
      break;
    case 5:
      if (!num(t, 1, false, h) || !num(t, 3, false, m)) return false;
      break;
    case 6:
      if (!num(t, 1, false, h) || !num(t, 4, true, m)) return false;
      break;
    case 7:
      if (!num(t, 1, false, h) || !num(t, 3, false, m) || !num(t, 5, false, sec)) return false;
      break;
    case 9:
      if (!num(t, 1, false, h) || !num(t, 4, true, m) || !num(t, 7, true, sec)) return false;
      break;
    default:
      return false;
  }
  if (t[0] != '+' && t[0] != '-') return false;
  if (h > 18 || m > 59 || sec > 59 || (h == 18 && (m | sec) != 0)) return false;
  int32_t total = h * 3600 + m * 60 + sec;
  secs = t[0] == '-' ? -total : total;
  return true;
}

// ZoneRegion.ofId: the id must be a known region whose rules we could load.
bool zone_region(std::string_view id, Zone& z) {
  int index = find_zone_id_exact(id);
  if (index < 0) return false;
  const TzRules* rules = zone_rules(index);
  if (rules == nullptr) return false;  // e.g. SystemV/* (not shipped in /usr/share/zoneinfo)
  z.rules = rules;
  z.offset = 0;
  return true;
}

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

// java.time.ZoneId.of(String).
bool java_zone_id_of(std::string_view id, Zone& z) {
  auto with_prefix = [&](size_t n) {
    if (id.size() == n) {
      z = Zone{nullptr, 0};
      return true;
    }
    if (id[n] != '+' && id[n] != '-') return zone_region(id, z);
    int32_t secs = 0;
    if (!zone_offset_of(id.substr(n), secs)) return false;
    z = Zone{nullptr, secs};
    return true;
  };
  if (id.size() <= 1 || id[0] == '+' || id[0] == '-') {
    int32_t secs = 0;
    if (!zone_offset_of(id, secs)) return false;
    z = Zone{nullptr, secs};
    return true;
  }
  if (starts_with(id, "UTC") || starts_with(id, "GMT")) return with_prefix(3);
  if (starts_with(id, "UT")) return with_prefix(2);
  return zone_region(id, z);
}

// ZoneId.SHORT_IDS
struct ShortId {
  const char* name;
  const char* id;
};
constexpr ShortId kShortIds[] = {
    {"ACT", "Australia/Darwin"},   {"AET", "Australia/Sydney"},
    {"AGT", "America/Argentina/Buenos_Aires"}, {"ART", "Africa/Cairo"},
    {"AST", "America/Anchorage"},  {"BET", "America/Sao_Paulo"},
    {"BST", "Asia/Dhaka"},         {"CAT", "Africa/Harare"},
    {"CNT", "America/St_Johns"},   {"CST", "America/Chicago"},
    {"CTT", "Asia/Shanghai"},      {"EAT", "Africa/Addis_Ababa"},
    {"ECT", "Europe/Paris"},       {"EST", "-05:00"},
    {"HST", "-10:00"},             {"IET", "America/Indiana/Indianapolis"},
    {"IST", "Asia/Kolkata"},       {"JST", "Asia/Tokyo"},
    {"MIT", "Pacific/Apia"},       {"MST", "-07:00"},
    {"NET", "Asia/Yerevan"},       {"NST", "Pacific/Auckland"},
    {"PLT", "Asia/Karachi"},       {"PNT", "America/Phoenix"},
    {"PRT", "America/Puerto_Rico"}, {"PST", "America/Los_Angeles"},
    {"SST", "Pacific/Guadalcanal"}, {"VST", "Asia/Ho_Chi_Minh"},
};

// SparkDateTimeUtils.getZoneId applied to the zone part of a CAST string (already trimmed the
// way java.lang.String.trim does).
bool spark_get_zone_id(std::string_view tz, Zone& z) {
  // Longer ids cannot be valid (the longest region id has 32 characters).
  if (tz.size() > 64) return false;
  char buf[72];
  size_t n = tz.size();
  std::memcpy(buf, tz.data(), n);
  // singleHourTz "(\+|\-)(\d):" -> "$10$2:" (first match anywhere)
  for (size_t i = 0; i + 2 < n; ++i) {
    if ((buf[i] == '+' || buf[i] == '-') && is_digit(buf[i + 1]) && buf[i + 2] == ':') {
      std::memmove(buf + i + 2, buf + i + 1, n - i - 1);
      buf[i + 1] = '0';
      ++n;
      break;
    }
  }
  // singleMinuteTz "(\+|\-)(\d\d):(\d)$" -> "$1$2:0$3"
  if (n >= 5) {
    char* p = buf + n - 5;
    if ((p[0] == '+' || p[0] == '-') && is_digit(p[1]) && is_digit(p[2]) && p[3] == ':' &&
        is_digit(p[4])) {
      p[5] = p[4];
      p[4] = '0';
      ++n;
    }
  }
  std::string_view id(buf, n);
  for (const ShortId& s : kShortIds) {
    if (id == s.name) return java_zone_id_of(s.id, z);
  }
  return java_zone_id_of(id, z);
}

}  // namespace

// ============================================================================================
// CAST parsers (SparkDateTimeUtils)
// ============================================================================================
namespace {

// UTF8String.isWhitespaceOrISOControl applied to a (signed) byte: 0x00-0x20 and 0x7F.
inline bool is_trim_byte(char c) {
  auto u = static_cast<unsigned char>(c);
  return u <= 0x20 || u == 0x7F;
}

// getTrimmedStart / getTrimmedEnd
inline void spark_trim(std::string_view s, size_t& start, size_t& end) {
  start = 0;
  while (start < s.size() && is_trim_byte(s[start])) ++start;
  end = s.size();
  while (end > start + 1 && is_trim_byte(s[end - 1])) --end;
}

struct TsParts {
  int64_t seg[9] = {1, 1, 1, 0, 0, 0, 0, 0, 0};
  bool just_time = false;
  bool has_zone = false;
  Zone zone;
};

// SparkDateTimeUtils.parseTimestampString, including the validation of the zone id.
bool parse_timestamp_string(std::string_view s, TsParts& out) {
  auto valid = [](int segment, int digits) {
    constexpr int kMaxDigitsYear = 6;
    return segment == 6 || (segment == 0 && digits >= 4 && digits <= kMaxDigitsYear) ||
           (segment == 7 && digits <= 2) ||
           (segment != 0 && segment != 6 && segment != 7 && digits > 0 && digits <= 2);
  };
  int64_t* seg = out.seg;
  size_t j = 0, end = 0;
  spark_trim(s, j, end);
  if (j == end) return false;
  int digits_milli = 0;
  bool just_time = false;
  int year_sign = 0;
  if (s[j] == '-' || s[j] == '+') {
    year_sign = s[j] == '-' ? -1 : 1;
    ++j;
  }
  int i = 0;
  int64_t cur = 0;
  int cur_digits = 0;
  std::string_view tz;
  bool has_tz = false;
  auto next_segment = [&](int idx) {
    if (!valid(idx, cur_digits)) return false;
    seg[idx] = cur;
    cur = 0;
    cur_digits = 0;
    return true;
  };
  while (j < end) {
    const char b = s[j];
    if (!is_digit(b)) {
      if (j == 0 && b == 'T') {  // note: j is not relative to the trimmed start, as in Spark
        just_time = true;
        i += 3;
      } else if (i < 2) {
        if (b == '-') {
          if (!next_segment(i)) return false;
          ++i;
        } else if (i == 0 && b == ':' && year_sign == 0) {
          just_time = true;
          if (!next_segment(3)) return false;
          i = 4;
        } else {
          return false;
        }
      } else if (i == 2) {
        if (b != ' ' && b != 'T') return false;
        if (!next_segment(i)) return false;
        ++i;
      } else if (i == 3 || i == 4) {
        if (b != ':') return false;
        if (!next_segment(i)) return false;
        ++i;
      } else if (i == 5 || i == 6) {
        if (b == '.' && i == 5) {
          if (!next_segment(i)) return false;
          ++i;
        } else {
          if (!next_segment(i)) return false;
          ++i;
          has_tz = true;
          tz = s.substr(j, end - j);
          j = end - 1;
        }
        if (i == 6 && b != '.') ++i;
      } else {
        if (i < 9 && (b == ':' || b == ' ')) {
          if (!next_segment(i)) return false;
          ++i;
        } else {
          return false;
        }
      }
    } else {
      if (i == 6) ++digits_milli;
      // Digits past the 6th of the fraction are dropped; other over-long segments are
      // rejected later, so stop accumulating before int64 could overflow.
      if ((i != 6 || cur_digits < 6) && cur_digits < 18) cur = cur * 10 + (b - '0');
      ++cur_digits;
    }
    ++j;
  }
  if (i >= 9 || !valid(i, cur_digits)) return false;
  seg[i] = cur;
  while (digits_milli < 6) {
    seg[6] *= 10;
    ++digits_milli;
  }
  if (has_tz) {
    // java.lang.String.trim (the end is already trimmed)
    size_t k = 0;
    while (k < tz.size() && static_cast<unsigned char>(tz[k]) <= 0x20) ++k;
    tz.remove_prefix(k);
    if (!spark_get_zone_id(tz, out.zone)) return false;
    out.has_zone = true;
  }
  if (year_sign != 0) seg[0] *= year_sign;
  out.just_time = just_time;
  return true;
}

bool parts_local_seconds(const TsParts& p, int64_t& local) {
  const int64_t* seg = p.seg;
  if (seg[3] > 23 || seg[4] > 59 || seg[5] > 59) return false;  // LocalTime.of
  int64_t day = 0;
  if (!local_date_of(seg[0], seg[1], seg[2], day)) return false;
  local = day * kSecondsPerDay + seg[3] * 3600 + seg[4] * 60 + seg[5];
  return true;
}

// UTF8String.replace("GMT", ""): calls fn on the cleaned string; false if there was no "GMT".
template <typename Fn>
bool with_gmt_removed(std::string_view s, Fn&& fn) {
  size_t pos = s.find("GMT");
  if (pos == std::string_view::npos) return false;
  char stack_buf[256];
  thread_local std::string heap_buf;  // only for unusually long strings; reused
  char* buf = stack_buf;
  if (s.size() > sizeof stack_buf) {
    if (heap_buf.size() < s.size()) heap_buf.resize(s.size());
    buf = heap_buf.data();
  }
  size_t n = 0, start = 0;
  while (pos != std::string_view::npos) {
    std::memcpy(buf + n, s.data() + start, pos - start);
    n += pos - start;
    start = pos + 3;
    pos = s.find("GMT", start);
  }
  std::memcpy(buf + n, s.data() + start, s.size() - start);
  n += s.size() - start;
  return fn(std::string_view(buf, n));
}

// java.lang.Integer.parseInt restricted to ASCII digits.
bool java_parse_int(std::string_view s, int32_t& out) {
  if (s.empty()) return false;
  size_t i = 0;
  bool negative = false;
  if (s[0] == '-' || s[0] == '+') {
    negative = s[0] == '-';
    i = 1;
    if (s.size() == 1) return false;
  }
  int64_t v = 0;
  for (; i < s.size(); ++i) {
    if (!is_digit(s[i])) return false;
    v = v * 10 + (s[i] - '0');
    if (v > 2147483648LL) return false;
  }
  if (negative) v = -v;
  if (!fits_int32(v)) return false;
  out = static_cast<int32_t>(v);
  return true;
}

}  // namespace

bool cast_string_to_date(std::string_view s, int32_t& days_since_epoch) {
  auto valid = [](int segment, int digits) {
    constexpr int kMaxDigitsYear = 7;
    return (segment == 0 && digits >= 4 && digits <= kMaxDigitsYear) ||
           (segment != 0 && digits > 0 && digits <= 2);
  };
  int64_t seg[3] = {1, 1, 1};
  int64_t sign = 1;
  int i = 0;
  int64_t cur = 0;
  int cur_digits = 0;
  size_t j = 0, end = 0;
  spark_trim(s, j, end);
  if (j == end) return false;
  if (s[j] == '-' || s[j] == '+') {
    sign = s[j] == '-' ? -1 : 1;
    ++j;
  }
  while (j < end && i < 3 && !(s[j] == ' ' || s[j] == 'T')) {
    const char b = s[j];
    if (i < 2 && b == '-') {
      if (!valid(i, cur_digits)) return false;
      seg[i] = cur;
      cur = 0;
      cur_digits = 0;
      ++i;
    } else {
      if (!is_digit(b)) return false;
      if (cur_digits < 18) cur = cur * 10 + (b - '0');
      ++cur_digits;
    }
    ++j;
  }
  if (!valid(i, cur_digits)) return false;
  if (i < 2 && j < end) return false;  // "yyyy" and "yyyy-[m]m" must consume everything
  seg[i] = cur;
  int64_t day = 0;
  if (!local_date_of(sign * seg[0], seg[1], seg[2], day) || !fits_int32(day)) return false;
  days_since_epoch = static_cast<int32_t>(day);
  return true;
}

bool cast_string_to_timestamp(std::string_view s, int64_t default_offset_seconds, int64_t& micros) {
  TsParts p;
  if (!parse_timestamp_string(s, p)) return false;
  const int64_t* seg = p.seg;
  if (seg[3] > 23 || seg[4] > 59 || seg[5] > 59) return false;
  if (p.just_time) return false;  // Spark uses LocalDate.now(zone): not reproducible here
  int64_t local = 0;
  if (!parts_local_seconds(p, local)) return false;
  Zone zone = p.has_zone ? p.zone : Zone{nullptr, default_offset_seconds};
  return instant_to_micros(local_to_epoch(zone, local), seg[6], micros);
}

bool string_to_timestamp_ntz(std::string_view s, bool allow_time_zone, int64_t& micros) {
  TsParts p;
  if (!parse_timestamp_string(s, p)) return false;
  if (p.just_time || (!allow_time_zone && p.has_zone)) return false;
  int64_t local = 0;
  if (!parts_local_seconds(p, local)) return false;
  return instant_to_micros(local, p.seg[6], micros);
}

bool cast_string_to_timestamp_ntz(std::string_view s, int64_t& micros) {
  return string_to_timestamp_ntz(s, true, micros);
}

int32_t rebase_julian_to_gregorian_days(int32_t days) {
  static constexpr int32_t kDiffs[] = {2, 1, 0, -1, -2, -3, -4, -5, -6, -7, -8, -9, -10, 0};
  static constexpr int32_t kSwitchDays[] = {-719164, -682945, -646420, -609895, -536845,
                                            -500320, -463795, -390745, -354220, -317695,
                                            -244645, -208120, -171595, -141427};
  int i = static_cast<int>(sizeof kSwitchDays / sizeof kSwitchDays[0]);
  do {
    --i;
  } while (i > 0 && days < kSwitchDays[i]);
  return static_cast<int32_t>(static_cast<uint32_t>(days) + static_cast<uint32_t>(kDiffs[i]));
}

bool json_default_parse_date(std::string_view s, int32_t& days_since_epoch) {
  if (cast_string_to_date(s, days_since_epoch)) return true;
  if (with_gmt_removed(s, [&](std::string_view t) { return cast_string_to_date(t, days_since_epoch); })) {
    return true;
  }
  int32_t v = 0;
  if (!java_parse_int(s, v)) return false;
  days_since_epoch = rebase_julian_to_gregorian_days(v);
  return true;
}

bool json_default_parse_timestamp(std::string_view s, int64_t default_offset_seconds,
                                  int64_t& micros) {
  if (cast_string_to_timestamp(s, default_offset_seconds, micros)) return true;
  return with_gmt_removed(s, [&](std::string_view t) {
    return cast_string_to_timestamp(t, default_offset_seconds, micros);
  });
}

bool json_default_parse_timestamp_ntz(std::string_view s, int64_t& micros) {
  return string_to_timestamp_ntz(s, false, micros);
}

int64_t json_integer_seconds_to_micros(int64_t seconds) {
  return static_cast<int64_t>(static_cast<uint64_t>(seconds) * static_cast<uint64_t>(kMicrosPerSecond));
}

// ============================================================================================
// Patterns: DateTimeFormatterHelper + java.time.format
// ============================================================================================
namespace {

using Pos = int64_t;  // a parse position; negative = ~(error position), as in java.time

enum Field : int {
  kYear, kMonth, kDayOfMonth, kDayOfYear, kHourOfDay, kClockHourOfDay, kHourOfAmPm,
  kClockHourOfAmPm, kAmPm, kMinute, kSecond, kNano, kOffsetSeconds, kFieldCount
};

struct Range {
  int64_t min, max;
};
// ChronoField.range() minimum / maximum of each field.
constexpr Range kRanges[kFieldCount] = {
    {-kMaxYear, kMaxYear}, {1, 12}, {1, 31}, {1, 366}, {0, 23}, {1, 24}, {0, 11}, {1, 12},
    {0, 1},               {0, 59}, {0, 59}, {0, 999'999'999}, {-kMaxOffset, kMaxOffset}};

inline bool in_range(int f, int64_t v) { return v >= kRanges[f].min && v <= kRanges[f].max; }

inline bool is_time_field(int f) { return f >= kHourOfDay && f <= kNano; }

// java.time.format.Parsed, reduced to the fields the supported pattern letters produce.
struct Parsed {
  int64_t v[kFieldCount] = {};
  uint32_t mask = 0;
  bool has_zone = false;
  Zone zone;
  bool has(int f) const { return (mask >> f) & 1u; }
  int64_t get(int f) const { return v[f]; }
  void put(int f, int64_t x) {
    v[f] = x;
    mask |= 1u << f;
  }
  void remove(int f) { mask &= ~(1u << f); }
};

enum class Sign : uint8_t { Normal, Always, Never, NotNegative, ExceedsPad };

// SignStyle.parse(positive, strict=true, fixedWidth)
bool sign_allowed(Sign s, bool positive) {
  switch (s) {
    case Sign::Normal: return !positive;
    case Sign::Always:
    case Sign::ExceedsPad: return true;
    default: return false;
  }
}

enum class NodeKind : uint8_t { Literal, Number, Fraction, Text, Offset, LocalizedOffset, ZoneId, Optional };
enum class TextSet : uint8_t { MonthShort, MonthFull, AmPm };

struct Node {
  NodeKind kind = NodeKind::Literal;
  Field field = kYear;
  int min_width = 0, max_width = 0, subsequent_width = 0;
  Sign sign = Sign::Normal;
  bool reduced = false;    // ReducedPrinterParser(2, 2, base 2000)
  std::string text;        // literal text / offset "no offset" text
  int offset_type = 0;     // index into OffsetIdPrinterParser.PATTERNS
  bool full = false;       // LocalizedOffset / zone text style FULL
  bool zone_text = false;  // 'z' (ZoneTextPrinterParser) rather than 'VV'
  TextSet text_set = TextSet::MonthShort;
  std::vector<Node> children;  // Optional
};

// Month and AM/PM texts of Locale.US in the JDK's CLDR data, longest first as java.time tries them.
constexpr const char* kMonthShort[12] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                         "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
constexpr const char* kMonthFull[12] = {"January", "February", "March",     "April",
                                        "May",     "June",     "July",      "August",
                                        "September", "October", "November", "December"};
constexpr const char* kAmPmTexts[2] = {"AM", "PM"};

// --- compile ---------------------------------------------------------------------------------

[[noreturn]] void reject(const std::string& pattern, const std::string& why) {
  throw std::invalid_argument("datetime pattern '" + pattern + "': " + why);
}

class Builder {
 public:
  explicit Builder(std::string pattern) : pattern_(std::move(pattern)) { levels_.push_back({}); }

  std::vector<Node> finish() {
    while (levels_.size() > 1) optional_end();
    return std::move(levels_[0].nodes);
  }

  void append_literal(std::string s) {
    if (s.empty()) return;
    Node n;
    n.kind = NodeKind::Literal;
    n.text = std::move(s);
    append_internal(std::move(n));
  }

  // DateTimeFormatterBuilder.appendFraction(NANO_OF_SECOND, min, max, false)
  void append_fraction(int min_width, int max_width) {
    if (max_width < 1 || max_width > 9) fail("Maximum width must be from 1 to 9 inclusive");
    Node n;
    n.kind = NodeKind::Fraction;
    n.field = kNano;
    n.min_width = min_width;
    n.max_width = max_width;
    n.sign = Sign::NotNegative;
    if (min_width == max_width) append_value(std::move(n)); else append_internal(std::move(n));
  }

  // DateTimeFormatterBuilder.parsePattern
  void append_pattern(std::string_view p) {
    for (size_t pos = 0; pos < p.size(); ++pos) {
      char cur = p[pos];
      if ((cur >= 'A' && cur <= 'Z') || (cur >= 'a' && cur <= 'z')) {
        size_t start = pos++;
        while (pos < p.size() && p[pos] == cur) ++pos;
        parse_letter(cur, static_cast<int>(pos - start));
        --pos;
      } else if (cur == '\'') {
        size_t start = pos++;
        for (; pos < p.size(); ++pos) {
          if (p[pos] == '\'') {
            if (pos + 1 < p.size() && p[pos + 1] == '\'') ++pos; else break;
          }
        }
        if (pos >= p.size()) fail("Pattern ends with an incomplete string literal");
        std::string_view str = p.substr(start + 1, pos - start - 1);
        if (str.empty()) {
          append_literal("'");
        } else {
          std::string lit;
          for (size_t k = 0; k < str.size(); ++k) {
            lit += str[k];
            if (str[k] == '\'' && k + 1 < str.size() && str[k + 1] == '\'') ++k;
          }
          append_literal(std::move(lit));
        }
      } else if (cur == '[') {
        levels_.back().value_parser_index = -1;
        levels_.push_back({});
      } else if (cur == ']') {
        if (levels_.size() == 1) fail("Pattern invalid as it contains ] without previous [");
        optional_end();
      } else if (cur == '{' || cur == '}' || cur == '#') {
        fail(std::string("Pattern includes reserved character: '") + cur + "'");
      } else {
        append_literal(std::string(1, cur));
      }
    }
  }

 private:
  struct Level {
    std::vector<Node> nodes;
    int value_parser_index = -1;
  };

  [[noreturn]] void fail(const std::string& why) { reject(pattern_, why); }

  int append_internal(Node n) {
    Level& a = levels_.back();
    a.nodes.push_back(std::move(n));
    a.value_parser_index = -1;
    return static_cast<int>(a.nodes.size()) - 1;
  }

  // DateTimeFormatterBuilder.appendValue(NumberPrinterParser): adjacent value parsing.
  void append_value(Node pp) {
    Level& a = levels_.back();
    if (a.value_parser_index >= 0) {
      const int active = a.value_parser_index;
      Node& base = a.nodes[static_cast<size_t>(active)];
      if (pp.min_width == pp.max_width && pp.sign == Sign::NotNegative) {
        base.subsequent_width += pp.max_width;
        pp.subsequent_width = -1;
        append_internal(std::move(pp));
        levels_.back().value_parser_index = active;
      } else {
        base.subsequent_width = -1;
        int idx = append_internal(std::move(pp));
        levels_.back().value_parser_index = idx;
      }
    } else {
      int idx = append_internal(std::move(pp));
      levels_.back().value_parser_index = idx;
    }
  }

  void optional_end() {
    Level done = std::move(levels_.back());
    levels_.pop_back();
    if (!done.nodes.empty()) {
      Node n;
      n.kind = NodeKind::Optional;
      n.children = std::move(done.nodes);
      append_internal(std::move(n));
    }
  }

  void number(Field f, int min_width, int max_width, Sign sign) {
    Node n;
    n.kind = NodeKind::Number;
    n.field = f;
    n.min_width = min_width;
    n.max_width = max_width;
    n.sign = (min_width == max_width && sign == Sign::NotNegative) ? Sign::NotNegative : sign;
    append_value(std::move(n));
  }

  void text(Field f, TextSet set) {
    Node n;
    n.kind = NodeKind::Text;
    n.field = f;
    n.text_set = set;
    append_internal(std::move(n));
  }

  void offset(int type, const char* no_offset_text) {
    Node n;
    n.kind = NodeKind::Offset;
    n.field = kOffsetSeconds;
    n.offset_type = type;
    n.text = no_offset_text;
    append_internal(std::move(n));
  }

  void localized_offset(bool full) {
    Node n;
    n.kind = NodeKind::LocalizedOffset;
    n.field = kOffsetSeconds;
    n.full = full;
    append_internal(std::move(n));
  }

  void zone(bool zone_text, bool full) {
    Node n;
    n.kind = NodeKind::ZoneId;
    n.zone_text = zone_text;
    n.full = full;
    append_internal(std::move(n));
  }

  void too_many(char c) { fail(std::string("Too many pattern letters: ") + c); }

  void parse_letter(char cur, int count) {
    switch (cur) {
      case 'u':
      case 'y':
        if (count == 2) {
          Node n;
          n.kind = NodeKind::Number;
          n.field = kYear;
          n.min_width = n.max_width = 2;
          n.sign = Sign::NotNegative;
          n.reduced = true;
          append_value(std::move(n));
        } else if (count < 4) {
          number(kYear, count, 19, Sign::Normal);
        } else {
          if (count > 19) too_many(cur);
          number(kYear, count, 19, Sign::ExceedsPad);
        }
        break;
      case 'M':
      case 'L':
        if (count == 1) number(kMonth, 1, 19, Sign::Normal);
        else if (count == 2) number(kMonth, 2, 2, Sign::NotNegative);
        else if (count == 3) text(kMonth, TextSet::MonthShort);
        else if (count == 4) text(kMonth, TextSet::MonthFull);
        else too_many(cur);
        break;
      case 'd':
      case 'h':
      case 'H':
      case 'k':
      case 'K':
      case 'm':
      case 's': {
        Field f = cur == 'd' ? kDayOfMonth : cur == 'h' ? kClockHourOfAmPm : cur == 'H' ? kHourOfDay
                : cur == 'k' ? kClockHourOfDay : cur == 'K' ? kHourOfAmPm : cur == 'm' ? kMinute
                : kSecond;
        if (count == 1) number(f, 1, 19, Sign::Normal);
        else if (count == 2) number(f, 2, 2, Sign::NotNegative);
        else too_many(cur);
        break;
      }
      case 'D':
        if (count == 1) number(kDayOfYear, 1, 19, Sign::Normal);
        else if (count == 2 || count == 3) number(kDayOfYear, count, 3, Sign::NotNegative);
        else too_many(cur);
        break;
      case 'a':
        if (count != 1) too_many(cur);
        text(kAmPm, TextSet::AmPm);
        break;
      case 'S':
        append_fraction(count, count);
        break;
      case 'z':
        if (count > 4) too_many(cur);
        zone(true, count == 4);
        break;
      case 'V':
        if (count != 2) fail("Pattern letter count must be 2: V");
        zone(false, false);
        break;
      case 'Z':
        if (count < 4) offset(3, "+0000");
        else if (count == 4) localized_offset(true);
        else if (count == 5) offset(6, "Z");
        else too_many(cur);
        break;
      case 'O':
        if (count == 1) localized_offset(false);
        else if (count == 4) localized_offset(true);
        else fail("Pattern letter count must be 1 or 4: O");
        break;
      case 'X':
        if (count > 5) too_many(cur);
        offset(count + (count == 1 ? 0 : 1), "Z");
        break;
      case 'x':
        if (count > 5) too_many(cur);
        offset(count + (count == 1 ? 0 : 1), count == 1 ? "+00" : (count % 2 == 0 ? "+0000" : "+00:00"));
        break;
      case 'G':
        fail("the era letter 'G' is not supported by this port");
      case 'g':
        fail("the modified-julian-day letter 'g' is not supported by this port");
      case 'v':
        fail("generic zone names ('v') are not supported by this port");
      default:
        fail(std::string("Unknown pattern letter: ") + cur);
    }
  }

  std::string pattern_;
  std::vector<Level> levels_;
};

// java.lang.String.split(String) with a one-character separator: trailing empty strings removed.
std::vector<std::string_view> java_split(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i) {
    if (i == s.size() || s[i] == sep) {
      parts.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  }
  while (!parts.empty() && parts.back().empty()) parts.pop_back();
  if (parts.empty() && s.empty()) parts.push_back(s);  // "".split(x) == [""]
  return parts;
}

bool has_line_terminator(std::string_view s) {
  for (size_t i = 0; i < s.size(); ++i) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c == '\n' || c == '\r') return true;
    if (c == 0xC2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) == 0x85) return true;
    if (c == 0xE2 && i + 2 < s.size() && static_cast<unsigned char>(s[i + 1]) == 0x80 &&
        (static_cast<unsigned char>(s[i + 2]) == 0xA8 || static_cast<unsigned char>(s[i + 2]) == 0xA9)) {
      return true;
    }
  }
  return false;
}

// DateTimeFormatterHelper.convertIncompatiblePattern(pattern, isParsing = true).
std::string convert_incompatible_pattern(const std::string& pattern) {
  bool era = false;
  {
    auto parts = java_split(pattern, '\'');
    for (size_t i = 0; i < parts.size(); i += 2) era = era || parts[i].find('G') != std::string_view::npos;
  }
  std::string padded = pattern + " ";
  auto parts = java_split(padded, '\'');
  std::string out;
  for (size_t idx = 0; idx < parts.size(); ++idx) {
    if (idx > 0) out += '\'';
    std::string part(parts[idx]);
    if (idx % 2 == 0) {
      for (char c : part) {
        if (std::strchr("YWwuec", c) != nullptr && c != '\0') {
          reject(pattern, std::string("Spark rejects week-based pattern letter '") + c + "'");
        }
      }
      for (char c : part) {
        if (c != '\0' && (std::strchr("ABnNp", c) != nullptr || std::strchr("EFqQ", c) != nullptr)) {
          reject(pattern, std::string("Spark rejects pattern letter '") + c + "' for parsing");
        }
      }
      for (const char* style : {"GGGGG", "MMMMM", "LLLLL", "EEEEE", "QQQQQ", "qqqqq", "yyyyyyy"}) {
        if (part.find(style) != std::string::npos) {
          reject(pattern, std::string("Spark rejects the pattern length '") + style + "'");
        }
      }
      if (!era) std::replace(part.begin(), part.end(), 'y', 'u');
    }
    out += part;
  }
  if (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

// --- parse -----------------------------------------------------------------------------------

struct Ctx {
  std::string_view text;
  Parsed parsed;
  bool fatal = false;  // java threw an exception: the whole parse fails, even inside [..]
};

inline Pos set_parsed_field(Ctx& c, int f, int64_t value, Pos error_pos, Pos success_pos) {
  bool conflict = c.parsed.has(f) && c.parsed.get(f) != value;
  c.parsed.put(f, value);
  return conflict ? ~error_pos : success_pos;
}

inline bool sub_sequence_equals_ci(std::string_view text, Pos pos, std::string_view lit) {
  if (pos < 0 || static_cast<size_t>(pos) + lit.size() > text.size()) return false;
  for (size_t i = 0; i < lit.size(); ++i) {
    if (!ci_equal(text[static_cast<size_t>(pos) + i], lit[i])) return false;
  }
  return true;
}

Pos parse_nodes(Ctx& c, const std::vector<Node>& nodes, Pos position);

Pos parse_number(Ctx& c, const Node& n, Pos position) {
  const Pos length = static_cast<Pos>(c.text.size());
  if (position == length) return ~position;
  const char sign = c.text[static_cast<size_t>(position)];
  bool negative = false, positive = false;
  if (sign == '+') {
    if (!sign_allowed(n.sign, true)) return ~position;
    positive = true;
    ++position;
  } else if (sign == '-') {
    if (!sign_allowed(n.sign, false)) return ~position;
    negative = true;
    ++position;
  } else if (n.sign == Sign::Always) {
    return ~position;
  }
  const Pos eff_min = n.min_width;
  const Pos min_end = position + eff_min;
  if (min_end > length) return ~position;
  Pos eff_max = n.max_width + std::max(n.subsequent_width, 0);
  uint64_t total = 0;
  Pos pos = position;
  for (int pass = 0; pass < 2; ++pass) {
    const Pos max_end = std::min(pos + eff_max, length);
    while (pos < max_end) {
      const char ch = c.text[static_cast<size_t>(pos++)];
      if (!is_digit(ch)) {
        --pos;
        if (pos < min_end) return ~position;
        break;
      }
      if (pos - position <= 19) total = total * 10 + static_cast<uint64_t>(ch - '0');
    }
    if (n.subsequent_width > 0 && pass == 0) {
      const Pos parse_len = pos - position;
      eff_max = std::max(eff_min, parse_len - n.subsequent_width);
      pos = position;
      total = 0;
    } else {
      break;
    }
  }
  int64_t value = 0;
  if (negative) {
    if (total == 0) return ~(position - 1);  // minus zero
  } else if (n.sign == Sign::ExceedsPad) {
    const Pos parse_len = pos - position;
    if (positive) {
      if (parse_len <= n.min_width) return ~(position - 1);
    } else if (parse_len > n.min_width) {
      return ~position;
    }
  }
  constexpr uint64_t kMaxMagnitude = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  if (total > kMaxMagnitude + (negative ? 1 : 0)) {  // BigInteger.bitLength() > 63
    total /= 10;
    --pos;
  }
  if (negative) {
    value = total == kMaxMagnitude + 1 ? std::numeric_limits<int64_t>::min() : -static_cast<int64_t>(total);
  } else {
    value = static_cast<int64_t>(total);
  }
  if (n.reduced && pos - position == n.min_width && value >= 0) {
    value = 2000 + value;  // ReducedPrinterParser with base date 2000-01-01
  }
  return set_parsed_field(c, n.field, value, position, pos);
}

Pos parse_fraction(Ctx& c, const Node& n, Pos position) {
  const Pos length = static_cast<Pos>(c.text.size());
  if (position == length) return n.min_width > 0 ? ~position : position;
  const Pos min_end = position + n.min_width;
  if (min_end > length) return ~position;
  const Pos max_end = std::min(position + n.max_width, length);
  int64_t total = 0;
  Pos pos = position;
  while (pos < max_end) {
    const char ch = c.text[static_cast<size_t>(pos++)];
    if (!is_digit(ch)) {
      if (pos <= min_end) return ~position;
      --pos;
      break;
    }
    total = total * 10 + (ch - '0');
  }
  for (Pos d = pos - position; d < 9; ++d) total *= 10;
  return set_parsed_field(c, kNano, total, position, pos);
}

Pos parse_text(Ctx& c, const Node& n, Pos position) {
  if (position < 0 || position > static_cast<Pos>(c.text.size())) return ~position;
  const char* const* texts = nullptr;
  int count = 0;
  switch (n.text_set) {
    case TextSet::MonthShort: texts = kMonthShort; count = 12; break;
    case TextSet::MonthFull: texts = kMonthFull; count = 12; break;
    case TextSet::AmPm: texts = kAmPmTexts; count = 2; break;
  }
  int best = -1;
  size_t best_len = 0;
  for (int i = 0; i < count; ++i) {
    std::string_view t(texts[i]);
    if (t.size() > best_len && sub_sequence_equals_ci(c.text, position, t)) {
      best = i;
      best_len = t.size();
    }
  }
  if (best < 0) return ~position;
  int64_t value = n.text_set == TextSet::AmPm ? best : best + 1;
  return set_parsed_field(c, n.field, value, position, position + static_cast<Pos>(best_len));
}

// OffsetIdPrinterParser.parse in strict mode; the offset goes to `secs`. Returns the position.
Pos parse_offset_id(Ctx& c, int type, std::string_view no_offset_text, Pos position, int64_t& secs) {
  const std::string_view text = c.text;
  const Pos length = static_cast<Pos>(text.size());
  if (position == length) return ~position;
  if (sub_sequence_equals_ci(text, position, no_offset_text)) {
    secs = 0;
    return position + static_cast<Pos>(no_offset_text.size());
  }
  const char sign = text[static_cast<size_t>(position)];
  if (sign != '+' && sign != '-') return ~position;
  const int negative = sign == '-' ? -1 : 1;
  const int style = type % 11;
  const bool is_colon = style > 0 && (style % 2) == 0;
  const bool padded_hour = type < 11;
  Pos arr[4] = {position + 1, 0, 0, 0};
  auto parse_digits = [&](bool colon, int index) {
    Pos pos = arr[0];
    if (pos < 0) return true;
    if (colon && index != 1) {
      if (pos + 1 > length || text[static_cast<size_t>(pos)] != ':') return false;
      ++pos;
    }
    if (pos + 2 > length) return false;
    const char ch1 = text[static_cast<size_t>(pos)];
    const char ch2 = text[static_cast<size_t>(pos + 1)];
    if (!is_digit(ch1) || !is_digit(ch2)) return false;
    const int value = (ch1 - '0') * 10 + (ch2 - '0');
    if (value > 59) return false;
    arr[index] = value;
    arr[0] = pos + 2;
    return true;
  };
  auto parse_hour = [&]() {
    if (padded_hour && !parse_digits(false, 1)) arr[0] = ~arr[0];
  };
  auto parse_minute = [&](bool mandatory) {
    if (!parse_digits(is_colon, 2) && mandatory) arr[0] = ~arr[0];
  };
  auto parse_second = [&](bool mandatory) {
    if (!parse_digits(is_colon, 3) && mandatory) arr[0] = ~arr[0];
  };
  switch (type) {
    case 0: parse_hour(); break;
    case 1: case 2: parse_hour(); parse_minute(false); break;
    case 3: case 4: parse_hour(); parse_minute(true); break;
    case 5: case 6: parse_hour(); parse_minute(true); parse_second(false); break;
    case 7: case 8: parse_hour(); parse_minute(true); parse_second(true); break;
    case 9: case 10:
      parse_hour();
      if (parse_digits(is_colon, 2)) parse_digits(is_colon, 3);
      break;
    default: return ~position;  // unpadded-hour patterns are never produced by pattern letters
  }
  if (arr[0] > 0) {
    if (arr[1] > 23 || arr[2] > 59 || arr[3] > 59) {
      c.fatal = true;  // DateTimeException("Value out of range")
      return ~position;
    }
    secs = negative * (arr[1] * 3600 + arr[2] * 60 + arr[3]);
    return arr[0];
  }
  return ~position;
}

// LocalizedOffsetIdPrinterParser.parse ("GMT+8", "GMT+08:00").
Pos parse_localized_offset(Ctx& c, bool full, Pos position) {
  const std::string_view text = c.text;
  const Pos end = static_cast<Pos>(text.size());
  Pos pos = position;
  if (!sub_sequence_equals_ci(text, pos, "GMT")) return ~position;
  pos += 3;
  if (pos == end) return set_parsed_field(c, kOffsetSeconds, 0, position, pos);
  const char sign = text[static_cast<size_t>(pos)];
  int negative = 0;
  if (sign == '+') negative = 1;
  else if (sign == '-') negative = -1;
  else return set_parsed_field(c, kOffsetSeconds, 0, position, pos);
  ++pos;
  // getDigit / charAt beyond the end throw in java: the whole parse fails.
  bool oob = false;
  auto digit = [&](Pos p) -> int {
    if (p >= end) {
      oob = true;
      return -1;
    }
    char ch = text[static_cast<size_t>(p)];
    return is_digit(ch) ? ch - '0' : -1;
  };
  int h = 0, m = 0, s = 0;
  if (full) {
    int h1 = digit(pos++);
    int h2 = oob ? -1 : digit(pos++);
    if (oob) { c.fatal = true; return ~position; }
    if (h1 < 0 || h2 < 0) return ~position;
    if (pos >= end) { c.fatal = true; return ~position; }
    if (text[static_cast<size_t>(pos++)] != ':') return ~position;
    h = h1 * 10 + h2;
    int m1 = digit(pos++);
    int m2 = oob ? -1 : digit(pos++);
    if (oob) { c.fatal = true; return ~position; }
    if (m1 < 0 || m2 < 0) return ~position;
    m = m1 * 10 + m2;
    if (pos + 2 < end && text[static_cast<size_t>(pos)] == ':') {
      int s1 = digit(pos + 1), s2 = digit(pos + 2);
      if (s1 >= 0 && s2 >= 0) {
        s = s1 * 10 + s2;
        pos += 3;
      }
    }
  } else {
    h = digit(pos++);
    if (oob) { c.fatal = true; return ~position; }
    if (h < 0) return ~position;
    if (pos < end) {
      int h2 = digit(pos);
      if (h2 >= 0) {
        h = h * 10 + h2;
        ++pos;
      }
      if (pos + 2 < end && text[static_cast<size_t>(pos)] == ':') {
        int m1 = digit(pos + 1), m2 = digit(pos + 2);
        if (m1 >= 0 && m2 >= 0) {
          m = m1 * 10 + m2;
          pos += 3;
          if (pos + 2 < end && text[static_cast<size_t>(pos)] == ':') {
            int s1 = digit(pos + 1), s2 = digit(pos + 2);
            if (s1 >= 0 && s2 >= 0) {
              s = s1 * 10 + s2;
              pos += 3;
            }
          }
        }
      }
    }
  }
  int64_t secs = negative * (h * 3600LL + m * 60LL + s);
  return set_parsed_field(c, kOffsetSeconds, secs, position, pos);
}

// ZoneIdPrinterParser.parseOffsetBased
Pos parse_offset_based(Ctx& c, Pos prefix_pos, Pos position, bool id_z) {
  const std::string_view text = c.text;
  const Pos length = static_cast<Pos>(text.size());
  if (position >= length || text[static_cast<size_t>(position)] == '0' ||
      ci_equal(text[static_cast<size_t>(position)], 'Z')) {
    c.parsed.has_zone = true;
    c.parsed.zone = Zone{nullptr, 0};  // ZoneId.of("UTC" | "GMT" | "UT")
    return position;
  }
  int64_t secs = 0;
  Pos end_pos = parse_offset_id(c, 6, id_z ? "Z" : "0", position, secs);
  if (c.fatal) return ~prefix_pos;
  // The offset is parsed into a copy of the context: a different OFFSET_SECONDS parsed
  // earlier makes setParsedField fail.
  if (end_pos >= 0 && c.parsed.has(kOffsetSeconds) && c.parsed.get(kOffsetSeconds) != secs) {
    end_pos = ~position;
  }
  if (end_pos < 0) {
    if (id_z) return ~prefix_pos;
    c.parsed.has_zone = true;
    c.parsed.zone = Zone{nullptr, 0};
    return position;
  }
  if (secs < -kMaxOffset || secs > kMaxOffset) return ~prefix_pos;
  c.parsed.has_zone = true;
  c.parsed.zone = Zone{nullptr, secs};
  return end_pos;
}

// ZoneIdPrinterParser.parse ('VV') and, for region ids and offsets only, ZoneTextPrinterParser ('z').
Pos parse_zone(Ctx& c, const Node& n, Pos position) {
  const std::string_view text = c.text;
  const Pos length = static_cast<Pos>(text.size());
  if (position > length) return ~position;
  if (position == length) return ~position;
  auto at = [&](Pos p) { return text[static_cast<size_t>(p)]; };
  const char next = at(position);
  if (next == '+' || next == '-') return parse_offset_based(c, position, position, true);
  if (length >= position + 2) {
    const char next2 = at(position + 1);
    if (ci_equal(next, 'U') && ci_equal(next2, 'T')) {
      if (length >= position + 3 && ci_equal(at(position + 2), 'C')) {
        if (length == position + 3 || at(position + 3) == '+' || at(position + 3) == '-') {
          return parse_offset_based(c, position, position + 3, false);
        }
      } else {
        return parse_offset_based(c, position, position + 2, false);
      }
    } else if (ci_equal(next, 'G') && length >= position + 3 && ci_equal(next2, 'M') &&
               ci_equal(at(position + 2), 'T')) {
      if (length >= position + 4 && ci_equal(at(position + 3), '0')) {
        c.parsed.has_zone = true;
        c.parsed.zone = Zone{nullptr, 0};  // GMT0
        return position + 4;
      }
      return parse_offset_based(c, position, position + 3, false);
    }
  }
  size_t len = 0;
  int index = find_zone_id_prefix_ci(text.substr(static_cast<size_t>(position)), len);
  if (index < 0) {
    // 'z' also knows localized names ("PST", "Pacific Standard Time"): not supported here,
    // reported as a failure of the whole parse rather than a skipped optional section.
    const bool alpha = ascii_upper(next) >= 'A' && ascii_upper(next) <= 'Z';
    const bool lone_z = ci_equal(next, 'Z') &&
                        (position + 1 == length || !(ascii_upper(at(position + 1)) >= 'A' &&
                                                     ascii_upper(at(position + 1)) <= 'Z'));
    if (n.zone_text && alpha && !lone_z) {
      c.fatal = true;
      return ~position;
    }
    if (ci_equal(next, 'Z')) {
      c.parsed.has_zone = true;
      c.parsed.zone = Zone{nullptr, 0};
      return position + 1;
    }
    return ~position;
  }
  std::string_view id(kJavaZoneIds[index]);
  if (n.zone_text && id.find('/') == std::string_view::npos) {
    // For 'z' an id without '/' may be shadowed by a localized name ("EST", "CET"...):
    // unsupported, reported as a parse failure.
    c.fatal = true;
    return ~position;
  }
  Zone z;
  if (!zone_region(id, z)) {  // rules not available on this machine
    c.fatal = true;
    return ~position;
  }
  c.parsed.has_zone = true;
  c.parsed.zone = z;
  return position + static_cast<Pos>(len);
}

Pos parse_node(Ctx& c, const Node& n, Pos position) {
  switch (n.kind) {
    case NodeKind::Literal: {
      if (!sub_sequence_equals_ci(c.text, position, n.text)) return ~position;
      return position + static_cast<Pos>(n.text.size());
    }
    case NodeKind::Number: return parse_number(c, n, position);
    case NodeKind::Fraction: return parse_fraction(c, n, position);
    case NodeKind::Text: return parse_text(c, n, position);
    case NodeKind::Offset: {
      int64_t secs = 0;
      Pos end = parse_offset_id(c, n.offset_type, n.text, position, secs);
      if (end < 0) return end;
      return set_parsed_field(c, kOffsetSeconds, secs, position, end);
    }
    case NodeKind::LocalizedOffset: return parse_localized_offset(c, n.full, position);
    case NodeKind::ZoneId: return parse_zone(c, n, position);
    case NodeKind::Optional: {
      const Parsed saved = c.parsed;
      Pos pos = parse_nodes(c, n.children, position);
      if (pos < 0 && !c.fatal) {
        c.parsed = saved;
        return position;
      }
      return pos;
    }
  }
  return ~position;
}

Pos parse_nodes(Ctx& c, const std::vector<Node>& nodes, Pos position) {
  for (const Node& n : nodes) {
    position = parse_node(c, n, position);
    if (position < 0 || c.fatal) return position < 0 ? position : ~position;
  }
  return position;
}

// --- resolve (Parsed.resolve with ResolverStyle.STRICT, ISO chronology) -------------------

struct Resolved {
  bool has_date = false;
  int64_t epoch_day = 0;
  bool has_time = false;
  int64_t hour = 0, minute = 0, second = 0, nano = 0;
};

bool resolve(Parsed& p, Resolved& r) {
  // resolveDateFields (AbstractChronology.resolveDate)
  if (p.has(kYear)) {
    if (p.has(kMonth) && p.has(kDayOfMonth)) {
      if (!in_range(kYear, p.get(kYear)) || !in_range(kMonth, p.get(kMonth)) ||
          !in_range(kDayOfMonth, p.get(kDayOfMonth))) {
        return false;
      }
      if (!local_date_of(p.get(kYear), p.get(kMonth), p.get(kDayOfMonth), r.epoch_day)) return false;
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
  }
  if (r.has_time) {
    const int64_t h = r.hour;
    const int64_t values[kNano + 1] = {0, 0, 0, 0, h, h == 0 ? 24 : h, h % 12,
                                       (h % 12 == 0) ? 12 : h % 12, h / 12, r.minute, r.second, r.nano};
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
    if (p.has(kDayOfMonth) && (!in_range(kDayOfMonth, p.get(kDayOfMonth)) || p.get(kDayOfMonth) != dom)) {
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

}  // namespace

struct DateTimePattern::Impl {
  std::vector<Node> nodes;

  // formatter.parse(s): parse the whole string, then resolve.
  bool parse(std::string_view s, Parsed& p, Resolved& r) const {
    Ctx c;
    c.text = s;
    Pos pos = parse_nodes(c, nodes, 0);
    if (c.fatal || pos < 0 || static_cast<size_t>(pos) != s.size()) return false;
    p = c.parsed;
    return resolve(p, r);
  }
};

DateTimePattern DateTimePattern::compile(std::string_view pattern_view) {
  const std::string pattern(pattern_view);
  const std::string converted = convert_incompatible_pattern(pattern);
  for (size_t i = 0, q = 0; i < converted.size(); ++i) {
    if (converted[i] == '\'') ++q;
    if (converted[i] == 'G' && q % 2 == 0) reject(pattern, "the era letter 'G' is not supported by this port");
  }
  Builder b(pattern);
  if (converted.find('S') != std::string::npos) {
    // DateTimeFormatterHelper.createBuilderWithVarLengthSecondFraction
    auto parts = java_split(converted, '\'');
    for (size_t idx = 0; idx < parts.size(); ++idx) {
      std::string_view part = parts[idx];
      if (part.empty() && idx != 0) {
        b.append_literal("'");
      } else if (idx % 2 == 0) {
        std::string_view rest = part;
        while (!rest.empty()) {
          size_t s_begin = rest.find('S');
          if (s_begin == std::string_view::npos) s_begin = rest.size();
          size_t s_end = s_begin;
          while (s_end < rest.size() && rest[s_end] == 'S') ++s_end;
          // ^([^S]*)(S*)(.*)$ : '.' does not match line terminators
          if (has_line_terminator(rest.substr(s_end))) reject(pattern, "INVALID_DATETIME_PATTERN");
          b.append_pattern(rest.substr(0, s_begin));
          if (s_end > s_begin) b.append_fraction(1, static_cast<int>(s_end - s_begin));
          rest = rest.substr(s_end);
        }
      } else {
        b.append_literal(std::string(part));
      }
    }
  } else {
    b.append_pattern(converted);
  }
  auto impl = std::make_shared<Impl>();
  impl->nodes = b.finish();
  return DateTimePattern(std::move(impl));
}

bool DateTimePattern::parse_timestamp(std::string_view s, int64_t default_offset_seconds,
                                      int64_t& micros) const {
  Parsed p;
  Resolved r;
  if (!impl_->parse(s, p, r)) return false;
  Zone zone{nullptr, default_offset_seconds};
  if (p.has_zone) {
    zone = p.zone;
  } else if (p.has(kOffsetSeconds)) {
    if (!in_range(kOffsetSeconds, p.get(kOffsetSeconds))) return false;  // ZoneOffset.ofTotalSeconds
    zone = Zone{nullptr, p.get(kOffsetSeconds)};
  }
  int64_t day = 0, sod = 0, nano = 0;
  if (!to_local_date(p, r, day) || !to_local_time(p, r, sod, nano)) return false;
  int64_t epoch = local_to_epoch(zone, day * kSecondsPerDay + sod);
  return exact_micros(epoch, nano / 1000, micros);
}

bool DateTimePattern::parse_timestamp_ntz(std::string_view s, bool allow_time_zone,
                                          int64_t& micros) const {
  Parsed p;
  Resolved r;
  if (!impl_->parse(s, p, r)) return false;
  if (!allow_time_zone && (p.has_zone || p.has(kOffsetSeconds))) return false;
  int64_t day = 0, sod = 0, nano = 0;
  if (!to_local_date(p, r, day) || !to_local_time(p, r, sod, nano)) return false;
  return instant_to_micros(day * kSecondsPerDay + sod, nano / 1000, micros);
}

bool DateTimePattern::parse_date(std::string_view s, int32_t& days) const {
  Parsed p;
  Resolved r;
  if (!impl_->parse(s, p, r)) return false;
  int64_t day = 0;
  if (!to_local_date(p, r, day) || !fits_int32(day)) return false;
  days = static_cast<int32_t>(day);
  return true;
}

}  // namespace sliceflow::json
