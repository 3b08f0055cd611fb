// ctest-label: e2e
// `edm spectrum` of an angular run (share/docs/outputs.md, "edm spectrum of an angular run"): one
// electron from rest in a plane-wave pulse, `edm run` with [spectra] enabled on an angular screen at
// infinity (field.h5 holds R·E_far at t − n̂·x), then `edm spectrum --window none` of its field.h5.
// Issue 15's "the direct spectrum agrees with the FFT of the far-field time series": at the FFT's
// bins, |d²I/dωdΩ|^½ of every direction against the run's /direct coherent d²W/dωdΩ at the same ω;
// and Parseval per direction: ∫ d²I/dωdΩ dω = the fluence ε0 c ∫ (R·E × R·B)·n̂ dt (J/sr). And a
// sphere far away (R = 2 m) against infinity: the R² of the sphere's spectrum, fluence and energy.
#define BOOST_TEST_MODULE spectrum_angular
#include <hdf5.h>

#include <boost/test/included/unit_test.hpp>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "spawn.hpp"
#include "test_support.hpp"
#include "h5_read.hpp"

namespace fs = std::filesystem;
using namespace edm;

namespace {

// Window none: the DFT of the record at dt = T/64 is the continuous transform of the far-field
// series up to the trapezoid rule's error on a smooth pulse that starts and ends inside the window
// (spectrally small) and the aliasing of harmonics above Nyquist (32 ω: none at a0 = 0.3). So what
// is left is the field kernel's error against the trajectory the direct quadrature integrates,
// bounded in amplitude by test::tol::field_vs_exact (test_spectra: direct vs the FFT of the device's
// far field). Per bin | |A'| − |A| | ≤ |A' − A|, so the same bound holds for the relative L2 of
// (d²W/dωdΩ)^½ over the ω grid, per direction (measured 1.1e-8 … 2.6e-8 over the four directions).
constexpr double kMagnitudeVsDirect = test::tol::field_vs_exact;
// The ω of an FFT bin and of the direct grid agree to the rounding of ω_L·k/32 and 2πk/(N dt).
constexpr double kSameOmega = 1e-12;

std::string read_string_attr(const fs::path& file, const char* name) {
  const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  BOOST_REQUIRE(f >= 0);
  std::string out;
  if (H5Aexists(f, name) > 0) {
    const hid_t a = H5Aopen(f, name, H5P_DEFAULT);
    const hid_t t = H5Aget_type(a);
    if (H5Tis_variable_str(t) > 0) {
      char* s = nullptr;
      const hid_t mt = H5Tcopy(H5T_C_S1);
      H5Tset_size(mt, H5T_VARIABLE);
      if (H5Aread(a, mt, &s) >= 0 && s) out = s;
      H5free_memory(s);
      H5Tclose(mt);
    } else {
      std::string buf(H5Tget_size(t), '\0');
      H5Aread(a, t, buf.data());
      out = buf.c_str();
    }
    H5Tclose(t);
    H5Aclose(a);
  }
  H5Fclose(f);
  return out;
}

// One thomson electron from rest (a0 = 0.3, τ0 = 2 periods), 64 knots per period; the angular
// screen at infinity looks back along −z: θ = 0 … 0.6 at φ = 0.5 (one row), 2048 samples at T/64, so
// the FFT's bins are ω_k = k ω_L / 32 and the direct grid 0.5 … 4 ω_L in 113 steps of ω_L/32 hits them.
const std::string kCampaign =
    "[run]\nscenario = \"thomson\"\nmode = \"total\"\n[laser]\nprofile = \"plane_wave\"\na0 = 0.3\n"
    "duration = 5.35e-15\n[electrons]\ndistribution = \"sunflower\"\ncount = 1\nradius = 0.0\n"
    "[trajectory]\nknots_per_period = 64\n[screen]\ntype = \"angular\"\ndistance = \"infinity\"\n"
    "axis = \"-z\"\nangles = \"polar\"\ntheta_min = 0.0\ntheta_max = 0.6\nphi_min = 0.0\nphi_max = 1.0\n"
    "nx = 4\nny = 1\nsamples = 2048\nsamples_per_period = 64\n"
    // The quadrature over the spline pieces, so that /direct is independent of the sampled series.
    "[spectra]\nenabled = true\nmethod = \"direct\"\nomega_min = 0.5\nomega_max = 4.0\ncount = 113\n";

// `edm run` of kCampaign at `distance` (a TOML value) into dir/name, then `edm spectrum --window
// none` of it; its stdout.
std::string run_and_analyse(const fs::path& dir, const std::string& name, const std::string& distance) {
  std::string text = kCampaign;
  text.replace(text.find("[run]\n"), 6, "[run]\noutput = \"" + (dir / name).string() + "\"\n");
  text.replace(text.find("distance = \"infinity\"\n"), 22, "distance = " + distance + "\n");
  const auto campaign = test::write_file(dir, name + ".toml", text);
  const auto r = test::run_edm("run " + campaign.string() + " --quiet");
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  const auto s = test::run_edm("spectrum " + (dir / name).string() + " --window none");
  BOOST_REQUIRE_MESSAGE(s.exit_code == 0, s.output);
  BOOST_TEST_MESSAGE(s.output);
  return s.output;
}

double relative_l2_of_roots(const std::vector<double>& a, const std::vector<double>& b) {
  BOOST_REQUIRE_EQUAL(a.size(), b.size());
  double num = 0, den = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double x = std::sqrt(a[i]), y = std::sqrt(b[i]);
    num += (x - y) * (x - y);
    den += x * x;
  }
  BOOST_REQUIRE(den > 0);
  return std::sqrt(num / den);
}

