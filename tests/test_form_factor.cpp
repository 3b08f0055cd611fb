// ctest-label: physics
// The Gaussian form factor (edm/form_factor.hpp, share/docs/ensembles.md) against a direct
// numerical average over a sampled Gaussian bunch: each sampled electron's straight line is
// intersected with the drive's pattern plane (a laser's phase front z − s t = const, or a static
// structure's plane z = const), the reference electron's worldline translated to that event is the
// electron's (the drive is invariant under that translation), and the far-field phase of the
// translated worldline is ω(Δt − n̂·Δr/c). The mean of e^{iωΔφ} over the bunch must be F. Plus the
// limits the formula must have, bad values refused, and the lever L checked without that argument:
// two electrons through the solver and the direct spectra of `edm run`, one displaced by δ.
#define BOOST_TEST_MODULE form_factor
#include <boost/test/unit_test.hpp>
#include <hdf5.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <complex>
#include <functional>
#include <numbers>

#include "edm/ensemble.hpp"
#include "edm/error.hpp"
#include "edm/form_factor.hpp"
#include "edm/units.hpp"
#include "spawn.hpp"
#include "test_support.hpp"
#include "h5_read.hpp"

using namespace edm;

namespace {

struct Sampled {
  double re = 0, im = 0;
};

// ⟨e^{iωΔφ}⟩ over m electrons of the bunch (positions at lab time 0, all moving at β_z ẑ).
Sampled sampled_average(double omega, const double n[3], const GaussianBunch& b, std::uint64_t m) {
  const double c = si::c;
  // The reference electron (δ = 0) meets the drive's plane z − v_d c t = 0 at t = 0, z = 0.
  std::complex<double> sum = 0;
  for (std::uint64_t j = 0; j < m; ++j) {
    PortableRng rng(20261201, j);
    const double dx = b.sigma_r * rng.normal(), dy = b.sigma_r * rng.normal(), dz = b.sigma_z * rng.normal();
    // Electron j: z(t) = dz + β c t. Its meeting with the plane z − v_d c t = 0:
    const double t = dz / ((b.drive_beta - b.beta_z) * c);
    const double z = dz + b.beta_z * c * t;
    // Translation of the reference worldline onto electron j: (Δt, Δx, Δy, Δz) = (t, dx, dy, z).
    const double phase = omega * (t - (n[0] * dx + n[1] * dy + n[2] * z) / c);
    sum += std::polar(1.0, phase);
  }
  sum /= double(m);
  return {sum.real(), sum.imag()};
}

}  // namespace

BOOST_AUTO_TEST_CASE(form_factor_equals_the_sampled_bunch) {
  const std::uint64_t M = 20000;
  const double lambda = 1e-7;  // emitted wavelength, m
  const double omega = 2 * std::numbers::pi * si::c / lambda;
  struct Case {
    const char* what;
    GaussianBunch bunch;
  };
  const Case cases[] = {
      {"Thomson from rest, laser along +z", {2e-8, 1.5e-8, 0.0, +1.0}},
      {"inverse Thomson, laser along -z, beta 0.98", {3e-8, 1e-8, 0.98, -1.0}},
      {"beam along the laser, beta 0.5", {1e-8, 2e-8, 0.5, +1.0}},
      {"static structure, beta 0.9", {1.2e-8, 1e-8, 0.9, 0.0}},
  };
  for (const auto& cs : cases)
    for (double theta : {0.0, 0.4, 1.3, 2.6, std::numbers::pi}) {
      const double n[3] = {std::sin(theta) * std::cos(0.7), std::sin(theta) * std::sin(0.7), std::cos(theta)};
      const double F = gaussian_form_factor(omega, n, cs.bunch);
      const Sampled s = sampled_average(omega, n, cs.bunch, M);
      const double se = std::max((1 - F * F) / std::sqrt(2.0 * M), 1e-12);
      BOOST_TEST_MESSAGE(cs.what << ", θ = " << theta << ": F = " << F << ", sampled " << s.re << " + " << s.im
                                 << "i (" << std::fabs(s.re - F) / se << " σ)");
      BOOST_TEST(F >= 0.0);
      BOOST_TEST(F <= 1.0);
      BOOST_TEST(std::fabs(s.re - F) <= test::tol::form_factor_sampled * se, cs.what << " θ = " << theta);
      // The imaginary part of a centred Gaussian's transform is 0: sin has the same spread bound.
      BOOST_TEST(std::fabs(s.im) <= test::tol::form_factor_sampled * std::sqrt((1 - F * F * F * F) / (2.0 * M)) + 1e-12);
    }
}

