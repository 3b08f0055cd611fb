// ctest-label: physics
// The Gaussian form factor (edm/form_factor.hpp, share/docs/ensembles.md) against a direct
// numerical average over a sampled Gaussian bunch: each sampled electron's straight line is
// intersected with the drive's pattern plane (a laser's phase front z − s t = const, or a static
// structure's plane z = const), the reference electron's worldline translated to that event is the
// electron's (the drive is invariant under that translation), and the far-field phase of the
// translated worldline is ω(Δt − n̂·Δr/c). The mean of e^{iωΔφ} over the bunch must be F. Plus the
// limits the formula must have, and bad values refused.
#define BOOST_TEST_MODULE form_factor
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <complex>
#include <functional>
#include <numbers>

#include "edm/ensemble.hpp"
#include "edm/error.hpp"
#include "edm/form_factor.hpp"
#include "edm/units.hpp"
#include "test_support.hpp"

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
