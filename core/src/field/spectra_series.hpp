// Internal: what the two far-field-series methods of the spectra share (spectra.method = "fft",
// field/spectra_fft.hpp, and "dft", field/spectra_dft.hpp). Each electron's far-field series
// R·E_far(t_k) on the angular screen at infinity comes from the field kernel itself (a
// FieldAccumulator of one electron at a time, its cube read on the device where the kernel wrote
// it); the methods differ only in how they turn the series into amplitudes. Shared here: that
// one-electron field step, the direction ↔ device position maps, the device sums (coherent and
// incoherent, the layout of edm/spectra.hpp) with their counters, their download and upload, the
// events profiled into kernel_seconds, and the bound on how far the host runs ahead of the device.
#pragma once
#include <cstdint>
#include <deque>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "edm/accumulator.hpp"
#include "edm/spectra.hpp"
#include "field/opencl_internal.hpp"

namespace edm::detail {

// Empty when a far-field-series method can compute `grid`; else why not, naming the keys: a flat or
// finite screen, directions that are not the screen's, fewer than 2 samples, a frequency at or
// above the samples' Nyquist frequency (both methods), and for `linear_only` (the chirp-z
// transform) a grid that is not linear.
std::string series_unavailable(const SpectraGrid& grid, bool linear_only);

// A linear grid: ω_j = ω0 + j δω to rounding (spectra_frequencies builds it so).
bool linear_grid(const std::vector<double>& w, double& w0, double& dw);

struct FarSeries {
  FarSeries(std::shared_ptr<Device> device, const SpectraGrid& grid, SpectraMethod method);
  ~FarSeries();  // waits for the queue (the buffers must outlive the launches)
  FarSeries(const FarSeries&) = delete;
  FarSeries& operator=(const FarSeries&) = delete;

  std::shared_ptr<Device> device;
  SpectraGrid grid;
  std::unique_ptr<FieldAccumulator> field;
  int np = 0, nb = 0, nd = 0, nw = 0;  // device positions, samples, directions, frequencies
  // Direction d → device position of the field cube, and position → direction (the accumulator's
  // pixel order; FieldAccess::pixel_of).
  cl::Buffer position_of, direction_of;
  cl::Buffer coh, inc;             // the sums, layout of SpectraSums
  SpectraSums sums;                // counters (coherent/incoherent stay empty: the sums are on the device)
  std::vector<cl::Event> events;   // profiling, summed at download
  std::deque<cl::Event> flushes;   // the last launch of each group in flight

  std::string where() const;
  std::size_t bins() const { return std::size_t(nd) * std::size_t(nw); }
  std::uint64_t sums_bytes() const { return 7 * bins() * sizeof(double); }
  cl::Buffer& cube();  // bucket E of the field cube, [c][k][position]
  // Electron e of the batch alone (weight 1: the weight enters the sums) through the field kernel,
  // every launch of it on the queue when this returns (the series is read next on the same queue).
  void field_step(const SplineBatch& batch, std::size_t e);
  // After a group's last launch `ev` has been enqueued: the host may run ahead of the device by a
  // few groups only (every single-electron batch holds its splines on the device until its launch
  // is done).
  void group_done(const cl::Event& ev);
  // Waits (the caller has flushed its group) and downloads the sums and the counters.
  SpectraSums download_sums();
  // Replaces the sums and the counters (sizes checked by SpectraAccumulator::restore).
  void upload_sums(const SpectraSums& s);
};

// What the two methods' classes do alike with their Impl `m` (its add_electron, flush, where and
// series): the batch's electrons in order, each with its weight (the batch's own where `weights`
// is empty), then the group's flush; an OpenCL error becomes a DeviceError naming the electrons.
template <class Method>
void accumulate_series(Method& m, const SplineBatch& batch, std::span<const double> weights, const char* method) {
  try {
    for (std::size_t e = 0; e < batch.electrons.size(); ++e)
      m.add_electron(batch, e, weights.empty() ? batch.electrons[e].weight : weights[e]);
    m.flush();
  } catch (const cl::Error& err) {
    throw_device_error(err, std::string(method) + " spectra of electrons " +
                                std::to_string(batch.electrons.front().index) + "…" +
                                std::to_string(batch.electrons.back().index) + " on " + m.where());
  }
}
// The group in hand flushed first, then the sums downloaded (`upload`: false) or replaced.
template <class Method>
SpectraSums exchange_series_sums(Method& m, const char* method, const SpectraSums* upload) {
  try {
    m.flush();
  } catch (const cl::Error& e) {
    throw_device_error(e, std::string("the last ") + method + " spectra group on " + m.where());
  }
  if (upload) {
    m.series->upload_sums(*upload);
    return {};
  }
  return m.series->download_sums();
}

}  // namespace edm::detail
