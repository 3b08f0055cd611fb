// ctest-label: physics
// Energy balance (share/docs/design.md): the Poynting flux of the radiation field through each pixel of the
// screen, projected on the screen normal and integrated over observer time, equals the Larmor–
// Liénard energy radiated into that pixel's solid angle, integrated over emission time on the
// trajectory (host, Simpson on a fine grid). The identity is exact pointwise (dt_obs = (1 − n̂·β)dt'),
// so the test measures the kernel's sampling and the window: with the whole pulse inside the window
// at every pixel and T/64 sampling the two agree to tol::energy_balance.
#define BOOST_TEST_MODULE energy_balance
#include <boost/test/unit_test.hpp>

#include <cmath>

#include "edm/accumulator.hpp"
#include "edm/campaign.hpp"
#include "edm/device.hpp"
#include "edm/run.hpp"
#include "test_support.hpp"

using namespace edm;

BOOST_AUTO_TEST_CASE(poynting_flux_through_the_screen_equals_larmor_lienard) {
  const auto registry = PluginRegistry::discover();
  // One electron from rest in a linearly polarised plane-wave pulse, a screen 1 mm downstream.
  const char* text = R"(
[run]
scenario = "thomson"
mode = "split"
[laser]
profile = "plane_wave"
a0 = 0.5
duration = 5.3e-15
[electrons]
distribution = "sunflower"
count = 1
radius = 0.0
[trajectory]
knots_per_period = 64
[screen]
distance = 1e-3
half_width = 5e-5
nx = 5
ny = 5
samples = 2048
samples_per_period = 64
)";
  const Campaign c = parse_campaign(text, "energy.toml", {}, registry.get("thomson").keys(), false);
  PreparedCell cell(c, registry);
  const SplineBatch batch = cell.solve(0, 1);
  const Screen& s = cell.screen();
  FieldAccumulator acc(open_device(select_devices("0").front()), s, Mode::Split, KernelOptions{});
  acc.accumulate(batch);
  const std::size_t P = s.pixels(), K = std::size_t(s.samples);
  std::vector<double> Ef(3 * P * K), Bf(3 * P * K);  // [comp][pixel][k]
  acc.finish([&](int b, int comp, int y0, int y1, const double* d) {
    if (b < 2) return;
    auto& dst = b == 2 ? Ef : Bf;
    std::copy(d, d + std::size_t(y1 - y0) * s.nx * K, dst.begin() + (comp * P + std::size_t(y0) * s.nx) * K);
  });

  const auto& e = batch.electrons[0];
  double total_flux = 0, total_larmor = 0, worst = 0;
  for (int iy = 0; iy < s.ny; ++iy)
    for (int ix = 0; ix < s.nx; ++ix) {
      const std::size_t p = std::size_t(iy) * s.nx + ix;
      // ∫ (E_far × B_far)·ẑ dt_obs, trapezoid (the pulse is zero at both ends of the window).
      double flux = 0;
      for (std::size_t k = 0; k < K; ++k) {
        const double ex = Ef[p * K + k], ey = Ef[(P + p) * K + k];
        const double bx = Bf[p * K + k], by = Bf[(P + p) * K + k];
        flux += (ex * by - ey * bx) * s.dt;
      }
      // Larmor–Liénard: ∫ |n×((n−β)×β̇)|² (n·ẑ) / ((1−n·β)⁵ R²) dt', Simpson over the spline in τ.
      const double px = s.pixel_x(ix), py = s.pixel_y(iy), Z = s.z;
      auto integrand = [&](double tau) {
        double y[kSplineComponents];
        batch.eval(0, tau, y);
        const double g = y[4];
        double n[3] = {px - y[1], py - y[2], Z - y[3]};
        const double R = std::sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
        for (double& v : n) v /= R;
        const double beta[3] = {y[5] / g, y[6] / g, y[7] / g};
        double bdot[3];
        for (int i = 0; i < 3; ++i) bdot[i] = (y[9 + i] * g - y[5 + i] * y[8]) / (g * g * g);
        const double nb = n[0] * beta[0] + n[1] * beta[1] + n[2] * beta[2];
        const double m[3] = {n[0] - beta[0], n[1] - beta[1], n[2] - beta[2]};
        const double c1[3] = {m[1] * bdot[2] - m[2] * bdot[1], m[2] * bdot[0] - m[0] * bdot[2],
                              m[0] * bdot[1] - m[1] * bdot[0]};
        const double c2[3] = {n[1] * c1[2] - n[2] * c1[1], n[2] * c1[0] - n[0] * c1[2], n[0] * c1[1] - n[1] * c1[0]};
        const double w = c2[0] * c2[0] + c2[1] * c2[1] + c2[2] * c2[2];
        return w * n[2] / (std::pow(1 - nb, 5) * R * R) * g;  // dt' = γ dτ
      };
      const int M = 200000;  // Simpson, even
      const double a = e.tau0, b = e.tau_end(), h = (b - a) / M;
      double sum = integrand(a) + integrand(b);
      for (int i = 1; i < M; ++i) sum += (i % 2 ? 4 : 2) * integrand(a + i * h);
      const double larmor = sum * h / 3;
      total_flux += flux;
      total_larmor += larmor;
      worst = std::max(worst, std::abs(flux - larmor) / larmor);
    }
  const double rel = std::abs(total_flux - total_larmor) / total_larmor;
  BOOST_TEST_MESSAGE("energy through the screen vs Larmor–Liénard into its solid angle: relative difference "
                     << rel << " (worst pixel " << worst << ")");
  BOOST_TEST(total_larmor > 0);
  BOOST_TEST(rel < test::tol::energy_balance);
  BOOST_TEST(worst < test::tol::energy_balance);
}
