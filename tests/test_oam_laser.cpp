// ctest-label: physics
// The laser as an independent reference for the twisted-light analysis (no `edm run`): edm's own
// pulses (physics/laser.cpp, checked against Maxwell's equations by test_laser) sampled on a screen
// plane into a synthetic field.h5. Checks the phase convention and the normalisation of the complex
// amplitude on a plane wave (arg 𝒜_x = −φ0, |𝒜_x| analytic), and on Laguerre–Gauss pulses in their
// far zone: the winding ℓ about the normal in the circular component that carries the beam, the
// angular momentum per photon ωL_z/W = ℓ + σ = −(m + σ_edm) about +ẑ (the laser's e^{+i(ωξ)} carrier
// makes its labels the complex conjugates of the e^{−iωt} analysis: share/docs/twisted_light.md), the
// energy through the screen against the pulse energy, and Parseval for W and L_z.
#define BOOST_TEST_MODULE oam_laser
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <numbers>
#include <sstream>

#include "edm/field_file.hpp"
#include "edm/campaign.hpp"
#include "edm/laser.hpp"
#include "edm/run_manifest.hpp"
#include "edm/twisted_light.hpp"
#include "edm/units.hpp"
#include "edm/writer.hpp"
#include "synthetic_run.hpp"
#include "test_support.hpp"

namespace fs = std::filesystem;
namespace tol = edm::test::tol;
constexpr double kPi = std::numbers::pi;

namespace {

struct Beam {
  std::string profile = "laguerre_gauss", polarization = "circular_minus";
  int p = 0, m = -2, direction = 1;
  double a0 = 0.01, phase = 0, waist = 8e-6, duration = 13.3e-15;
};

// edm's laser of the beam, through the campaign reader (so the test uses the public keys only).
std::unique_ptr<edm::Laser> make(const Beam& b, const edm::Normalization& u) {
  std::ostringstream t;
  t << "[laser]\nprofile = \"" << b.profile << "\"\npolarization = \"" << b.polarization
    << "\"\na0 = " << b.a0 << "\nwaist = " << b.waist << "\nduration = " << b.duration << "\np = " << b.p
    << "\nm = " << b.m << "\nphase = " << b.phase << "\n";
  const edm::Campaign c = edm::parse_campaign(t.str(), "beam.toml", {}, {}, false);
  return edm::make_laser(c.laser, u, b.direction);
}

// A synthetic run holding the laser's field on the screen plane (SI): E = E_unit·E, B = B_unit·B.
fs::path laser_run(const std::string& tag, const Beam& b, edm::test::SyntheticRun s) {
  const auto u = edm::Normalization::from_wavelength(s.wavelength);
  const auto laser = make(b, u);
  s.a0 = b.a0;
  return edm::test::make_synthetic_run(tag, s, [&](double x, double y, double t, double E[3], double B[3]) {
    const double x4[4] = {t / u.time(), x / u.length(), y / u.length(), s.z / u.length()};
    laser->field(x4, E, B);
    for (int c = 0; c < 3; ++c) E[c] *= u.efield(), B[c] *= u.bfield();
  });
}

struct Analysis {
  edm::SpectrumResult spectrum;
  edm::TwistedLightResult twisted;
};
Analysis analyse(const fs::path& dir, edm::Window w, std::vector<double> radii = {}) {
  edm::SpectrumOptions o;
  o.window = w;
  o.harmonics = {1};
  Analysis a;
  a.spectrum = edm::compute_spectrum(edm::RunFolder(dir), o);
  edm::TwistedLightOptions t;
  t.knots_per_period = edm::RunManifest::read(edm::RunFolder(dir)).knots_per_period();
  t.harmonics_explicit = true;
  t.rings.radii = std::move(radii);
  a.twisted = edm::compute_twisted_light(edm::FieldFile::open(dir / "field.h5"), a.spectrum, t);
  return a;
}

}  // namespace

