// LPWA trajectories (trajectory.model = "lpwa"; share/docs/lpwa.md): the closed-form motion of an
// electron in the laser's local plane wave. Along the electron's free straight line (the unperturbed
// worldline: at rest, its start) the focused beam's transverse E is read as a function of the
// light-front phase φ = t − s z alone: local amplitude, Gouy and curvature phase and the LG azimuthal
// phase are those of the beam there, its gradients are dropped. In a plane wave of vector potential
// a(φ) (E⊥ = −da/dφ) the light-front momentum h = γ − s uᶻ is conserved and
//   u⊥ = u⊥0 + a(φ) − a(φ0),  γ + s uᶻ = (1 + u⊥²)/h,  dτ = dφ/h,
// exactly, for any polarisation and envelope; a(φ) = −∫E⊥ dφ is integrated here by Gauss–Legendre
// (the Gaussian envelope times a carrier has no elementary primitive), and so is the position
// x^μ = x0^μ + ∫ u^μ/h dφ. Header-only, built into the thomson and inverse_thomson plugins and
// tests/test_lpwa.cpp.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <numbers>

#include "edm/laser.hpp"
#include "edm/tracks.hpp"

namespace edm::lpwa {

// 5-point Gauss–Legendre on [−1, 1]: exact to degree 9, so a step of 1/64 period of a smooth carrier
// is integrated to ~1e-15 relative.
inline constexpr double kNode[5] = {-0.9061798459386640, -0.5384693101056831, 0.0, 0.5384693101056831,
                                    0.9061798459386640};
inline constexpr double kWeight[5] = {0.2369268850561891, 0.4786286704993665, 0.5688888888888889,
                                      0.4786286704993665, 0.2369268850561891};

// The local plane wave that one electron sees (normalised units), from its initial state y0
// (t, x, y, z, γ, uˣ, uʸ, uᶻ), and the closed-form state at any phase φ ≥ φ0.
class LocalWave {
 public:
  LocalWave(const Laser& laser, const double y0[8]) : laser_(laser), s_(laser.direction()) {
    std::copy(y0, y0 + 8, y0_);
    phi0_ = y0[0] - s_ * y0[3];
    h_ = y0[4] - s_ * y0[7];
  }
  double phi0() const { return phi0_; }
  double h() const { return h_; }

  // E⊥ at phase φ on the free straight line (proper time (φ − φ0)/h from the start).
  void e_perp(double phi, double E[2]) const {
    const double d = (phi - phi0_) / h_;
    double x4[4], E3[3], B3[3];
    for (int c = 0; c < 4; ++c) x4[c] = y0_[c] + d * y0_[4 + c];
    laser_.field(x4, E3, B3);
    E[0] = E3[0];
    E[1] = E3[1];
  }
  // ∫_a^b E⊥ dφ, added to out.
  void add_integral(double a, double b, double out[2]) const {
    const double half = 0.5 * (b - a), mid = 0.5 * (a + b);
    for (int k = 0; k < 5; ++k) {
      double E[2];
      e_perp(mid + half * kNode[k], E);
      out[0] += kWeight[k] * half * E[0];
      out[1] += kWeight[k] * half * E[1];
    }
  }
  // u^μ = (γ, uˣ, uʸ, uᶻ) given I = ∫_{φ0}^{φ} E⊥ dφ (q = −1: du⊥/dφ = −E⊥).
  void velocity(const double I[2], double u[4]) const {
    u[1] = y0_[5] - I[0];
    u[2] = y0_[6] - I[1];
    const double p = (1.0 + u[1] * u[1] + u[2] * u[2]) / h_;  // γ + s uᶻ
    u[0] = 0.5 * (p + h_);
    u[3] = s_ * 0.5 * (p - h_);
  }
  const double* start() const { return y0_; }

 private:
  const Laser& laser_;
  int s_;
  double y0_[8];
  double phi0_ = 0, h_ = 1;
};

// The LPWA trajectory from y0 to phase xi_end, sampled every 2π/per_period in φ, as a track in
// normalised units (t, x, y, z, u⊥, uᶻ; the tracks path resamples it onto the solver's knots).
inline TrackData trajectory(const Laser& laser, const double y0[8], double xi_end, int per_period) {
  const LocalWave w(laser, y0);
  const double dphi = 2.0 * std::numbers::pi / per_period;
  const std::size_t n = std::max<std::size_t>(4, std::size_t(std::ceil((xi_end - w.phi0()) / dphi)) + 1);
  TrackData tr;
  for (auto* v : {&tr.t, &tr.x, &tr.y, &tr.z, &tr.ux, &tr.uy, &tr.uz}) v->reserve(n);
  double I[2] = {0, 0}, x[4] = {y0[0], y0[1], y0[2], y0[3]}, u[4];
  auto push = [&](const double uu[4]) {
    tr.t.push_back(x[0]), tr.x.push_back(x[1]), tr.y.push_back(x[2]), tr.z.push_back(x[3]);
    tr.ux.push_back(uu[1]), tr.uy.push_back(uu[2]), tr.uz.push_back(uu[3]);
  };
  w.velocity(I, u);
  push(u);
  for (std::size_t j = 1; j < n; ++j) {
    const double a = w.phi0() + double(j - 1) * dphi, half = 0.5 * dphi;
    // x^μ += ∫_a^{a+dφ} u^μ/h dφ; u at each node needs I there: I(a) + ∫_a^{node} E⊥.
    for (int k = 0; k < 5; ++k) {
      const double node = a + half * (1.0 + kNode[k]);
      double Ik[2] = {I[0], I[1]}, uk[4];
      w.add_integral(a, node, Ik);
      w.velocity(Ik, uk);
      for (int c = 0; c < 4; ++c) x[c] += kWeight[k] * half * uk[c] / w.h();
    }
    w.add_integral(a, a + dphi, I);
    w.velocity(I, u);
    push(u);
  }
  return tr;
}

// The estimated relative error of LPWA's u for a beam of waist w0 (normalised, k = 1; 0 = a plane
// wave) and Rayleigh length z_R = w0²/2, amplitude a0, envelope duration τ0 (0 = constant: `periods`
// of carrier instead), for an electron from rest (share/docs/lpwa.md "What it neglects"): the field
// changes by ~2δ/w0 over the quiver excursion δ = a0/k; the ponderomotive force ~a0²/w0, missing
// from LPWA, kicks u by ~a0² T/w0 over the pulse's effective duration T = τ0 √(π/2), i.e. a0 T/w0 of
// a0 (the largest term for a multi-cycle pulse; test_lpwa measures u off by 0.7–0.8 of the sum);
// and the beam changes by ~Δz/z_R over the longitudinal drift Δz = ∫ a²/2 dφ ≈ a0² T/4.
inline double estimated_error(double a0, double w0, double tau0, double periods) {
  if (!(w0 > 0)) return 0.0;
  const double span = tau0 > 0 ? tau0 * std::sqrt(std::numbers::pi / 2.0) : 2.0 * std::numbers::pi * periods;
  const double drift = 0.25 * a0 * a0 * span;
  return 2.0 * a0 / w0 + a0 * span / w0 + drift / (0.5 * w0 * w0);
}

}  // namespace edm::lpwa
