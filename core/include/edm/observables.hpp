// Screen observables, in total and per frequency bin (`edm spectrum`, share/docs/twisted_light.md):
// the Poynting flux S·n̂ and the energy through the screen, the field energy density, and the flux
// of angular momentum about the axis with its total L_z, with their spectra dW/dω and dL_z/dω and
// the angular momentum per photon of each harmonic band. SI throughout.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

namespace edm {

// ---------------------------------------------------------------------------------------------
// Definitions (n̂ = ν ẑ the screen normal, ν = sign(screen_z); (x, y) the pixel centre; the axis is
// ẑ through the origin, the interaction point):
//
//   S·n̂   = ν (E_x B_y − E_y B_x)/μ0                                 Poynting flux, W/m²
//   u     = ε0 |E|²/2 + |B|²/(2μ0)                                    energy density, J/m³
//   m_z   = ν [ y (ε0 E_x E_z + B_x B_z/μ0) − x (ε0 E_y E_z + B_y B_z/μ0) ]
//
// m_z is the flux through the screen of the z angular momentum, (r × T·n̂)_z with T = −σ the
// momentum flux (σ Maxwell's stress tensor); outgoing angular momentum about +ẑ is positive.
// Per pixel: F = ∫ S·n̂ dt (J/m²), ∫ u dt (J·s/m³), ∫ m_z dt (J·s/m²); through the screen W = Σ F dA,
// L_z = Σ ∫m_z dt dA (dA = dx dy, each pixel owning its cell, as in spectrum.hpp).
//
// Per bin: for real series a, b with DFTs A_k = Σ_j a_j e^{−2πijk/N}, the one-sided cross density
// s_ab(ω_k) = (dt²/π) Re(A_k B_k*) obeys Σ_k g_k s_ab(ω_k) Δω = Σ_j a_j b_j dt exactly (g_k = ½ at
// k = 0 and at Nyquist, spectrum.hpp). Replacing every product a b above by s_ab gives dF/dω,
// du/dω and dm_z/dω per pixel, and through the screen
//   dW/dω = Σ dF/dω dA (J·s/rad),  dL_z/dω = Σ dm_z/dω dA (J·s²/rad),  c·dU/dω = c Σ du/dω dA (J·s/rad)
// so that Σ_k g_k (…) Δω is the time-domain total to rounding (Parseval). c·U equals W for radiation
// crossing the screen along n̂ and exceeds it off the normal (by 1/cos θ).
// No window: these are energy and angular-momentum books, which a window would falsify (the window
// of the spectrum applies to the spectra and the harmonic maps only).
//
// Fields: the flux and the energy density use the buckets of the spectrum's fluence (E_far × B_far in
// split mode, E × B in total mode), so W agrees with spectrum.h5's total_energy. L_z always uses the
// total E and B: the angular momentum through a plane lives in the O(1/R²) parts of the field (the
// near field and the longitudinal components), which E_far alone does not hold — a pure 1/R field
// from a point source carries no L_z through any plane.
//
// Per harmonic band (the bins of spectrum.hpp's harmonic bands): W_n = Σ g dW/dω Δω,
// L_n = Σ g dL_z/dω Δω, the photon weight P_n = Σ g (dW/dω)/ω Δω (= N_photons ħ), and
// J_n = L_n / P_n, the z angular momentum per photon in units of ħ. For a pure vortex harmonic
// J_n → ℓ + σ about +ẑ (share/docs/twisted_light.md: the edge term of a finite screen).
// ---------------------------------------------------------------------------------------------

struct ScreenObservables {
  std::string flux_field, lz_field;    // "E_far,B_far" or "E,B"; "E,B"
  std::vector<double> dW_domega;       // (nω) J·s/rad
  std::vector<double> dLz_domega;      // (nω) J·s²/rad
  std::vector<double> c_dU_domega;     // (nω) J·s/rad
  std::vector<double> fluence;         // (ny, nx) J/m², time domain (same arithmetic as spectrum.h5)
  std::vector<double> energy_density;  // (ny, nx) ∫u dt, J·s/m³
  std::vector<double> lz_density;      // (ny, nx) ∫m_z dt, J·s/m²

