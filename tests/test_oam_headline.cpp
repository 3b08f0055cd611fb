// ctest-label: physics
// The headline ℓ of a component (issue 29): it comes only from rings that pass the quality cuts.
// - A ring in the dark core of a vortex, where another field fills the core, still winds like the
//   vortex but its phase is not a line (residual ~0.7 rad): it is left out, and the headline is the
//   resolved rings' ℓ (the old mean took its biased slope in).
// - A ring that winds differently from the others is not averaged in; two rings that disagree give
//   no ℓ at all ("no common winding").
// - A weak component whose whole amplitude lies below the noise floor of the field cube (the
//   floor is absolute: the cube's estimated error times the strongest map's peak, from the run's
//   knots per period) gives no ℓ; the same field marked as a 64-knot run is above that floor and
//   gives its ℓ. Through the library and through `edm spectrum` (the line and /oam).
#define BOOST_TEST_MODULE oam_headline
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <complex>
#include <fstream>
#include <iterator>
#include <numbers>

#include "edm/field_file.hpp"
#include "edm/harmonics.hpp"
#include "edm/oam.hpp"
#include "edm/run_manifest.hpp"
#include "edm/twisted_light.hpp"
#include "edm/writer.hpp"
#include "synthetic_run.hpp"
#include "oam_maps.hpp"
#include "test_support.hpp"

namespace fs = std::filesystem;
namespace tol = edm::test::tol;
using cd = std::complex<double>;
constexpr double kPi = std::numbers::pi;

namespace {

using edm::test::contains;
edm::GridGeometry grid(std::size_t n, double half) { return edm::test::square_grid(n, half); }
// A map of f(r, φ) (polar about the grid's centre) on its pixel centres.
template <class F>
std::vector<cd> sample(const edm::GridGeometry& g, F f) {
  return edm::test::sample_map(g, [&](double x, double y) { return f(std::hypot(x, y), std::atan2(y, x)); });
}

// The vortex (r/w)^4 e^{−r²/w²} e^{4iφ}, w = 0.5.
double lg4(double r) { return std::pow(r / 0.5, 4) * std::exp(-r * r / 0.25); }

std::vector<edm::RingFit> fit(const std::vector<cd>& m, const edm::GridGeometry& g, std::vector<double> radii) {
  std::vector<edm::RingFit> fits;
  for (double r : radii) fits.push_back(edm::fit_ring(m.data(), g, 1, 0, 0, r, 1024, 1e-3 * 0.54, 0.95));
  return fits;
}

}  // namespace

// The core of an ℓ = 4 vortex holds a flat field, 0.9 of the vortex's amplitude on the inner ring
// and gone (e^{−9}) by the next: that ring still winds 4 times (the vortex is the larger term
// everywhere on it), but its phase swings by up to asin 0.9 about the line and its slope is off.
BOOST_AUTO_TEST_CASE(dark_core_ring_is_left_out) {
  const auto g = grid(65, 1.0);
  const double fill = 0.9 * lg4(0.2) / std::exp(-std::pow(0.2 / 0.15, 2));
  const auto m = sample(g, [&](double r, double phi) {
    return lg4(r) * std::polar(1.0, 4 * phi) + fill * std::exp(-std::pow(r / 0.15, 2));
  });
  auto fits = fit(m, g, {0.2, 0.45, 0.6});
  for (const auto& f : fits)
    BOOST_TEST_MESSAGE("r = " << f.radius << ": winding " << f.winding << ", ℓ_fit " << f.ell_fit << ", residual "
                              << f.residual_rms << " rad, " << edm::ring_status_name(f.status));
  // The setup: every fit is accepted and winds 4 times; the inner ring's phase is not a line.
  for (const auto& f : fits) {
    BOOST_TEST_REQUIRE(int(f.status) == int(edm::RingStatus::Ok));
    BOOST_TEST_REQUIRE(f.winding == 4);
  }
  BOOST_TEST_REQUIRE(fits[0].residual_rms > 0.5);
  // Its slope is off by more than three times the tolerance: a mean over the three rings misses by more
  // than the tolerance.
  BOOST_TEST_REQUIRE(std::abs(fits[0].ell_fit - 4) > 3 * tol::winding_fit);
  const auto s = edm::summarise_rings(fits);
  BOOST_TEST_MESSAGE("headline ℓ = " << s.ell << " (the resolved rings: " << fits[1].ell_fit << ", "
                                     << fits[2].ell_fit << ")");
  BOOST_TEST(s.winding == 4);
  BOOST_TEST(std::abs(s.ell - 4) < tol::winding_fit);
  BOOST_TEST(s.ell == (fits[1].ell_fit + fits[2].ell_fit) / 2, boost::test_tools::tolerance(1e-14));
}

