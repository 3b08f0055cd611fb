// Internal: the fft method of the far-field spectra behind SpectraAccumulator (edm/spectra.hpp).
// Each electron's far-field series R·E_far(t_k) on the angular screen at infinity comes from the
// field kernel itself (a FieldAccumulator of one electron at a time, its cube read on the device),
// and a chirp-z transform by clFFT (cl/spectra_fft.cl) gives its amplitude at every requested ω of
// a linear grid; a device reduction adds w·A and w·|A|² into the same sums, in the same layout and
// electron order, as the direct method. The field step and the sums are FarSeries
// (field/spectra_series.hpp), shared with the dft method (field/spectra_dft.hpp). Also: why the
// method cannot serve a grid, and the cost model of spectra.method = "auto" over all three methods.
#pragma once
#include <memory>
#include <span>
#include <string>

#include "edm/spectra.hpp"
#include "field/spectra_series.hpp"

namespace edm::detail {

// Empty when the fft method can compute `grid`; else why not, naming the keys (a flat or finite
// screen, a grid that is not linear, a frequency at or above the samples' Nyquist frequency).
std::string fft_unavailable(const SpectraGrid& grid);

// The fft method's device buffers on `grid` (field/spectra_series.hpp SeriesBytes): the fixed part
// and the work buffer Y (L × fft_group × 2 × directions complex doubles) twice (clFFT's scratch).
// Its constructor refuses (EDM-ACC-071) what does not fit; "auto" skips it.
SeriesBytes fft_device_bytes(const SpectraGrid& grid, const SpectraOptions& options);

// The cost model of "auto" (SpectraCost, edm/spectra.hpp): estimated device seconds per electron of
// each method, from per-device constants measured on the benchmark cells (share/docs/outputs.md
// "Direct spectra" names them). `covered`: the mean number of samples an electron's far-field series covers (far_series_samples),
// which the dft method's cost grows with; below 0 (not known yet) the whole window, its bound.
SpectraCost spectra_cost(const SpectraGrid& grid, const SpectraOptions& options, const DeviceInfo& device,
                         double covered = -1);

// spectra_cost, with +inf for a series method that cannot compute `grid` or whose buffers do not
// fit `device` (fft_device_bytes, dft_device_bytes): what "auto" compares, and SpectraChoice::cost.
SpectraCost serving_cost(const SpectraGrid& grid, const SpectraOptions& options, const DeviceInfo& device,
                         double covered = -1);

// The method "auto" resolves to: the cheapest of direct and those of fft and dft that can compute
// the grid and whose buffers fit `device` (fft_device_bytes, dft_device_bytes); other methods
// unchanged.
SpectraMethod resolve_spectra_method(const SpectraGrid& grid, const SpectraOptions& options, const DeviceInfo& device,
                                     double covered = -1);

// The FFT length of the chirp-z convolution: the smallest 2^a 3^b 5^c 7^d ≥ n (clFFT's radices).
std::size_t czt_length(std::size_t n);

class SpectraFft {
 public:
  // grid and options already checked by SpectraAccumulator; throws ConfigError EDM-CFG-650 when
  // fft_unavailable(grid) says why, DeviceError for memory or a clFFT failure.
  SpectraFft(std::shared_ptr<Device> device, const SpectraGrid& grid, const SpectraOptions& options);
  ~SpectraFft();
  SpectraFft(const SpectraFft&) = delete;
  SpectraFft& operator=(const SpectraFft&) = delete;

  // The batch's electrons (checked by the caller), in order, each with its weight; the batch may be
  // released afterwards.
  void accumulate(const SplineBatch& batch, std::span<const double> weights);
  // Waits and downloads the sums (coherent, incoherent and the counters), keeps accumulating: for
  // SpectraAccumulator::snapshot() (checkpoints, MPI, several devices).
  SpectraSums download_sums();
  // Starts from `sums` (same grid, checked by SpectraAccumulator::restore), replacing the current
  // sums.
  void upload_sums(const SpectraSums& sums);

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace edm::detail
