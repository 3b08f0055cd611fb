// Internal: the dft method of the far-field spectra behind SpectraAccumulator (edm/spectra.hpp).
// Each electron's far-field series R·E_far(t_k) on the angular screen at infinity comes from the
// field kernel (FarSeries, field/spectra_series.hpp); it is non-zero only on the samples its
// trajectory's light covers, [k_lo, k_hi) over all directions (far_series_samples), so its
// amplitude at every requested ω is the plain discrete Fourier sum over those samples,
//   A_c(ω_j, pos) = Σ_{k_lo ≤ k < k_hi} dt e^{iω_j t_k} E_c[k][pos].
// At infinity R·E_far is exactly transverse (field/spectra_series.hpp), so the series is projected on
// a transverse basis (e1, e2) per direction first. About the series' centre sample k_c the sum
// splits into an even part (cosines of ω_j (t_k − t_c), sums x_{c+m} + x_{c−m}) and an odd part
// (sines, differences), times e^{iω_j t_c}: the projections are folded so (dft_fold, cl/spectra_dft.cl)
// and two real matrix products by CLBlast's DGEMM give both parts of both projections' amplitudes,
// W_cos · S and W_sin · D (nω × about n/2 each, times n/2 × 2 np; W built once on the host from the
// exact ω_j and dt), 4 nω n np FLOP per electron, half of one product over the n samples and a
// third of three Cartesian ones. A device reduction (cl/spectra_dft.cl) turns each by its phase,
// rebuilds A = e1 A1 + e2 A2 and adds w·A and w·(|A1|² + |A2|²) into the sums in electron order,
// the rule of the direct and fft methods, so batching changes no bit. Any ω grid below the samples'
// Nyquist frequency.
#pragma once
#include <memory>
#include <span>
#include <string>

#include "edm/spectra.hpp"
#include "field/spectra_series.hpp"

namespace edm::detail {

// Empty when the dft method can compute `grid`; else why not, naming the keys (a flat or finite
// screen, a frequency at or above the samples' Nyquist frequency).
std::string dft_unavailable(const SpectraGrid& grid);

// The dft method's device buffers on `grid` (field/spectra_series.hpp SeriesBytes): the fixed part,
// the group's amplitudes C (fft_group × 2 nω × 2 directions doubles) and the Fourier matrix W
// (2 nω × (samples/2 + 1) doubles). Its constructor refuses (EDM-ACC-076) what does not fit; "auto" skips it.
SeriesBytes dft_device_bytes(const SpectraGrid& grid, const SpectraOptions& options);

class SpectraDft {
 public:
  // grid and options already checked by SpectraAccumulator; throws ConfigError EDM-CFG-651 when
  // dft_unavailable(grid) says why, DeviceError for memory or a CLBlast failure.
  SpectraDft(std::shared_ptr<Device> device, const SpectraGrid& grid, const SpectraOptions& options);
  ~SpectraDft();
  SpectraDft(const SpectraDft&) = delete;
  SpectraDft& operator=(const SpectraDft&) = delete;

  // The batch's electrons (checked by the caller), in order, each with its weight.
  void accumulate(const SplineBatch& batch, std::span<const double> weights);
  // Waits and downloads the sums and the counters, keeps accumulating (SpectraAccumulator::snapshot).
  SpectraSums download_sums();
  // Starts from `sums` (same grid, checked by SpectraAccumulator::restore), replacing the current sums.
  void upload_sums(const SpectraSums& sums);

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace edm::detail
