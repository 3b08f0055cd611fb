// ctest-label: physics
// Trajectory solver and splines against the exact plane-wave (light-front) solution (share/docs/design.md, facts the validation tests use),
// the figure-8 drift, the Landau–Lifshitz closed form (Di Piazza 2008), γ-trace merging, track
// resampling, and the knots/bytes per electron of the inverse-Thomson default case.
#define BOOST_TEST_MODULE trajectory
#include <gsl/gsl_integration.h>

#include <array>
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <numbers>

#include "../plugins/common/laser_scenarios.hpp"
#include "edm/plugin_sdk.hpp"
#include "edm/tracks.hpp"
#include "edm/trajectory.hpp"
#include "plane_wave_exact.hpp"
#include "test_support.hpp"

using namespace edm;
namespace tol = edm::test::tol;
constexpr double kPi = std::numbers::pi;

using edm::test::ExactPlaneWave;

namespace {

// Builds a scenario of class T for campaign c through the plugin SDK and the C campaign view (as
// the loader would).
template <class T>
std::unique_ptr<Scenario> make_scenario(const Campaign& c) {
  edm_scenario_v1 raw{};
  char err[512] = {0};
  const CampaignView view(c);
  if (sdk::create<T>(view.get(), &raw, err, sizeof err) != 0)
    BOOST_FAIL(std::string("scenario creation failed: ") + err);
  return std::make_unique<Scenario>(raw);
}

struct Errors {
  double u = 0, x = 0, t = 0, a = 0, invariant = 0;
  // Mid-knot only: measured error / interpolation bound (see compare()).
  double u_bound = 0, x_bound = 0, a_bound = 0;
};

// Compares the spline of electron e with the exact solution at knots (offset 0) or mid-knots
// (offset ½). Relative errors: u against max|u| (all four components), x against the largest
// displacement from the start, t against the elapsed time, a against max|a|.
// At mid-knots it also forms interpolation bounds. The position is a quintic Hermite per interval:
// |x − H| ≤ dτ⁶/46080 · max|x⁽⁶⁾| at the middle (s³(dτ − s)³/6!), x⁽⁶⁾ = a⁽⁴⁾. Its derivatives u = H′,
// a = H″ are held to the bounds of the cubic pieces that the layout had before (cubic Hermite of u:
// dτ⁴/384 · max|a⁽³⁾|; natural cubic spline of a: 5 dτ⁴/384 · max|a⁽⁴⁾|) — the quintic must stay
// within them (it does by 25× and more). The derivatives of the exact a are central differences of
// step dτ/4 around each interior mid-knot; the *_bound fields are max error / bound (≤ 1 expected).
Errors compare(const SplineBatch& b, std::size_t e, const ExactPlaneWave& ex, const Laser& laser,
               double offset) {
  const ElectronSpline& es = b.electrons[e];
  double du = 0, dx = 0, dt = 0, da = 0, su = 0, sx = 0, st = 0, sa = 0, inv = 0;
  double d2a = 0, d3a = 0, d4a = 0;
  const auto y0 = ex.state(0);
  auto exact_a = [&](double tau, double a[4]) {
    const auto y = ex.state(tau);
    double dy[8];
    lorentz_rhs(laser, y.data(), dy);
    for (int c = 0; c < 4; ++c) a[c] = dy[4 + c];
  };
  const std::uint32_t n = offset == 0 ? es.n_intervals + 1 : es.n_intervals;
  for (std::uint32_t j = 0; j < n; ++j) {
    const double tau = es.tau0 + (j + offset) * es.dtau;
    double sp[kSplineComponents];
    b.eval(e, tau, sp);
    const auto y = ex.state(tau);
    double dy[8];
    lorentz_rhs(laser, y.data(), dy);
    for (int c = 0; c < 4; ++c) {
      du = std::max(du, std::abs(sp[4 + c] - y[4 + c]));
      su = std::max(su, std::abs(y[4 + c]));
      da = std::max(da, std::abs(sp[8 + c] - dy[4 + c]));
      sa = std::max(sa, std::abs(dy[4 + c]));
    }
    for (int c = 1; c < 4; ++c) {
      dx = std::max(dx, std::abs(sp[c] - y[c]));
      sx = std::max(sx, std::abs(y[c] - y0[c]));
    }
    dt = std::max(dt, std::abs(sp[0] - y[0]));
    st = std::max(st, std::abs(y[0] - y0[0]));
    if (offset == 0)
      inv = std::max(inv, std::abs(sp[4] * sp[4] - sp[5] * sp[5] - sp[6] * sp[6] - sp[7] * sp[7] - 1));
    if (offset != 0 && j > 0 && j + 1 < n) {
      const double d = es.dtau / 4;
      double am2[4], am1[4], a0[4], ap1[4], ap2[4];
      exact_a(tau - 2 * d, am2);
      exact_a(tau - d, am1);
      exact_a(tau, a0);
      exact_a(tau + d, ap1);
      exact_a(tau + 2 * d, ap2);
      for (int c = 0; c < 4; ++c) {
        d2a = std::max(d2a, std::abs(ap1[c] - 2 * a0[c] + am1[c]) / (d * d));
        d3a = std::max(d3a, std::abs(ap2[c] - 2 * ap1[c] + 2 * am1[c] - am2[c]) / (2 * d * d * d));
        d4a =
            std::max(d4a, std::abs(ap2[c] - 4 * ap1[c] + 6 * a0[c] - 4 * am1[c] + am2[c]) / (d * d * d * d));
      }
    }
  }
  Errors r{du / su, dx / sx, dt / st, da / sa, inv};
  if (offset != 0) {
    const double h4 = std::pow(es.dtau, 4) / 384.0, h6 = std::pow(es.dtau, 6) / 46080.0;
    r.u_bound = du / (h4 * d3a);
    r.x_bound = dx / (h6 * d4a);
    r.a_bound = da / (5 * h4 * d4a);
  }
  return r;
}

Campaign plane_wave_campaign(double a0, double periods_tau0, const std::string& pol) {
  Campaign c;
  c.laser.profile = LaserProfile::PlaneWave;
  c.laser.a0 = a0;
  c.laser.polarization = parse_choice<Polarization>(pol);
  c.laser.envelope = Envelope::Gaussian;
  c.laser.duration = periods_tau0 * 800e-9 / si::c;  // τ0 in carrier periods
  c.electrons.distribution = Distribution::Sunflower;
  c.electrons.count = 2;
  c.electrons.radius = 2e-6;
  return c;
}

// Solves with the campaign's knots and checks against the exact solution; returns the mid-knot errors.
template <class T>
Errors check_exact(const Campaign& c, const std::string& label, int knots = 16) {
  auto sc = make_scenario<T>(c);
  SolveOptions opt;
  opt.knots_per_period = knots;
  opt.rtol = c.trajectory.rtol;
  opt.atol = c.trajectory.atol;
  opt.threads = 2;
  const SplineBatch b = solve_trajectories(*sc, 0, sc->electron_count(), opt);
  const Laser& laser = static_cast<const T*>(sc->raw().self)->laser();
  Errors mid_worst;
  for (std::size_t e = 0; e < b.electrons.size(); ++e) {
    double y0[8];
    sc->initial_state(e, y0);
    const ExactPlaneWave ex(laser, y0,
                            y0[0] - laser.direction() * y0[3] +
                                (b.electrons[e].tau_end() + 1) * (y0[4] - laser.direction() * y0[7]));
    const Errors k = compare(b, e, ex, laser, 0.0);
    const Errors m = compare(b, e, ex, laser, 0.5);
    BOOST_TEST_MESSAGE(
        label << " electron " << e << " (" << b.electrons[e].n_intervals + 1 << " knots): knots vs exact: u "
              << k.u << ", x " << k.x << ", t " << k.t << ", a " << k.a << "; |u·u − 1| " << k.invariant
              << "; mid-knot spline vs exact: u " << m.u << ", x " << m.x << ", t " << m.t << ", a " << m.a);
    if (knots == 16) {
      BOOST_TEST(k.u < tol::trajectory_exact);
      BOOST_TEST(k.x < tol::trajectory_exact);
      BOOST_TEST(k.t < tol::trajectory_exact);
      BOOST_TEST(k.a < tol::trajectory_exact);
      BOOST_TEST(k.invariant < tol::invariant);
    }
    mid_worst.u = std::max(mid_worst.u, m.u);
    mid_worst.x = std::max(mid_worst.x, m.x);
    mid_worst.t = std::max(mid_worst.t, m.t);
    mid_worst.a = std::max(mid_worst.a, m.a);
    mid_worst.u_bound = std::max(mid_worst.u_bound, m.u_bound);
    mid_worst.x_bound = std::max(mid_worst.x_bound, m.x_bound);
    mid_worst.a_bound = std::max(mid_worst.a_bound, m.a_bound);
  }
  return mid_worst;
}

// Mid-knot interpolation error against the bounds formed in compare() (error/bound ≤ 1; a 1.5
// margin covers the finite-difference estimate of the derivatives), and the quintic's convergence:
// sixth order for x (and, at mid-knots, for u = x′), fourth for a = x″.
void check_mid_knot(const Errors& m16, const Errors& m32, const std::string& label) {
  BOOST_TEST_MESSAGE(label << " mid-knot error / interpolation bound (16 knots/period): u " << m16.u_bound
                           << ", x " << m16.x_bound << ", a " << m16.a_bound
                           << "; error ratio 16→32 knots: u " << m16.u / m32.u << ", x " << m16.x / m32.x
                           << ", a " << m16.a / m32.a);
  BOOST_TEST(m16.u_bound < 1.5);
  BOOST_TEST(m16.x_bound < 1.5);
  BOOST_TEST(m16.a_bound < 1.5);
  BOOST_TEST(m32.u_bound < 1.5);
  BOOST_TEST(m32.a_bound < 1.5);
  // Doubling the knots divides the error by ~64 (x, u) and ~16 (a).
  BOOST_TEST(m16.u / m32.u > 40.0);
  BOOST_TEST(m16.x / m32.x > 40.0);
  BOOST_TEST(m16.a / m32.a > 10.0);
}

}  // namespace

