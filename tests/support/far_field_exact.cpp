// The exact far field of a plane-wave trajectory (far_field_exact.hpp): the same operations as
// test_far_field's own copy.
#include "far_field_exact.hpp"

#include <gsl/gsl_errno.h>
#include <gsl/gsl_roots.h>

#include <cmath>

namespace edm::test {

// R·E at infinity in direction n̂ (normalised, unit positive charge) at observer phase t_rel, from
// the exact trajectory: the root of t_rel = t(τ) − n̂·x(τ) by GSL Brent to 1e-15, the exact
// 4-acceleration (q = −1: du⊥/dτ = −h E⊥(ξ), dγ/dτ = u⊥·du⊥/dτ / h, duᶻ/dτ = s dγ/dτ) and the
// textbook far field n̂ × ((n̂ − β) × β̇)/(1 − n̂·β)³ (Jackson 14.14 times R).
std::array<double, 3> exact_far_field(const ExactPlaneWave& ex, const Laser& laser, const std::array<double, 3>& n,
                                      double t_rel, double tau_lo, double tau_hi) {
  struct P {
    const ExactPlaneWave* ex;
    const std::array<double, 3>* n;
    double t;
  } p{&ex, &n, t_rel};
  gsl_function F;
  F.function = [](double tau, void* v) {
    const auto& q = *static_cast<P*>(v);
    const auto y = q.ex->state(tau);
    return q.t - (y[0] - ((*q.n)[0] * y[1] + (*q.n)[1] * y[2] + (*q.n)[2] * y[3]));  // decreasing in τ
  };
  F.params = &p;
  gsl_root_fsolver* s = gsl_root_fsolver_alloc(gsl_root_fsolver_brent);
  gsl_root_fsolver_set(s, &F, tau_lo, tau_hi);
  double tau = 0;
  for (int it = 0; it < 200; ++it) {
    gsl_root_fsolver_iterate(s);
    tau = gsl_root_fsolver_root(s);
    if (gsl_root_test_interval(gsl_root_fsolver_x_lower(s), gsl_root_fsolver_x_upper(s), 1e-15, 1e-15) == GSL_SUCCESS)
      break;
  }
  gsl_root_fsolver_free(s);
  const auto y = ex.state(tau);
  const int sdir = laser.direction();
  const double x4[4] = {y[0] - sdir * y[3], 0, 0, 0};
  double E[3], B[3];
  laser.field(x4, E, B);
  const double h = ex.h();
  const double ax = -h * E[0], ay = -h * E[1];
  const double a0 = (y[5] * ax + y[6] * ay) / h;
  const double g = y[4];
  const double avec[3] = {ax, ay, sdir * a0};
  double beta[3], bdot[3], nmb[3];
  for (int i = 0; i < 3; ++i) {
    beta[i] = y[5 + i] / g;
    bdot[i] = (avec[i] * g - y[5 + i] * a0) / (g * g * g);
    nmb[i] = n[i] - beta[i];
  }
  const double k3 = std::pow(1 - (n[0] * beta[0] + n[1] * beta[1] + n[2] * beta[2]), 3);
  const double c1[3] = {nmb[1] * bdot[2] - nmb[2] * bdot[1], nmb[2] * bdot[0] - nmb[0] * bdot[2],
                        nmb[0] * bdot[1] - nmb[1] * bdot[0]};
  return {(n[1] * c1[2] - n[2] * c1[1]) / k3, (n[2] * c1[0] - n[0] * c1[2]) / k3, (n[0] * c1[1] - n[1] * c1[0]) / k3};
}

}  // namespace edm::test