BOOST_AUTO_TEST_CASE(form_factor_limits) {
  const double omega = 1e16;
  const double fwd[3] = {0, 0, 1}, back[3] = {0, 0, -1}, side[3] = {1, 0, 0};
  // Thomson from rest, laser along +z: the forward direction stays coherent whatever σ_z (the
  // electrons' light and the laser travel together); backwards the path difference is 2δz.
  const GaussianBunch rest{5e-8, 0.0, 0.0, +1.0};
  BOOST_TEST(gaussian_form_factor(omega, fwd, rest) == 1.0);
  const double k = omega / si::c;
  BOOST_TEST(gaussian_form_factor(omega, back, rest) == std::exp(-0.5 * std::pow(2 * k * 5e-8, 2)),
             boost::test_tools::tolerance(1e-14));
  // No sizes: F = 1 everywhere; ω = 0: F = 1.
  BOOST_TEST(gaussian_form_factor(omega, side, GaussianBunch{0, 0, 0.9, -1}) == 1.0);
  BOOST_TEST(gaussian_form_factor(0.0, back, GaussianBunch{1e-6, 1e-6, 0.9, -1}) == 1.0);
  // Transverse only: exp(−(kσ_r sinθ)²/2).
  BOOST_TEST(gaussian_form_factor(omega, side, GaussianBunch{0, 3e-8, 0.0, 1}) == std::exp(-0.5 * std::pow(k * 3e-8, 2)),
             boost::test_tools::tolerance(1e-14));
  // Inverse Thomson on the axis: L = 2/(1 + β) → the arrival spread σ_z (2/(1 + β))/c.
  const double beta = 0.999;
  BOOST_TEST(form_factor_lever(1.0, GaussianBunch{1, 0, beta, -1}) == -2.0 / (1 + beta),
             boost::test_tools::tolerance(1e-15));
  // A static structure: L = −1/β whatever the direction (the delay δz/(βc) with which an electron
  // reaches it).
  BOOST_TEST(form_factor_lever(0.3, GaussianBunch{1, 0, 0.8, 0}) == -1.0 / 0.8, boost::test_tools::tolerance(1e-15));
}

BOOST_AUTO_TEST_CASE(form_factor_bad_values) {
  const double n[3] = {0, 0, 1}, zero[3] = {0, 0, 0};
  auto refused = [](const std::function<void()>& f) {
    BOOST_CHECK_EXCEPTION(f(), ConfigError, [](const ConfigError& e) { return e.id() == "EDM-CFG-644"; });
  };
  refused([&] { gaussian_form_factor(1e15, n, GaussianBunch{-1e-6, 0, 0, 1}); });
  refused([&] { gaussian_form_factor(1e15, n, GaussianBunch{0, std::nan(""), 0, 1}); });
  refused([&] { gaussian_form_factor(1e15, n, GaussianBunch{0, 0, 1.0, -1}); });
  refused([&] { gaussian_form_factor(1e15, n, GaussianBunch{0, 0, 0.5, 0.5}); });
  refused([&] { gaussian_form_factor(-1.0, n, GaussianBunch{}); });
  refused([&] { gaussian_form_factor(1e15, zero, GaussianBunch{}); });
  refused([&] { laser_driven_bunch(1e-6, 0, 5.0, 0.1, 0); });
}

BOOST_AUTO_TEST_CASE(bunch_of_a_run) {
  // A head-on beam of γ = 5 against a laser along −z: h = γ(1 + β), so β_z = s(γ − h)/γ = β.
  const double g = 5, beta = std::sqrt(1 - 1 / (g * g));
  const GaussianBunch b = laser_driven_bunch(1e-6, 2e-6, g, g * (1 + beta), -1);
  BOOST_TEST(b.beta_z == beta, boost::test_tools::tolerance(1e-15));
  BOOST_TEST(b.drive_beta == -1.0);
  BOOST_TEST(b.sigma_z == 1e-6);
  BOOST_TEST(b.sigma_r == 2e-6);
}

