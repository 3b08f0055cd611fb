// The field of the exact plane-wave trajectory (plane_wave_exact.hpp) against the kernel's, shared by
// test_field_exact (flat screen, plain light cone) and test_far_field (angular screen at infinity,
// t − n̂·x): the exact trajectory of a solved one-electron cell from its spline's first knot, the
// Brent root of the retarded time, the exact 4-acceleration, and the loop that fills the reference
// cube [comp][iy][ix][k] and measures the kernel's cube against it.
#pragma once
#include <array>
#include <functional>
#include <memory>
#include <vector>

#include "edm/campaign.hpp"
#include "edm/kernel_options.hpp"
#include "edm/laser.hpp"
#include "edm/run.hpp"
#include "edm/screen.hpp"
#include "plane_wave_exact.hpp"

namespace edm::test {

// Electron 0 of `batch` (solved by `prepared` from `c`) on its exact trajectory: the laser, the exact
// orbit from the state at the spline's first knot, and the proper time its spline spans.
struct ExactElectron {
  std::unique_ptr<Laser> laser;
  std::unique_ptr<ExactPlaneWave> orbit;
  double tau_hi = 0;  // τ − τ0 at the spline's end
};
ExactElectron exact_electron(const Campaign& c, const PreparedCell& prepared, const SplineBatch& batch);

// The root in [tau_lo, tau_hi] of f, decreasing in τ, by GSL Brent to 1e-15 (absolute and relative).
double retarded_tau(const std::function<double(double)>& f, double tau_lo, double tau_hi);

// The exact state y(τ), β and dβ/dt = (a γ − u a⁰)/γ³ from the exact 4-acceleration (q = −1):
// du⊥/dτ = −h E⊥(ξ), dγ/dτ = u⊥·du⊥/dτ / h, duᶻ/dτ = s dγ/dτ.
struct ExactMotion {
  std::array<double, 8> y;
  std::array<double, 3> beta, bdot;
};
ExactMotion exact_motion(const ExactElectron& e, double tau);

// R·E at infinity in direction n̂ (normalised, unit positive charge) at observer phase t_rel: the
// root of t_rel = t(τ) − n̂·x(τ) in [0, e.tau_hi] (retarded_tau), the exact motion there and the
// textbook far field n̂ × ((n̂ − β) × β̇)/(1 − n̂·β)³ (Jackson 14.14 times R). Shared by
// test_far_field and test_root_sampling.
std::array<double, 3> exact_far_field(const ExactElectron& e, const std::array<double, 3>& n, double t_rel);
// E (normalised, unit positive charge, 1/(4πε0) = 1, near and far parts) at the flat screen's point
// (px, py, Z) at observer time t (lab, normalised), from the exact trajectory on the plain light cone.
std::array<double, 3> exact_screen_field(const ExactElectron& e, double px, double py, double Z, double t);

// The kernel's field cube [comp][iy][ix][k] of `batch` on device 0 (total mode, options `ko`).
std::vector<double> kernel_cube(const Screen& screen, const SplineBatch& batch, const KernelOptions& ko);

// The kernel's cube Ek [comp][iy][ix][k] against field(ix, iy, k) over the whole screen: relative L2.
// The reference's norm must be positive (BOOST_REQUIRE).
double relative_l2_vs_reference(const std::vector<double>& Ek, const Screen& screen,
                                const std::function<std::array<double, 3>(int ix, int iy, int k)>& field);

}  // namespace edm::test
