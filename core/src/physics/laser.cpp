// Laser fields (normalised units, units.hpp): the exact plane wave and the paraxial Gaussian /
// Laguerre–Gauss beams with first-order longitudinal fields (gaussian = LG(0,0), same code path),
// under a gaussian, supergaussian (flat-top) or constant envelope.
// Carrier e^{i(ξ + φ0)}, ξ = t − s z. Circular ε̂ = (x̂ ± iŷ)/√2 splits a0 as a0/√2 per component:
// |E| = a0/√2, the same cycle-averaged intensity and ⟨u⊥²⟩ = a0²/2 as linear polarisation, so
// the line formulas of the form ω_1 = 4γ²ω/(1 + a0²/2) hold for both.
#include "edm/laser.hpp"

#include <cmath>
#include <complex>
#include <numbers>
#include <string>

#include "edm/error.hpp"
#include "edm/schema.hpp"

namespace edm {
namespace {

using cd = std::complex<double>;

struct Polarisation {
  cd ex, ey;  // ε̂ components
};

Polarisation polarisation(Polarization p) {
  const double r = 1.0 / std::numbers::sqrt2;
  switch (p) {
    case Polarization::Linear: return {1.0, 0.0};
    case Polarization::CircularPlus: return {r, cd(0.0, r)};
    case Polarization::CircularMinus: return {r, cd(0.0, -r)};
  }
  return {1.0, 0.0};  // not reached: make_laser checked the value against the key's choices
}

// x^n for an integer n ≥ 0 by repeated squaring (a few roundings, where std::pow of a complex
// takes a logarithm and an exponential).
template <class T>
T int_pow(T x, int n) {
  T r(1.0);
  for (; n > 0; n >>= 1) {
    if (n & 1) r *= x;
    x *= x;
  }
  return r;
}

// The envelope's exponent (ξ/τ0)^(2p), 0 for a constant envelope (τ0 = 0). (q²)^p by squaring: at
// p = 1 it is q·q, the gaussian's exponent to the bit.
inline double envelope_exponent(double xi, double tau0, int order) {
  if (tau0 <= 0) return 0.0;
  const double q = xi / tau0;
  return int_pow(q * q, order);
}

// Envelope g(ξ) = exp(−(ξ/τ0)^(2p)), or 1 for a constant envelope (τ0 = 0).
inline double envelope(double xi, double tau0, int order) { return std::exp(-envelope_exponent(xi, tau0, order)); }

// The generalised Laguerre polynomial L_n^α(v) by its three-term recurrence
//   (k + 1) L_{k+1} = (2k + 1 + α − v) L_k − (k + α) L_{k−1},  L_0 = 1,  L_1 = 1 + α − v,
// stable upwards for α ≥ 0. gsl_sf_laguerre_n gives the same values (test_laser compares them) but
// goes through log-gamma functions for small n, which made it the largest part of an LG field.
inline double laguerre(int n, double alpha, double v) {
  if (n == 0) return 1.0;
  double prev = 1.0, cur = 1.0 + alpha - v;
  for (int k = 1; k < n; ++k) {
    const double next = ((2 * k + 1 + alpha - v) * cur - (k + alpha) * prev) / (k + 1);
    prev = cur;
    cur = next;
  }
  return cur;
}

// E = a0 g(ξ) Re[ε̂ e^{i(ξ+φ0)}], B = s ẑ × E. Exact in vacuum: every component depends on ξ only
// and is transverse, so ∇·E = 0 and ∇×E = −∂B/∂t hold identically, envelope included.
class PlaneWave final : public Laser {
 public:
  PlaneWave(double a0, double tau0, int order, int s, Polarisation pol, double phase)
      : pol_(pol), phase_(phase) {
    a0_ = a0;
    tau0_ = tau0;
    order_ = order;
    direction_ = s;
  }
  void field(const double x4[4], double E[3], double B[3]) const override {
    const double xi = x4[0] - direction_ * x4[3];
    const double amp = a0_ * envelope(xi, tau0_, order_);
    const cd carrier = std::polar(1.0, xi + phase_);
    E[0] = amp * (pol_.ex * carrier).real();
    E[1] = amp * (pol_.ey * carrier).real();
    E[2] = 0.0;
    B[0] = -direction_ * E[1];
    B[1] = direction_ * E[0];
    B[2] = 0.0;
  }

