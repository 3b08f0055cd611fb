// Analytic worldlines → SplineBatch in the 24-coefficient layout of trajectory.hpp, so the field
// tests do not depend on the trajectory solver: per position component the quintic Hermite from
// the exact x, dx/dτ = u and d²x/dτ² = a at the knots (da/dτ is offered for studies).
#pragma once
#include <array>
#include <functional>

#include <vector>

#include "edm/screen.hpp"
#include "edm/trajectory.hpp"

namespace edm::test {

// y: state (t, x, y, z, γ, uˣ, uʸ, uᶻ); a: 4-acceleration; da: da/dτ — all at proper time τ.
using Worldline = std::function<void(double tau, double y[8], double a[4], double da[4])>;

Worldline static_charge(double x, double y, double z);
// x(τ) = x0 + u τ, t = γ τ (u = γβ, three components).
Worldline uniform_motion(std::array<double, 3> x0, std::array<double, 3> u);
// Helix: radius r, lab angular frequency Ω about ẑ, drift βz (β⊥ = Ω r, needs β⊥² + βz² < 1).
Worldline helical_orbit(double radius, double omega, double beta_z);
// Exact plane-wave orbit (share/docs/design.md): laser along s ẑ (s = ±1), light-front momentum h = γ − s uᶻ,
// transverse momentum u_⊥ = (ax sin φ, ay cos φ), φ = h τ + phase (ax = a0, ay = 0: linear, the
// figure-8; ax = ay = a0/√2: circular). Closed form for t, x, z (no quadrature).
Worldline plane_wave_orbit(double ax, double ay, double h, int s, double phase = 0.0,
                           std::array<double, 3> offset = {0, 0, 0});

// Appends one electron on knots τ_j = tau0 + j·dtau, j = 0..n_intervals.
void append_electron(SplineBatch& batch, const Worldline& w, double tau0, double dtau,
                     std::uint32_t n_intervals, std::uint64_t index);

// The (exact) state at τ of a worldline, as an array (for windows and coverage).
std::array<double, 8> state_at(const Worldline& w, double tau);

// A screen plus electrons whose splines cover its whole window: the window is the auto one of the
// initial states (choose_window), each worldline is splined on τ = 0, dtau, … until its light
// reaches every pixel after the last sample (std::runtime_error if check_coverage still finds one
// clipped). The field kernel tests' common fixture.
struct CoveredBatch {
  Screen screen;
  SplineBatch batch;
};
CoveredBatch covered_batch(Screen s, const std::vector<Worldline>& ws, double dtau);
// Element (bucket b, component c, pixel iy, ix, sample k) of a downloaded cube (device_cube.hpp).
double cube_at(const std::vector<double>& cube, const Screen& s, int b, int c, int iy, int ix, int k);

}  // namespace edm::test
