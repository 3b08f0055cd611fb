// Analytic worldlines and their quintic-Hermite splines in the device layout (see analytic_splines.hpp).
#include "analytic_splines.hpp"

#include <cmath>
#include <stdexcept>

#include "edm/coverage.hpp"

namespace edm::test {

Worldline static_charge(double x, double y, double z) {
  return [=](double tau, double s[8], double a[4], double da[4]) {
    const double v[8] = {tau, x, y, z, 1, 0, 0, 0};
    for (int i = 0; i < 8; ++i) s[i] = v[i];
    for (int i = 0; i < 4; ++i) a[i] = da[i] = 0;
  };
}

Worldline uniform_motion(std::array<double, 3> x0, std::array<double, 3> u) {
  const double g = std::sqrt(1 + u[0] * u[0] + u[1] * u[1] + u[2] * u[2]);
  return [=](double tau, double s[8], double a[4], double da[4]) {
    const double v[8] = {g * tau, x0[0] + u[0] * tau, x0[1] + u[1] * tau, x0[2] + u[2] * tau, g, u[0], u[1], u[2]};
    for (int i = 0; i < 8; ++i) s[i] = v[i];
    for (int i = 0; i < 4; ++i) a[i] = da[i] = 0;
  };
}

Worldline helical_orbit(double r, double omega, double beta_z) {
  const double bp = omega * r;
  const double g = 1.0 / std::sqrt(1 - bp * bp - beta_z * beta_z);
  const double w = omega * g;  // dφ/dτ
  return [=](double tau, double s[8], double a[4], double da[4]) {
    const double phi = w * tau, c = std::cos(phi), sn = std::sin(phi);
    const double v[8] = {g * tau, r * c, r * sn, g * beta_z * tau, g, -g * bp * sn, g * bp * c, g * beta_z};
    for (int i = 0; i < 8; ++i) s[i] = v[i];
    a[0] = 0, a[1] = -g * bp * w * c, a[2] = -g * bp * w * sn, a[3] = 0;
    da[0] = 0, da[1] = g * bp * w * w * sn, da[2] = -g * bp * w * w * c, da[3] = 0;
  };
}

Worldline plane_wave_orbit(double ax, double ay, double h, int s_in, double phase, std::array<double, 3> off) {
  const double s = s_in >= 0 ? 1.0 : -1.0;
  // u⊥² = M + K cos 2φ with M = (ax² + ay²)/2, K = (ay² − ax²)/2; γ = (1 + u⊥² + h²)/(2h);
  // t = ∫γ dτ, and t − s z = h τ (light-front momentum), so z = s (t − h τ).
  const double M = 0.5 * (ax * ax + ay * ay), K = 0.5 * (ay * ay - ax * ax);
  const double g0 = (1 + h * h + M) / (2 * h);
  return [=](double tau, double y[8], double a[4], double da[4]) {
    const double phi = h * tau + phase;
    const double c = std::cos(phi), sn = std::sin(phi), c2 = std::cos(2 * phi), s2 = std::sin(2 * phi);
    const double s2_0 = std::sin(2 * phase);
    const double g = g0 + K * c2 / (2 * h);
    const double t = g0 * tau + K * (s2 - s2_0) / (4 * h * h);
    y[0] = t;
    y[1] = off[0] - ax / h * c;
    y[2] = off[1] + ay / h * sn;
    y[3] = off[2] + s * (t - h * tau);
    y[4] = g;
    y[5] = ax * sn;
    y[6] = ay * c;
    y[7] = s * (g - h);
    a[0] = -K * s2;
    a[1] = ax * h * c;
    a[2] = -ay * h * sn;
    a[3] = s * a[0];
    da[0] = -2 * h * K * c2;
    da[1] = -ax * h * h * sn;
    da[2] = -ay * h * h * c;
    da[3] = s * da[0];
  };
}

void append_electron(SplineBatch& batch, const Worldline& w, double tau0, double dtau, std::uint32_t n,
                     std::uint64_t index) {
  ElectronSpline e;
  e.index = index;
  e.tau0 = tau0;
  e.dtau = dtau;
  e.n_intervals = n;
  e.offset = batch.coef.size();
  batch.coef.resize(batch.coef.size() + std::size_t(n) * kCoefPerInterval);
  double y0[8], a0[4], d0[4], y1[8], a1[4], d1[4];
  w(tau0, y0, a0, d0);
  for (std::uint32_t j = 0; j < n; ++j) {
    w(tau0 + (j + 1) * dtau, y1, a1, d1);
    double* c = batch.coef.data() + e.offset + std::size_t(j) * kCoefPerInterval;
    // Per position component the quintic through x, dx/dτ = u, d²x/dτ² = a at both knots.
    for (int k = 0; k < kPositionComponents; ++k)
      quintic_hermite(y0[k], y0[4 + k], a0[k], y1[k], y1[4 + k], a1[k], dtau, c + kSplinePowers * k);
    for (int k = 0; k < 8; ++k) y0[k] = y1[k];
    for (int k = 0; k < 4; ++k) a0[k] = a1[k];
  }
  batch.electrons.push_back(e);
}

std::array<double, 8> state_at(const Worldline& w, double tau) {
  std::array<double, 8> y;
  double a[4], da[4];
  w(tau, y.data(), a, da);
  return y;
}

CoveredBatch covered_batch(Screen s, const std::vector<Worldline>& ws, double dtau) {
  std::vector<std::array<double, 8>> init;
  for (auto& w : ws) init.push_back(state_at(w, 0.0));
  choose_window(s, init);
  CoveredBatch st{s, {}};
  const double t_last = s.t_rel(s.samples - 1);
  for (std::size_t i = 0; i < ws.size(); ++i) {
    double T = dtau;
    while (s.earliest_arrival_rel(state_at(ws[i], T).data()) <= t_last + 4 * s.dt) T *= 1.25;
    append_electron(st.batch, ws[i], 0.0, dtau, std::uint32_t(std::ceil(T / dtau)), i);
  }
  if (check_coverage(st.screen, st.batch).clipped_electrons() != 0)
    throw std::runtime_error("covered_batch: an electron's splines do not cover the window");
  return st;
}

double cube_at(const std::vector<double>& cube, const Screen& s, int b, int c, int iy, int ix, int k) {
  return cube[(((std::size_t(b) * 3 + c) * s.ny + iy) * s.nx + ix) * s.samples + k];
}

}  // namespace edm::test
