// Window coverage: for each solved electron, whether the light of its first and last knots reaches
// every pixel before the first and after the last sample, and how many slots are lost where not.
// It runs on the host before any device time is spent on a batch.
#include <algorithm>
#include <cmath>
#include <limits>

#include "edm/coverage.hpp"

namespace edm {

namespace {
// The state at the first knot (interval 0, s = 0) and at the last knot (interval n−1, s = dτ),
// read straight from the coefficient layout (trajectory.hpp).
void knot_state(const SplineBatch& b, const ElectronSpline& e, bool last, double y[8]) {
  const std::uint32_t j = last ? e.n_intervals - 1 : 0;
  const double s = last ? e.dtau : 0.0;
  double out[kSplineComponents];
  eval_interval(b.coef.data() + e.offset + std::uint64_t(j) * kCoefPerInterval, s, out);
  for (int k = 0; k < 8; ++k) y[k] = out[k];
}
}  // namespace

CoverageReport check_coverage(const Screen& screen, const SplineBatch& batch) {
  CoverageReport r;
  const double t_last = screen.t_rel(screen.samples - 1);
  for (const auto& e : batch.electrons) {
    CoverageRecord rec;
    rec.electron = e.index;
    if (e.n_intervals == 0) {
      rec.margin_start = rec.margin_end = -std::numeric_limits<double>::infinity();
      rec.dropped_slots = screen.slots_per_electron();
      r.records.push_back(rec);
      continue;
    }
    double y0[8], y1[8];
    knot_state(batch, e, false, y0);
    knot_state(batch, e, true, y1);
    rec.margin_start = screen.t0_rel - screen.latest_arrival_rel(y0);
    rec.margin_end = screen.earliest_arrival_rel(y1) - t_last;
    if (rec.clipped()) {
      // Per pixel: samples before the first knot's light arrives or after the last knot's.
      for (int iy = 0; iy < screen.ny; ++iy)
        for (int ix = 0; ix < screen.nx; ++ix) {
          const double a0 = screen.arrival_rel_at(y0, ix, iy);
          const double a1 = screen.arrival_rel_at(y1, ix, iy);
          const double before = std::ceil((a0 - screen.t0_rel) / screen.dt);
          const double after = std::ceil((t_last - a1) / screen.dt);
          const double S = screen.samples;
          const double lost = std::clamp(before, 0.0, S) + std::clamp(after, 0.0, S);
          rec.dropped_slots += std::uint64_t(std::min(lost, S));
        }
    }
    r.records.push_back(rec);
  }
  return r;
}

std::uint64_t CoverageReport::clipped_electrons() const {
  return std::uint64_t(std::count_if(records.begin(), records.end(), [](auto& r) { return r.clipped(); }));
}
std::uint64_t CoverageReport::dropped_slots() const {
  std::uint64_t n = 0;
  for (auto& r : records) n += r.dropped_slots;
  return n;
}
double CoverageReport::min_margin_start() const {
  double m = std::numeric_limits<double>::infinity();
  for (auto& r : records) m = std::min(m, r.margin_start);
  return m;
}
double CoverageReport::min_margin_end() const {
  double m = std::numeric_limits<double>::infinity();
  for (auto& r : records) m = std::min(m, r.margin_end);
  return m;
}

}  // namespace edm
