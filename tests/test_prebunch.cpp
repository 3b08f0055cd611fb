// ctest-label: physics
// Phased-array prebunching for inverse Thomson (electrons.bunch_harmonic, bunch_ell, bunch_chirp;
// edm/ensemble.hpp, share/docs/ensembles.md "Prebunching"):
// - the offsets the scenario applies are Δz(ρ, θ) = ((1+β)/2)[ρ²/(2Z) + ℓ_b (θ/2π) λ/n_b] − chirp (ρ/R)²,
//   recomputed here from the placed initial states;
// - a prebunched disk raises the coherent yield of the chosen OAM at harmonic n_b against the same
//   disk unbunched: the far field of both (solver + host reference of the Liénard–Wiechert field) is
//   projected here, independently of edm's twisted-light analysis, on e^{iℓφ} rings at the line;
// - the bad inputs: prebunching in thomson (EDM-CFG-730), ℓ_b without n_b (EDM-CFG-732), offsets
//   beyond the window's early-arrival budget (EDM-CFG-733), each naming the keys.
#define BOOST_TEST_MODULE prebunch
#include <array>
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <complex>
#include <numbers>

#include "../plugins/common/laser_scenarios.hpp"
#include "edm/accumulator.hpp"
#include "edm/plugin_sdk.hpp"
#include "edm/screen.hpp"
#include "edm/trajectory.hpp"
#include "test_support.hpp"

using namespace edm;
constexpr double kPi = std::numbers::pi;
using cd = std::complex<double>;

namespace {

template <class T>
std::unique_ptr<Scenario> make_scenario(const Campaign& c) {
  edm_scenario_v1 raw{};
  char err[512] = {0};
  const CampaignView view(c);
  if (sdk::create<T>(view.get(), &raw, err, sizeof err) != 0) throw std::runtime_error(err);
  return std::make_unique<Scenario>(raw);
}

constexpr double kGamma = 1.5, kA0 = 0.1, kLambda = 800e-9;

// A CI-sized inverse-Thomson cell: 32 electrons on a 1 µm disk, γ = 1.5, a0 = 0.1, an 8 fs pulse in a
// 20 µm waist; the far field on a polar grid about +z (7 polar angles to 0.15 rad × 16 azimuths).
Campaign cell(int n_b, int ell) {
  Campaign c;
  c.run.scenario = "inverse_thomson";
  c.laser.a0 = kA0;
  c.laser.waist = 20e-6;
  c.laser.duration = 8e-15;
  c.electrons.count = 32;
  c.electrons.radius = 1e-6;
  c.electrons.gamma = kGamma;
  c.electrons.bunch_harmonic = n_b;
  c.electrons.bunch_ell = ell;
  c.screen.type = ScreenType::Angular;
  c.screen.distance = INFINITY;
  c.screen.angles = AngleGrid::Polar;
  c.screen.nx = 7;
  c.screen.ny = 16;
  c.screen.theta_min = 0.0;
  c.screen.theta_max = 0.15;
  c.screen.phi_min = 0.0;
  c.screen.phi_max = 2 * kPi * (1 - 1.0 / 16);  // 16 distinct azimuths
  c.screen.samples_per_period = 64;
  return c;
}

// The initial states, moved back along their straight lines to t = 0 (the collision positions).
std::vector<std::array<double, 3>> collision_positions(const Campaign& c) {
  auto sc = make_scenario<scenarios::InverseThomsonScenario>(c);
  std::vector<std::array<double, 3>> out;
  for (std::uint64_t i = 0; i < sc->electron_count(); ++i) {
    double y[8];
    sc->initial_state(i, y);
    const double d = -y[0] / y[4];  // proper time back to t = 0
    out.push_back({y[1] + d * y[5], y[2] + d * y[6], y[3] + d * y[7]});
  }
  return out;
}

// |c_ℓ|² summed over the rings (weighted by sin θ) of E_x at frequency ω (normalised), with
// c_ℓ(θ) = (1/N_φ) Σ_φ Ẽ_x(θ, φ) e^{−iℓφ}, Ẽ = Σ_k E(t_k) e^{iωt_k} dt (the e^{−iωt} convention).
std::vector<double> ell_yields(const Campaign& c, double omega, int ell_max) {
  auto sc = make_scenario<scenarios::InverseThomsonScenario>(c);
  SolveOptions opt;
  opt.knots_per_period = 32;
  opt.threads = 2;
  const SplineBatch b = solve_trajectories(*sc, 0, sc->electron_count(), opt);
  const Normalization units = Normalization::from_wavelength(kLambda);
  Screen s = make_screen(c.screen, units);
  // The window: every electron's far-field time ψ = t − z over its whole spline, plus a margin.
  double lo = INFINITY, hi = -INFINITY;
  for (std::size_t e = 0; e < b.electrons.size(); ++e) {
    double p[kSplineComponents], q[kSplineComponents];
    b.eval(e, b.electrons[e].tau0, p);
    b.eval(e, b.electrons[e].tau_end(), q);
    lo = std::min(lo, p[0] - p[3]);
    hi = std::max(hi, q[0] - q[3]);
  }
  s.t0_rel = lo - 2.0;
  s.samples = int((hi - lo + 4.0) / s.dt);
  const std::vector<double> f = host_reference_field(s, Mode::Total, b);  // [E|B][comp][iy][ix][k]
  std::vector<double> yields(2 * ell_max + 1, 0.0);
  for (int ix = 0; ix < s.nx; ++ix) {
    const double theta = c.screen.theta_max * ix / (s.nx - 1);
    for (int ell = -ell_max; ell <= ell_max; ++ell) {
      cd cl = 0;
      for (int iy = 0; iy < s.ny; ++iy) {
        const double phi = 2 * kPi * iy / s.ny;
        cd a = 0;
        for (int k = 0; k < s.samples; ++k) {
          const double t = s.t_rel(k);
          a += f[((std::size_t(iy) * s.nx + ix) * s.samples) + k] * std::polar(s.dt, omega * t);
        }
        cl += a * std::polar(1.0 / s.ny, -ell * phi);
      }
      yields[ell + ell_max] += std::sin(theta) * std::norm(cl);
    }
  }
  return yields;
}

void expect_error(const Campaign& c, const char* id, const char* key) {
  try {
    make_scenario<scenarios::InverseThomsonScenario>(c);
    BOOST_FAIL(std::string("accepted; expected ") + id);
  } catch (const std::runtime_error& e) {
    const std::string m = e.what();
    BOOST_TEST_MESSAGE(m);
    BOOST_TEST(m.find(id) != std::string::npos, m);
    BOOST_TEST(m.find(key) != std::string::npos, m);
  }
}

}  // namespace

