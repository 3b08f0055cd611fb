// Window coverage: for each solved electron, whether the light of its first and last knots reaches
// every pixel before the first and after the last sample, and how many slots are lost where not;
// and whether the light of its burst (the part inside the laser envelope) falls in the window at
// every pixel; and how finely the window samples the Doppler-shifted period for the kernel's
// retarded-time Newton (root_sampling). It runs on the host before any device time is spent.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <limits>
#include <vector>

#include "edm/coverage.hpp"
#include "edm/error.hpp"

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

// The state at knot j (0..n) and at offset s in interval j.
void state_at(const SplineBatch& b, const ElectronSpline& e, std::uint32_t j, double s, double y[8]) {
  if (j >= e.n_intervals) {
    j = e.n_intervals - 1;
    s = e.dtau;
  }
  double out[kSplineComponents];
  eval_interval(b.coef.data() + e.offset + std::uint64_t(j) * kCoefPerInterval, s, out);
  for (int k = 0; k < 8; ++k) y[k] = out[k];
}

// The state where the light-front phase ξ = t − s z first reaches `target`, clamped to the spline's
// span. ξ grows along the trajectory (dξ/dτ = γ − s uᶻ > 0), so bisection over the knots, then
// within the interval, finds it.
void state_at_phase(const SplineBatch& b, const ElectronSpline& e, int sdir, double target, double y[8]) {
  auto xi = [&](std::uint32_t j, double s) {
    state_at(b, e, j, s, y);
    return y[0] - sdir * y[3];
  };
  std::uint32_t lo = 0, hi = e.n_intervals;
  if (xi(lo, 0) >= target) return (void)xi(lo, 0);
  if (xi(hi, 0) < target) return (void)xi(hi, 0);
  while (hi - lo > 1) {  // ξ(knot lo) < target ≤ ξ(knot hi)
    const std::uint32_t mid = lo + (hi - lo) / 2;
    (xi(mid, 0) < target ? lo : hi) = mid;
  }
  double s0 = 0, s1 = e.dtau;
  for (int i = 0; i < 60 && s1 - s0 > 1e-15 * e.dtau; ++i) {
    const double m = 0.5 * (s0 + s1);
    (xi(lo, m) < target ? s0 : s1) = m;
  }
  xi(lo, s1);
}

// The burst's part of a record: its light's first and last arrival over the screen, and whether, at
// some pixel, all of it (missed) or part of it (cut) falls outside [t0, t_last]. At pixel p the
// burst's light spans [A_p(start), A_p(end)]; over the pixels its extremes are the nearest pixel's
// and the farthest corner's arrivals (Screen::earliest/latest_arrival_rel).
void check_burst(const Screen& screen, const SplineBatch& batch, const ElectronSpline& e, const BurstSpec& burst,
                 CoverageRecord& rec) {
  double ys[8], ye[8];
  if (!burst_states(batch, e, burst, ys, ye)) return;
  const double t_last = screen.t_rel(screen.samples - 1);
  rec.burst_first = screen.earliest_arrival_rel(ys);
  rec.burst_last = screen.latest_arrival_rel(ye);
  // Missed at some pixel: there the burst ends before sample 0 or starts after the last sample.
  rec.burst_missed = screen.earliest_arrival_rel(ye) < screen.t0_rel || screen.latest_arrival_rel(ys) > t_last;
  rec.burst_cut = rec.burst_first < screen.t0_rel || rec.burst_last > t_last;
  if (!burst.emission_enabled()) return;
  const BurstSpec emission{burst.direction, burst.emit_lo, burst.emit_hi};
  if (!burst_states(batch, e, emission, ys, ye)) return;
  rec.emission_cut = screen.earliest_arrival_rel(ys) < screen.t0_rel || screen.latest_arrival_rel(ye) > t_last;
}
// Whether the spline's first knot (y0) lies before the emission span and its last (y1) after it, in
// the light-front phase ξ = t − s z: the laser's envelope is below kEmissionEnvelopeFloor beyond.
bool ends_outside_emission(const double y0[8], const double y1[8], const BurstSpec& burst) {
  if (!burst.emission_enabled()) return false;
  const int s = burst.direction;
  return y0[0] - s * y0[3] <= burst.emit_lo && y1[0] - s * y1[3] >= burst.emit_hi;
}
}  // namespace

