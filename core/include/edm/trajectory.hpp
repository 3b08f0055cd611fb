// Trajectories: GSL odeiv2 integration of a scenario's equations of motion in proper time, resampled
// on uniform knots in τ and stored as piecewise-cubic coefficients in a flat, device-ready layout.
//
// Layout (the contract with cl/ and the host reference): an electron's spline has n_intervals
// intervals [τ_j, τ_j + dτ), τ_j = tau0 + j·dτ. Interval j occupies kCoefPerInterval doubles at
// coef[offset + j·kCoefPerInterval], ordered [component][power]: component c in
//   0..7  state   x⁰=t, x, y, z, u⁰=γ, uˣ, uʸ, uᶻ   (cubic Hermite: values and exact derivatives
//                                                   dx/dτ = u, du/dτ = a at the knots)
//   8..11 4-acceleration a⁰, aˣ, aʸ, aᶻ              (GSL natural cubic spline through the values
//                                                   from the equations of motion at the knots)
// and power p = 0..3 of s = τ − τ_j: value = c0 + s(c1 + s(c2 + s c3)).
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

#include "edm/laser.hpp"
#include "edm/plugins.hpp"

namespace edm {

inline constexpr int kSplineComponents = 12;
inline constexpr int kCoefPerInterval = 4 * kSplineComponents;  // 48 doubles = 384 bytes per knot

struct ElectronSpline {
  std::uint64_t index = 0;       // global electron index in the ensemble
  double tau0 = 0, dtau = 0;     // first knot, knot spacing (normalised)
  std::uint32_t n_intervals = 0;
  std::uint64_t offset = 0;      // into SplineBatch::coef, in doubles
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
  // Evaluates the 12 components at τ (clamped to the spline's span) — tests and host tools.
  void eval(std::size_t e, double tau, double out[kSplineComponents]) const;
  // Frees the coefficients and returns the pages to the OS (malloc_trim).
  void release();
};

struct SolveOptions {
  int knots_per_period = 16;     // per proper-time carrier period 2π/h0, h0 = γ − s uᶻ at the start
  double rtol = 1e-13, atol = 1e-15;
  unsigned threads = 0;          // 0 = all hardware threads
  double gamma_trace_dtau = 0;   // grid of the γ trace; 0 = 2π/(4 h0) of the first electron
  // The integration goes on past ξ_end until observe_done(y) says the screen window is covered
  // (the core passes "earliest arrival at any pixel > last observer sample"). Empty: stop at ξ_end.
  std::function<bool(const double y[8])> observe_done;
};

// Solves electrons [first, first + count) of the scenario on all threads. Results are in index
// order and independent of the thread count. Throws PhysicsError naming the electron on failure.
SplineBatch solve_trajectories(const Scenario& scenario, std::uint64_t first, std::uint64_t count,
                               const SolveOptions& options);

// Bytes of spline storage per knot (kCoefPerInterval doubles).
inline constexpr std::size_t spline_bytes_per_knot() { return kCoefPerInterval * sizeof(double); }

// Equations of motion (normalised) for plugins to use as their model.
// Lorentz force, q = −e: du^μ/dτ = −F^{μν} u_ν.
void lorentz_rhs(const Laser& laser, const double y[8], double dy[8]);
// Landau–Lifshitz radiation reaction added to the Lorentz force, τ_R normalised (units.hpp).
void landau_lifshitz_rhs(const Laser& laser, double tau_rad, const double y[8], double dy[8]);

}  // namespace edm
