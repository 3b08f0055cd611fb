// Trajectories: GSL odeiv2 integration of a scenario's equations of motion in proper time, resampled
// on uniform knots in τ and stored as piecewise-quintic coefficients in a flat, device-ready layout.
//
// Layout (the contract with cl/ and the host reference): an electron's spline has n_intervals
// intervals [τ_j, τ_j + dτ), τ_j = tau0 + j·dτ. Interval j occupies kCoefPerInterval = 24 doubles at
// coef[offset + j·kCoefPerInterval], ordered [component][power]: component c in 0..3 is the
// position x⁰ = t, x, y, z, a quintic HERMITE interpolant matching the exact x, u = dx/dτ and
// a = du/dτ (from the equations of motion) at both knots; power p = 0..5 of s = τ − τ_j:
//   value = c0 + s(c1 + s(c2 + s(c3 + s(c4 + s c5)))).
// The 4-velocity and 4-acceleration are its derivatives, u = x′ and a = x″ (C² across knots). One
// quintic per component instead of separate cubics for x, u and a: half the bytes per interval
// (the field kernel is bound by the bytes it loads per slot) and more accurate at the same knots —
// against the exact plane-wave orbits x by 200–3000×, u by 45–180×, a by ≥ 5× (BENCHMARKS.md,
// scripts/studies/quintic_hermite.cpp).
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <vector>

#include "edm/laser.hpp"
#include "edm/plugins.hpp"

namespace edm {

inline constexpr int kPositionComponents = 4;  // t, x, y, z
inline constexpr int kSplinePowers = 6;        // quintic
inline constexpr int kCoefPerInterval = kPositionComponents * kSplinePowers;  // 24 doubles = 192 bytes
inline constexpr int kSplineComponents = 12;   // what an evaluation gives: x^μ, u^μ = x′, a^μ = x″

// Power coefficients c[0..5] on [0, h] of the quintic with value f, first derivative d and second
// derivative e at s = 0 (index 0) and s = h (index 1).
// The same from the residual F = f1 − f0 − h(d0 + h e0/2) that the quadratic part leaves at s = h,
// given directly: a caller that knows the step f1 − f0 as a small increment (the solver's
// displacement from a straight line) forms F without the cancellation of two large knot values.
inline void quintic_hermite_residual(double f0, double d0, double e0, double F, double d1, double e1, double h,
                                     double c[kSplinePowers]) {
  c[0] = f0;
  c[1] = d0;
  c[2] = 0.5 * e0;
  const double D = (d1 - d0) - h * e0, E = e1 - e0;
  const double h2 = h * h, h3 = h2 * h;
  c[3] = (10.0 * F - h * (4.0 * D - 0.5 * h * E)) / h3;
  c[4] = (-15.0 * F + h * (7.0 * D - h * E)) / (h3 * h);
  c[5] = (6.0 * F - h * (3.0 * D - 0.5 * h * E)) / (h3 * h2);
}

inline void quintic_hermite(double f0, double d0, double e0, double f1, double d1, double e1, double h,
                            double c[kSplinePowers]) {
  c[0] = f0;
  c[1] = d0;
  c[2] = 0.5 * e0;
  // What the quadratic part leaves at s = h, for the cubic to quintic terms to take up. f1 − f0 is
  // formed first: neighbouring knot values are within a factor of 2, so it is exact (Sterbenz), and
  // F keeps the digits of the step rather than of |f| (t and z of a γ = 5 electron reach 10³–10⁴;
  // the knot values' own rounding, ε|f|, still becomes noise of size ε|f|/h² in a = x″, which is why
  // the solver passes F from its increments instead: quintic_hermite_residual).
  const double F = (f1 - f0) - h * (d0 + h * c[2]), D = (d1 - d0) - h * e0, E = e1 - e0;
  const double h2 = h * h, h3 = h2 * h;
  c[3] = (10.0 * F - h * (4.0 * D - 0.5 * h * E)) / h3;
  c[4] = (-15.0 * F + h * (7.0 * D - h * E)) / (h3 * h);
  c[5] = (6.0 * F - h * (3.0 * D - 0.5 * h * E)) / (h3 * h2);
}

// x^μ, u^μ, a^μ (out[0..3], [4..7], [8..11]) at offset s in one interval's 24 coefficients.
inline void eval_interval(const double* c, double s, double out[kSplineComponents]) {
  for (int k = 0; k < kPositionComponents; ++k) {
    const double* p = c + kSplinePowers * k;
    out[k] = p[0] + s * (p[1] + s * (p[2] + s * (p[3] + s * (p[4] + s * p[5]))));
    out[4 + k] = p[1] + s * (2.0 * p[2] + s * (3.0 * p[3] + s * (4.0 * p[4] + s * 5.0 * p[5])));
    out[8 + k] = 2.0 * p[2] + s * (6.0 * p[3] + s * (12.0 * p[4] + s * 20.0 * p[5]));
  }
}

struct ElectronSpline {
  std::uint64_t index = 0;       // global electron index in the ensemble
  double tau0 = 0, dtau = 0;     // first knot, knot spacing (normalised)
  std::uint32_t n_intervals = 0;
  std::uint64_t offset = 0;      // into SplineBatch::coef, in doubles
  // Macro-particle weight (finite, >= 0; the scenario's, 1 by default): the electron's field enters
  // the coherent sum multiplied by it (share/docs/ensembles.md). Every consumer of a batch reads it here.
  double weight = 1.0;
  double tau_end() const { return tau0 + dtau * n_intervals; }
};

// γ(τ) trace of a set of electrons on a common proper-time grid τ_j = j·dtau (from each electron's
// start). Reduces across batches, devices and ranks exactly: sums and elementwise extrema.
struct GammaTrace {
  // Σγ per grid point in fixed point, units of 2⁻⁶⁴: every γ ≥ 2⁻¹¹ is an exact multiple of 2⁻⁶⁴,
  // so each term converts exactly and the integer sum is the same in any order — the trace of a
  // batched, sharded or MPI run is bit-identical to the single pass (a double sum is not: merging
  // partial sums rounds differently).
  __extension__ typedef unsigned __int128 Sum;
  static Sum to_fixed(double gamma);     // PhysicsError unless 0 ≤ γ < 2⁶³
  static double to_double(Sum s);        // Σγ, rounded once
  // A sum as two 64-bit halves, for files and MPI (neither has a 128-bit integer type).
  static std::uint64_t low_half(Sum s) { return std::uint64_t(s); }
  static std::uint64_t high_half(Sum s) { return std::uint64_t(s >> 64); }
  static Sum from_halves(std::uint64_t high, std::uint64_t low) { return (Sum(high) << 64) | low; }
  double mean(std::size_t j) const { return count[j] ? to_double(sum[j]) / double(count[j]) : 0.0 / 0.0; }

