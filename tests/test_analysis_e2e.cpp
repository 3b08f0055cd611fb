// ctest-label: e2e
// The analysis on a real run: `edm run` of the quickstart campaign (inverse Thomson, γ = 5, a0 = 0.1,
// 16 electrons; 17×17 pixels so that the centre pixel sits on the axis), then `edm spectrum`. Checks
// the on-axis line against the inverse-Thomson formula (share/docs/outputs.md), the absolute d²I/dωdΩ normalisation against the weak-field
// (linear) estimate, S·n̂ fluence against the far-field spectrum, and the Nyquist guard on real data;
// the expected line comes from the run's own ensemble (run.toml [kinematics]): a beam set by
// [inverse_thomson] gamma_minus_one gets its own line, not that of the γ = 5 default.
// Needs a working `edm run` (an OpenCL device; PoCL is enough).
#define BOOST_TEST_MODULE analysis_e2e
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <numbers>

#include <toml++/toml.h>

#include "edm/run_files.hpp"
#include "edm/spectrum.hpp"
#include "edm/units.hpp"
#include "test_support.hpp"

namespace fs = std::filesystem;
namespace tol = edm::test::tol;
using namespace edm::si;

namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// One quickstart run shared by the cases.
const fs::path& quickstart_run() {
  static const fs::path dir = [] {
    const fs::path out = edm::test::temp_dir("analysis-e2e") / "qs";
    const auto campaign = edm::test::source_dir() / "share/campaigns/quickstart.toml";
    const auto r =
        edm::test::run_command(edm::test::edm_binary().string() + " run " + campaign.string() + " --output " +
                               out.string() + " --set screen.nx=17 --set screen.ny=17 --set screen.samples=1024"
                               " --set screen.samples_per_period=512 --quiet");
    if (r.exit_code != 0) throw std::runtime_error("edm run of the quickstart failed:\n" + r.output);
    return out;
  }();
  return dir;
}

}  // namespace

// The line: the on-axis peak sits on the bin of ω(1+β)/(1−β)/(1+a0²/2) and, between bins, slightly
// above it — the Gaussian envelope chirps the line, +0.2 % at γ = 5, a0 = 0.1 (between the zero-field
// and the peak-a0 line).
BOOST_AUTO_TEST_CASE(on_axis_line_position) {
  const auto& dir = quickstart_run();
  const auto phys = edm::read_run_physics(edm::RunFolder(dir));
  BOOST_TEST_REQUIRE(phys.gamma == 5.0);
  edm::SpectrumOptions o;
  o.window = edm::Window::Hann;
  const auto r = edm::compute_spectrum(edm::RunFolder(dir), o);
  const double line = edm::backscatter_line_omega(phys.laser_omega, phys.gamma, phys.a0);
  const double dw = r.omega[1];
  const double offset = r.peak_omega_on_axis_interp / line - 1;
  BOOST_TEST_MESSAGE("quickstart on axis: line "
                     << line / phys.laser_omega << " ω, peak bin " << r.peak_omega_on_axis / phys.laser_omega
                     << " ω, between bins " << r.peak_omega_on_axis_interp / phys.laser_omega << " ω (offset "
                     << offset * 100 << " %)");
  BOOST_TEST(std::abs(r.peak_omega_on_axis - line) <= 0.5 * dw);
  BOOST_TEST(offset > 0.0);
  BOOST_TEST(offset < tol::spectrum_peak / 2);  // 0.5 %: the chirp, not a wrong line
}

