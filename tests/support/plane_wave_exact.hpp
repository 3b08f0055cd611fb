// The exact trajectory of an electron in a plane-wave pulse (share/docs/design.md), shared by the trajectory
// and field validation tests: an independent reference that never touches the solver or splines.
#pragma once
#include <gsl/gsl_integration.h>

#include <array>
#include <cmath>
#include <numbers>
#include <vector>

#include "edm/laser.hpp"

namespace edm::test {

// Exact trajectory in a plane wave (share/docs/design.md), charge q = −1 (normalised):
//   u⊥(ξ) = u⊥0 − ∫E⊥ dξ,  h = γ − s uᶻ constant,  γ = (1 + u⊥² + h²)/(2h),  dξ/dτ = h,
//   dx⊥/dξ = u⊥/h, dt/dξ = γ/h, dz/dξ = uᶻ/h.
// Positions are double integrals of the field; both levels use 16-point Gauss–Legendre on cells of
// 2π/64 in ξ (error far below 1e-14 for these smooth integrands), accumulated cell by cell.
class ExactPlaneWave {
 public:
  ExactPlaneWave(const Laser& laser, const double y0[8], double xi_max)
      : laser_(laser), s_(laser.direction()), gl_(gsl_integration_glfixed_table_alloc(16)) {
    for (int c = 0; c < 8; ++c) y0_[c] = y0[c];
    xi0_ = y0[0] - s_ * y0[3];
    h_ = y0[4] - s_ * y0[7];
    const std::size_t n = std::size_t((xi_max - xi0_) / cell_) + 2;
    // Cumulative u⊥ and (x, y, t, z) at cell edges.
    cells_.resize(n);
    cells_[0] = {y0[5], y0[6], y0[1], y0[2], y0[0], y0[3]};
    for (std::size_t k = 0; k + 1 < n; ++k) cells_[k + 1] = advance(k, xi0_ + (k + 1) * cell_);
  }
  ~ExactPlaneWave() { gsl_integration_glfixed_table_free(gl_); }
  double h() const { return h_; }
  double xi0() const { return xi0_; }

  // State (t, x, y, z, γ, ux, uy, uz) at proper time τ (ξ = ξ0 + hτ).
  std::array<double, 8> state(double tau) const {
    const double xi = xi0_ + h_ * tau;
    const std::size_t k =
        std::min(cells_.size() - 1, std::size_t(std::max(0.0, std::floor((xi - xi0_) / cell_))));
    const auto c = advance(k, xi);
    std::array<double, 8> y{};
    y[0] = c[4];
    y[1] = c[2];
    y[2] = c[3];
    y[3] = c[5];
    fill_u(c[0], c[1], y);
    return y;
  }
  double efield_x(double xi) const { return e_perp(xi)[0]; }

 private:
  std::array<double, 2> e_perp(double xi) const {
    const double x4[4] = {xi, 0, 0, 0};  // a plane wave depends on ξ = t − s z only
    double E[3], B[3];
    laser_.field(x4, E, B);
    return {E[0], E[1]};
  }
  void fill_u(double ux, double uy, std::array<double, 8>& y) const {
    const double up2 = ux * ux + uy * uy;
    y[4] = (1 + up2 + h_ * h_) / (2 * h_);
    y[5] = ux;
    y[6] = uy;
    y[7] = s_ * (1 + up2 - h_ * h_) / (2 * h_);
  }
  // u⊥ at xi, from the cell edge k.
  std::array<double, 2> u_perp(std::size_t k, double xi) const {
    const double a = xi0_ + k * cell_;
    double ix = 0, iy = 0;
    for (std::size_t i = 0; i < gl_->n; ++i) {
      double xn, w;
      gsl_integration_glfixed_point(a, xi, i, &xn, &w, gl_);
      const auto E = e_perp(xn);
      ix += w * E[0];
      iy += w * E[1];
    }
    return {cells_[k][0] - ix, cells_[k][1] - iy};
  }
  // (ux, uy, x, y, t, z) at xi from the cell edge k.
  std::array<double, 6> advance(std::size_t k, double xi) const {
    const double a = xi0_ + k * cell_;
    std::array<double, 6> r = cells_[k];
    for (std::size_t i = 0; i < gl_->n; ++i) {
      double xn, w;
      gsl_integration_glfixed_point(a, xi, i, &xn, &w, gl_);
      const auto u = u_perp(k, xn);
      std::array<double, 8> y{};
      fill_u(u[0], u[1], y);
      r[2] += w * y[5] / h_;
      r[3] += w * y[6] / h_;
      r[4] += w * y[4] / h_;
      r[5] += w * y[7] / h_;
    }
    const auto u = u_perp(k, xi);
    r[0] = u[0];
    r[1] = u[1];
    return r;
  }

  const Laser& laser_;
  int s_;
  gsl_integration_glfixed_table* gl_;
  double y0_[8], xi0_, h_;
  const double cell_ = 2 * std::numbers::pi / 64;
  std::vector<std::array<double, 6>> cells_;
};


}  // namespace edm::test