bool burst_states(const SplineBatch& batch, const ElectronSpline& e, const BurstSpec& burst, double y_start[8],
                  double y_end[8]) {
  if (!burst.enabled() || e.n_intervals == 0) return false;
  const int s = burst.direction;
  knot_state(batch, e, false, y_start);
  knot_state(batch, e, true, y_end);
  if (y_end[0] - s * y_end[3] < burst.xi_lo || y_start[0] - s * y_start[3] > burst.xi_hi) return false;
  state_at_phase(batch, e, s, burst.xi_lo, y_start);
  state_at_phase(batch, e, s, burst.xi_hi, y_end);
  return true;
}

namespace {
// How far past the screen the state y is: ≥ 0 on or beyond the plane z = Z of a flat screen (seen
// from the interaction's side, the origin's) or on or outside the sphere |x| = R of an angular one.
double past_screen(const Screen& screen, const double y[8]) {
  if (screen.angular()) return std::sqrt(y[1] * y[1] + y[2] * y[2] + y[3] * y[3]) - std::fabs(screen.z);
  return (screen.z > 0 ? y[3] : -y[3]) - std::fabs(screen.z);
}
}  // namespace

bool reaches_screen(const Screen& screen, const SplineBatch& batch, const ElectronSpline& e, double y[8]) {
  if (screen.far_field() || e.n_intervals == 0) return false;
  std::uint32_t j = 0;  // the first knot on or past the screen (knot n: the end of the last interval)
  while (j <= e.n_intervals && (state_at(batch, e, j, 0, y), past_screen(screen, y) < 0)) ++j;
  if (j > e.n_intervals) return false;
  if (j == 0) return true;
  // Between knot j − 1 (before the screen) and knot j: bisection for where it is reached.
  double s0 = 0, s1 = e.dtau;
  for (int i = 0; i < 60 && s1 - s0 > 1e-15 * e.dtau; ++i) {
    const double m = 0.5 * (s0 + s1);
    state_at(batch, e, j - 1, m, y);
    (past_screen(screen, y) < 0 ? s0 : s1) = m;
  }
  state_at(batch, e, j - 1, s1, y);
  return true;
}

void check_clear_of_screen(const Screen& screen, const SplineBatch& batch, const Normalization& units) {
  double y[8];
  const double t_last = screen.t_rel(screen.samples - 1);
  for (const auto& e : batch.electrons) {
    if (!reaches_screen(screen, batch, e, y)) continue;
    // Light from where it reaches the screen, and from everything after (a later emission arrives
    // later everywhere), that arrives after the window's last sample is in no sample: an electron of
    // a beam moving towards the screen reaches it long after the window closes (the solve runs on
    // until every sample's light has passed; found by test_oam_helix: 0.2 mm screen, γ beam).
    if (screen.earliest_arrival_rel(y) > t_last) continue;
    double y0[8];
    knot_state(batch, e, false, y0);
    const bool from_start = y0[0] == y[0];  // on the far side already where its trajectory begins
    char at[160];
    std::snprintf(at, sizeof at, "at t = %.6g s, at (x, y, z) = (%.6g, %.6g, %.6g) m", y[0] * units.time(),
                  y[1] * units.length(), y[2] * units.length(), y[3] * units.length());
    char screen_is[96];
    if (screen.angular())
      std::snprintf(screen_is, sizeof screen_is, "the sphere of the angular screen, radius %.6g m",
                    std::fabs(screen.z) * units.length());
    else
      std::snprintf(screen_is, sizeof screen_is, "the plane of the flat screen, z = %.6g m", screen.z * units.length());
    throw PhysicsError("EDM-WIN-030", "electron " + std::to_string(e.index) + (from_start ? " starts beyond " : " reaches ") +
                                          screen_is + " " + at +
                                          ": the screen must lie beyond every trajectory (move screen.distance "
                                          "further out, or shorten the trajectories)");
  }
}

CoverageReport check_coverage(const Screen& screen, const SplineBatch& batch) {
  return check_coverage(screen, batch, BurstSpec{});
}

CoverageReport check_coverage(const Screen& screen, const SplineBatch& batch, const BurstSpec& burst) {
  return check_coverage(screen, batch, burst, false);
}