// ---- The lever L through the real solver -----------------------------------------------------
// Independent of the sampled average above (which uses the same translation argument as the
// derivation): two runs of `edm run` with [spectra], one electron each, the second displaced by δ at
// the same lab time (electrons.file, t0 = 0). The solver integrates each in the pulse on its own; the
// direct spectra give each amplitude A(ω, n̂); form_factor.hpp predicts A_δ = e^{iωΔφ} A_0 with
// Δφ = (δz/c) L − n̂⊥·δ⊥/c, L = form_factor_lever(n_z, bunch). Checked along z (the lever) and across.
namespace {

// Relative L2 of A_δ − e^{iωΔφ} A_0 over the grid, per direction; measured at most 1.0e-14 (from
// rest: δz = 0.13 λ, and across) and 7.6e-13 (γ = 2: δz = 0.01 λ, and across, up to ω = 20 ω_L). The
// two tracks are one solution translated, so only the rounding of the translated positions and of
// each quadrature node's phase ω(t − n̂·x) (~ω t ε) differs; 1e-11 leaves a factor 13 above the
// worst. A wrong lever turns the phase by O(1) rad here: the frozen-bunch L = n_z, or β_z left out
// of L at γ = 2 (L = −2 for −1.07: 0.8 rad at the line), fails by about 1e10.
constexpr double kTranslatedTrack = 1e-11;

std::vector<std::complex<double>> read_amplitude(const std::filesystem::path& file) {
  const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  BOOST_REQUIRE(f >= 0);
  const hid_t d = H5Dopen2(f, "/direct/coherent_amplitude", H5P_DEFAULT);
  BOOST_REQUIRE(d >= 0);
  const hid_t sp = H5Dget_space(d);
  std::vector<std::complex<double>> v(std::size_t(H5Sget_simple_extent_npoints(sp)));
  const hid_t ct = H5Tcreate(H5T_COMPOUND, 2 * sizeof(double));
  H5Tinsert(ct, "r", 0, H5T_NATIVE_DOUBLE);
  H5Tinsert(ct, "i", sizeof(double), H5T_NATIVE_DOUBLE);
  BOOST_REQUIRE(H5Dread(d, ct, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()) >= 0);
  H5Tclose(ct);
  H5Sclose(sp);
  H5Dclose(d);
  H5Fclose(f);
  return v;
}

struct LeverCase {
  const char* what;
  std::string scenario;  // thomson: laser along +z; inverse_thomson: along −z
  double uz;             // the electron's initial u_z (γβ)
  std::string screen;    // angular screen at infinity, [screen] lines
  std::string spectra;   // [spectra] lines
};

// One electron at `pos` (m, lab time 0) through `edm run`; its spectrum.h5.
std::filesystem::path run_one(const std::filesystem::path& dir, const std::string& name, const LeverCase& c,
                              const std::array<double, 3>& pos) {
  char row[256];
  std::snprintf(row, sizeof row, "t0,x,y,z,ux,uy,uz\n0,%.17g,%.17g,%.17g,0,0,%.17g\n", pos[0], pos[1], pos[2], c.uz);
  test::write_file(dir, name + ".csv", row);
  const std::string text = "[run]\nscenario = \"" + c.scenario + "\"\nmode = \"total\"\noutput = \"" +
                           (dir / name).string() + "\"\n[laser]\nprofile = \"plane_wave\"\na0 = 0.3\n"
                           "duration = 5.35e-15\n[electrons]\ndistribution = \"list\"\nfile = \"" + name +
                           ".csv\"\n[trajectory]\nknots_per_period = 64\n[screen]\ntype = \"angular\"\n"
                           "distance = \"infinity\"\n" + c.screen +
                           // The quadrature over the spline pieces: kTranslatedTrack is far below the
                           // fft method's accuracy, which is the field kernel's (share/docs/outputs.md).
                           "[spectra]\nenabled = true\nmethod = \"direct\"\n" + c.spectra;
  const auto toml = test::write_file(dir, name + ".toml", text);
  const auto r = test::run_edm("run " + toml.string() + " --quiet");
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, name << ": " << r.output);
  return dir / name / "spectrum.h5";
}

}  // namespace

