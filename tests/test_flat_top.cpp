// ctest-label: physics
// The supergaussian (flat-top) envelope exp(−(ξ/τ0)^(2p)), laser.order = p: its field against the
// closed form written here, order 1 against the gaussian bit for bit, the pulse energy it is given
// back, the key's errors, the scenario's window where the envelope has fallen to exp(−P²), the
// solver against the exact plane-wave trajectory (the light-front solution holds for any envelope),
// and a whole run: the on-axis line of a helix in a long flat top at the closed-form Doppler line
// ω_1 = ω h²/(1 + u⊥0² + a0²/2) to 1e-6.
#define BOOST_TEST_MODULE flat_top
#include <hdf5.h>

#include <boost/test/unit_test.hpp>
#include <cmath>
#include <numbers>
#include <sstream>
#include <string>
#include <vector>

#include "../plugins/common/laser_scenarios.hpp"
#include "edm/error.hpp"
#include "edm/laser.hpp"
#include "edm/plugin_sdk.hpp"
#include "edm/trajectory.hpp"
#include "h5_read.hpp"
#include "plane_wave_exact.hpp"
#include "spawn.hpp"
#include "test_support.hpp"

using namespace edm;
namespace tol = edm::test::tol;
constexpr double kPi = std::numbers::pi;

namespace {

const Normalization kUnits = Normalization::from_wavelength(800e-9);
const double kPeriod = 800e-9 / si::c;  // s

LaserSection flat_top(const std::string& profile, int order, double tau0_periods, const std::string& pol) {
  LaserSection s;
  s.profile = parse_choice<LaserProfile>(profile);
  s.a0 = 1.0;
  s.waist = 4 * 800e-9;
  s.envelope = Envelope::SuperGaussian;
  s.order = order;
  s.duration = tau0_periods * kPeriod;
  s.polarization = parse_choice<Polarization>(pol);
  s.phase = 0.3;
  return s;
}

// A double as TOML text with every digit (std::to_string keeps six decimals: 1e-13 s became 0).
std::string exact_text(double v) {
  std::ostringstream os;
  os.precision(17);
  os << v;
  return os.str();
}

// The id of the ConfigError that make_laser throws ("" when it throws none).
std::string error_id(const LaserSection& s) {
  try {
    make_laser(s, kUnits, +1);
  } catch (const ConfigError& e) {
    return e.id();
  }
  return "";
}

template <class T>
std::unique_ptr<Scenario> make_scenario(const Campaign& c) {
  edm_scenario_v1 raw{};
  char err[512] = {0};
  const CampaignView view(c);
  if (sdk::create<T>(view.get(), &raw, err, sizeof err) != 0)
    BOOST_FAIL(std::string("scenario creation failed: ") + err);
  return std::make_unique<Scenario>(raw);
}

}  // namespace

