// Screen observables per pixel: the time-domain Poynting fluence, energy density and angular-momentum
// flux density, and their one-sided cross spectra from half-complex DFTs (definitions in
// edm/observables.hpp).
#include "edm/observables.hpp"

#include <cmath>
#include <numbers>

#include "edm/units.hpp"

namespace edm {
namespace {

const double kMu0 = 1.0 / (si::eps0 * si::c * si::c);

// Re(A_k B_k*) from GSL's half-complex layout: data[0] = Re X_0, data[2k−1] = Re X_k, data[2k] = Im X_k
// for 0 < k < N/2, and data[N−1] = Re X_{N/2} for even N (its imaginary part is 0).
inline double cross_re(const double* a, const double* b, std::size_t k, std::size_t n) {
  if (k == 0) return a[0] * b[0];
  if (2 * k == n) return a[n - 1] * b[n - 1];
  return a[2 * k - 1] * b[2 * k - 1] + a[2 * k] * b[2 * k];
}

}  // namespace

std::vector<double> parseval_weights(std::size_t n) {
  std::vector<double> g(n / 2 + 1, 1.0);
  g[0] = 0.5;
  if (n % 2 == 0) g.back() = 0.5;
  return g;
}

PixelTotals pixel_flux_and_density(const double* const E[3], const double* const B[3], std::size_t n,
                                   double dt, int normal) {
  // The fluence sum is spectrum.cpp's, term for term, so that the two agree to the last bit.
  double sz = 0, e2 = 0, b2 = 0;
  for (std::size_t j = 0; j < n; ++j) sz += E[0][j] * B[1][j] - E[1][j] * B[0][j];
  for (int c = 0; c < 3; ++c)
    for (std::size_t j = 0; j < n; ++j) {
      e2 += E[c][j] * E[c][j];
      b2 += B[c][j] * B[c][j];
    }
  PixelTotals t;
  t.fluence = double(normal) * sz * dt / kMu0;
  t.energy_density = (0.5 * si::eps0 * e2 + 0.5 * b2 / kMu0) * dt;
  return t;
}

double pixel_lz_density(const double* const E[3], const double* const B[3], std::size_t n, double dt,
                        double x, double y, int normal) {
  double xz = 0, yz = 0;  // ε0 E_x E_z + B_x B_z/μ0 and the same with y, summed over time
  for (std::size_t j = 0; j < n; ++j) {
    xz += si::eps0 * E[0][j] * E[2][j] + B[0][j] * B[2][j] / kMu0;
    yz += si::eps0 * E[1][j] * E[2][j] + B[1][j] * B[2][j] / kMu0;
  }
  return double(normal) * (y * xz - x * yz) * dt;
}

void add_pixel_spectra(const double* const E[3], const double* const B[3], const double* const Et[3],
                       const double* const Bt[3], std::size_t n, double dt, double x, double y, int normal,
                       double area, double* dW, double* cU, double* dL, double* spectra) {
  const std::size_t nw = n / 2 + 1;
  const double pref = dt * dt / std::numbers::pi;  // s_ab = (dt²/π) Re(A B*)
  const double nu = double(normal);
  for (std::size_t k = 0; k < nw; ++k) {
    const double f = nu * pref * (cross_re(E[0], B[1], k, n) - cross_re(E[1], B[0], k, n)) / kMu0;
    double e2 = 0, b2 = 0;
    for (int c = 0; c < 3; ++c) {
      e2 += cross_re(E[c], E[c], k, n);
      b2 += cross_re(B[c], B[c], k, n);
    }
    const double u = pref * (0.5 * si::eps0 * e2 + 0.5 * b2 / kMu0);
    const double xz = si::eps0 * cross_re(Et[0], Et[2], k, n) + cross_re(Bt[0], Bt[2], k, n) / kMu0;
    const double yz = si::eps0 * cross_re(Et[1], Et[2], k, n) + cross_re(Bt[1], Bt[2], k, n) / kMu0;
    const double m = nu * pref * (y * xz - x * yz);
    dW[k] += f * area;
    cU[k] += si::c * u * area;
    dL[k] += m * area;
    spectra[k] = f;
    spectra[nw + k] = m;
  }
}

}  // namespace edm