BOOST_AUTO_TEST_CASE(thomson_from_rest_a0_half) {
  const Campaign c = plane_wave_campaign(0.5, 2.0, "linear");
  const Errors m16 = check_exact<scenarios::ThomsonScenario>(c, "thomson a0=0.5");
  const Errors m32 = check_exact<scenarios::ThomsonScenario>(c, "thomson a0=0.5 (32 knots)", 32);
  check_mid_knot(m16, m32, "thomson a0=0.5");
}

BOOST_AUTO_TEST_CASE(thomson_from_rest_a0_two) {
  const Campaign c = plane_wave_campaign(2.0, 2.0, "linear");
  const Errors m16 = check_exact<scenarios::ThomsonScenario>(c, "thomson a0=2");
  const Errors m32 = check_exact<scenarios::ThomsonScenario>(c, "thomson a0=2 (32 knots)", 32);
  check_mid_knot(m16, m32, "thomson a0=2");
}

BOOST_AUTO_TEST_CASE(inverse_thomson_gamma5_head_on) {
  for (const char* pol : {"linear", "circular_plus"}) {
    Campaign c = plane_wave_campaign(1.0, 2.0, pol);
    c.electrons.gamma = 5.0;
    const Errors m16 = check_exact<scenarios::InverseThomsonScenario>(c, std::string("inverse γ=5 ") + pol);
    const Errors m32 =
        check_exact<scenarios::InverseThomsonScenario>(c, std::string("inverse γ=5 (32) ") + pol, 32);
    check_mid_knot(m16, m32, std::string("inverse γ=5 ") + pol);
  }
}