BOOST_AUTO_TEST_CASE(the_field_is_the_closed_form) {
  // Plane wave, linear, along +z: E_x = a0 exp(−(ξ/τ0)^(2p)) cos(ξ + φ0), written with std::pow.
  for (int p : {2, 8, 50}) {
    auto L = make_laser(flat_top("plane_wave", p, 5.0, "linear"), kUnits, +1);
    BOOST_TEST(L->order() == p);
    const double tau0 = L->tau0();
    double worst = 0;
    for (double r = -1.6; r <= 1.6; r += 0.01) {
      const double xi = r * tau0, z = 0.7;
      const double x4[4] = {xi + z, 0.2, -0.1, z};
      double E[3], B[3];
      L->field(x4, E, B);
      const double want = std::exp(-std::pow(std::abs(r), 2.0 * p)) * std::cos(xi + 0.3);
      worst = std::max(worst, std::abs(E[0] - want));
      BOOST_TEST(B[1] == E[0]);
    }
    BOOST_TEST_MESSAGE("order " << p << ": |E_x − closed form| ≤ " << worst);
    BOOST_TEST(worst < 1e-13);
  }
  // Order 1 is the gaussian to the bit, plane wave and focused beam alike.
  for (const char* profile : {"plane_wave", "gaussian", "laguerre_gauss"}) {
    LaserSection g = flat_top(profile, 1, 3.0, "circular_plus");
    g.p = 1;
    g.m = 2;
    auto A = make_laser(g, kUnits, -1);
    g.envelope = Envelope::Gaussian;
    auto B = make_laser(g, kUnits, -1);
    for (double xi = -20; xi <= 20; xi += 0.37) {
      const double x4[4] = {xi - 1.3, 1.1, -2.0, -1.3};
      double E1[3], B1[3], E2[3], B2[3];
      A->field(x4, E1, B1);
      B->field(x4, E2, B2);
      for (int c = 0; c < 3; ++c) {
        BOOST_TEST(E1[c] == E2[c]);
        BOOST_TEST(B1[c] == B2[c]);
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(the_energy_length_is_the_integral) {
  // ∫ exp(−2 (ξ/τ0)^(2p)) dξ by the composite Simpson rule on a fine grid, against the closed form.
  for (int p : {1, 2, 5, 20}) {
    const double tau0 = 3.0, a = 5.0 * tau0;  // g² < exp(−50) beyond
    const int n = 400000;
    const double h = 2 * a / n;
    double sum = 0;
    for (int i = 0; i <= n; ++i) {
      const double x = -a + i * h;
      const double w = (i == 0 || i == n) ? 1 : (i % 2 ? 4 : 2);
      sum += w * std::exp(-2.0 * std::pow(std::abs(x / tau0), 2.0 * p));
    }
    sum *= h / 3;
    const double closed = envelope_energy_length(tau0, p);
    BOOST_TEST_MESSAGE("order " << p << ": ∫g² = " << sum << ", closed form " << closed);
    BOOST_TEST(std::abs(closed / sum - 1) < 1e-10);
  }
  BOOST_TEST(std::abs(envelope_energy_length(1.0, 1) - std::sqrt(kPi / 2)) < 1e-15);
}

BOOST_AUTO_TEST_CASE(pulse_energy_of_a_flat_top) {
  // U = ∫dt ∫dA ε0 c |E⊥|² at the focal plane (as test_laser's pulse_energy_to_a0) for a flat top.
  LaserSection sec = flat_top("gaussian", 4, 3.0, "linear");
  sec.waist = 2 * 800e-9;
  sec.pulse_energy = 1e-3;
  auto L = make_laser(sec, kUnits, +1);
  const double w0 = sec.waist / kUnits.length(), tau0 = L->tau0();
  const int nx = 48, nt_per = 16;
  const double xmax = 3.5 * w0, dx = 2 * xmax / nx, tmax = 1.6 * tau0, dt = 2 * kPi / nt_per;
  double sum = 0;
  for (int i = 0; i <= nx; ++i)
    for (int j = 0; j <= nx; ++j)
      for (double t = -tmax; t <= tmax; t += dt) {
        const double x4[4] = {t, -xmax + i * dx, -xmax + j * dx, 0};
        double E[3], B[3];
        L->field(x4, E, B);
        sum += E[0] * E[0] + E[1] * E[1];
      }
  const double ef = kUnits.efield(), len = kUnits.length(), tim = kUnits.time();
  const double U = si::eps0 * si::c * sum * ef * ef * dx * dx * len * len * dt * tim;
  BOOST_TEST_MESSAGE("flat top order 4: a0 = " << L->a0() << ", energy back " << U << " J (asked 1e-3 J)");
  BOOST_TEST(std::abs(U / 1e-3 - 1) < 1e-3);
}

BOOST_AUTO_TEST_CASE(the_order_is_checked) {
  BOOST_TEST(error_id(flat_top("plane_wave", 0, 3.0, "linear")) == "EDM-CFG-111");
  BOOST_TEST(error_id(flat_top("plane_wave", 51, 3.0, "linear")) == "EDM-CFG-111");
  LaserSection g = flat_top("gaussian", 4, 3.0, "linear");
  g.envelope = Envelope::Gaussian;
  BOOST_TEST(error_id(g) == "EDM-CFG-112");
  g.envelope = Envelope::Constant;
  BOOST_TEST(error_id(g) == "EDM-CFG-112");
  BOOST_TEST(error_id(flat_top("gaussian", 50, 3.0, "linear")) == "");
  LaserSection no_duration = flat_top("plane_wave", 4, 3.0, "linear");
  no_duration.duration = 0;
  BOOST_TEST(error_id(no_duration) == "EDM-CFG-104");
}

// The solver against the exact plane-wave solution at every knot (u, x, t relative as
// test_trajectory measures them), for electrons from rest and head-on at γ = 5, in a flat top of
// order 8; the scenario's window ends where the envelope is exp(−P²): ±P^(1/p) τ0.
BOOST_AUTO_TEST_CASE(the_solver_follows_the_exact_plane_wave) {
  for (int inverse : {0, 1}) {
    Campaign c;
    c.laser = flat_top("plane_wave", 8, 3.0, inverse ? "circular_plus" : "linear");
    c.laser.a0 = inverse ? 1.0 : 2.0;
    c.electrons.count = 2;
    c.electrons.radius = 2e-6;
    c.electrons.gamma = 5.0;
    auto sc = inverse ? make_scenario<scenarios::InverseThomsonScenario>(c)
                      : make_scenario<scenarios::ThomsonScenario>(c);
    // The plugin SDK holds the scenario as its own class: back to it, then to the shared base.
    const scenarios::LaserScenario* ls =
        inverse ? static_cast<const scenarios::LaserScenario*>(
                      static_cast<const scenarios::InverseThomsonScenario*>(sc->raw().self))
                : static_cast<const scenarios::ThomsonScenario*>(sc->raw().self);
    const double tau0 = 3.0 * 2 * kPi;
    BOOST_TEST(std::abs(sc->xi_end() / (std::pow(6.0, 1.0 / 8) * tau0) - 1) < 1e-14);
    BOOST_TEST(ls->xi_start() == -sc->xi_end());
    SolveOptions opt;
    opt.threads = 2;
    const SplineBatch b = solve_trajectories(*sc, 0, sc->electron_count(), opt);
    const Laser& laser = ls->laser();
    for (std::size_t e = 0; e < b.electrons.size(); ++e) {
      double y0[8];
      sc->initial_state(e, y0);
      const ElectronSpline& es = b.electrons[e];
      const double h = y0[4] - laser.direction() * y0[7];
      const test::ExactPlaneWave ex(laser, y0, y0[0] - laser.direction() * y0[3] + (es.tau_end() + 1) * h);
      double du = 0, su = 0, dx = 0, sx = 0, dt = 0, st = 0;
      const auto ys = ex.state(0);
      for (std::uint32_t j = 0; j <= es.n_intervals; ++j) {
        const double tau = es.tau0 + j * es.dtau;
        double sp[kSplineComponents];
        b.eval(e, tau, sp);
        const auto y = ex.state(tau);
        for (int k = 0; k < 4; ++k) {
          du = std::max(du, std::abs(sp[4 + k] - y[4 + k]));
          su = std::max(su, std::abs(y[4 + k]));
        }
        for (int k = 1; k < 4; ++k) {
          dx = std::max(dx, std::abs(sp[k] - y[k]));
          sx = std::max(sx, std::abs(y[k] - ys[k]));
        }
        dt = std::max(dt, std::abs(sp[0] - y[0]));
        st = std::max(st, std::abs(y[0] - ys[0]));
      }
      BOOST_TEST_MESSAGE((inverse ? "inverse γ=5" : "thomson") << " electron " << e << " (" << es.n_intervals + 1
                                                               << " knots): u " << du / su << ", x " << dx / sx
                                                               << ", t " << dt / st);
      BOOST_TEST(du / su < tol::trajectory_exact);
      BOOST_TEST(dx / sx < tol::trajectory_exact);
      BOOST_TEST(dt / st < tol::trajectory_exact);
    }
  }
}

namespace {

// The on-axis field of a whole run (one electron at γ = 2 head-on into a plane-wave flat top of
// order 10, τ0 = 40 periods, a0 = 0.5, 2000 samples per laser period, about 160 per period of the
// line, on a burst window) and the middle of its line: the half-maximum span [k_lo, k_hi] of |E| is
// |ξ| ≲ τ0 (ln 2)^(1/20) = 0.98 τ0; its middle 40 % is |ξ| ≲ 0.4 τ0 (observer time is close to
// linear in ξ), where 1 − g < 0.4^20 = 1e-8, so the line's shift by a0² (1 − g) is below 1e-8.
struct OnAxis {
  std::vector<double> ex, ey, t;  // the axis pixel's samples
  std::size_t lo = 0, hi = 0;     // the middle of the top
};
constexpr double kGamma = 2.0, kA0 = 0.5;

OnAxis run_on_axis(const std::string& polarization) {
  const auto dir = test::temp_dir("flat_top_line");
  std::string t = "[run]\nscenario = \"inverse_thomson\"\noutput = \"" + (dir / "run").string() + "\"\n";
  t += "[laser]\nprofile = \"plane_wave\"\npolarization = \"" + polarization + "\"\na0 = " + exact_text(kA0) +
       "\nenvelope = \"supergaussian\"\norder = 10\nduration = " + exact_text(40 * kPeriod) + "\n";
  t += "[electrons]\ndistribution = \"sunflower\"\ncount = 1\nradius = 1e-7\ngamma = " + exact_text(kGamma) + "\n";
  t += "[screen]\ndistance = 1.0\nhalf_width = 1e-6\nnx = 3\nny = 3\nwindow = \"burst\"\nsamples = \"auto\"\n"
       "samples_per_period = 2000\n";
  const auto campaign = test::write_file(dir, "flat_top.toml", t);
  const auto r = test::run_edm("run " + campaign.string());
  BOOST_TEST_MESSAGE(r.output);
  BOOST_REQUIRE_EQUAL(r.exit_code, 0);
  BOOST_TEST(r.output.find("warning") == std::string::npos);
  const auto field = dir / "run" / "field.h5";
  const auto ex = test::h5_doubles(field, "/E/x"), ey = test::h5_doubles(field, "/E/y");
  OnAxis o;
  o.t = test::h5_doubles(field, "/axes/t");
  const std::size_t ns = o.t.size(), centre = (1 * 3 + 1) * ns;  // pixel (iy 1, ix 1) is on the axis
  BOOST_REQUIRE_EQUAL(ex.size(), 9 * ns);
  o.ex.assign(ex.begin() + centre, ex.begin() + centre + ns);
  o.ey.assign(ey.begin() + centre, ey.begin() + centre + ns);
  double amax = 0;
  for (std::size_t k = 0; k < ns; ++k) amax = std::max(amax, std::hypot(o.ex[k], o.ey[k]));
  std::size_t k_lo = ns, k_hi = 0;
  for (std::size_t k = 0; k < ns; ++k)
    if (std::hypot(o.ex[k], o.ey[k]) >= 0.5 * amax) {
      k_lo = std::min(k_lo, k);
      k_hi = k;
    }
  BOOST_REQUIRE(k_hi > k_lo);
  const std::size_t mid = (k_lo + k_hi) / 2, half = (k_hi - k_lo) / 5;
  o.lo = mid - half;
  o.hi = mid + half;
  return o;
}

// ω_1 = ω h²/(1 + u⊥0² + a0²/2), h = γ + √(γ² − 1), u⊥0 = 0 (rad/s), and ω_L.
double closed_form_line() {
  const double h = kGamma + std::sqrt(kGamma * kGamma - 1);
  return 2 * kPi / kPeriod * h * h / (1 + kA0 * kA0 / 2);
}

void check_line(const std::string& label, double omega, double samples) {
  const double want = closed_form_line(), omega_l = 2 * kPi / kPeriod;
  const double periods = samples / 2000.0 * want / omega_l;  // samples → laser periods → line periods
  BOOST_TEST_MESSAGE(label << ": " << omega / omega_l << " ω_L over " << periods << " periods of the line, closed form "
                           << want / omega_l << " ω_L, rel. " << std::abs(omega / want - 1));
  BOOST_TEST(periods > 20.0);  // the middle of the top holds many periods of the line
  BOOST_TEST(std::abs(omega / want - 1) < 1e-6);
}

}  // namespace

// Circular polarisation: the electron moves on a helix and its on-axis light is one rotating line;
// its frequency is the least-squares slope of the phase atan2(E_y, E_x) over the middle of the top.
BOOST_AUTO_TEST_CASE(a_long_flat_top_gives_the_doppler_line) {
  const OnAxis o = run_on_axis("circular_plus");
  const std::size_t mid = (o.lo + o.hi) / 2;
  double phase = 0, prev = 0, n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (std::size_t k = o.lo; k <= o.hi; ++k) {
    const double a = std::atan2(o.ey[k], o.ex[k]);
    phase = k == o.lo ? a : phase + std::remainder(a - prev, 2 * kPi);
    prev = a;
    const double tk = o.t[k] - o.t[mid];  // about the middle: the sums keep their digits
    n += 1;
    sx += tk;
    sy += phase;
    sxx += tk * tk;
    sxy += tk * phase;
  }
  check_line("helix line", std::abs((n * sxy - sx * sy) / (n * sxx - sx * sx)), n);
}

// Linear polarisation: the on-axis light holds the odd harmonics of one period 2π/ω_1 (the field is
// periodic where the envelope is flat, so every harmonic n sits at n ω_1). The period is the
// least-squares slope of the upward zero crossings of E_x (cubic interpolation between samples)
// against their count.
BOOST_AUTO_TEST_CASE(a_linear_flat_top_repeats_at_the_doppler_period) {
  const OnAxis o = run_on_axis("linear");
  std::vector<double> crossings;
  for (std::size_t k = o.lo + 1; k + 2 <= o.hi; ++k) {
    if (!(o.ex[k] < 0 && o.ex[k + 1] >= 0)) continue;
    // The root of the cubic through samples k−1 … k+2, in units of the sample step from k, by Newton
    // from the linear root.
    const double y[4] = {o.ex[k - 1], o.ex[k], o.ex[k + 1], o.ex[k + 2]};
    auto p = [&](double x) {  // Lagrange on nodes −1, 0, 1, 2
      return -y[0] * x * (x - 1) * (x - 2) / 6 + y[1] * (x + 1) * (x - 1) * (x - 2) / 2 -
             y[2] * (x + 1) * x * (x - 2) / 2 + y[3] * (x + 1) * x * (x - 1) / 6;
    };
    double x = y[1] / (y[1] - y[2]);
    for (int it = 0; it < 20; ++it) x -= p(x) / ((p(x + 1e-6) - p(x - 1e-6)) / 2e-6);
    crossings.push_back(o.t[k] - o.t[(o.lo + o.hi) / 2] + x * (o.t[k + 1] - o.t[k]));
  }
  const double n = double(crossings.size());
  BOOST_REQUIRE(n > 20);
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (std::size_t i = 0; i < crossings.size(); ++i) {
    sx += double(i);
    sy += crossings[i];
    sxx += double(i) * double(i);
    sxy += double(i) * crossings[i];
  }
  const double period = (n * sxy - sx * sy) / (n * sxx - sx * sx);
  check_line("linear line (zero crossings)", 2 * kPi / period, double(o.hi - o.lo + 1));
}