// A sphere of R = 2 m against infinity: R²|E|² tends to |R·E_far|² at first order in 1/R, the
// largest term being the near (velocity) field, 1/(kR) = λ/(2πR) of the far one for the 800 nm
// laser; the electron's excursion changes 1/R and the direction by less (a0/(kR)). Measured 1.1e-8
// (spectrum, ω > 0) and 2.3e-8 (energy per direction), both falling as 1/R from 0.1 m to 100 m.
// The ω = 0 bin is left out: on the sphere it holds the Coulomb field of the charge, which is not
// radiation and has no 1/R limit (R·E of it ∝ 1/R, |R·E_far| none).
constexpr double kSphereRadius = 2.0;  // m (not 1: R² must show)
constexpr double kSphereVsInfinity = 800e-9 / (2 * 3.141592653589793 * kSphereRadius);

}  // namespace

BOOST_AUTO_TEST_CASE(edm_spectrum_of_an_angular_run_matches_the_direct_spectra) {
  const fs::path dir = test::temp_dir("spectrum_angular"), run = dir / "run";
  const std::string out = run_and_analyse(dir, "run", "\"infinity\"");
  BOOST_TEST(out.find("angular screen at infinity") != std::string::npos, out);

  const fs::path file = run / "spectrum.h5";
  BOOST_TEST(read_string_attr(file, "screen_type") == "angular");
  BOOST_TEST(read_string_attr(file, "far_field") == "true");
  const auto w_direct = test::h5_doubles(file, "/direct/axes/omega");  // carried over from edm run
  const auto direct = test::h5_doubles(file, "/direct/coherent/d2W_domega_dOmega");  // (1, 4, nω)
  const auto w_fft = test::h5_doubles(file, "/axes/omega");
  const auto cut = test::h5_doubles(file, "/cut_x/d2I_domega_dOmega");  // (4, nω_fft): the only row
  const auto fluence = test::h5_doubles(file, "/pixel/fluence");        // J/sr at infinity
  const auto energy = test::h5_doubles(file, "/pixel/spectral_energy");
  const auto dir_direct = test::h5_doubles(file, "/direct/axes/direction");
  const auto dir_fft = test::h5_doubles(file, "/axes/direction");
  const std::size_t nd = 4, nw = w_direct.size(), nf = w_fft.size();
  BOOST_REQUIRE_EQUAL(nw, 113u);
  BOOST_REQUIRE_EQUAL(direct.size(), nd * nw);
  BOOST_REQUIRE_EQUAL(cut.size(), nd * nf);
  BOOST_REQUIRE(dir_direct == dir_fft);  // the same directions, in the same order

  const double dw = w_fft[1];
  for (std::size_t d = 0; d < nd; ++d) {
    double num = 0, den = 0;
    for (std::size_t i = 0; i < nw; ++i) {
      const std::size_t k = std::size_t(std::lround(w_direct[i] / dw));
      BOOST_REQUIRE(k < nf);
      BOOST_REQUIRE(std::abs(w_fft[k] / w_direct[i] - 1) < kSameOmega);
      const double a = std::sqrt(direct[d * nw + i]), b = std::sqrt(cut[d * nf + k]);
      num += (a - b) * (a - b);
      den += a * a;
    }
    BOOST_REQUIRE(den > 0);
    const double rel = std::sqrt(num / den);
    BOOST_TEST_MESSAGE("direction " << d << ": (d²W/dωdΩ)^½, FFT of field.h5 vs direct, relative L2 " << rel);
    BOOST_TEST(rel < kMagnitudeVsDirect, "direction " << d);
    // Parseval per direction (window none: discrete Parseval is exact, and B = n̂ × E/c at infinity).
    BOOST_TEST(fluence[d] > 0);
    BOOST_TEST(std::abs(energy[d] / fluence[d] - 1) < test::tol::parseval, "direction " << d);
  }
}