// An ℓ = 3 ring at r = 0.75 (a narrow lobe 100 times the ℓ = 4 vortex there) among ℓ = 4 rings: with
// two ℓ = 4 rings it is left out of the mean; alone against one ℓ = 4 ring there is no common winding.
BOOST_AUTO_TEST_CASE(a_ring_winding_otherwise_is_not_averaged) {
  const auto g = grid(65, 1.0);
  const auto m = sample(g, [&](double r, double phi) {
    return lg4(r) * std::polar(1.0, 4 * phi) +
           100 * lg4(0.75) * std::exp(-std::pow((r - 0.75) / 0.08, 2)) * std::polar(1.0, 3 * phi);
  });
  auto three = fit(m, g, {0.3, 0.45, 0.75});
  BOOST_TEST_REQUIRE(three[0].winding == 4);
  BOOST_TEST_REQUIRE(three[1].winding == 4);
  BOOST_TEST_REQUIRE(three[2].winding == 3);
  for (const auto& f : three) BOOST_TEST_REQUIRE(f.residual_rms < 0.1);
  const auto s = edm::summarise_rings(three);
  BOOST_TEST_MESSAGE("rings 4, 4, 3: headline ℓ = " << s.ell);
  BOOST_TEST(s.winding == 4);
  BOOST_TEST(!s.consistent);
  BOOST_TEST(std::abs(s.ell - 4) < tol::winding_fit);

  auto two = fit(m, g, {0.45, 0.75});
  const auto d = edm::summarise_rings(two);
  BOOST_TEST_MESSAGE("rings 4, 3: headline ℓ = " << d.ell);
  BOOST_TEST(!d.consistent);
  BOOST_TEST(std::isnan(d.ell));
}

namespace {

// A synthetic run: a strong flat fundamental polarised along x, a second harmonic whose σ = +1
// component is flat at 1e-2 of the fundamental and whose σ = −1 component is an ℓ = 3 vortex of
// peak `weak` of the fundamental (both circular about +ẑ, the e^{−iωt} convention). Each is a
// spherical wave from the origin, t → t − (R − |z|)/c, whose phase the maps take out (harmonics.hpp):
// a plane wave would turn by ωρ²/(2c|z|) across the screen, several radians a pixel here.
fs::path weak_vortex_run() {
  edm::test::SyntheticRun s;
  s.nx = s.ny = 33;
  s.half_width = 1e-3;
  s.samples = 512;  // 16 periods at T/32: the fundamental on bin 16, the 2nd harmonic on bin 32
  const double w = 2 * kPi * 299792458.0 / s.wavelength, E0 = 1e3, weak = 1e-6, waist = 5e-4;
  return edm::test::make_synthetic_run("weak", s, [&](double x, double y, double t_abs, double E[3], double B[3]) {
    const double r = std::hypot(x, y), phi = std::atan2(y, x);
    const double t = t_abs - (std::hypot(r, s.z) - s.z) / 299792458.0;
    const double a = weak * E0 * std::pow(r / waist, 3) * std::exp(-r * r / (waist * waist)) / 0.41;
    // Re[a e^{i(3φ − 2ωt)} e_−] with e_− = (x̂ − iŷ)/√2, and Re[0.01 E0 e^{−2iωt} e_+].
    const double ph = 3 * phi - 2 * w * t, flat = 0.01 * E0;
    E[0] = E0 * std::cos(w * t) + (a * std::cos(ph) + flat * std::cos(2 * w * t)) / std::sqrt(2.0);
    E[1] = (a * std::sin(ph) + flat * std::sin(2 * w * t)) / std::sqrt(2.0);
    E[2] = 0;
    B[0] = -E[1] / 299792458.0, B[1] = E[0] / 299792458.0, B[2] = 0;
  });
}

// Marks the run as made with `knots` knots per period ([config] of run.toml).
void set_knots(const fs::path& dir, int knots) {
  std::ifstream in(dir / "run.toml");
  std::string text((std::istreambuf_iterator<char>(in)), {}), line = "knots_per_period = ";
  in.close();
  const auto at = text.find(line);
  if (at != std::string::npos) text.erase(at, text.find('\n', at) + 1 - at);
  text.insert(text.find("[config]\n") + 9, line + std::to_string(knots) + "\n");
  std::ofstream(dir / "run.toml") << text;
}

edm::TwistedLightResult analyse(const fs::path& dir, std::vector<int> harmonics = {1, 2}) {
  edm::SpectrumOptions o;
  o.window = edm::Window::None;
  o.harmonics = std::move(harmonics);
  const auto sp = edm::compute_spectrum(edm::RunFolder(dir), o);
  edm::TwistedLightOptions t;
  t.knots_per_period = edm::RunManifest::read(edm::RunFolder(dir)).knots_per_period();
  t.rings.radii = {4e-4, 6e-4};
  return edm::compute_twisted_light(edm::FieldFile::open(dir / "field.h5"), sp, t);
}

}  // namespace

