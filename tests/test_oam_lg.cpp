// ctest-label: e2e
// share/campaigns/thomson_lg.toml (the seed's laser: LG p = 2, m = −2, circular_minus) through
// `edm run`, `edm spectrum` and `edm plot`, reduced for CI (32 electrons, 21² pixels, ~10 s on 2
// cores): the fundamental carries the winding the angular-momentum balance predicts,
// ℓ(σ) = J − σ with J = −(m + σ_edm) = +3 per photon about the forward normal
// (share/docs/twisted_light.md): ℓ = +2 in σ = +1 and +4 in σ = −1. Then the refusals through the
// binary, each naming its option and leaving spectrum.h5 as it was: a ring centre off the screen, a
// ring larger than the screen, a harmonic above Nyquist, a harmonic without energy.
#define BOOST_TEST_MODULE oam_lg
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <fstream>
#include <iterator>
#include <numbers>

#include "edm/field_file.hpp"
#include "edm/run_manifest.hpp"
#include "edm/twisted_light.hpp"
#include "synthetic_run.hpp"
#include "test_support.hpp"

namespace fs = std::filesystem;
namespace tol = edm::test::tol;

namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

const fs::path& lg_run() {
  static const fs::path dir = [] {
    const fs::path out = edm::test::temp_dir("oam-lg") / "lg";
    const auto campaign = edm::test::source_dir() / "share/campaigns/thomson_lg.toml";
    const auto r = edm::test::run_command(
        edm::test::edm_binary().string() + " run " + campaign.string() + " --quiet --output " + out.string() +
        " --set electrons.count=32 --set screen.nx=21 --set screen.ny=21 --set screen.half_width=1.5e-4"
        " --set screen.samples=1024");
    if (r.exit_code != 0) throw std::runtime_error("edm run of thomson_lg failed:\n" + r.output);
    return out;
  }();
  return dir;
}

const std::string bin() { return edm::test::edm_binary().string(); }

}  // namespace

// The fundamental on rings at θ = 0.1 and 0.12 rad, where its Bessel lobe dominates the sunflower's
// aliasing (nearer the axis the θ²-weak σ = −1 component is aliased by the 8-fold parastichy).
BOOST_AUTO_TEST_CASE(lg_fundamental_carries_the_laser_angular_momentum) {
  const auto& dir = lg_run();
  edm::SpectrumOptions o;
  o.harmonics = {1};
  const auto sp = edm::compute_spectrum(edm::RunFolder(dir), o);
  edm::TwistedLightOptions t;
  t.knots_per_period = edm::RunManifest::read(edm::RunFolder(dir)).knots_per_period();
  t.harmonics_explicit = true;
  t.rings.radii = {1e-4, 1.2e-4};
  const auto tw = edm::compute_twisted_light(edm::FieldFile::open(dir / "field.h5"), sp, t);
  const int m = -2, sigma_edm = -1, J = -(m + sigma_edm);
  for (std::size_t s = 0; s < 2; ++s) {
    const int ell = J - edm::kSigmas[s];
    for (const auto& f : tw.fits[s]) {
      BOOST_TEST_MESSAGE("thomson_lg n=1 σ=" << edm::kSigmas[s] << " r=" << f.radius << ": "
                                             << edm::ring_status_name(f.status) << " ℓ=" << f.ell_fit
                                             << " (predicted " << ell << "), residual " << f.residual_rms);
      BOOST_TEST_REQUIRE(int(f.status) == int(edm::RingStatus::Ok));
      BOOST_TEST(f.winding == ell);
      BOOST_TEST(std::abs(f.ell_fit - ell) < tol::winding_fit);
    }
  }
  // The angular momentum through this (partial) screen has the laser's sign.
  BOOST_TEST_MESSAGE("J per photon through the screen: " << tw.observables.band_j_per_photon[0] << " ħ");
  BOOST_TEST(tw.observables.band_j_per_photon[0] > 0);
}

