// Direct far-field spectra on the OpenCL device: for every direction n̂ and frequency ω the complex
// amplitude of each electron by quadrature over its quintic spline pieces (cl/spectra.cl), summed
// coherently (Σ w A) and incoherently (Σ w |A|²) over the electrons, batch after batch. With
// SpectraOptions::method = Fft or Dft (or Auto by the cost model) the amplitudes come instead from a
// chirp-z transform (core/src/field/spectra_fft.hpp) or a discrete Fourier sum
// (core/src/field/spectra_dft.hpp) of each electron's far-field series on the angular screen at
// infinity; the sums, their layout and order are the same.
//
// Conventions (share/docs/outputs.md "Direct spectra"): observer time t − n̂·r/c, Fourier transform
// Ẽ(ω) = (2π)^−½ ∫ E e^{iωt} dt, and the amplitude A = R Ẽ_far (V·s), so that the one-sided
// spectral-angular density is d²W/dωdΩ = 2 ε0 c |A|² (J·s/rad/sr, Jackson 14.67 in SI).
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <numbers>
#include <span>
#include <vector>

#include "edm/campaign.hpp"
#include "edm/device.hpp"
#include "edm/screen.hpp"
#include "edm/trajectory.hpp"
#include "edm/units.hpp"

namespace edm {

struct SpectraGrid {
  std::vector<double> omega;                        // normalised (units of the laser ω), > 0
  std::vector<std::array<double, 3>> directions;    // unit vectors n̂ (lab frame)
  // The fft method's time series (core/src/field/spectra_fft.hpp): the angular screen at infinity
  // whose observer-time grid (t0_rel, dt, samples) each electron's R·E_far is sampled on; its
  // directions (iy·nx + ix) must be `directions`. Left default (a flat screen), the fft method is
  // not available and "auto" takes the direct one.
  Screen far_screen;
};

struct SpectraOptions {
  int nodes = 8;            // Gauss–Legendre nodes per sub-piece (2..16)
  int block = 8;            // frequencies per work-item (1..32)
  double phase = 2.0;       // largest phase excursion of one sub-piece at the block's highest ω, rad
  int electron_group = 16;  // electrons per launch (≥ 1)
  // spectra.method: the quadrature over the spline pieces (direct), the chirp-z transform of each
  // electron's far-field series (fft), the discrete Fourier sum of that series over the samples it
  // covers (dft), or the cheapest by the cost model (auto, share/docs/outputs.md "Direct
  // spectra"), chosen once at construction.
  SpectraMethod method = SpectraMethod::Direct;
  int fft_group = 4;  // fft and dft methods: electrons per reduction launch, each kept separate (≥ 1)
  // The samples of the window an electron's far-field series is expected to cover (the dft method
  // sums over those alone), for the cost model of "auto" only; < 0: the whole window. The run
  // predicts it from the campaign (run/spectra_stage.cpp), the same for every batch and rank.
  double series_samples = -1;
};

// Normalised sums (multiply by spectra_amplitude_si() for V·s): coherent[((d·nω + k)·3 + c)·2 + {re, im}]
// = Σ_e w_e I_e,c(ω_k, n̂_d); incoherent[d·nω + k] = Σ_e w_e |I_e(ω_k, n̂_d)|².
struct SpectraSums {
  std::size_t directions = 0, frequencies = 0;
  std::vector<double> coherent, incoherent;
  std::uint64_t electrons = 0, launches = 0;
  double kernel_seconds = 0;
  double weight_sum = 0;
  SpectraMethod method = SpectraMethod::Direct;  // the method that computed them ("auto" resolved)
};

// The cost model of spectra.method = "auto" (share/docs/outputs.md "Direct spectra"): estimated
// device seconds per electron of each method, from per-device constants measured on the benchmark
// cells (core/src/field/spectra_fft.cpp, spectra_cost).
struct SpectraCost {
  double direct = 0, fft = 0, dft = 0;
};

// What the factory of the spectra methods builds on a device, and why: the method asked
// (SpectraOptions::method), the one that sums (the asked one, or for "auto" the cheapest by `cost`
// of those that can compute the grid and whose buffers fit the device), and the cost model's
// estimates, computed whatever was asked (run.toml and the run's phase report them): +inf for a
// method that cannot compute the grid or whose buffers do not fit the device.
struct SpectraChoice {
  SpectraMethod asked = SpectraMethod::Direct, method = SpectraMethod::Direct;
  SpectraCost cost;
};
// The choice of a SpectraAccumulator with `options` on `device` (SpectraOptions::series_samples is
// the dft method's predicted series length). No device is touched.
SpectraChoice choose_spectra_method(const SpectraGrid& grid, const SpectraOptions& options, const DeviceInfo& device);

// The SI factor of the normalised amplitude: A (V·s) = q/(4πε0 c √(2π)) · I, q = −e (the electron).
inline constexpr double spectra_amplitude_si() {
  return -si::e / (4.0 * std::numbers::pi * si::eps0 * si::c) / 2.5066282746310002;  // √(2π)
}
// d²W/dωdΩ (J·s/rad/sr) of an amplitude squared |I|² in normalised units.
inline constexpr double spectra_density_si() {
  return 2.0 * si::eps0 * si::c * spectra_amplitude_si() * spectra_amplitude_si();
}

// The samples [first, last) of electron e's far-field series on `far_screen` (an angular screen at
// infinity) that the field kernel may write, over all directions: those whose observer time lies
// in the light's arrival window [ψ(first knot), ψ(last knot)] of some direction (cl/lw_direction.cl),
// widened by 2 samples either side, clamped to the window (first == last: none). Outside it the
// series is zero: the dft method sums over these samples only.
std::array<int, 2> far_series_samples(const Screen& far_screen, const SplineBatch& batch, std::size_t e);

class SpectraAccumulator {
 public:
  // Checks the grid (ConfigError naming spectra.* keys: no direction, no frequency, ω ≤ 0, a
  // direction that is not a unit vector) and the options, builds cl/spectra.cl, zeroes the sums.
  // The fft method: ConfigError EDM-CFG-650 naming what it lacks (field/spectra_fft.hpp); the dft
  // method: EDM-CFG-651 (field/spectra_dft.hpp).
  SpectraAccumulator(std::shared_ptr<Device> device, const SpectraGrid& grid, const SpectraOptions& options = {});
  ~SpectraAccumulator();
  SpectraAccumulator(SpectraAccumulator&&) noexcept;
  SpectraAccumulator& operator=(SpectraAccumulator&&) noexcept;