BOOST_AUTO_TEST_CASE(weak_component_below_the_noise_floor_has_no_ell) {
  const fs::path dir = weak_vortex_run();
  set_knots(dir, 16);
  const auto lo = analyse(dir);
  const std::size_t weak = 1 * 2 + 1;  // harmonic 2, σ = −1
  const double peak = lo.strongest_peak;
  double weak_peak = 0;
  for (std::size_t p = 0; p < lo.maps.pixels(); ++p)
    weak_peak = std::max(weak_peak, std::abs(lo.maps.circular_map(1, 1)[p]));
  BOOST_TEST_MESSAGE("16 knots: weak component's peak " << weak_peak / peak << " of the strongest map, noise floor "
                                                        << lo.noise_floor / peak << "; headline ℓ "
                                                        << lo.summary[weak].ell);
  // The floor is 4 × 8e-6 of the strongest map (the fundamental, E0/√2 in either component).
  BOOST_TEST(lo.knots_per_period == 16);
  BOOST_TEST(lo.noise_floor / peak == edm::kNoiseMargin * edm::kCubeErrorAt16, boost::test_tools::tolerance(1e-12));
  BOOST_TEST_REQUIRE(weak_peak < lo.noise_floor);
  BOOST_TEST(std::isnan(lo.summary[weak].ell));
  BOOST_TEST(lo.summary[weak].passed == 0u);
  for (const auto& f : lo.fits[weak]) BOOST_TEST(int(f.cut) == int(edm::RingCut::BelowNoise));
  // The strong components keep their ℓ = 0.
  BOOST_TEST(std::abs(lo.summary[0].ell) < tol::winding_fit);
  BOOST_TEST(std::abs(lo.summary[2].ell) < tol::winding_fit);

  // The floor does not depend on the harmonics asked for: with the 2nd alone (whose strongest
  // component is 1e-2 of the fundamental) it is still set by the fundamental, and there is no ℓ.
  const auto second = analyse(dir, {2});
  BOOST_TEST(second.strongest_peak == peak, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(second.noise_floor == lo.noise_floor, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(std::isnan(second.summary[1].ell));

  // Through the command line: the line says so and /oam records it.
  const auto r = edm::test::run_command(edm::test::edm_binary().string() + " spectrum " + dir.string() +
                                        " --window none --harmonics 1,2 --ring-radii 4e-4,6e-4");
  BOOST_TEST_MESSAGE(r.output);
  BOOST_TEST(r.exit_code == 0);
  BOOST_TEST(contains(r.output, "σ=-1 no ℓ: no ring of 2 passes (2 below the noise floor)"));
  BOOST_TEST(contains(r.output, "(winding +0 on 2 of 2 rings)"));
  const auto ell = edm::read_dataset_1d(dir / "spectrum.h5", "/oam/ell");
  const auto cut = edm::read_dataset_1d(dir / "spectrum.h5", "/oam/cut");
  const auto passed = edm::read_dataset_1d(dir / "spectrum.h5", "/oam/passed");
  BOOST_TEST_REQUIRE(ell.size() == 4u);
  BOOST_TEST(std::isnan(ell[weak]));
  BOOST_TEST(passed[weak] == 0.0);
  BOOST_TEST_REQUIRE(cut.size() == 8u);
  BOOST_TEST(cut[weak * 2] == double(int(edm::RingCut::BelowNoise)));
  BOOST_TEST(cut[weak * 2 + 1] == double(int(edm::RingCut::BelowNoise)));

  // The same field from a 64-knot run: the floor is (64/16)⁴ = 256 times lower and the vortex is above it.
  set_knots(dir, 64);
  const auto hi = analyse(dir);
  BOOST_TEST_MESSAGE("64 knots: noise floor " << hi.noise_floor / peak << "; headline ℓ " << hi.summary[weak].ell);
  BOOST_TEST(hi.noise_floor / lo.noise_floor == 1.0 / 256, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(hi.summary[weak].passed == 2u);
  BOOST_TEST(hi.summary[weak].winding == 3);
  BOOST_TEST(std::abs(hi.summary[weak].ell - 3) < tol::winding_fit);
}