BOOST_AUTO_TEST_CASE(offsets_follow_the_phased_array_formula) {
  Campaign c = cell(2, 3);
  c.screen.type = ScreenType::Flat;
  c.screen.distance = 0.05;
  c.screen.samples = 4096;  // room for the offsets in the budget
  c.electrons.bunch_chirp = 2e-8;
  Campaign plain = c;
  plain.electrons.bunch_harmonic = plain.electrons.bunch_ell = 0;
  plain.electrons.bunch_chirp = 0;
  const auto a = collision_positions(c), b = collision_positions(plain);
  const Normalization units = Normalization::from_wavelength(kLambda);
  const double beta = std::sqrt(1 - 1 / (kGamma * kGamma)), h = kGamma * (1 + beta);
  const double lambda = kLambda * (1 + kA0 * kA0 / 2) / (h * h);
  double worst = 0, largest = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double x = b[i][0] * units.length(), y = b[i][1] * units.length();
    const double rho2 = x * x + y * y;
    const double th = std::fmod(std::atan2(y, x) + 2 * kPi, 2 * kPi);
    const double want = (1 + beta) / 2 * (rho2 / (2 * 0.05) + 3 * th / (2 * kPi) * lambda / 2) - 2e-8 * rho2 / 1e-12;
    const double got = (a[i][2] - b[i][2]) * units.length();
    worst = std::max(worst, std::abs(got - want));
    largest = std::max(largest, std::abs(want));
    BOOST_TEST(std::abs(a[i][0] - b[i][0]) < 1e-12);  // only z moves
  }
  BOOST_TEST_MESSAGE("largest offset " << largest << " m, worst difference from the formula " << worst << " m");
  BOOST_TEST(largest > 1e-8);
  BOOST_TEST(worst < 1e-9 * largest + 1e-16);
}

BOOST_AUTO_TEST_CASE(a_prebunched_disk_raises_the_coherent_yield_of_the_chosen_ell) {
  const double beta = std::sqrt(1 - 1 / (kGamma * kGamma)), h = kGamma * (1 + beta);
  const double omega1 = h * h / (1 + kA0 * kA0 / 2);  // the on-axis line, laser ω = 1
  const int ell_b = 1, L = 3;
  const auto plain = ell_yields(cell(0, 0), omega1, L);
  const auto bunched = ell_yields(cell(1, ell_b), omega1, L);
  for (int l = -L; l <= L; ++l)
    BOOST_TEST_MESSAGE("ℓ = " << l << ": coherent yield unbunched " << plain[l + L] << ", prebunched (n_b = 1, ℓ_b = "
                              << ell_b << ") " << bunched[l + L]);
  // The offsets' phase is +ℓ_b θ in the laser's e^{+iωξ} labels, so ℓ = −ℓ_b in the analysis'
  // e^{−iωt} convention (as laser.m gives ℓ_z = −m; share/docs/twisted_light.md).
  const double chosen = bunched[-ell_b + L], before = plain[-ell_b + L];
  BOOST_TEST(chosen > 10 * before);
  BOOST_TEST(chosen > 10 * bunched[ell_b + L]);
  BOOST_TEST(chosen > 10 * bunched[L]);  // ℓ = 0, the unbunched disk's own, is suppressed
  BOOST_TEST(plain[L] > 10 * plain[-ell_b + L]);
}

BOOST_AUTO_TEST_CASE(bad_prebunching_is_refused_naming_the_keys) {
  Campaign c = cell(0, 2);
  expect_error(c, "EDM-CFG-732", "electrons.bunch_harmonic");
  c = cell(1, 40);  // 40 wavelengths of the line: 16 fs of arrivals against a 2.7 fs window
  expect_error(c, "EDM-CFG-733", "bunch_ell");
  c = cell(1, 1);
  c.run.scenario = "thomson";
  try {
    make_scenario<scenarios::ThomsonScenario>(c);
    BOOST_FAIL("prebunching in thomson was accepted");
  } catch (const std::runtime_error& e) {
    BOOST_TEST(std::string(e.what()).find("EDM-CFG-730") != std::string::npos, e.what());
    BOOST_TEST(std::string(e.what()).find("electrons.bunch_harmonic") != std::string::npos, e.what());
  }
  c = cell(1, 40);
  c.screen.samples = -1;  // "auto" (window = "burst"): the window is sized to the light, no budget
  c.screen.window = ScreenWindow::Burst;
  BOOST_CHECK_NO_THROW(make_scenario<scenarios::InverseThomsonScenario>(c));
}
