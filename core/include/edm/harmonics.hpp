// Complex harmonic maps of a run (`edm spectrum`, share/docs/twisted_light.md): for every requested
// harmonic, the complex amplitude of every E component at every pixel at one frequency bin, in
// Cartesian components and in circular components σ = ±1 about the screen normal. The phase
// convention and the screen frame are stated here once; the OAM fits (oam.hpp) and the plots use them.
#pragma once
#include <array>
#include <complex>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace edm {

// ---------------------------------------------------------------------------------------------
// Phase convention: e^{−iωt}. The complex amplitude of a harmonic is the far-field amplitude at one
// bin ω_k of the spectrum's transform (spectrum.hpp),
//
//   𝒜_c(ω_k) = R e^{−iω_k R/c} Ẽ_c(ω_k),   Ẽ_c(ω_k) = (dt/√(2π)) Σ_j w_j E_c(t_j) e^{+iω_k t_j}   (V·s)
//
// with t_j the absolute observer time of /axes/t, w_j the spectrum's window and R the distance of the
// pixel from the origin (the interaction point). A field Re[A e^{−iωt}] has Ẽ ∝ A at ω > 0, so arg 𝒜
// is the phase of the e^{−iωt} convention. e^{−iωR/c} takes out the phase of a spherical wave from the
// origin, which turns by ωρ²/(2c|z|) across the screen (tens of radians per pixel for a backscatter
// line) and would alias the maps; R makes |𝒜| distance-free: 2 ε0 c Σ_c |𝒜_c|² is spectrum.hpp's
// d²I/dωdΩ at that bin. Neither changes the winding about the axis (R is constant on its rings).
//
// Screen frame: n̂ = ν ẑ with ν = sign(screen_z) (the normal pointing away from the interaction),
// x̂' = x̂, ŷ' = n̂ × x̂ = ν ŷ. Azimuth about the normal: φ = atan2(ν y, x) (right-handed about n̂).
// Circular unit vectors e_σ = (x̂' + iσ ŷ')/√2 and components A_σ = e_σ*·A = (A_x − iσν A_y)/√2
// (the transverse part; E_z stays in the Cartesian maps). With e^{−iωt}, a component A_σ ∝ e^{iℓφ}
// carries spin σ and orbital ℓ about n̂: J = ℓ + σ per photon, in units of ħ. On a screen at z < 0
// both ℓ and σ are about −ẑ, i.e. the negatives of their values about the lab axis +ẑ.
// ---------------------------------------------------------------------------------------------

inline constexpr std::array<int, 2> kSigmas = {+1, -1};  // index 0 ↔ σ = +1, index 1 ↔ σ = −1

// φ = atan2(ν y, x), ν = ±1 the screen normal's sign.
double screen_azimuth(double x, double y, int normal);
// A_σ = (A_x − iσν A_y)/√2.
std::complex<double> circular_component(std::complex<double> ax, std::complex<double> ay, int sigma,
                                        int normal);

// Bins [klo, khi] of the band [lo, hi] (rad/s) on a grid of bin width dw with nw bins: the rule of
// spectrum.cpp's harmonic maps (a bin on the edge belongs to the band).
std::pair<std::size_t, std::size_t> band_bins(double lo, double hi, double dw, std::size_t nw);
// Which bin of its band a harmonic's map is taken at (--harmonic-bin):
//   peak:    the maximum of the screen-integrated spectrum dI/dω over the band, so that the map
//            follows the line where the nonlinear (a0²) redshift moves it off n·ω_b (Thomson);
//   nominal: the bin nearest n·ω_b itself, e.g. the on-axis line of inverse Thomson (--of line), whose
//            screen-integrated peak sits lower, off the axis, where ω falls as 1/(1 + γ²θ²).
enum class HarmonicBin { Peak, Nominal };
HarmonicBin parse_harmonic_bin(const std::string& name);  // "peak" | "nominal"; EDM-OAM-006
const char* harmonic_bin_name(HarmonicBin b);
std::size_t harmonic_peak_bin(const std::vector<double>& dI_domega, std::size_t klo, std::size_t khi);
// The bin nearest ω, kept inside [klo, khi].
std::size_t harmonic_nominal_bin(double omega, double dw, std::size_t klo, std::size_t khi);
// The DFT row of bin k for N samples: c_j = w_j e^{2πi·(jk mod N)/N} (the index reduced mod N so
// that the phase stays exact for every j).
std::vector<std::complex<double>> bin_kernel(const std::vector<double>& window, std::size_t k);

struct HarmonicMaps {
  std::size_t nx = 0, ny = 0;
  int normal = 1;                               // ν
  std::vector<int> order;                       // n
  std::vector<double> omega;                    // n ω_b, rad/s
  std::vector<double> omega_bin;                // ω of the bin used, rad/s
  std::vector<std::size_t> bin;                 // its index on /axes/omega
  std::vector<std::complex<double>> cartesian;  // (nh, 3, ny, nx): 𝒜_x, 𝒜_y, 𝒜_z, V·s
  std::vector<std::complex<double>> circular;   // (nh, 2, ny, nx): 𝒜_σ, index as kSigmas, V·s
  // max_σ |𝒜_σ| at the peak bin of the screen-integrated spectrum (over every bin, whichever
  // harmonics are asked for), V·s, (ny, nx): the scale of the noise floor (twisted_light.hpp).
  std::size_t reference_bin = 0;
  std::vector<double> reference;

  std::size_t harmonics() const { return order.size(); }
  std::size_t pixels() const { return nx * ny; }
  const std::complex<double>* circular_map(std::size_t h, std::size_t sigma_index) const {
    return circular.data() + (h * 2 + sigma_index) * pixels();
  }
  const std::complex<double>* cartesian_map(std::size_t h, std::size_t comp) const {
    return cartesian.data() + (h * 3 + comp) * pixels();
  }
};

// Fills `circular` from `cartesian` (resizing it).
void fill_circular(HarmonicMaps& maps);

}  // namespace edm