BOOST_AUTO_TEST_CASE(inverse_thomson_timing) {
  // Unperturbed (a0 = 0): every electron reaches its disk point (x, y, 0) at t = 0.
  Campaign c = plane_wave_campaign(0.0, 2.0, "linear");
  c.electrons.count = 5;
  auto sc = make_scenario<scenarios::InverseThomsonScenario>(c);
  const auto disk = sunflower_disk(5, c.electrons.radius);
  const double L = Normalization::from_wavelength(c.laser.wavelength).length();
  for (std::uint64_t i = 0; i < 5; ++i) {
    double y[8];
    sc->initial_state(i, y);
    const double dt = -y[0];  // time to t = 0
    const double z0 = y[3] + y[7] / y[4] * dt;
    BOOST_TEST(std::abs(z0) < 1e-9 * std::abs(y[3]));
    BOOST_TEST(std::abs(y[1] - disk[i].x / L) < 1e-12);
    BOOST_TEST(std::abs((y[0] + y[3]) + sc->xi_end()) <
               1e-9 * std::abs(y[0]));  // ξ = t + z = ξ_start = −ξ_end
  }
}

namespace {
// Figure-8 scenario: a constant-envelope plane wave along +z (a0 from the campaign), one electron at
// rest at the origin at ξ = 0, where the vector potential (∝ sin ξ) vanishes so the electron's mean
// transverse momentum is 0: the textbook figure-8 with drift β_d = a0²/(4 + a0²).
class Figure8 : public ScenarioBase {
 public:
  explicit Figure8(const Campaign& c)
      : laser_(make_laser(c.laser, Normalization::from_wavelength(c.laser.wavelength), +1)),
        periods_(c.trajectory.padding) {}
  std::uint64_t electron_count() const override { return 1; }
  void initial_state(std::uint64_t, double y[8]) const override {
    for (int k = 0; k < 8; ++k) y[k] = 0;
    y[4] = 1;
  }
  void rhs(double, const double y[8], double dy[8]) const override { lorentz_rhs(*laser_, y, dy); }
  void laser_field(const double x4[4], double E[3], double B[3]) const override { laser_->field(x4, E, B); }
  int laser_direction() const override { return 1; }
  double xi_end() const override { return 2 * kPi * periods_; }

 private:
  std::unique_ptr<Laser> laser_;
  double periods_;
};
}  // namespace

