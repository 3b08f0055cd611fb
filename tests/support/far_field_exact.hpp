// The exact far field of a plane-wave trajectory (the reference of test_far_field's exact case),
// shared by the tests that check the kernel's far field against it.
#pragma once
#include <array>

#include "edm/laser.hpp"
#include "plane_wave_exact.hpp"

namespace edm::test {

// R·E at infinity in direction n̂ (normalised, unit positive charge) at observer phase t_rel, from
// the exact trajectory: the root of t_rel = t(τ) − n̂·x(τ) in [tau_lo, tau_hi] by GSL Brent to
// 1e-15, the exact 4-acceleration and the textbook far field (Jackson 14.14 times R).
std::array<double, 3> exact_far_field(const ExactPlaneWave& ex, const Laser& laser, const std::array<double, 3>& n,
                                      double t_rel, double tau_lo, double tau_hi);

}  // namespace edm::test