  // Per harmonic band (order as in the harmonic maps).
  std::vector<double> band_fluence;                                                 // (nh, ny, nx) J/m²
  std::vector<double> band_lz_density;                                              // (nh, ny, nx) J·s/m²
  std::vector<double> band_energy, band_lz, band_photon_weight, band_j_per_photon;  // (nh)
  // Per harmonic: the z angular momentum per photon of the light that crosses the screen, orbital
  // and spin (the photons' J below), ħ; and whether the flux book J_n above disagrees with it
  // (screen_cut: the screen cuts the light, so J_n is not the photons' J; a phase turning fast
  // across pixels or other light in the band disagree too, share/docs/twisted_light.md).
  std::vector<double> photon_j_orbital, photon_j_spin, photon_j_per_photon;  // (nh)
  std::vector<int> screen_cut;                                       // (nh) 1 | 0
  // Per harmonic: the J_z per photon the ring fits say, Σ_σ w_σ (ℓ_σ + σ) about the normal with the
  // photons' shares w_σ of the two circular components from their spin (NaN where a component that
  // holds photons has no headline ℓ), and whether the photons' J disagrees with it (1: suspect,
  // another line's light in the band or a phase that turns fast between pixels; twisted_light.md).
  std::vector<double> rings_j;        // (nh) ħ
  std::vector<int> photon_j_suspect;  // (nh) 1 | 0

  // Totals through the screen, from the time series and from the bins.
  double energy_time = 0, energy_bins = 0;  // J
  double lz_time = 0, lz_bins = 0;          // J·s
  double cu_time = 0, cu_bins = 0;          // J (c ∫∫ u dA dt)
};

// Per-pixel time-domain sums over N samples (component pointers E[3], B[3]; x, y in m; ν = ±1).
struct PixelTotals {
  double fluence = 0, energy_density = 0, lz_density = 0;
};
PixelTotals pixel_flux_and_density(const double* const E[3], const double* const B[3], std::size_t n,
                                   double dt, int normal);
double pixel_lz_density(const double* const E[3], const double* const B[3], std::size_t n, double dt,
                        double x, double y, int normal);

// Per-pixel spectral densities from GSL half-complex DFTs (gsl_fft_real_transform output) of the
// flux buckets (E[3], B[3]) and the L_z buckets (Et[3], Bt[3], may equal E, B), for bins 0 … nω−1:
// adds dF/dω·dA, c·du/dω·dA and dm_z/dω·dA into dW, cU, dL (J·s/rad, J·s/rad, J·s²/rad).
// spectra receives the per-pixel dF/dω and dm_z/dω (2·nω: first F then m_z) for the band maps.
void add_pixel_spectra(const double* const E[3], const double* const B[3], const double* const Et[3],
                       const double* const Bt[3], std::size_t n, double dt, double x, double y, int normal,
                       double area, double* dW, double* cU, double* dL, double* spectra);

// The photons' J of a band, in ħ per photon: the canonical (orbital + spin) density of the complex
// amplitudes A_c(ω_k) (c = x, y, z; e^{−iωt}; the spherical phase e^{iω(R−|z|)/c} taken out) at
// every pixel and every bin of the band, weighted by the photon flux cos θ · g_k/ω_k per pixel:
//   J = Σ_k Σ_pixels [Σ_c Im(A_c* ∂_φ A_c) + 2 Im(A_x* A_y)] w / Σ_k Σ_pixels |A|² w,
//   ∂_φ = x ∂_y − y ∂_x about +ẑ, by central differences on the pixel grid (one-sided at its edges).
// For light of charge ℓ in circular component σ about +ẑ it is ℓ + σ wherever the screen holds it:
// the J of the photons the screen catches, computed in twisted_light.cpp's pass. The flux of angular
// momentum through the screen (J_n above) differs from it by the spin at the screen's edge,
// (σ/2ω) ∮ I r·n̂ dl for a paraxial beam, which vanishes only where the intensity has
// (share/docs/twisted_light.md, "The photons' J").
// The flux book J_n and the photons' J agree to this when the screen holds the light (ħ, or this
// fraction of |J|, whichever is larger): the central differences are good to ~0.01 ħ on
// thomson_lg's 21² and 41² grids.
inline constexpr double kScreenCutTolerance = 0.05;
inline constexpr double kScreenCutRelative = 0.02;

// The one-sided Parseval weights g_k for N samples (nω = N/2 + 1 bins).
std::vector<double> parseval_weights(std::size_t n);

}  // namespace edm
