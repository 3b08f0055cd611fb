// Electron ensembles: initial conditions in SI as the campaign gives them, converted by the scenario.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "edm/campaign.hpp"
#include "edm/units.hpp"

namespace edm {

// One electron as the user describes it (SI): position at time t0, u = γβ.
struct ElectronInit {
  double t0 = 0, x = 0, y = 0, z = 0;  // s, m
  double ux = 0, uy = 0, uz = 0;       // γβ
  double weight = 1;                   // macro-particle weight (electrons it stands for), >= 0
};

// The bounds of every electron state edm reads from a file, whatever the path (the CSV list, a
// tracks file, an openPMD series), so that no path lets through what another refuses:
// - weight 0 … 1e30: 1e30 electrons (1.6e11 C) is far beyond any bunch (a nC is 6e9), so a larger
//   one is a unit or format mistake; and the coherent field Σ w E of weights near the double's range
//   overflows to inf, which a run wrote as its result (found by tests/test_hostile);
// - |u| = γβ <= 1e8 (≈ 51 TeV, far past electrons.gamma's 1e6): beyond it, almost surely momentum
//   in SI instead of γβ;
// - |x|, |y|, |z| <= 1 km and |t| <= 1 s: beyond every interaction region and pulse (laser.duration
//   is at most 1e-6 s); a larger value is a unit mistake, and in the laser's normalised units a time
//   of seconds leaves no digits for the period.
struct ElectronBounds {
  double weight = 1e30, u = 1e8, position = 1e3, time = 1.0;
};
inline constexpr ElectronBounds kElectronBounds{};
// Empty when `e` (t0 as the time of the state) is within kElectronBounds and finite; else what is
// out of range, with its value and the bound ("x = 1e+300 m is out of range (…)"), for the caller
// to prefix with its file, line or particle.
std::string electron_out_of_range(const ElectronInit& e);

// Deterministic sunflower (Vogel) disk of `count` points of radius R in the plane z = 0.
std::vector<ElectronInit> sunflower_disk(std::uint64_t count, double radius);
// Explicit list from a CSV file with columns t0,x,y,z,ux,uy,uz and optionally an 8th, weight (in every
// row or in none; 1 when absent; finite and >= 0). Header line optional, '#' comments. Errors name
// file:line and the column.
std::vector<ElectronInit> read_electron_csv(const std::string& path);
// Gaussian beam about z = 0 moving along +z with mean Lorentz factor gamma: rms sizes, relative rms
// energy spread and normalised emittances (m·rad). A seeded, portable RNG (same seed, same electrons
// on every machine and for every MPI rank count).
std::vector<ElectronInit> gaussian_beam(const ElectronsSection& s, double gamma, std::uint64_t seed);

// Portable RNG (identical on every platform and standard library): xoshiro256** seeded through
// splitmix64 from (seed, stream); normal() is Box–Muller. gaussian_beam uses stream = electron index.
class PortableRng {
 public:
  PortableRng(std::uint64_t seed, std::uint64_t stream);
  std::uint64_t next();
  double uniform();  // (0, 1]
  double normal();   // N(0, 1)

 private:
  std::uint64_t s_[4];
  double spare_ = 0;
  bool has_spare_ = false;
};

// Normalised initial state y = (t, x, y, z, γ, ux, uy, uz) of electron `e` (SI) moved along its
// straight unperturbed line to the event where the laser phase ξ = t − s z equals xi_start
// (normalised): where a scenario starts integrating, before the pulse reaches the electron.
void place_at_phase(const ElectronInit& e, const Normalization& units, int s, double xi_start,
                    double y[8]);

// Phased-array prebunching for inverse Thomson (share/docs/ensembles.md "Prebunching"): each
// electron's position at the collision moves along z by
//   Δz(ρ, θ) = ((1+β)/2) [ρ²/(2Z) + ℓ_b (θ/2π) λ/n_b] − chirp (ρ/R)²
// (θ ∈ [0, 2π) the azimuth, Z = screen.distance when finite and > 0, R = electrons.radius, λ the
// emitted line's wavelength, m, β the beam's velocity), so that its light at harmonic n_b reaches the
// axis far downstream with the phase ℓ_b θ. Nothing when electrons.bunch_harmonic, bunch_ell and
// bunch_chirp are all 0. ConfigError EDM-CFG-732 for ℓ_b or a chirp without n_b, EDM-CFG-733 when the
// offsets spread the arrivals 2Δz/((1+β)c) over more than half the observer window (the early-arrival
// budget; screen.samples = "auto" sizes the window to them instead).
void prebunch(std::vector<ElectronInit>& ens, const Campaign& c, double beta, double lambda);
// ConfigError EDM-CFG-730 naming the scenario when any prebunching key is set (it has no beam to phase).
void refuse_prebunching(const ElectronsSection& s, const char* scenario);

}  // namespace edm