BOOST_AUTO_TEST_CASE(figure8_drift) {
  for (double a0 : {0.5, 2.0}) {
    Campaign c;
    c.laser.profile = LaserProfile::PlaneWave;
    c.laser.envelope = Envelope::Constant;
    c.laser.a0 = a0;
    c.trajectory.padding = 20;  // periods
    auto sc = make_scenario<Figure8>(c);
    SolveOptions opt;
    const SplineBatch b = solve_trajectories(*sc, 0, 1, opt);
    // h = 1 exactly, so 16 knots are exactly one period in ξ: compare knots 0 and 16·20.
    const std::uint32_t N = 16 * 20;
    BOOST_REQUIRE(b.electrons[0].n_intervals >= N);
    double y0[12], yN[12];
    b.eval(0, 0.0, y0);
    b.eval(0, N * b.electrons[0].dtau, yN);
    const double beta = (yN[3] - y0[3]) / (yN[0] - y0[0]);
    const double expected = a0 * a0 / (4 + a0 * a0);
    BOOST_TEST_MESSAGE("figure-8 a0=" << a0 << ": drift " << beta << ", expected " << expected
                                      << ", relative error " << std::abs(beta / expected - 1));
    BOOST_TEST(std::abs(beta / expected - 1) < tol::drift);
  }
}

BOOST_AUTO_TEST_CASE(landau_lifshitz_light_front_loss) {
  // Head-on γ = 1000 electron, a0 = 10, τ0 = 10 periods: the LL plane-wave solution (Di Piazza 2008)
  //   h(ξ) = h0 / (1 + τ_R h0 ∫_{ξ0}^{ξ} E⊥² dξ')
  // (the derivative and E×B terms drop out of d(k·u)/dτ = −τ_R h³ E⊥² for a plane wave).
  Campaign c = plane_wave_campaign(10.0, 10.0, "linear");
  c.electrons.count = 1;
  c.trajectory.model = TrajectoryModel::LandauLifshitz;
  c.scenario_section.insert("gamma_minus_one", 999.0);
  auto sc = make_scenario<scenarios::InverseThomsonScenario>(c);
  const auto& scen = *static_cast<const scenarios::InverseThomsonScenario*>(sc->raw().self);
  const double tau_r = scen.units().tau_rad();
  SolveOptions opt;
  const SplineBatch b = solve_trajectories(*sc, 0, 1, opt);
  double y0[8];
  sc->initial_state(0, y0);
  const int s = -1;
  const double h0 = y0[4] - s * y0[7];
  // ∫E⊥² dξ by GSL QAG on the knots' ξ values (cumulative).
  gsl_integration_workspace* w = gsl_integration_workspace_alloc(1000);
  auto e2 = [&](double xi) {
    const double x4[4] = {xi, 0, 0, 0};
    double E[3], B[3];
    scen.laser().field(x4, E, B);
    return E[0] * E[0] + E[1] * E[1];
  };
  gsl_function F;
  F.function = [](double x, void* p) { return (*static_cast<decltype(e2)*>(p))(x); };
  F.params = &e2;
  const ElectronSpline& es = b.electrons[0];
  double xi_prev = y0[0] - s * y0[3], integral = 0, worst = 0, final_ratio = 0;
  for (std::uint32_t j = 1; j <= es.n_intervals; ++j) {
    double sp[12];
    b.eval(0, j * es.dtau, sp);
    const double xi = sp[0] - s * sp[3];
    double r, err;
    gsl_integration_qag(&F, xi_prev, xi, 0, 1e-12, 1000, GSL_INTEG_GAUSS61, w, &r, &err);
    integral += r;
    xi_prev = xi;
    const double h_exact = h0 / (1 + tau_r * h0 * integral);
    const double h = sp[4] - s * sp[7];
    const double loss_exact = h0 - h_exact, loss = h0 - h;
    if (loss_exact > 1e-3 * h0) worst = std::max(worst, std::abs(loss / loss_exact - 1));
    final_ratio = loss / loss_exact;
  }
  gsl_integration_workspace_free(w);
  BOOST_TEST_MESSAGE("LL: τ_R = " << tau_r << ", h0 = " << h0 << ", final light-front loss " << final_ratio
                                  << " × closed form; worst relative deviation of the loss " << worst);
  BOOST_TEST(std::abs(final_ratio - 1) < tol::ll_closed_form);
  BOOST_TEST(worst < tol::ll_closed_form);
  // The loss must be substantial for the comparison to mean something.
  double last[12];
  b.eval(0, es.tau_end(), last);
  const double frac = 1 - (last[4] - s * last[7]) / h0;
  BOOST_TEST_MESSAGE("LL: fractional light-front loss " << frac);
  BOOST_TEST(frac > 0.05);

  // Transverse momentum of the same closed-form solution, which exercises every LL term (the
  // (u×B)×B and (u·E)E terms cancel in u⊥, the field-derivative term survives as −τ_R E⊥):
  //   u⊥(ξ) = h(ξ) [u⊥0/h0 − ∫_{ξ0}^{ξ} E⊥/h dξ' − τ_R (E⊥(ξ) − E⊥(ξ0))],
  // integrated knot interval by knot interval with nested 16-point Gauss–Legendre.
  gsl_integration_glfixed_table* gl = gsl_integration_glfixed_table_alloc(16);
  auto ex_field = [&](double xi) {
    const double x4[4] = {xi, 0, 0, 0};
    double E[3], B[3];
    scen.laser().field(x4, E, B);
    return std::array<double, 2>{E[0], E[1]};
  };
  auto gl_int = [&](double a, double bnd, auto f) {
    double r = 0;
    for (std::size_t i = 0; i < gl->n; ++i) {
      double xn, wn;
      gsl_integration_glfixed_point(a, bnd, i, &xn, &wn, gl);
      r += wn * f(xn);
    }
    return r;
  };
  const double xi0 = y0[0] - s * y0[3];
  double I = 0, J[2] = {0, 0}, xa = xi0, du_worst = 0, u_scale = 0;
  const auto E0 = ex_field(xi0);
  for (std::uint32_t j = 1; j <= es.n_intervals; ++j) {
    double sp[12];
    b.eval(0, j * es.dtau, sp);
    const double xb = sp[0] - s * sp[3];
    auto h_at = [&](double x) { return h0 / (1 + tau_r * h0 * (I + gl_int(xa, x, e2))); };
    for (int c = 0; c < 2; ++c) J[c] += gl_int(xa, xb, [&](double x) { return ex_field(x)[c] / h_at(x); });
    I += gl_int(xa, xb, e2);
    xa = xb;
    const double h = h0 / (1 + tau_r * h0 * I);
    const auto E = ex_field(xb);
    for (int c = 0; c < 2; ++c) {
      const double u_exact = h * (y0[5 + c] / h0 - J[c] - tau_r * (E[c] - E0[c]));
      du_worst = std::max(du_worst, std::abs(sp[5 + c] - u_exact));
      u_scale = std::max(u_scale, std::abs(u_exact));
    }
  }
  gsl_integration_glfixed_table_free(gl);
  BOOST_TEST_MESSAGE("LL: u⊥ vs closed form, max error " << du_worst / u_scale
                                                         << " relative to max|u⊥| = " << u_scale);
  // 1e-10 sits far below the field-derivative term's share (dropping that term gives 2.8e-6,
  // checked by hand), so a wrong or missing derivative term fails here.
  BOOST_TEST(du_worst / u_scale < 1e-10);
}

