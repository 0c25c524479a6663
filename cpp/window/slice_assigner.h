// Flink's SliceAssigner for TUMBLE, HOP and CUMULATE: which slice a row belongs to and which
// windows a slice belongs to. Slices are the smallest ranges windows are made of: the window
// itself for TUMBLE, gcd(size, slide) for HOP (also when the slide does not divide the size,
// which Flink refuses and Spark allows), the step for CUMULATE. Arithmetic is in 128 bits so
// that windows next to the ends of the int64 time line cannot wrap around.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <numeric>

#include "arrow/int128.h"
#include "window/plan.h"

namespace sliceflow::window {

inline int128 floor_mod(int128 x, int128 m) {
  const int128 r = x % m;
  return r < 0 ? r + m : r;
}

class SliceAssigner {
 public:
  explicit SliceAssigner(const Plan& plan)
      : size_(plan.size),
        slide_(plan.slide),
        slice_(plan.kind == WindowKind::Hop ? std::gcd(plan.size, plan.slide) : plan.slide),
        window_phase_(
            floor_mod(plan.offset, plan.kind == WindowKind::Cumulate ? plan.size : plan.slide)),
        slice_phase_(floor_mod(plan.offset, slice_)) {}

  int64_t slice_length() const { return slice_; }

  // The start of the slice that holds time t.
  int128 slice_start(int128 t) const { return t - floor_mod(t - slice_phase_, slice_); }

  // The same as an int64 (the per-row path: 64-bit division away from the ends of the time
  // line); false if the slice starts before the int64 time line does.
  bool slice_start64(int64_t t, int64_t* out) const {
    constexpr int64_t kSafe = int64_t{1} << 62;
    if (t > -kSafe && t < kSafe) {
      const int64_t x = t - static_cast<int64_t>(slice_phase_);
      int64_t r = x % slice_;
      if (r < 0) r += slice_;
      *out = t - r;
      return true;
    }
    const int128 s = slice_start(t);
    if (s < std::numeric_limits<int64_t>::min()) return false;
    *out = static_cast<int64_t>(s);
    return true;
  }

  // HOP / TUMBLE: the earliest window start whose window [start, start + size) holds the
  // slice starting at s.
  int128 first_window_start(int128 s) const {
    const int128 x = s - size_;
    return x - floor_mod(x - window_phase_, slide_) + slide_;
  }

  // CUMULATE: the start of the cycle [c, c + max_size) holding the slice starting at s.
  int128 cycle_start(int128 s) const { return s - floor_mod(s - window_phase_, size_); }

  // The end of the last window that holds the slice starting at s: once the watermark reaches
  // it, the slice is no longer needed (and rows of it are late for every window).
  int128 last_window_end(int128 s, bool cumulate) const {
    if (cumulate) return cycle_start(s) + size_;
    return s - floor_mod(s - window_phase_, slide_) + size_;
  }

  // How many windows holding the slice starting at s end at or before `floor`: the windows a
  // row of that slice is late for, once windows up to `floor` have been emitted.
  int128 windows_ending_by(int128 s, int128 floor, bool cumulate) const {
    if (cumulate) {
      const int128 c = cycle_start(s);
      const int128 steps = size_ / slide_;
      const int128 first = (s - c) / slide_ + 1;
      if (floor < c) return 0;
      const int128 last = std::min(steps, (floor - c) / slide_);
      return last >= first ? last - first + 1 : 0;
    }
    const int128 first_end = first_window_start(s) + size_;
    const int128 last_end = last_window_end(s, false);
    if (floor < first_end) return 0;
    const int128 all = (last_end - first_end) / slide_ + 1;
    return std::min(all, (floor - first_end) / slide_ + 1);
  }

 private:
  int64_t size_;
  int64_t slide_;
  int64_t slice_;
  int128 window_phase_;
  int128 slice_phase_;
};

}  // namespace sliceflow::window
