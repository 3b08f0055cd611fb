// Units: SI at the edges, normalised laser units inside (the one header that says so).
// Inside edm every quantity is in units built from the carrier ω of the campaign's laser:
//   time 1/ω, length c/ω, velocity c, momentum u = γβ (dimensionless, u⁰ = γ),
//   fields E in m_e c ω / e and B in m_e ω / e (so |E| = a0 at the peak of a plane wave, B has c = 1),
//   proper time τ in 1/ω, 4-acceleration a = du/dτ in ω.
// Conversion happens only where data enters (campaign, CSV, tracks) or leaves (field.h5, run.toml).
#pragma once
#include <numbers>

namespace edm::si {
inline constexpr double c = 299792458.0;              // m/s
inline constexpr double e = 1.602176634e-19;          // C
inline constexpr double m_e = 9.1093837015e-31;       // kg
inline constexpr double eps0 = 8.8541878128e-12;      // F/m
inline constexpr double r_e = 2.8179403262e-15;       // m, classical electron radius
}  // namespace edm::si

namespace edm {

// The scale factors of one campaign, fixed by the laser wavelength λ (ω = 2πc/λ).
struct Normalization {
  double omega = 0;  // rad/s

  static Normalization from_wavelength(double lambda_m) {
    return Normalization{2.0 * std::numbers::pi * si::c / lambda_m};
  }
  double time() const { return 1.0 / omega; }                      // s per unit
  double length() const { return si::c / omega; }                  // m per unit
  double efield() const { return si::m_e * si::c * omega / si::e; }  // V/m per unit
  double bfield() const { return si::m_e * omega / si::e; }          // T per unit
  // Liénard–Wiechert prefactor: the accumulator sums fields in units of q k²/(4πε0) with
  // q = −e and k = ω/c (both the 1/R² and the 1/R parts scale so); this is that factor in V/m.
  double lw_efield() const {
    const double k = omega / si::c;
    return -si::e * k * k / (4.0 * std::numbers::pi * si::eps0);
  }
  double lw_bfield() const { return lw_efield() / si::c; }  // B = n̂ × E / c
  // Landau–Lifshitz radiation time τ_R = (2/3) r_e / c, normalised.
  double tau_rad() const { return 2.0 / 3.0 * si::r_e / si::c * omega; }
};

}  // namespace edm