// E_x = E0 g(ξ) cos(ξ + φ0), ξ = ω(t − z/c): Ẽ(ω) = (2π)^{−½} (E0/2) e^{−iφ0} e^{iωz/c} τ0√π, so the
// far-field amplitude at the centre pixel (R = z) is 𝒜_x = z E0 τ0 e^{−iφ0} / (2√2): its phase is
// −φ0 in the e^{−iωt} convention, on either side of the interaction.
BOOST_AUTO_TEST_CASE(phase_convention_of_a_plane_wave) {
  for (int side : {+1, -1}) {
    Beam b;
    b.profile = "plane_wave";
    b.polarization = "linear";
    b.phase = 0.7;
    b.direction = side;
    edm::test::SyntheticRun s;
    s.nx = s.ny = 3;
    s.half_width = 1e-5;
    s.z = side * 1e-3;
    s.samples_per_period = 16;
    s.samples = 960;  // 60 periods, the pulse (τ0 = 5 T) in the middle: e^{−36} at the ends
    s.t_start = -30 * 800e-9 / edm::si::c;
    const auto a = analyse(laser_run(side > 0 ? "pw_plus" : "pw_minus", b, s), edm::Window::None);
    const auto& m = a.twisted.maps;
    BOOST_TEST_REQUIRE(m.omega_bin[0] == a.spectrum.laser_omega, boost::test_tools::tolerance(1e-12));
    const std::complex<double> ax = m.cartesian_map(0, 0)[4];  // centre pixel
    const double E0 = b.a0 * edm::Normalization::from_wavelength(800e-9).efield();
    const double expected = std::abs(s.z) * E0 * b.duration / (2 * std::sqrt(2.0));
    BOOST_TEST_MESSAGE("plane wave (side " << side << "): arg 𝒜_x = " << std::arg(ax) << " (expected "
                                           << -b.phase << "), |𝒜_x| = " << std::abs(ax) << " V·s (expected "
                                           << expected << ")");
    BOOST_TEST(std::abs(std::remainder(std::arg(ax) + b.phase, 2 * kPi)) < tol::spectrum_norm);
    BOOST_TEST(std::abs(ax) / expected == 1.0, boost::test_tools::tolerance(tol::spectrum_norm));
  }
}

// LG_p^m pulses, both directions (the screen downstream of the focus: z > 0 for s = +1, z < 0 for
// s = −1), both polarisations. In the analysis convention (e^{−iωt}, about +ẑ) edm's LG mode has
// ℓ_z = −m and spin σ_z = −σ_edm (σ_edm = ±1 for circular_plus/minus): about the normal ν ẑ the beam
// sits in the circular component σ = −ν σ_edm with winding ℓ = −ν m, and its angular momentum about
// +ẑ is J_z = −(m + σ_edm) per photon on both sides.
BOOST_AUTO_TEST_CASE(laguerre_gauss_winding_and_angular_momentum) {
  struct Case {
    int p, m, sigma_edm, direction;
  };
  for (const Case k : {Case{0, -2, -1, +1}, Case{1, 1, +1, +1}, Case{0, 3, -1, -1}, Case{2, -2, -1, -1}}) {
    Beam b;
    b.p = k.p;
    b.m = k.m;
    b.polarization = k.sigma_edm > 0 ? "circular_plus" : "circular_minus";
    b.direction = k.direction;
    // Far zone of the focus (z_R = π w0²/λ = 0.25 mm): the wavefront is the spherical one the
    // analysis takes out, the beam w(z) ≈ 64 µm, the mode inside ±3 w.
    edm::test::SyntheticRun s;
    s.nx = s.ny = 41;
    s.z = k.direction * 2e-3;
    s.half_width = 2.4e-4;
    s.samples_per_period = 16;
    s.samples = 640;
    s.t_start = -20 * 800e-9 / edm::si::c;
    std::ostringstream tag;
    tag << "lg_p" << k.p << "_m" << k.m << "_s" << k.sigma_edm << "_d" << k.direction;
    const auto a = analyse(laser_run(tag.str(), b, s), edm::Window::Hann, {4e-5, 8e-5, 1.2e-4});
    const int nu = k.direction, sigma = -nu * k.sigma_edm, ell = -nu * k.m;
    const std::size_t si = sigma > 0 ? 0 : 1;
    const auto& fits = a.twisted.fits[si];
    const auto& o = a.twisted.observables;
    const double j = o.band_j_per_photon[0], j_expected = -(k.m + k.sigma_edm);
    std::ostringstream rings;
    for (const auto& f : fits)
      rings << " r=" << f.radius << ": " << edm::ring_status_name(f.status) << " ℓ=" << f.ell_fit;
    BOOST_TEST_MESSAGE(tag.str() << ": component σ=" << sigma << " (predicted ℓ=" << ell << ")" << rings.str()
                                 << "; J per photon " << j << " (predicted " << j_expected << ")");
    std::size_t accepted = 0;
    for (const auto& f : fits) {
      if (f.status != edm::RingStatus::Ok) continue;  // a ring on a radial node of p > 0 is refused
      ++accepted;
      BOOST_TEST(f.winding == ell);
      BOOST_TEST(std::abs(f.ell_fit - ell) < tol::winding_fit);
    }
    BOOST_TEST(accepted >= 2u);
    BOOST_TEST(std::abs(j - j_expected) < tol::lg_photon_j);
    // The other circular component is the paraxial cross-polarisation, orders of magnitude weaker.
    double peak[2] = {0, 0};
    for (std::size_t c = 0; c < 2; ++c)
      for (std::size_t p = 0; p < a.twisted.maps.pixels(); ++p)
        peak[c] = std::max(peak[c], std::abs(a.twisted.maps.circular_map(0, c)[p]));
    BOOST_TEST(peak[1 - si] < 0.05 * peak[si]);
    // Parseval: the bins hold the time-domain totals, and W is the spectrum's energy through the screen.
    BOOST_TEST(o.energy_bins / o.energy_time == 1.0, boost::test_tools::tolerance(tol::parseval));
    BOOST_TEST(o.lz_bins / o.lz_time == 1.0, boost::test_tools::tolerance(tol::parseval));
    BOOST_TEST(o.energy_time == a.spectrum.total_energy);
    // The pulse energy of laser.cpp's normalisation, U = ½ ε0 c E0² (π w0²/2) (p+|m|)!/p! τ0 √(π/2),
    // crosses the far plane (to the paraxial O(θ²) and the envelope's O(1/(ωτ0)²)).
    double mode = 1;
    for (int q = k.p + 1; q <= k.p + std::abs(k.m); ++q) mode *= q;
    const double E0 = b.a0 * edm::Normalization::from_wavelength(800e-9).efield();
    const double U = 0.5 * edm::si::eps0 * edm::si::c * E0 * E0 * kPi * b.waist * b.waist / 2 * mode *
                     b.duration * std::sqrt(kPi / 2);
    BOOST_TEST_MESSAGE("  energy through the screen " << o.energy_time << " J, pulse energy " << U << " J");
    BOOST_TEST(o.energy_time / U == 1.0, boost::test_tools::tolerance(tol::lg_pulse_energy));
  }
}