// `edm spectrum` prints the fits, `edm plot` draws the twisted-light PNGs; bad options are refused
// by name and leave spectrum.h5 byte for byte as it was.
BOOST_AUTO_TEST_CASE(command_line_spectrum_plot_and_refusals) {
  const auto& dir = lg_run();
  const auto sp = edm::test::run_command(bin() + " spectrum " + dir.string() +
                                         " --of laser --harmonics 1,2 --ring-radii 1e-4,1.2e-4");
  BOOST_TEST_MESSAGE("edm spectrum:\n" << sp.output);
  BOOST_TEST(sp.exit_code == 0);
  BOOST_TEST(contains(sp.output, "(winding +2 on 2 of 2 rings)"));
  BOOST_TEST(contains(sp.output, "(winding +4 on 2 of 2 rings)"));
  BOOST_TEST(contains(sp.output, "angular momentum through the screen"));
  const std::string before = slurp(dir / "spectrum.h5");
  BOOST_TEST_REQUIRE(!before.empty());

  struct Bad {
    std::string args, option, id;
  };
  for (const Bad& b : {Bad{"--ring-centre 1e-3,0", "--ring-centre", "EDM-OAM-001"},
                       Bad{"--ring-radii 1e-4,2e-4", "--ring-radii", "EDM-OAM-002"},
                       Bad{"--ring-centre 1e-4", "--ring-centre", "EDM-CLI-030"},
                       Bad{"--harmonic-bin middle", "--harmonic-bin", "EDM-OAM-006"},
                       Bad{"--harmonics 1,9", "--harmonics", "EDM-SPEC-020"}}) {
    const auto r = edm::test::run_command(bin() + " spectrum " + dir.string() + " --of laser " + b.args);
    BOOST_TEST_INFO(b.args << " → " << r.output);
    BOOST_TEST(r.exit_code == 2);
    BOOST_TEST(contains(r.output, b.option));
    BOOST_TEST(contains(r.output, b.id));
    BOOST_TEST(slurp(dir / "spectrum.h5") == before);
    BOOST_TEST(!fs::exists(dir / "spectrum.h5.partial"));
  }

  if (!edm::test::have_plotting_python()) {
    BOOST_TEST_MESSAGE("skipping edm plot: no python3 with numpy, h5py and matplotlib");
    return;
  }
  const auto pl = edm::test::run_command(bin() + " plot " + dir.string());
  BOOST_TEST_MESSAGE("edm plot:\n" << pl.output);
  BOOST_TEST(pl.exit_code == 0);
  for (const char* png : {"phase_1_sigma_plus.png", "phase_1_sigma_minus.png", "ring_phase_1.png",
                          "polar_1.png", "envelope_1.png", "lz_spectrum.png"}) {
    const fs::path p = dir / "plots" / png;
    BOOST_TEST_INFO(p.string());
    BOOST_TEST_REQUIRE(fs::exists(p));
    BOOST_TEST(fs::file_size(p) > 1000u);
  }
}

// A harmonic asked for by name whose band holds no energy (a pure ω field has nothing at 2ω) is
// refused naming --harmonics; left to the defaults it is kept and marked, and nothing is lost.
BOOST_AUTO_TEST_CASE(harmonic_without_energy_is_refused_by_name) {
  edm::test::SyntheticRun s;
  s.nx = s.ny = 9;
  s.samples = 512;  // 16 periods at T/32: the line sits on bin 16
  const double w = 2 * std::numbers::pi * 299792458.0 / s.wavelength;
  const auto dir =
      edm::test::make_synthetic_run("noenergy", s, [&](double, double, double t, double E[3], double B[3]) {
        E[0] = 1e3 * std::sin(w * t), E[1] = E[2] = 0;
        B[0] = B[2] = 0, B[1] = E[0] / 299792458.0;
      });
  const auto ok =
      edm::test::run_command(bin() + " spectrum " + dir.string() + " --window none --harmonics 1");
  BOOST_TEST(ok.exit_code == 0, ok.output);
  const std::string before = slurp(dir / "spectrum.h5");
  const auto r =
      edm::test::run_command(bin() + " spectrum " + dir.string() + " --window none --harmonics 1,2");
  BOOST_TEST_MESSAGE(r.output);
  BOOST_TEST(r.exit_code == 2);
  BOOST_TEST(contains(r.output, "EDM-OAM-010"));
  BOOST_TEST(contains(r.output, "--harmonics"));
  BOOST_TEST(contains(r.output, "harmonic 2"));
  BOOST_TEST(slurp(dir / "spectrum.h5") == before);

  // The library with default harmonics: kept, its rings marked "no energy".
  edm::SpectrumOptions o;
  o.window = edm::Window::None;
  o.harmonics = {1, 2};
  const auto sp = edm::compute_spectrum(edm::RunFolder(dir), o);
  const auto tw = edm::compute_twisted_light(edm::FieldFile::open(dir / "field.h5"), sp, {});
  BOOST_TEST(tw.band_share[1] < edm::kNoEnergyFraction);
  BOOST_TEST_REQUIRE(!tw.fits[2].empty());
  BOOST_TEST(int(tw.fits[2][0].status) == int(edm::RingStatus::NoEnergy));
}
