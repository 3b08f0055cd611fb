// Photon units of a spectral-angular energy density and the frequency grid of the direct spectra.
// Conventions (share/docs/outputs.md "Photon units"): d²W/dωdΩ is one-sided (ω > 0, Jackson's
// d²I/dωdΩ: ∫₀^∞ dω gives dW/dΩ), per shot (one pass of the ensemble), per steradian. A photon of ω
// carries ħω, so
//   d²N/dωdΩ         = (d²W/dωdΩ) / (ħω)                  photons per unit ω (rad/s) per sr,
//   dN/dΩ per 0.1 %BW = (d²W/dωdΩ) · (10⁻³ ω) / (ħω)
//                     = 10⁻³ (d²W/dωdΩ) / ħ               photons per sr in a band Δω = 10⁻³ ω.
#pragma once
#include <numbers>
#include <vector>

#include "edm/campaign.hpp"
#include "edm/units.hpp"

namespace edm {

namespace si {
inline constexpr double h = 6.62607015e-34;                       // J·s (exact, SI 2019)
inline constexpr double hbar = h / (2.0 * std::numbers::pi);      // J·s
}  // namespace si

inline constexpr double kRelativeBandwidth = 1e-3;  // "0.1 % bandwidth"

// photons per unit ω per sr of d2W (J·s/rad/sr) at omega (rad/s).
inline double photons_per_unit_omega(double d2W, double omega) { return d2W / (si::hbar * omega); }
// photons per sr in a relative bandwidth Δω/ω = rel (default 0.1 %): independent of ω.
inline double photons_per_bandwidth(double d2W, double rel = kRelativeBandwidth) { return d2W * rel / si::hbar; }
// ħω of omega (rad/s) in eV, and back.
inline double omega_to_ev(double omega) { return si::hbar * omega / si::e; }
inline double ev_to_omega(double ev) { return ev * si::e / si::hbar; }

// The ω grid of [spectra] in rad/s: count points from omega_min to omega_max (both included),
// equally spaced (linear) or in ratio (log), the bounds in units of the laser ω (laser_omega,
// rad/s) or in eV (spectra.unit). ConfigError naming the key: count < 1 (EDM-CFG-622), a bound
// ≤ 0 or not finite (EDM-CFG-620), a log grid with omega_min ≤ 0 (EDM-CFG-623), omega_max <
// omega_min (EDM-CFG-621).
std::vector<double> spectra_frequencies(const SpectraSection& s, double laser_omega);

}  // namespace edm