BOOST_AUTO_TEST_CASE(gamma_trace_merge_and_thread_independence) {
  Campaign c = plane_wave_campaign(1.0, 2.0, "circular_minus");
  c.electrons.count = 4;
  auto sc = make_scenario<scenarios::ThomsonScenario>(c);
  SolveOptions opt;
  opt.gamma_trace_dtau = 0.37;
  opt.threads = 1;
  const SplineBatch all = solve_trajectories(*sc, 0, 4, opt);
  opt.threads = 2;
  const SplineBatch all2 = solve_trajectories(*sc, 0, 4, opt);
  BOOST_TEST(all.coef == all2.coef);  // bit-identical whatever the thread count
  const SplineBatch a = solve_trajectories(*sc, 0, 1, opt);
  const SplineBatch bb = solve_trajectories(*sc, 1, 3, opt);
  GammaTrace m = a.gamma;
  m.merge(bb.gamma);
  BOOST_TEST(m.count == all.gamma.count);
  BOOST_TEST(m.min == all.gamma.min);
  BOOST_TEST(m.max == all.gamma.max);
  BOOST_TEST(m.drain == all.gamma.drain);
  // Fixed-point sums: merging partial sums gives exactly the single-pass sums.
  BOOST_TEST_MESSAGE("γ trace merge: " << m.sum.size() << " points, electron 0 drain " << m.drain[0].second);
  BOOST_TEST(m.sum.size() == all.gamma.sum.size());
  BOOST_TEST((m.sum == all.gamma.sum));
  BOOST_TEST(m.mean(m.sum.size() / 2) == all.gamma.mean(all.gamma.sum.size() / 2));
  BOOST_TEST(all.gamma.max[all.gamma.max.size() / 2] > 1.0);  // the pulse heats the electrons
}

namespace {
// Interpolation bounds for a track sampled with largest proper-time gap Δ in a plane wave from rest
// (h = 1, so τ = ξ − ξ0): cubic spline values err by ≤ (5/384) Δ⁴ max|u⁽⁴⁾|, its derivative by
// ≲ Δ³/24 max|u⁽⁴⁾|. u⊥ ≈ a0 sin ξ and uᶻ = u⊥²/2 carries the 2nd harmonic (a0²/4)·2⁴, so
// max|u⁽⁴⁾| ≈ max(a0, 4a0²); relative to max|u| = 1 + a0²/2 and max|a| ≈ max(a0, a0²).
struct TrackBounds {
  double u, a;
};
TrackBounds track_bounds(double a0, const std::vector<double>& tau) {
  double gap = 0;
  for (std::size_t k = 1; k < tau.size(); ++k) gap = std::max(gap, tau[k] - tau[k - 1]);
  const double u4 = std::max(a0, 4 * a0 * a0);
  return {5.0 / 384.0 * std::pow(gap, 4) * u4 / (1 + a0 * a0 / 2),
          std::pow(gap, 3) / 24.0 * u4 / std::max(a0, a0 * a0)};
}
}  // namespace