// Absolute normalisation end to end. Linear (weak-field) theory on axis, head-on: a transverse
// acceleration β̇x = qEx(1+β)/(γmc) seen through the Doppler factor gives per electron
//   dW/dΩ = q²/(16π²ε0c) · (qE0(1+β)/(γmc))² · ∫g²cos² dξ / ((1−β)³(1+β)),  ∫g²cos² dξ = (τ0/2)√(π/2),
// and exactly on the axis the 16 electrons (one transverse plane) add coherently, each weighted by
// the Gaussian beam's exp(−r²/w0²), here averaged over a uniform disk of radius 5 µm. Agreement is
// limited by O(a0²) ≈ 1 % nonlinear corrections and the disk average: tol::weak_field_estimate.
BOOST_AUTO_TEST_CASE(on_axis_energy_matches_weak_field_theory) {
  const auto& dir = quickstart_run();
  edm::SpectrumOptions o;
  o.window = edm::Window::None;
  const auto r = edm::compute_spectrum(edm::RunFolder(dir), o);
  BOOST_TEST_REQUIRE(r.x[r.center_ix] == 0.0);
  BOOST_TEST_REQUIRE(r.y[r.center_iy] == 0.0);
  const double pi = std::numbers::pi, lambda = 800e-9, w = 2 * pi * c / lambda, a0 = 0.1, tau0 = 26.7e-15;
  const double gamma = 5, beta = std::sqrt(1 - 1 / (gamma * gamma)), E0 = a0 * m_e * c * w / e;
  const double single = e * e / (16 * pi * pi * eps0 * c) *
                        std::pow(e * E0 * (1 + beta) / (gamma * m_e * c), 2) / std::pow(1 - beta, 3) /
                        (1 + beta) * (tau0 / 2) * std::sqrt(pi / 2);
  const double R = 5e-6, w0 = 20e-6, N = 16, q = R * R / (w0 * w0);
  const double coherent = N * (1 - std::exp(-q)) / q;
  const double expected = single * coherent * coherent;
  const double measured = r.spectral_energy[r.center_iy * r.nx + r.center_ix];
  BOOST_TEST_MESSAGE("quickstart on-axis dW/dΩ: " << measured << " J/sr, weak-field estimate " << expected
                                                  << " J/sr, ratio " << measured / expected);
  BOOST_TEST(measured / expected == 1.0, boost::test_tools::tolerance(tol::weak_field_estimate));

  // Energy through the screen two ways: Σ ∫S·n̂ dt dA and ∫ dI/dω dω = Σ ε0c R²∫|E|²dt ΔΩ. For a
  // radiation field from the origin both are ε0c∫|E|² cos θ dt dA.
  BOOST_TEST_MESSAGE("energy through the screen "
                     << r.total_energy << " J, from the spectrum " << r.integrated_energy
                     << " J, ratio - 1 = " << r.integrated_energy / r.total_energy - 1);
  BOOST_TEST(r.total_energy > 0);
  BOOST_TEST(r.integrated_energy / r.total_energy == 1.0, boost::test_tools::tolerance(tol::far_field_flux));
}

// The third harmonic of the line (≈ 292.5 ω) is above this run's Nyquist frequency (256 ω at
// T/512): `edm spectrum --harmonics 1,3` refuses it by name instead of reporting its alias.
BOOST_AUTO_TEST_CASE(nyquist_guard_on_real_data) {
  const auto& dir = quickstart_run();
  const std::string bin = edm::test::edm_binary().string();
  const auto ok = edm::test::run_command(bin + " spectrum " + dir.string() + " --harmonics 1");
  BOOST_TEST_MESSAGE(ok.output);
  BOOST_TEST(ok.exit_code == 0);
  BOOST_TEST(contains(ok.output, "harmonics of the line"));
  const auto bad = edm::test::run_command(bin + " spectrum " + dir.string() + " --harmonics 1,3");
  BOOST_TEST(bad.exit_code == 2);
  BOOST_TEST(contains(bad.output, "harmonic 3 of the line"));
}