  double dtau = 0;
  std::vector<Sum> sum;                // per grid point over the electrons that reach it
  std::vector<double> min, max;
  std::vector<std::uint64_t> count;
  std::vector<std::pair<std::uint64_t, double>> drain;  // (electron, γ_first − γ_last)
  void merge(const GammaTrace& other);  // exact: sums, extrema, concatenated drains
};

struct SplineBatch {
  std::vector<ElectronSpline> electrons;
  std::vector<double> coef;
  GammaTrace gamma;
  std::size_t bytes() const { return coef.size() * sizeof(double) + electrons.size() * sizeof(ElectronSpline); }
  // x^μ, u^μ, a^μ at τ (clamped to the spline's span) — tests and host tools.
  void eval(std::size_t e, double tau, double out[kSplineComponents]) const;
  // Frees the coefficients and returns the pages to the OS (malloc_trim).
  void release();
};

// The γ trace of electrons [first, first + count) of `batch` on the grid dtau, as solve_trajectories
// forms SplineBatch::gamma for all of them: merging the traces of consecutive ranges in order gives
// that trace exactly (the run driver keeps one per launch, so a stop between launches has the γ
// trace of exactly the electrons summed).
GammaTrace gamma_trace_of(const SplineBatch& batch, double dtau, std::size_t first, std::size_t count);

struct SolveOptions {
  int knots_per_period = 16;     // per proper-time carrier period 2π/h0, h0 = γ − s uᶻ at the start
  double rtol = 1e-13, atol = 1e-15;
  unsigned threads = 0;          // 0 = all hardware threads
  double gamma_trace_dtau = 0;   // grid of the γ trace; 0 = 2π/(4 h0) of the first electron
  // The integration goes on past ξ_end until observe_done(y) says the screen window is covered
  // (the core passes "earliest arrival at any pixel > last observer sample"). Empty: stop at ξ_end.
  std::function<bool(const double y[8])> observe_done;
  // A stop request (SIGINT/SIGTERM, set by the app): polled at every knot of every electron, so a
  // long or runaway solve ends within one knot interval; the solve then throws Interrupted.
  const std::atomic<bool>* stop = nullptr;
};

// Solves electrons [first, first + count) of the scenario on all threads. Results are in index
// order and independent of the thread count. Throws PhysicsError naming the electron on failure.
SplineBatch solve_trajectories(const Scenario& scenario, std::uint64_t first, std::uint64_t count,
                               const SolveOptions& options);

// Bytes of spline storage per knot (kCoefPerInterval doubles: 192).
inline constexpr std::size_t spline_bytes_per_knot() { return kCoefPerInterval * sizeof(double); }

// Equations of motion (normalised) for plugins to use as their model.
// Lorentz force, q = −e: du^μ/dτ = −F^{μν} u_ν.
void lorentz_rhs(const Laser& laser, const double y[8], double dy[8]);
// Landau–Lifshitz radiation reaction added to the Lorentz force, τ_R normalised (units.hpp).
void landau_lifshitz_rhs(const Laser& laser, double tau_rad, const double y[8], double dy[8]);

}  // namespace edm