namespace {
// A tracks scenario: the exact plane-wave trajectory of a Thomson electron sampled at non-uniform
// times (64 per period on average, jittered) — the resampler must recover it on uniform τ knots.
struct TrackSamples {
  std::vector<double> t, x, y, z, ux, uy, uz;
};
TrackSamples g_track;
class TrackScenario : public ScenarioBase {
 public:
  explicit TrackScenario(const Campaign&) {}
  std::uint64_t electron_count() const override { return 1; }
  void initial_state(std::uint64_t, double y[8]) const override {
    y[0] = g_track.t[0];
    y[1] = g_track.x[0];
    y[2] = g_track.y[0];
    y[3] = g_track.z[0];
    y[5] = g_track.ux[0];
    y[6] = g_track.uy[0];
    y[7] = g_track.uz[0];
    y[4] = std::sqrt(1 + y[5] * y[5] + y[6] * y[6] + y[7] * y[7]);
  }
  bool has_rhs() const override { return false; }
  void rhs(double, const double*, double*) const override {}
  void laser_field(const double*, double E[3], double B[3]) const override {
    E[0] = E[1] = E[2] = B[0] = B[1] = B[2] = 0;
  }
  bool has_tracks() const override { return true; }
  edm_track track(std::uint64_t) const override {
    const auto& g = g_track;
    return {g.t.size(), g.t.data(),  g.x.data(),  g.y.data(),
            g.z.data(), g.ux.data(), g.uy.data(), g.uz.data()};
  }
  int laser_direction() const override { return 1; }
  double xi_end() const override { return 0; }
};
}  // namespace

BOOST_AUTO_TEST_CASE(tracks_resampling) {
  Campaign c = plane_wave_campaign(1.0, 2.0, "linear");
  const Normalization units = Normalization::from_wavelength(c.laser.wavelength);
  const auto laser = make_laser(c.laser, units, +1);
  const double y0[8] = {-50.0, 0, 0, 0, 1, 0, 0, 0};
  const double span = 100.0;  // ξ from −50 to 50 (h = 1: τ = ξ + 50)
  const ExactPlaneWave ex(*laser, y0, -50.0 + span + 1);
  g_track = {};
  const int n = int(span / (2 * kPi) * 64);
  std::vector<double> taus;
  for (int k = 0; k <= n; ++k) {
    const double jitter = (k == 0 || k == n) ? 0 : 0.3 * std::sin(12.9898 * k);  // deterministic
    taus.push_back((k + jitter) * span / n);
    const auto y = ex.state(taus.back());
    g_track.t.push_back(y[0]);
    g_track.x.push_back(y[1]);
    g_track.y.push_back(y[2]);
    g_track.z.push_back(y[3]);
    g_track.ux.push_back(y[5]);
    g_track.uy.push_back(y[6]);
    g_track.uz.push_back(y[7]);
  }
  auto sc = make_scenario<TrackScenario>(c);
  const SplineBatch b = solve_trajectories(*sc, 0, 1, SolveOptions{});
  const Errors k = compare(b, 0, ex, *laser, 0.0);
  BOOST_TEST_MESSAGE("tracks resampled on " << b.electrons[0].n_intervals + 1 << " knots vs exact: u " << k.u
                                            << ", x " << k.x << ", t " << k.t << ", a (differentiated) "
                                            << k.a << ", |u·u − 1| " << k.invariant);
  // Samples 2π/64 apart on average, jittered by ±30 %: bounds from the largest gap.
  const TrackBounds tb = track_bounds(1.0, taus);
  BOOST_TEST_MESSAGE("  bounds: u, x " << tb.u << ", a " << tb.a);
  BOOST_TEST(k.u < tb.u);
  BOOST_TEST(k.x < tb.u);
  BOOST_TEST(k.a < tb.a);
  BOOST_TEST(k.invariant < tol::invariant);
}

BOOST_AUTO_TEST_CASE(tracks_reader_errors_name_the_file) {
  try {
    read_tracks("/nonexistent/tracks.h5");
    BOOST_FAIL("no error for a missing tracks file");
  } catch (const IoError& e) {
    BOOST_TEST(std::string(e.what()).find("/nonexistent/tracks.h5") != std::string::npos);
  }
}