// Threads and slab sizes do not change a bit of the results (rows are independent, screen sums are
// added row by row in order), and a one-pixel screen — no rings, no envelope — still writes a whole
// spectrum.h5.
BOOST_AUTO_TEST_CASE(threads_slabs_and_a_one_pixel_screen) {
  Beam b;
  b.p = 1;
  b.m = 1;
  edm::test::SyntheticRun s;
  s.nx = 9;
  s.ny = 7;
  s.z = 2e-3;
  s.half_width = 2.4e-4;
  s.samples_per_period = 16;
  s.samples = 320;
  s.t_start = -10 * 800e-9 / edm::si::c;
  const auto dir = laser_run("threads", b, s);
  edm::SpectrumOptions o;
  o.harmonics = {1};
  const auto sp = edm::compute_spectrum(edm::RunFolder(dir), o);
  edm::TwistedLightOptions one, many;
  one.threads = 1;
  one.slab_bytes = 1;  // one row per slab
  many.threads = 3;
  const auto a = edm::compute_twisted_light(edm::FieldFile::open(dir / "field.h5"), sp, one);
  const auto c = edm::compute_twisted_light(edm::FieldFile::open(dir / "field.h5"), sp, many);
  BOOST_TEST(a.maps.cartesian == c.maps.cartesian);
  BOOST_TEST(a.observables.dW_domega == c.observables.dW_domega);
  BOOST_TEST(a.observables.dLz_domega == c.observables.dLz_domega);
  BOOST_TEST(a.observables.band_lz_density == c.observables.band_lz_density);
  BOOST_TEST(a.observables.lz_time == c.observables.lz_time);
  BOOST_TEST(a.observables.energy_time == sp.total_energy);

  s.nx = s.ny = 1;
  const auto dot = laser_run("onepixel", b, s);
  const auto sp1 = edm::compute_spectrum(edm::RunFolder(dot), o);
  const auto t1 = edm::compute_twisted_light(edm::FieldFile::open(dot / "field.h5"), sp1, {});
  BOOST_TEST(t1.rings.radii.empty());
  {
    auto out = edm::SpectrumWriter::open(dot / "spectrum.h5", edm::SpectrumPart::Analysis);
    edm::write_spectrum_with_twisted_light(out, sp1, t1);
    out.commit();
  }
  BOOST_TEST(fs::exists(dot / "spectrum.h5"));
  BOOST_TEST(!fs::exists(dot / "spectrum.h5.partial"));
  BOOST_TEST(edm::read_dataset_1d(dot / "spectrum.h5", "/oam/radius").empty());
}