BOOST_AUTO_TEST_CASE(lever_of_a_displaced_electron_through_the_solver) {
  const double lambda = 800e-9, c = si::c;
  const double g2 = 2.0, u2 = std::sqrt(g2 * g2 - 1);
  const LeverCase cases[] = {
      {"thomson from rest, seen backwards", "thomson", 0.0,
       "axis = \"-z\"\nangles = \"polar\"\ntheta_min = 0.0\ntheta_max = 0.6\nphi_min = 0.0\nphi_max = 1.5\n"
       "nx = 3\nny = 2\nsamples = 1024\nsamples_per_period = 64\n",
       "omega_min = 0.5\nomega_max = 3.0\ncount = 26\n"},
      {"inverse Thomson, gamma 2, seen forwards", "inverse_thomson", u2,
       "axis = \"z\"\nangles = \"polar\"\ntheta_min = 0.0\ntheta_max = 0.3\nphi_min = 0.0\nphi_max = 1.5\n"
       "nx = 3\nny = 2\nsamples = 1024\nsamples_per_period = 512\n",
       "omega_min = 5.0\nomega_max = 20.0\ncount = 31\n"},
  };
  const std::filesystem::path dir = test::temp_dir("form_factor_lever");
  for (const auto& cs : cases) {
    const int s = cs.scenario == "thomson" ? +1 : -1;  // the laser direction
    const double gamma = std::sqrt(1 + cs.uz * cs.uz);
    const GaussianBunch bunch = laser_driven_bunch(0, 0, gamma, gamma - s * cs.uz, s);
    const double dz = (s > 0 ? 0.13 : 0.01) * lambda;
    const std::string tag = cs.scenario;
    const auto base = run_one(dir, tag + "_0", cs, {0, 0, 0});
    const auto a0 = read_amplitude(base);
    const auto omega = test::h5_doubles(base, "/direct/axes/omega");
    const auto n = test::h5_doubles(base, "/direct/axes/direction");
    const std::size_t nw = omega.size(), nd = n.size() / 3;
    BOOST_REQUIRE_EQUAL(a0.size(), nd * nw * 3);
    struct Shift {
      const char* what;
      std::array<double, 3> d;
    };
    for (const Shift& sh : {Shift{"along z", {0, 0, dz}}, Shift{"across", {0.25 * lambda, -0.15 * lambda, 0}}}) {
      const auto ad = read_amplitude(run_one(dir, tag + "_" + (sh.d[2] != 0 ? "z" : "xy"), cs, sh.d));
      BOOST_REQUIRE_EQUAL(ad.size(), a0.size());
      double largest_phase = 0;
      for (std::size_t d = 0; d < nd; ++d) {
        const double* nn = &n[3 * d];
        const double L = form_factor_lever(nn[2], bunch);
        double num = 0, den = 0;
        for (std::size_t k = 0; k < nw; ++k) {
          const double phase = omega[k] * (sh.d[2] * L - (nn[0] * sh.d[0] + nn[1] * sh.d[1])) / c;
          largest_phase = std::max(largest_phase, std::abs(phase));
          const std::complex<double> rot = std::polar(1.0, phase);
          for (int comp = 0; comp < 3; ++comp) {
            const std::size_t i = (d * nw + k) * 3 + comp;
            num += std::norm(ad[i] - rot * a0[i]);
            den += std::norm(a0[i]);
          }
        }
        BOOST_REQUIRE(den > 0);
        const double rel = std::sqrt(num / den);
        BOOST_TEST_MESSAGE(cs.what << ", " << sh.what << ", direction " << d << " (n_z = " << nn[2] << ", L = " << L
                                   << "): |A_δ − e^{iωΔφ} A_0| / |A_0| = " << rel);
        BOOST_TEST(rel < kTranslatedTrack, cs.what << ", " << sh.what << ", direction " << d);
      }
      BOOST_TEST(largest_phase > 0.5, cs.what << ", " << sh.what);  // the shift really turns the phase
    }
  }
}
