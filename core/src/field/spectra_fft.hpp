// Internal: the fft method of the far-field spectra behind SpectraAccumulator (edm/spectra.hpp).
// Each electron's far-field series R·E_far(t_k) on the angular screen at infinity comes from the
// field kernel itself (a FieldAccumulator of one electron at a time, its cube read on the device),
// and a chirp-z transform by clFFT (cl/spectra_fft.cl) gives its amplitude at every requested ω of
// a linear grid; a device reduction adds w·A and w·|A|² into the same sums, in the same layout and
// electron order, as the direct method. Also: why the method cannot serve a grid, and the cost
// model of spectra.method = "auto".
#pragma once
#include <memory>
#include <span>
#include <string>

#include "edm/spectra.hpp"

namespace edm::detail {

// Empty when the fft method can compute `grid`; else why not, naming the keys (a flat or finite
// screen, a grid that is not linear, a frequency at or above the samples' Nyquist frequency).
std::string fft_unavailable(const SpectraGrid& grid);

// The cost model of "auto": estimated device seconds per electron of each method, from per-device
// constants measured on the benchmark cells (share/docs/outputs.md "Direct spectra" names them).
struct SpectraCost {
  double direct = 0, fft = 0;
};
SpectraCost spectra_cost(const SpectraGrid& grid, const SpectraOptions& options, const DeviceInfo& device);

// The method "auto" resolves to (direct, or fft where available and cheaper); others unchanged.
SpectraMethod resolve_spectra_method(const SpectraGrid& grid, const SpectraOptions& options, const DeviceInfo& device);

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
  // Starts from `sums` (same grid: EDM-ACC-072 otherwise), replacing the current sums: restore().
  void upload_sums(const SpectraSums& sums);
  std::uint64_t device_bytes() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace edm::detail