CoverageReport check_coverage(const Screen& screen, const SplineBatch& batch, const BurstSpec& burst, bool free_ends) {
  CoverageReport r;
  r.emission_known = burst.emission_enabled();
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
    if (screen.far_field() && (free_ends || ends_outside_emission(y0, y1, burst))) {
      // At infinity the free straight lines before the first knot and after the last radiate
      // nothing, so the samples outside the trajectory's light hold their exact value, zero: the
      // whole window is covered (the solve spans the interaction alone: run/prepare.cpp). So does
      // an external track that starts before the emission span and ends after it (it was counted
      // clipped, every electron, with covered = false on a correct run: found by a tester); one cut
      // inside the pulse has no such ends, and is checked as on any screen.
      rec.margin_start = rec.margin_end = std::numeric_limits<double>::infinity();
      check_burst(screen, batch, e, burst, rec);
      r.records.push_back(rec);
      continue;
    }
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
    check_burst(screen, batch, e, burst, rec);
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

std::uint64_t CoverageReport::burst_missed_electrons() const {
  return std::uint64_t(std::count_if(records.begin(), records.end(), [](auto& r) { return r.burst_missed; }));
}
std::uint64_t CoverageReport::burst_cut_electrons() const {
  return std::uint64_t(std::count_if(records.begin(), records.end(), [](auto& r) { return r.burst_cut; }));
}
std::uint64_t CoverageReport::emission_cut_electrons() const {
  return std::uint64_t(std::count_if(records.begin(), records.end(), [](auto& r) { return r.emission_cut; }));
}
double CoverageReport::burst_first() const {
  double m = NAN;  // fmin and fmax skip a NaN operand
  for (auto& r : records) m = std::fmin(m, r.burst_first);
  return m;
}
double CoverageReport::burst_last() const {
  double m = NAN;
  for (auto& r : records) m = std::fmax(m, r.burst_last);
  return m;
}

double harmonic_power_estimate(double a0, int order) {
  const double q = a0 * a0 / (1.0 + a0 * a0);
  return order <= 1 ? 1.0 : std::pow(q, order - 1);
}

int significant_harmonics(double a0, double power_floor) {
  const double q = a0 * a0 / (1.0 + a0 * a0);
  if (!(q > 0) || !(power_floor > 0) || power_floor >= 1) return 1;
  if (!(q < 1)) return 1000000;  // a0 = inf
  // q^(n−1) ≥ floor  ⇔  n − 1 ≤ ln(floor) / ln(q); in double, capped, before the int.
  return int(std::min(1e6, 1.0 + std::floor(std::log(power_floor) / std::log(q) + 1e-9)));
}

// ---- The retarded-time roots' sampling (coverage.hpp, RootSampling) ------------------------------

namespace {
// The Q below which newton_iters = k + 1 steps (index k) leave the field short of the spline's
// accuracy, measured with tests/test_root_sampling.cpp (its explore case; the tables are in
// share/docs/campaign.md, "accumulator.newton_iters"): the exact plane-wave head-on case (inverse
// Thomson, γ = 5, 128 knots per period) at a0 = 0.1, 0.5, 1 and 2, the relative L2 error of the
// kernel's field against the exact trajectory's, swept over screen.samples_per_period from 12 to
// 16384, on the angular screen at infinity (the far field) and on a flat screen at 2 mm (near and far
// parts). "Converged" is an error within twice that of 16 steps at the same sampling (the roots then
// add no more than the spline's own error). For each a0, the smallest Q from which on every measured
// sampling converged (an a0 whose every sampling converged sets no bound); the threshold is the
// largest of these over the four a0, truncated to three digits. The flat screen's step works on the
// squared light cone g = ρ² − A(A + 2d), which contracts less per step than the far field's linear
// condition: at a0 = 0.5, 512 samples per period (Q = 4.07) two steps leave 23 times the converged
// error there. The sphere of an angular screen at a finite distance solves the same squared cone, so
// every screen but the far field takes the larger of both thresholds. Beyond 4 steps every measured
// sampling that 4 steps converged stayed converged, so newton_iters > 4 keeps the 4-step threshold.
constexpr double kMinSamplesPerEfoldFar[] = {37.0, 4.01, 1.77, 0.669};
constexpr double kMinSamplesPerEfoldNear[] = {147.0, 6.61, 1.83, 0.669};  // max(flat, far) per count
constexpr int kMeasuredIters = int(std::size(kMinSamplesPerEfoldFar));
static_assert(std::size(kMinSamplesPerEfoldNear) == std::size(kMinSamplesPerEfoldFar));

// Pixel indices along one axis of n: both edges, the centre and evenly between (at most 11).
std::vector<int> probe_indices(int n, int between) {
  std::vector<int> v{(n - 1) / 2, n / 2};
  for (int k = 0; k <= between; ++k) v.push_back(int(std::lround(double(k) * (n - 1) / between)));
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

// n̂ toward pixel (ix, iy): from the point y on a flat screen, the grid direction on an angular one.
void direction_to(const Screen& screen, const double y[8], int ix, int iy, double n[3]) {
  if (screen.angular()) {
    const auto& d = screen.directions[std::size_t(iy) * screen.nx + ix].n;
    for (int k = 0; k < 3; ++k) n[k] = d[k];
    return;
  }
  const double d[3] = {screen.pixel_x(ix) - y[1], screen.pixel_y(iy) - y[2], screen.z - y[3]};
  const double r = std::hypot(d[0], d[1], d[2]);
  for (int k = 0; k < 3; ++k) n[k] = d[k] / r;
}

// (1 − n̂·β)/(1 − ŝ·β) = (γ − n̂·u)/(γ − s uᶻ), ŝ = s ẑ. The differences lose log10(γ²) digits at
// most, far more than a threshold needs.
double period_ratio(const double y[8], const double n[3], int s) {
  return (y[4] - (n[0] * y[5] + n[1] * y[6] + n[2] * y[7])) / (y[4] - s * y[7]);
}

struct Probe {
  const Screen& screen;
  std::vector<int> xs, ys;
  double scale;  // laser_period / dt
  // y: a spline evaluation (x^μ, u^μ, a^μ). g = γ − n̂·u = dt_obs/dτ; its rate g′ = a⁰ − n̂·a (n̂'s own
  // turn on a flat screen, |u|/distance, left out).
  void visit(const double y[kSplineComponents], int s, std::uint64_t electron, RootSampling& r) const {
    double n[3];
    for (const int iy : ys)
      for (const int ix : xs) {
        direction_to(screen, y, ix, iy, n);
        r.samples_per_period = std::min(r.samples_per_period, scale * period_ratio(y, n, s));
        const double g = y[4] - (n[0] * y[5] + n[1] * y[6] + n[2] * y[7]);
        const double dg = std::abs(y[8] - (n[0] * y[9] + n[1] * y[10] + n[2] * y[11]));
        const double Q = g * g / (dg * screen.dt);
        if (Q < r.samples_per_doppler_efold) {
          r.samples_per_doppler_efold = Q;
          r.electron = electron;
          r.ix = ix;
          r.iy = iy;
        }
      }
  }
};

// Over the knots and interval midpoints of e inside the burst, or over all of them when none is.
void sample_electron(const Probe& probe, const SplineBatch& b, const ElectronSpline& e, const BurstSpec& burst,
                     RootSampling& r) {
  const int s = burst.direction;
  bool inside = false;
  for (int pass = 0; pass < 2 && !inside; ++pass)
    for (std::uint32_t j = 0; j < e.n_intervals; ++j)
      for (const double at : {0.0, 0.5 * e.dtau}) {
        double y[kSplineComponents];
        eval_interval(b.coef.data() + e.offset + std::uint64_t(j) * kCoefPerInterval, at, y);
        const double xi = y[0] - s * y[3];
        if (pass == 0 && (!burst.enabled() || xi < burst.xi_lo || xi > burst.xi_hi)) continue;
        inside = true;
        probe.visit(y, s, e.index, r);
      }
}
}  // namespace

RootSampling root_sampling(const Screen& screen, const SplineBatch& batch, const BurstSpec& burst,
                           double laser_period) {
  const Probe probe{screen, probe_indices(screen.nx, 8), probe_indices(screen.ny, 8), laser_period / screen.dt};
  RootSampling r;
  for (const auto& e : batch.electrons) sample_electron(probe, batch, e, burst, r);
  return r;
}

double min_period_ratio(const Screen& screen, const double y[8], int s) {
  double r = INFINITY, n[3];
  for (const int iy : probe_indices(screen.ny, 2))
    for (const int ix : probe_indices(screen.nx, 2)) {
      direction_to(screen, y, ix, iy, n);
      r = std::min(r, period_ratio(y, n, s));
    }
  return r;
}

double min_samples_per_doppler_efold(int newton_iters, bool far_field) {
  if (newton_iters < 1) return INFINITY;
  const int k = std::min(newton_iters, kMeasuredIters) - 1;
  return far_field ? kMinSamplesPerEfoldFar[k] : kMinSamplesPerEfoldNear[k];
}

int newton_iters_needed(double samples_per_doppler_efold, bool far_field) {
  for (int k = 1; k <= kMeasuredIters; ++k)
    if (samples_per_doppler_efold >= min_samples_per_doppler_efold(k, far_field)) return k;
  return 0;
}

}  // namespace edm