BOOST_AUTO_TEST_CASE(inverse_thomson_default_knots_and_bytes) {
  // The campaign defaults: inverse Thomson, γ = 5, gaussian beam w0 = 20 µm, a0 = 0.1,
  // τ0 = 26.7 fs, λ = 800 nm, padding 6 τ0, 16 knots per proper-time period.
  Campaign c;
  c.electrons.count = 1;
  auto sc = make_scenario<scenarios::InverseThomsonScenario>(c);
  const SplineBatch b = solve_trajectories(*sc, 0, 1, SolveOptions{});
  const std::uint64_t knots = b.electrons[0].n_intervals + 1;
  const double tau0 = c.laser.duration * Normalization::from_wavelength(800e-9).omega;
  // h is conserved to O(a0²/(k w0)²) in the beam: knots ≈ 16 · (12 τ0)/(2π) + the 2 extra + 1.
  const double expected = 16.0 * 12.0 * tau0 / (2 * kPi) + 3;
  BOOST_TEST_MESSAGE("inverse Thomson default: " << knots << " knots/electron (expected ≈ " << expected
                                                 << "), " << spline_bytes_per_knot() << " B/knot, "
                                                 << b.bytes() << " B/electron (coefficients + descriptor)");
  BOOST_TEST(std::abs(double(knots) - expected) < 0.01 * expected);
  BOOST_TEST(b.bytes() == (knots - 1) * spline_bytes_per_knot() + sizeof(ElectronSpline));
}

BOOST_AUTO_TEST_CASE(tracks_file_through_thomson_scenario) {
  const double A0 = 1.5;
  // The "tracks" model end to end: exact plane-wave trajectories written to an HDF5 file in SI
  // (write_tracks), read back by ThomsonScenario (model = "tracks") and resampled on τ knots.
  Campaign c = plane_wave_campaign(A0, 2.0, "linear");
  const Normalization units = Normalization::from_wavelength(c.laser.wavelength);
  const auto laser = make_laser(c.laser, units, +1);
  const double span = 100.0;
  std::vector<TrackData> tracks;
  std::vector<std::unique_ptr<ExactPlaneWave>> exact;
  std::vector<double> taus[2];
  for (int e = 0; e < 2; ++e) {
    const double y0[8] = {-50.0, 3.0 * e, -1.0, 0, 1, 0, 0, 0};
    exact.push_back(std::make_unique<ExactPlaneWave>(*laser, y0, -50.0 + span + 1));
    TrackData td;
    td.index = e;
    const int n = int(span / (2 * kPi) * 64);
    taus[e].clear();
    for (int k = 0; k <= n; ++k) {
      const double jitter = (k == 0 || k == n) ? 0 : 0.3 * std::sin(78.233 * k + e);
      taus[e].push_back((k + jitter) * span / n);
      const auto y = exact.back()->state(taus[e].back());
      td.t.push_back(y[0] * units.time());
      td.x.push_back(y[1] * units.length());
      td.y.push_back(y[2] * units.length());
      td.z.push_back(y[3] * units.length());
      td.ux.push_back(y[5]);
      td.uy.push_back(y[6]);
      td.uz.push_back(y[7]);
    }
    tracks.push_back(std::move(td));
  }
  const auto dir = edm::test::temp_dir("tracks");
  const std::string file = (dir / "tracks.h5").string();
  write_tracks(file, tracks);
  c.trajectory.model = TrajectoryModel::Tracks;
  c.trajectory.file = file;
  auto sc = make_scenario<scenarios::ThomsonScenario>(c);
  BOOST_REQUIRE(sc->electron_count() == 2);
  BOOST_REQUIRE(sc->has_tracks());
  BOOST_REQUIRE(!sc->has_rhs());
  const SplineBatch b = solve_trajectories(*sc, 0, 2, SolveOptions{});
  for (std::size_t e = 0; e < 2; ++e) {
    const Errors k = compare(b, e, *exact[e], *laser, 0.0);
    BOOST_TEST_MESSAGE("tracks file, electron " << e << ": u " << k.u << ", x " << k.x << ", t " << k.t
                                                << ", a " << k.a << ", |u·u − 1| " << k.invariant);
    const TrackBounds tb = track_bounds(A0, taus[e]);
    BOOST_TEST_MESSAGE("  bounds: u, x " << tb.u << ", a " << tb.a);
    BOOST_TEST(k.u < tb.u);
    BOOST_TEST(k.x < tb.u);
    BOOST_TEST(k.a < tb.a);
    BOOST_TEST(k.invariant < tol::invariant);
  }
  // Malformed files: the message names the file and the dataset.
  auto expect = [&](std::vector<TrackData> bad, const std::string& dataset) {
    const std::string f = (dir / "bad.h5").string();
    write_tracks(f, bad);
    try {
      read_tracks(f);
      BOOST_ERROR("no error for " << dataset);
    } catch (const IoError& ex) {
      const std::string what = ex.what();
      BOOST_TEST_MESSAGE("tracks error: " << what);
      BOOST_TEST(what.find(f) != std::string::npos);
      BOOST_TEST(what.find(dataset) != std::string::npos);
    }
  };
  auto short_x = tracks;
  short_x[1].x.pop_back();
  expect(short_x, "/tracks/000001/x");
  auto backwards = tracks;
  std::swap(backwards[0].t[5], backwards[0].t[6]);
  expect(backwards, "/tracks/000000/t");
}

namespace {
class Figure8Capped : public Figure8 {
 public:
  using Figure8::Figure8;
  double tau_max() const override { return 5.0; }
};
}  // namespace