// The quickstart's run.toml records its ensemble, and the line `--of line` takes from it is the
// γ = 5 backscatter line, as before.
BOOST_AUTO_TEST_CASE(quickstart_line_from_its_kinematics) {
  const auto& dir = quickstart_run();
  const toml::table m = toml::parse_file((dir / "run.toml").string());
  BOOST_TEST(m["kinematics"]["electrons"].value_or<std::int64_t>(0) == 16);
  BOOST_TEST(m["kinematics"]["laser_direction"].value_or<std::int64_t>(0) == -1);
  BOOST_TEST(m["kinematics"]["gamma_mean"].value_or(0.0) == 5.0);
  const auto phys = edm::read_run_physics(edm::RunFolder(dir));
  edm::SpectrumOptions o;
  o.harmonics = {1};
  o.of = edm::HarmonicBase::Line;
  const auto r = edm::compute_spectrum(edm::RunFolder(dir), o);
  BOOST_TEST(r.base_omega == edm::backscatter_line_omega(phys.laser_omega, 5.0, phys.a0),
             boost::test_tools::tolerance(tol::line_forms));
}

// A beam set by the plugin's own key: [inverse_thomson] gamma_minus_one = 2 (γ = 3) while
// [electrons] gamma keeps its default 5. The line of `edm spectrum --of line` is the γ = 3 one, and
// the run's on-axis peak sits on it (the γ = 5 line is 65 ω away).
BOOST_AUTO_TEST_CASE(line_of_a_beam_set_by_gamma_minus_one) {
  const fs::path dir = edm::test::temp_dir("analysis-e2e-gm1") / "gm1";
  const auto campaign = edm::test::source_dir() / "share/campaigns/quickstart.toml";
  const auto run = edm::test::run_command(
      edm::test::edm_binary().string() + " run " + campaign.string() + " --output " + dir.string() +
      " --set inverse_thomson.gamma_minus_one=2 --set screen.nx=9 --set screen.ny=9 --set screen.samples=2048"
      " --set screen.samples_per_period=512 --quiet");
  BOOST_TEST_REQUIRE(run.exit_code == 0, run.output);
  const auto phys = edm::read_run_physics(edm::RunFolder(dir));
  BOOST_TEST(phys.gamma == 3.0, boost::test_tools::tolerance(1e-15));
  BOOST_TEST(phys.kinematics.light_front_h == 3 + std::sqrt(8.0), boost::test_tools::tolerance(1e-15));
  edm::SpectrumOptions o;
  o.window = edm::Window::Hann;
  o.harmonics = {1};
  o.of = edm::HarmonicBase::Line;
  const auto r = edm::compute_spectrum(edm::RunFolder(dir), o);
  const double line3 = edm::backscatter_line_omega(phys.laser_omega, 3.0, phys.a0);
  const double line5 = edm::backscatter_line_omega(phys.laser_omega, 5.0, phys.a0);
  BOOST_TEST(r.base_omega == line3, boost::test_tools::tolerance(tol::line_forms));
  const double dw = r.omega[1], offset = r.peak_omega_on_axis_interp / line3 - 1;
  BOOST_TEST_MESSAGE("γ = 3 beam on axis: expected line " << r.base_omega / phys.laser_omega << " ω, peak bin "
                                                           << r.peak_omega_on_axis / phys.laser_omega
                                                           << " ω, between bins "
                                                           << r.peak_omega_on_axis_interp / phys.laser_omega
                                                           << " ω (offset " << offset * 100 << " %); the γ = 5 line is "
                                                           << line5 / phys.laser_omega << " ω");
  // The chirp puts the peak +0.2 % above the peak-a0 line, here half a bin: the peak bin is the
  // line's or its neighbour.
  BOOST_TEST(std::abs(r.peak_omega_on_axis - line3) <= dw);
  BOOST_TEST(offset > 0.0);
  BOOST_TEST(offset < tol::spectrum_peak / 2);
  BOOST_TEST(std::abs(r.peak_omega_on_axis - line5) > 100 * dw);

  // The binary picks the line by default and names it.
  const auto sp = edm::test::run_command(edm::test::edm_binary().string() + " spectrum " + dir.string() +
                                         " --harmonics 1");
  BOOST_TEST(sp.exit_code == 0, sp.output);
  char expect[64];
  std::snprintf(expect, sizeof expect, "harmonics of the line (ω_b = %.6g ω", line3 / phys.laser_omega);
  BOOST_TEST(contains(sp.output, expect), sp.output);
}