 private:
  Polarisation pol_;
  double phase_;
};

// Paraxial LG_p^m beam. With F = a0 g(ξ) ψ(x, y, ζ) e^{i(ξ+φ0)}, ζ = s(z − z_f) the distance from
// the focus along the propagation, Q = 1 − iζ/z_R, z_R = w0²/2 (k = 1):
//   ψ = exp(−r²/(w0² Q))/Q · (√2 (x + i sgn(m) y)/w)^{|m|} L_p^{|m|}(2r²/w²) e^{i(2p+|m|) atan(ζ/z_R)}
// (w = w0|Q|). exp(−r²/(w0²Q))/Q solves the paraxial equation ∇⊥²ψ − 2i ∂_ζψ = 0 for the carrier
// e^{+i(t − sz)} and carries the curvature and the Gouy phase; the LG factor adds the mode's extra
// Gouy phase (2p+|m|)·atan(ζ/z_R). Fields:
//   E⊥ = Re[ε̂ F],        E_z = Re[−i s ∇⊥·(ε̂ F)]            (∇·E = 0 at first order, ∂_z → −is)
//   B⊥ = s ẑ × E⊥,       B_z = Re[−i (ε_x ∂_y F − ε_y ∂_x F)]  (Faraday's z-component, ∂_t → i)
// Neglected: derivatives of the envelope and of ψ along z in the longitudinal terms, and the
// second-order transverse corrections; the Maxwell residuals are therefore O(1/(k w0)²) relative,
// plus O(1/(ω τ0)) from the envelope (test_laser measures both).
class ParaxialBeam final : public Laser {
 public:
  ParaxialBeam(double a0, double tau0, int order, int s, Polarisation pol, double phase, double w0,
               double z_focus, int p, int m)
      : pol_(pol), phase_(phase), w0_(w0), zf_(z_focus), zr_(0.5 * w0 * w0), p_(p), m_(m) {
    a0_ = a0;
    tau0_ = tau0;
    order_ = order;
    direction_ = s;
  }

  void field(const double x4[4], double E[3], double B[3]) const override {
    const double s = direction_;
    const double xi = x4[0] - s * x4[3];
    const double x = x4[1], y = x4[2];
    const double zq = s * (x4[3] - zf_) / zr_;  // ζ/z_R
    // Q = 1 − iζ/z_R; its reciprocal conj(Q)/|Q|² once, so that no complex division follows.
    const double q2 = 1.0 + zq * zq;  // |Q|²
    const cd invQ = cd(1.0, zq) / q2;
    const double r2 = x * x + y * y;
    const double w0sq = w0_ * w0_;
    // Carrier, envelope and fundamental Gaussian in ONE exponential: a0 g(ξ) e^{i(ξ+φ0)} ·
    // exp(−r²/(w0²Q))/Q = a0 exp(−(ξ/τ0)^(2p) + Re e) e^{i(ξ + φ0 + Im e)}/Q with e = −r²/(w0²Q)
    // (one exp and one sine-cosine pair where three exponentials stood). Its transverse gradient:
    // ∂_x ψ00 = −2x/(w0²Q) ψ00.
    const cd e = (-r2 / w0sq) * invQ;
    const double env = envelope_exponent(xi, tau0_, order_);  // 0 for a constant envelope
    const cd base = a0_ * std::polar(std::exp(e.real() - env), xi + phase_ + e.imag()) * invQ;
    const cd dlog = (-2.0 / w0sq) * invQ;
    cd psi = 1.0, dpsi_dx = dlog * x, dpsi_dy = dlog * y;  // ψ/ψ00 and ∇ψ/ψ00
    if (p_ != 0 || m_ != 0) {
      // LG factor P(x, y) and its gradient; ψ = ψ00 P, ∇ψ = P ∇ψ00 + ψ00 ∇P. Every power is an
      // integer one taken by multiplication (std::pow of a complex goes through log and exp), and
      // the mode's Gouy factor e^{i n atan(ζ/z_R)} is (conj(Q)/|Q|)^n: no atan, sine or cosine.
      // The trajectory solve evaluates this 14 times per knot (BENCHMARKS.md, the LG field).
      const int am = std::abs(m_);
      const double wsq = w0sq * q2;  // w² = w0²|Q|²
      const double v = 2.0 * r2 / wsq;
      const cd rho(x, m_ >= 0 ? y : -y);  // r e^{i sgn(m) φ}
      const double sgn = m_ >= 0 ? 1.0 : -1.0;
      const double L = laguerre(p_, am, v);
      // d/dv L_p^α(v) = −L_{p−1}^{α+1}(v)
      const double dL = p_ > 0 ? -laguerre(p_ - 1, am + 1, v) : 0.0;
      const cd gouy = int_pow(cd(1.0, zq) / std::sqrt(q2), 2 * p_ + am);
      const cd cg = int_pow(std::sqrt(2.0 / wsq), am) * gouy;  // (√2/w)^{|m|} e^{i n atan(ζ/z_R)}
      const cd rho_m1 = am > 0 ? int_pow(rho, am - 1) : cd(0.0);
      const cd rho_m = am > 0 ? rho_m1 * rho : cd(1.0);
      const cd P = cg * rho_m * L;
      const double dv_dx = 4.0 * x / wsq, dv_dy = 4.0 * y / wsq;
      const cd dP_dx = cg * (double(am) * rho_m1 * L + rho_m * dL * dv_dx);
      const cd dP_dy = cg * (double(am) * rho_m1 * cd(0.0, sgn) * L + rho_m * dL * dv_dy);
      dpsi_dx = dpsi_dx * P + dP_dx;
      dpsi_dy = dpsi_dy * P + dP_dy;
      psi = P;
    }
    const cd F = base * psi, Fx = base * dpsi_dx, Fy = base * dpsi_dy;
    const cd minus_i(0.0, -1.0);
    E[0] = (pol_.ex * F).real();
    E[1] = (pol_.ey * F).real();
    E[2] = (minus_i * s * (pol_.ex * Fx + pol_.ey * Fy)).real();
    B[0] = -s * E[1];
    B[1] = s * E[0];
    B[2] = (minus_i * (pol_.ex * Fy - pol_.ey * Fx)).real();
  }

