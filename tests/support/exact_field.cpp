// The exact-trajectory field reference shared by test_field_exact and test_far_field (exact_field.hpp).
#include "exact_field.hpp"

#include <algorithm>
#include <cmath>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_roots.h>

#include <boost/test/unit_test.hpp>

#include "edm/accumulator.hpp"
#include "edm/device.hpp"
#include "test_support.hpp"

namespace edm::test {

ExactElectron exact_electron(const Campaign& c, const PreparedCell& prepared, const SplineBatch& batch) {
  ExactElectron e;
  double y0[kSplineComponents];
  batch.eval(0, batch.electrons[0].tau0, y0);
  e.laser = make_laser(c.laser, prepared.units(), prepared.plugin_scenario().laser_direction());
  e.tau_hi = batch.electrons[0].tau_end() - batch.electrons[0].tau0;
  const int s = e.laser->direction();
  e.orbit = std::make_unique<ExactPlaneWave>(*e.laser, y0, y0[0] - s * y0[3] + ((y0[4] - s * y0[7]) * e.tau_hi) + 1.0);
  return e;
}

double retarded_tau(const std::function<double(double)>& f, double tau_lo, double tau_hi) {
  gsl_function F;
  F.function = [](double tau, void* v) { return (*static_cast<const std::function<double(double)>*>(v))(tau); };
  F.params = const_cast<std::function<double(double)>*>(&f);
  gsl_root_fsolver* s = gsl_root_fsolver_alloc(gsl_root_fsolver_brent);
  gsl_root_fsolver_set(s, &F, tau_lo, tau_hi);
  double tau = 0;
  for (int it = 0; it < 200; ++it) {
    gsl_root_fsolver_iterate(s);
    tau = gsl_root_fsolver_root(s);
    if (gsl_root_test_interval(gsl_root_fsolver_x_lower(s), gsl_root_fsolver_x_upper(s), 1e-15, 1e-15) == GSL_SUCCESS)
      break;
  }
  gsl_root_fsolver_free(s);
  return tau;
}

ExactMotion exact_motion(const ExactElectron& e, double tau) {
  ExactMotion m;
  m.y = e.orbit->state(tau);
  const auto& y = m.y;
  const int sdir = e.laser->direction();
  const double x4[4] = {y[0] - sdir * y[3], 0, 0, 0};
  double E[3], B[3];
  e.laser->field(x4, E, B);
  const double h = e.orbit->h();
  const double ax = -h * E[0], ay = -h * E[1];
  const double a0 = (y[5] * ax + y[6] * ay) / h;
  const double g = y[4];
  const double avec[3] = {ax, ay, sdir * a0};
  for (int i = 0; i < 3; ++i) {
    m.beta[i] = y[5 + i] / g;
    m.bdot[i] = (avec[i] * g - y[5 + i] * a0) / (g * g * g);
  }
  return m;
}

// The textbook far field of the exact motion at the root of t_rel = t(τ) − n̂·x(τ).
std::array<double, 3> exact_far_field(const ExactElectron& e, const std::array<double, 3>& n, double t_rel) {
  const double tau = retarded_tau(
      [&](double tau) {
        const auto y = e.orbit->state(tau);
        return t_rel - (y[0] - (n[0] * y[1] + n[1] * y[2] + n[2] * y[3]));  // decreasing in τ
      },
      0.0, e.tau_hi);
  const ExactMotion m = exact_motion(e, tau);
  const auto& beta = m.beta;
  const auto& bdot = m.bdot;
  double nmb[3];
  for (int i = 0; i < 3; ++i) nmb[i] = n[i] - beta[i];
  const double k3 = std::pow(1 - (n[0] * beta[0] + n[1] * beta[1] + n[2] * beta[2]), 3);
  const double c1[3] = {nmb[1] * bdot[2] - nmb[2] * bdot[1], nmb[2] * bdot[0] - nmb[0] * bdot[2],
                        nmb[0] * bdot[1] - nmb[1] * bdot[0]};
  return {(n[1] * c1[2] - n[2] * c1[1]) / k3, (n[2] * c1[0] - n[0] * c1[2]) / k3, (n[0] * c1[1] - n[1] * c1[0]) / k3};
}

std::array<double, 3> exact_screen_field(const ExactElectron& e, double px, double py, double Z, double t) {
  const double tau = retarded_tau(
      [&](double tau) {
        const auto y = e.orbit->state(tau);
        const double dx = px - y[1], dy = py - y[2], dz = Z - y[3];
        return t - y[0] - std::sqrt(dx * dx + dy * dy + dz * dz);  // plain light cone, decreasing in τ
      },
      0.0, e.tau_hi);
  const ExactMotion m = exact_motion(e, tau);
  const auto& y = m.y;
  const auto& beta = m.beta;
  const auto& bdot = m.bdot;
  const double g = y[4];
  double n[3] = {px - y[1], py - y[2], Z - y[3]};
  const double R = std::sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
  for (double& c : n) c /= R;
  const double nb = n[0] * beta[0] + n[1] * beta[1] + n[2] * beta[2];
  const double k3 = std::pow(1 - nb, 3);
  double nmb[3];
  for (int i = 0; i < 3; ++i) nmb[i] = n[i] - beta[i];
  // n × ((n − β) × β̇)
  const double c1[3] = {nmb[1] * bdot[2] - nmb[2] * bdot[1], nmb[2] * bdot[0] - nmb[0] * bdot[2],
                        nmb[0] * bdot[1] - nmb[1] * bdot[0]};
  const double c2[3] = {n[1] * c1[2] - n[2] * c1[1], n[2] * c1[0] - n[0] * c1[2], n[0] * c1[1] - n[1] * c1[0]};
  std::array<double, 3> out{};
  for (int i = 0; i < 3; ++i) out[i] = nmb[i] / (g * g * k3 * R * R) + c2[i] / (k3 * R);
  return out;
}

std::vector<double> kernel_cube(const Screen& screen, const SplineBatch& batch, const KernelOptions& ko) {
  FieldAccumulator acc(open_device(select_devices("0").front()), screen, Mode::Total, ko);
  acc.accumulate(batch);
  std::vector<double> Ek(3 * screen.pixels() * screen.samples);
  acc.finish([&](int b, int comp, int y0, int y1, const double* d) {
    if (b != 0) return;
    const std::size_t row = std::size_t(screen.nx) * screen.samples;
    std::copy(d, d + row * (y1 - y0), Ek.begin() + (std::size_t(comp) * screen.ny + y0) * row);
  });
  return Ek;
}

double relative_l2_vs_reference(const std::vector<double>& Ek, const Screen& screen,
                                const std::function<std::array<double, 3>(int ix, int iy, int k)>& field) {
  std::vector<double> Er(Ek.size());
  for (int iy = 0; iy < screen.ny; ++iy)
    for (int ix = 0; ix < screen.nx; ++ix)
      for (int k = 0; k < screen.samples; ++k) {
        const auto e = field(ix, iy, k);
        for (int comp = 0; comp < 3; ++comp)
          Er[((std::size_t(comp) * screen.ny + iy) * screen.nx + ix) * screen.samples + k] = e[comp];
      }
  double norm = 0;
  for (double v : Er) norm += v * v;
  BOOST_REQUIRE(norm > 0);
  return relative_l2(Ek, Er);
}

}  // namespace edm::test