  // Adds the batch's electrons in electron order. weights: one per electron of the batch (empty:
  // each electron's own ElectronSpline::weight, 1 unless the ensemble gives one); a negative or
  // non-finite weight is a ConfigError naming the electron. Blocks until the
  // splines are on the device (the batch may be released afterwards).
  void accumulate(const SplineBatch& batch, std::span<const double> weights = {});
  // Waits for the launches and downloads the sums; the accumulator is finished afterwards.
  SpectraSums finish();
  // A checkpoint's copy (share/docs/outputs.md "Devices, ranks and checkpoints"): waits for the
  // queued launches and downloads the sums so far, with the counters; accumulating goes on after.
  SpectraSums snapshot();
  // Uploads `sums` (a snapshot of an accumulator on the same grid) as the starting sums, before any
  // accumulate(): the launches that follow add to them in the order an uninterrupted run would,
  // so a resumed run's sums are bit-identical. Error EDM-CKP-069 for another grid's sums or after accumulate().
  void restore(const SpectraSums& sums);
  // Progress: the electrons of this object's launches (restored ones not counted) whose kernels
  // have completed, polled from their events; never blocks.
  std::uint64_t electrons_completed();
  // The method this accumulator sums with: SpectraOptions::method, "auto" resolved at construction.
  SpectraMethod method() const;
  // How that method was chosen, with the cost model's numbers (choose_spectra_method).
  const SpectraChoice& choice() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace edm
