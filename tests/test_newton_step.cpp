// ctest-label: unit
// The kernel's retarded-time step (cl/lw_slot.cl compiled here as C++ with lw_real = double) on a
// charge at rest in front of a NEAR screen, where the spline also reaches the advanced root of the
// squared light-cone residual g = ρ² − A(A + 2d) (A + d = −R): the bracket must follow the sign of
// f = t_rel − arrival (not of g), so that iterates beyond the advanced root still lead back to the
// retarded root, and cold and warm solves converge to it.
#define BOOST_TEST_MODULE newton_step
#include <boost/test/unit_test.hpp>

#include <cfloat>
#include <cmath>

#include "analytic_splines.hpp"

namespace kernel {
typedef double lw_real;
inline double rsqrt(double x) { return 1.0 / std::sqrt(x); }
#include "../cl/lw_slot_host.h"
}  // namespace kernel

namespace {

// A charge at rest at the origin (t = τ), knots 0.25 apart over τ ∈ [0, 40]; screen at Z = +2,
// pixel (1, 0): R = √5, retarded root τ_r = t_rel + Z − R, advanced root τ_a = t_rel + Z + R.
struct Setup {
  edm::SplineBatch batch;
  kernel::lw_spline sp{};
  const double Z = 2.0, px = 1.0, py = 0.0, sz = 1.0, t_rel = 10.0;
  const double R = std::sqrt(5.0);
  Setup() {
    edm::test::append_electron(batch, edm::test::static_charge(0, 0, 0), 0.0, 0.25, 160, 0);
    for (int j = 0; j < 160; ++j) kernel::lw_form_light_front(batch.coef.data() + 24 * j, sz);  // as on the device
    sp.cf = batch.coef.data();
    sp.n = 160;
    sp.tau0 = 0.0;
    sp.dtau = 0.25;
    sp.inv_dtau = 4.0;
    sp.tau_end = 40.0;
  }
  double step(double tau, double& lo, double& hi) const {
    kernel::lw_coef k;
    kernel::lw_coef_start(&k, &sp, -1);
    double dstep;
    const double s = kernel::lw_locate(&sp, tau, 1, &k);
    return kernel::lw_newton_step(k.c, s, tau, t_rel, px, py, sz, Z, 0, &lo, &hi, &dstep);
  }
};

}  // namespace

BOOST_AUTO_TEST_CASE(bracket_follows_the_retarded_root_beyond_the_advanced_one) {
  Setup st;
  const double tau_r = st.t_rel + st.Z - st.R, tau_a = st.t_rel + st.Z + st.R;
  BOOST_REQUIRE(tau_a < st.sp.tau_end);
  // An iterate beyond the advanced root (g < 0 there, as before the retarded root): the root is
  // EARLIER, so the step must lower hi, not raise lo.
  double lo = 0.0, hi = 40.0;
  st.step(30.0, lo, hi);
  BOOST_TEST(lo == 0.0);
  BOOST_TEST(hi == 30.0);
  // Before the retarded root: lo rises.
  lo = 0.0, hi = 40.0;
  st.step(5.0, lo, hi);
  BOOST_TEST(lo == 5.0);
  BOOST_TEST(hi == 40.0);
  // Iterating from either side ends at the retarded root (bisection whenever Newton leaves the
  // bracket), never at the advanced one.
  for (double start : {0.0, 13.0, 30.0, 39.9}) {
    double l = 0.0, h = 40.0, tau = start;
    for (int it = 0; it < 200 && h - l > 1e-13; ++it) tau = st.step(tau, l, h);
    BOOST_TEST(std::abs(tau - tau_r) < 1e-12, "start " << start << ": τ = " << tau << ", τ_r = " << tau_r);
  }
}

BOOST_AUTO_TEST_CASE(cold_and_warm_solves_find_the_retarded_root) {
  // lw_solve as the kernel calls it: cold (first two samples, iterated to convergence from τ0),
  // then warm (predictor + exactly two steps), sample after sample, against the closed form.
  // Both the built-in division / square roots (fast 0) and the refined half-precision seeds of the
  // GPU path (fast 1).
  for (const int fast : {0, 1}) {
    Setup st;
    kernel::lw_electron el;
    kernel::lw_setup(&el, &st.sp, st.px, st.py, st.sz, st.Z);
    const double dt = 0.1;
    double worst = 0;
    for (int k = 0; k < 200; ++k) {
      const double t_rel = 1.0 + dt * k;
      double e[3], f[3], n[3];
      kernel::lw_solve(&el, &st.sp, t_rel, dt, st.px, st.py, st.sz, st.Z, 2, 1, fast, e, f, n);
      worst = std::max(worst, std::abs(el.tau - (t_rel + st.Z - st.R)));
      // Coulomb field of a unit charge at rest: E = n̂ / R², n̂ = (1, 0, 2)/√5.
      BOOST_TEST(std::abs(e[0] - 1.0 / (st.R * 5.0)) < 1e-14);
      BOOST_TEST(std::abs(e[2] - 2.0 / (st.R * 5.0)) < 1e-14);
    }
    BOOST_TEST_MESSAGE("fast " << fast << ": worst |τ − τ_r| over 200 samples: " << worst);
    BOOST_TEST(worst < 1e-12);
  }
}