 private:
  Polarisation pol_;
  double phase_, w0_, zf_, zr_;
  int p_, m_;
};

}  // namespace

std::unique_ptr<Laser> make_laser(const LaserSection& section, const Normalization& units, int direction) {
  // A section built in code has not been through the key table: its guards ask the table for the
  // rule, and apply it where the profile uses the key.
  const int s = section.direction != 0 ? section.direction : direction;
  check_key_value("laser.direction", s, "EDM-CFG-102");
  check_key_value("laser.wavelength", section.wavelength, "EDM-CFG-103");
  check_key_value("laser.polarization", section.polarization, "EDM-CFG-101");
  check_key_value("laser.envelope", section.envelope, "EDM-CFG-105");
  check_key_value("laser.profile", section.profile, "EDM-CFG-107");
  const Polarisation pol = polarisation(section.polarization);
  check_key_value("laser.order", section.order, "EDM-CFG-111");
  if (section.order != 1 && section.envelope != Envelope::SuperGaussian)
    throw ConfigError("EDM-CFG-112", "laser.order = " + std::to_string(section.order) + " needs laser.envelope = "
                                     "\"supergaussian\" (laser.envelope = \"" + std::string(name(section.envelope)) +
                                     "\" has no order)");
  const int order = envelope_order(section);
  double tau0 = 0;
  if (section.envelope != Envelope::Constant) {
    check_key_value("laser.duration", section.duration, "EDM-CFG-104");
    tau0 = section.duration / units.time();
  }

  if (section.profile == LaserProfile::PlaneWave) {
    if (section.pulse_energy > 0)
      throw ConfigError("EDM-CFG-106",
                        "laser.pulse_energy needs a finite beam (gaussian | laguerre_gauss); "
                        "a plane wave takes a0");
    return std::make_unique<PlaneWave>(section.a0, tau0, order, s, pol, section.phase);
  }
  const bool lg = section.profile == LaserProfile::LaguerreGauss;
  check_key_value("laser.waist", section.waist, "EDM-CFG-108");
  const int p = lg ? section.p : 0, m = lg ? section.m : 0;
  check_key_value("laser.p", p, "EDM-CFG-109");
  const double w0 = section.waist / units.length();
  double a0 = section.a0;
  if (section.pulse_energy > 0) {
    // Energy of the paraxial pulse (transverse fields, cycle-averaged; the same for linear and for
    // circular with a0/√2 per component): U = ½ ε0 c E0² · (π w0²/2)·(p+|m|)!/p! · ∫g² dt, from
    // ∫|ψ|² dA at the focus and ∫ g² dt = 2 τ0 Γ(1 + 1/(2n)) 2^(−1/(2n)) for the envelope of order n
    // (τ0 √(π/2) for the gaussian, n = 1). Solved for E0, then a0 = E0 / (m c ω/e).
    if (tau0 <= 0)
      throw ConfigError("EDM-CFG-110",
                        "laser.pulse_energy needs a gaussian or supergaussian envelope (a constant "
                        "one has no finite energy); give a0");
    double mode_norm = 1.0;  // (p+|m|)!/p!
    for (int k = p + 1; k <= p + std::abs(m); ++k) mode_norm *= k;
    const double area = std::numbers::pi * section.waist * section.waist / 2.0 * mode_norm;
    const double t_int = envelope_energy_length(section.duration, order);
    const double E0 = std::sqrt(2.0 * section.pulse_energy / (si::eps0 * si::c * area * t_int));
    a0 = E0 / units.efield();
  }
  return std::make_unique<ParaxialBeam>(a0, tau0, order, s, pol, section.phase, w0,
                                        section.focus / units.length(), p, m);
}

}  // namespace edm