// The sphere's spectrum carries R²: at R = 2 m it is the far field's, per direction, and so are the
// energy per direction and R² times the fluence (J/m² on the sphere, J/sr at infinity).
BOOST_AUTO_TEST_CASE(a_sphere_far_away_gives_the_far_field_spectrum) {
  const fs::path dir = test::temp_dir("spectrum_sphere");
  const std::string far = run_and_analyse(dir, "far", "\"infinity\"");
  const std::string sphere = run_and_analyse(dir, "sphere", std::to_string(kSphereRadius));
  BOOST_TEST(sphere.find("angular screen on a sphere") != std::string::npos, sphere);
  const fs::path a = dir / "far" / "spectrum.h5", b = dir / "sphere" / "spectrum.h5";
  BOOST_TEST(read_string_attr(b, "far_field") == "false");
  const auto cut_a = test::h5_doubles(a, "/cut_x/d2I_domega_dOmega"), cut_b = test::h5_doubles(b, "/cut_x/d2I_domega_dOmega");
  const std::size_t nf = test::h5_doubles(a, "/axes/omega").size();
  std::vector<double> ra, rb;  // ω > 0
  for (std::size_t i = 0; i < cut_a.size(); ++i)
    if (i % nf != 0) ra.push_back(cut_a[i]), rb.push_back(cut_b[i]);
  const double rel = relative_l2_of_roots(ra, rb);
  BOOST_TEST_MESSAGE("(d²I/dωdΩ)^½, sphere of 2 m vs infinity, relative L2 over all directions " << rel);
  BOOST_TEST(rel < kSphereVsInfinity);
  // Energies: Σ F ΔΩ (J/sr at infinity) against Σ F R² ΔΩ (J/m² on the sphere).
  const auto fa = test::h5_doubles(a, "/pixel/fluence"), fb = test::h5_doubles(b, "/pixel/fluence");
  const auto ea = test::h5_doubles(a, "/pixel/spectral_energy"), eb = test::h5_doubles(b, "/pixel/spectral_energy");
  for (std::size_t d = 0; d < fa.size(); ++d) {
    BOOST_TEST(std::abs(fb[d] * kSphereRadius * kSphereRadius / fa[d] - 1) < kSphereVsInfinity, "direction " << d);
    BOOST_TEST(std::abs(eb[d] / ea[d] - 1) < kSphereVsInfinity, "direction " << d);
  }
}
