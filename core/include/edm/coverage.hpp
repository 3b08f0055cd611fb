// Window coverage of solved trajectories (share/docs/design.md, the observer window): per
// electron, the margin by which its spline's first and last knots cover the window at every pixel,
// and whether the window holds the light of the electron's burst (share/docs/campaign.md, "The
// observer window": the part of its trajectory inside the laser envelope) at every pixel.
#pragma once
#include <cmath>
#include <cstdint>
#include <vector>

#include "edm/screen.hpp"
#include "edm/trajectory.hpp"
#include "edm/units.hpp"

namespace edm {

// The burst of an electron: the part of its trajectory whose light-front phase ξ = t − s z lies in
// [xi_lo, xi_hi] (the laser's envelope |ξ| ≤ τ0, where g(ξ) = exp(−(ξ/τ0)²) ≥ 1/e; the run driver
// builds it from the campaign). Arrival times are monotone along a time-like worldline, so at pixel
// p the burst's light arrives over [A_p(ξ = xi_lo), A_p(ξ = xi_hi)].
// The emission span [emit_lo, emit_hi] ⊇ the burst is the part whose light every spectrum of the
// field needs: where the envelope is at least kEmissionEnvelopeFloor of its peak (the whole pulse
// for a constant envelope). A window that cuts it cuts light from the FFT and dft spectra.
struct BurstSpec {
  int direction = 1;  // s, the laser's propagation direction
  double xi_lo = 0, xi_hi = 0;
  double emit_lo = 0, emit_hi = 0;
  bool enabled() const { return xi_hi > xi_lo; }
  bool emission_enabled() const { return emit_hi > emit_lo; }
};
// The envelope amplitude below which the emission is left out of the emission span: the field there
// is below 1e-6 of its peak, and its energy below 1e-12.
inline constexpr double kEmissionEnvelopeFloor = 1e-6;

// The states where electron e's spline enters and leaves the burst (clamped to the spline's span);
// false when the spline does not reach the burst at all.
bool burst_states(const SplineBatch& batch, const ElectronSpline& e, const BurstSpec& burst, double y_start[8],
                  double y_end[8]);

// Whether electron e's spline reaches the screen: the plane z = Z of a flat screen (from the
// interaction's side) or the sphere |x| = R of an angular screen at finite distance (never at
// infinity); y is then the state where it first does (to the knot spacing's 1e-15).
bool reaches_screen(const Screen& screen, const SplineBatch& batch, const ElectronSpline& e, double y[8]);
// PhysicsError EDM-WIN-030 naming the first electron of `batch` that reaches the screen, with the time
// and place (SI): the retarded-time solve and the arrival times assume every source on the
// interaction's side of the screen, and a source in the plane of pixels makes their field singular.
void check_clear_of_screen(const Screen& screen, const SplineBatch& batch, const Normalization& units);

// Per electron: the samples whose retarded time falls before the first
// or after the last knot at some pixel.
struct CoverageRecord {
  std::uint64_t electron = 0;
  double margin_start = 0;   // t0_rel − latest arrival of the first knot (≥ 0 is covered)
  double margin_end = 0;     // earliest arrival of the last knot − last sample (≥ 0 is covered)
  std::uint64_t dropped_slots = 0;  // slots with no retarded time inside the spline (upper bound)
  // The burst's light (screen-relative, normalised): its first arrival (nearest pixel) and last
  // (farthest corner); NaN when unknown (no burst given, a spline that misses it, an old checkpoint).
  double burst_first = NAN, burst_last = NAN;
  // At some pixel no part of the burst's light falls in the window (missed), or only part (cut).
  bool burst_missed = false, burst_cut = false;
  // At some pixel part of the emission span's light (BurstSpec) falls outside the window.
  bool emission_cut = false;
  bool clipped() const { return margin_start < 0 || margin_end < 0; }
};
struct CoverageReport {
  std::vector<CoverageRecord> records;   // per electron, concatenated over batches
  std::uint64_t clipped_electrons() const;
  std::uint64_t dropped_slots() const;
  double min_margin_start() const;
  double min_margin_end() const;
  std::uint64_t burst_missed_electrons() const;
  std::uint64_t burst_cut_electrons() const;
  std::uint64_t emission_cut_electrons() const;
  // Whether any record checked the emission span (false: no spec given, or an old checkpoint).
  bool emission_known = false;
  double burst_first() const;  // over the records that know it; NaN when none does
  double burst_last() const;
};
CoverageReport check_coverage(const Screen& screen, const SplineBatch& batch);
// The same, with each electron's burst checked against the window (BurstSpec::enabled()).
CoverageReport check_coverage(const Screen& screen, const SplineBatch& batch, const BurstSpec& burst);
// The same, where `free_ends`: the trajectories were solved from a start before the pulse to its
// end (not external tracks), so on a far-field screen the free straight lines beyond their ends
// radiate nothing and the whole window counts as covered (run/prepare.cpp).
CoverageReport check_coverage(const Screen& screen, const SplineBatch& batch, const BurstSpec& burst, bool free_ends);

// The highest harmonic order of the laser's line with power above `power_floor` of the fundamental's,
// the one estimate behind every aliasing check (the run's sampled spectra here, edm spectrum's
// warning in analysis/spectrum.cpp): P_n/P_1 ≈ q^(n−1) with q = a0²/(1 + a0²) — the weak-field
// scaling a0^(2(n−1)) for a0 ≪ 1, growing without a jump through a0 = 1 toward the many harmonics of
// a0 ≫ 1 (capped at 1e6 orders). harmonic_power_estimate gives q^(n−1). kHarmonicPowerFloor is the
// run's floor for spectra computed from the samples (their amplitudes are good to ~1e-7).
inline constexpr double kHarmonicPowerFloor = 1e-14;
double harmonic_power_estimate(double a0, int order);
int significant_harmonics(double a0, double power_floor = kHarmonicPowerFloor);

// The retarded-time roots' sampling (share/docs/campaign.md, "accumulator.newton_iters"): the field
// kernel solves each sample's retarded time from the previous sample's root (a warm start) with
// exactly accumulator.newton_iters Newton steps and no convergence test, so the roots converge only
// when consecutive samples are close on the trajectory. Along an electron's burst the fundamental's
// period at the observer is T·(1 − n̂·β)/(1 − ŝ·β) (T the laser period, ŝ the laser's direction,
// n̂ toward the pixel: from the trajectory point on a flat screen, the grid direction on an angular
// one); P is that period over the screen's dt, the fewest samples per observed period.
struct RootSampling {
  double samples_per_period = INFINITY;  // P, minimised over the points and pixels looked at
  // Q = g²/(|dg/dτ|·dt), g = γ − n̂·u = dt_obs/dτ the Doppler factor: the samples over which g changes
  // by itself. The warm start's error and each Newton step's contraction go with 1/Q (f = t_obs −
  // t_ret(τ) has f′ = −g, f″ = −g′), so Q, not P, decides convergence: P ignores how deeply the
  // laser modulates g (a0), Q does. The criterion: min over the points and pixels looked at.
  double samples_per_doppler_efold = INFINITY;
  std::uint64_t electron = 0;  // where Q is smallest
  int ix = 0, iy = 0;
  bool known() const { return std::isfinite(samples_per_period); }
  void merge(const RootSampling& o) {
    samples_per_period = std::min(samples_per_period, o.samples_per_period);
    if (o.samples_per_doppler_efold < samples_per_doppler_efold) {
      samples_per_doppler_efold = o.samples_per_doppler_efold;
      electron = o.electron;
      ix = o.ix;
      iy = o.iy;
    }
  }
};
// P and Q over the knots (and interval midpoints) of each electron of `batch` inside its burst (the
// whole spline when the burst is not given or not reached), at up to 11 × 11 pixels per screen: both
// edges, the centre and evenly between. `laser_period` normalised (2π).
RootSampling root_sampling(const Screen& screen, const SplineBatch& batch, const BurstSpec& burst,
                           double laser_period);
// The smallest (1 − n̂·β)/(1 − ŝ·β) at state y over the screen's corners, edge centres and centre
// (s the laser's direction): a cheap ranking of the ensemble's initial states.
double min_period_ratio(const Screen& screen, const double y[8], int s);
// The Q below which `newton_iters` steps leave the roots short of the field's accuracy (measured:
// coverage.cpp); newton_iters above the largest measured count takes that count's threshold.
// far_field: the angular screen at infinity (Screen::far_field), whose retarded time is linear in
// the trajectory; every other screen (flat, the sphere) solves the squared light cone and needs more.
double min_samples_per_doppler_efold(int newton_iters, bool far_field);
// The fewest Newton steps whose threshold Q meets, or 0 when none measured does.
int newton_iters_needed(double samples_per_doppler_efold, bool far_field);

}  // namespace edm