BOOST_AUTO_TEST_CASE(stop_rules_observe_done_and_tau_max) {
  Campaign c;
  c.laser.profile = LaserProfile::PlaneWave;
  c.laser.envelope = Envelope::Constant;
  c.laser.a0 = 0.5;
  c.trajectory.padding = 4;  // periods: ξ_end = 8π
  auto sc = make_scenario<Figure8>(c);
  SolveOptions opt;
  const SplineBatch plain = solve_trajectories(*sc, 0, 1, opt);
  // Without observe_done: the first knot with ξ ≥ ξ_end, then exactly 2 more.
  const ElectronSpline& p = plain.electrons[0];
  double y[12];
  plain.eval(0, (p.n_intervals - 2) * p.dtau, y);
  BOOST_TEST(y[0] - y[3] >= sc->xi_end());
  plain.eval(0, (p.n_intervals - 3) * p.dtau, y);
  BOOST_TEST(y[0] - y[3] < sc->xi_end());
  // With observe_done (t > 100, well past ξ_end): the integration goes on until it holds.
  opt.observe_done = [](const double s[8]) { return s[0] > 100.0; };
  const SplineBatch longer = solve_trajectories(*sc, 0, 1, opt);
  const ElectronSpline& l = longer.electrons[0];
  BOOST_TEST(l.n_intervals > p.n_intervals);
  longer.eval(0, (l.n_intervals - 2) * l.dtau, y);
  BOOST_TEST(y[0] > 100.0);
  longer.eval(0, (l.n_intervals - 3) * l.dtau, y);
  BOOST_TEST(y[0] <= 100.0);
  BOOST_TEST_MESSAGE("stop rules: " << p.n_intervals + 1 << " knots at ξ_end, " << l.n_intervals + 1
                                    << " with observe_done");
  // Runaway guard: τ beyond the scenario's tau_max is a PhysicsError naming the electron.
  auto capped = make_scenario<Figure8Capped>(c);
  try {
    solve_trajectories(*capped, 0, 1, SolveOptions{});
    BOOST_ERROR("no error past tau_max");
  } catch (const PhysicsError& e) {
    BOOST_TEST_MESSAGE("tau_max: " << e.what());
    BOOST_TEST(std::string(e.what()).find("electron 0") != std::string::npos);
    BOOST_TEST(std::string(e.what()).find("tau_max") != std::string::npos);
  }
}

BOOST_AUTO_TEST_CASE(focused_lg_beam_with_radiation_reaction) {
  // No closed form here: a focused LG(1,1) circular pulse (w0 = 3λ, a0 = 2) on Thomson electrons
  // with the LL model must integrate without failure, keep u·u = 1 at every knot (LL keeps u·a = 0
  // by construction), give thread-independent results, and push the electrons (γ trace max > 1).
  Campaign c;
  c.laser.profile = LaserProfile::LaguerreGauss;
  c.laser.p = 1;
  c.laser.m = 1;
  c.laser.polarization = Polarization::CircularPlus;
  c.laser.a0 = 2.0;
  c.laser.waist = 3 * 800e-9;
  c.laser.duration = 5e-15;
  c.electrons.count = 3;
  c.electrons.radius = 2e-6;
  c.trajectory.model = TrajectoryModel::LandauLifshitz;
  auto sc = make_scenario<scenarios::ThomsonScenario>(c);
  SolveOptions opt;
  opt.threads = 1;
  const SplineBatch b1 = solve_trajectories(*sc, 0, 3, opt);
  opt.threads = 2;
  const SplineBatch b2 = solve_trajectories(*sc, 0, 3, opt);
  BOOST_TEST(b1.coef == b2.coef);
  double worst = 0, gmax = 0;
  for (std::size_t e = 0; e < 3; ++e) {
    const ElectronSpline& es = b1.electrons[e];
    for (std::uint32_t j = 0; j <= es.n_intervals; ++j) {
      double sp[12];
      b1.eval(e, j * es.dtau, sp);
      worst = std::max(worst, std::abs(sp[4] * sp[4] - sp[5] * sp[5] - sp[6] * sp[6] - sp[7] * sp[7] - 1));
      gmax = std::max(gmax, sp[4]);
    }
  }
  BOOST_TEST_MESSAGE("LG(1,1) + LL: |u·u − 1| max " << worst << ", γ max " << gmax << ", " << b1.bytes()
                                                    << " bytes for 3 electrons");
  BOOST_TEST(worst < tol::invariant);
  BOOST_TEST(gmax > 1.01);
  BOOST_TEST(*std::max_element(b1.gamma.max.begin(), b1.gamma.max.end()) > 1.01);
  // release() hands everything back.
  SplineBatch r = solve_trajectories(*sc, 0, 1, opt);
  BOOST_TEST(r.bytes() > 0u);
  r.release();
  BOOST_TEST(r.bytes() == 0u);
  BOOST_TEST(r.coef.capacity() == 0u);
}
