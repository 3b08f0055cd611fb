// Internal: what the two far-field-series methods of the spectra share (spectra.method = "fft",
// field/spectra_fft.hpp, and "dft", field/spectra_dft.hpp). Each electron's far-field series
// R·E_far(t_k) on the angular screen at infinity comes from the field kernel itself (a
// FieldAccumulator of one electron at a time, its cube read on the device where the kernel wrote
// it); the methods differ only in how they turn the series into amplitudes. Shared here: that
// one-electron field step, the direction ↔ device position maps, the device sums (coherent and
// incoherent, the layout of edm/spectra.hpp) with their counters, their download and upload, the
// events profiled into kernel_seconds, and the bound on how far the host runs ahead of the device.
//
// Two components per direction carry the whole series. At infinity R·E_far is exactly transverse:
// the field kernel (cl/lw_direction.cl, lw_dir_fields with LW_ANGULAR == 2) forms
//   R·E_far = (n̂ a⁰ − a)/D² − (a⁰ − n̂·a)(n̂ γ − u)/D³,  D = γ − n̂·u,
// so n̂·R·E_far = (a⁰ − n̂·a)/D² − (a⁰ − n̂·a) D/D³ = 0 identically, and the component along n̂ of the
// cube is rounding. Both methods therefore transform the projections on a transverse basis (e1, e2)
// of each direction (transverse_basis; cl/spectra_series.cl, series_project, for the fft; the dft
// projects and folds in one kernel of its own, dft_fold in cl/spectra_dft.cl), 2 series per direction
// instead of 3 Cartesian ones, and rebuild A = e1 A1 + e2 A2 (the sums keep their 3 Cartesian
// components, edm/spectra.hpp) and |A|² = |A1|² + |A2|² in their reductions.
#pragma once
#include <array>
#include <cstdint>
#include <deque>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "edm/accumulator.hpp"
#include "edm/spectra.hpp"
#include "field/kernel_args.hpp"
#include "field/opencl_internal.hpp"

namespace edm::detail {

// Empty when a far-field-series method can compute `grid`; else why not, naming the keys: a flat or
// finite screen, directions that are not the screen's, fewer than 2 samples, a frequency at or
// above the samples' Nyquist frequency (both methods), and for `linear_only` (the chirp-z
// transform) a grid that is not linear.
std::string series_unavailable(const SpectraGrid& grid, bool linear_only);

// A linear grid: ω_j = ω0 + j δω to rounding (spectra_frequencies builds it so).
bool linear_grid(const std::vector<double>& w, double& w0, double& dw);

// A transverse orthonormal basis of direction n̂ (a unit vector), in double: a the unit axis of n̂'s
// smallest |component| (the first of equal ones), e1 = normalize(a − (n̂·a) n̂), e2 = n̂ × e1. Since
// |n̂·a| ≤ 1/√3, |a − (n̂·a) n̂| ≥ √(2/3): well conditioned for every direction, whatever the grid's
// axis. Returns {e1, e2}.
std::array<std::array<double, 3>, 2> transverse_basis(const std::array<double, 3>& n);

// Device memory of a series method: its largest single buffer (against the device's max
// allocation) and the total (against its global memory), the field cube, the projections and the
// sums included (series_fixed_bytes).
struct SeriesBytes {
  std::uint64_t largest = 0, total = 0;
  bool fits(const DeviceInfo& device) const { return largest <= device.max_allocation && total <= device.global_memory; }
};
// What both methods hold whatever their transform: the field cube (bucket_count(Mode::Total)
// buckets of 3 × samples × positions doubles, as the FieldAccumulator allocates them), the
// projections X ((samples + 1) × 2 × positions doubles) and the sums.
SeriesBytes series_fixed_bytes(const SpectraGrid& grid);

inline constexpr KernelSignature<7> kSeriesProject{
    "series_project", "spectra_series.cl", {"E", "np", "nb", "k_lo", "n", "basis", "X"}};

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
  // Per device position, its direction's transverse basis: basis[6 pos + {0..2}] = e1,
  // basis[6 pos + {3..5}] = e2 (transverse_basis).
  cl::Buffer basis;
  // The projections of the series, [k][2 np]: row k holds e1·E of every position, then e2·E (the
  // fft method; the dft method folds them into the same buffer, field/spectra_dft.cpp).
  cl::Buffer X;
  BoundKernel<kSeriesProject> projection;
  cl::Buffer coh, inc;             // the sums, layout of SpectraSums
  SpectraSums sums;                // counters (coherent/incoherent stay empty: the sums are on the device)
  std::vector<cl::Event> events;   // profiling, summed at download
  std::deque<cl::Event> flushes;   // the last launch of each group in flight

  std::string where() const;
  std::size_t bins() const { return std::size_t(nd) * std::size_t(nw); }
  std::uint64_t sums_bytes() const { return 7 * bins() * sizeof(double); }
  // samples + 1 rows: the dft's folded layout needs one more than the samples (field/spectra_dft.cpp).
  std::uint64_t x_bytes() const { return (std::uint64_t(nb) + 1) * 2 * std::uint64_t(np) * sizeof(double); }
  cl::Buffer& cube();  // bucket E of the field cube, [c][k][position]
  // Electron e of the batch alone (weight 1: the weight enters the sums) through the field kernel,
  // every launch of it on the queue when this returns (the series is read next on the same queue).
  void field_step(const SplineBatch& batch, std::size_t e);
  // Rows [k_lo, k_lo + n) of the cube's three components projected on each position's basis into
  // the same rows of X, and those cube rows zeroed (the field kernel writes only the samples an
  // electron covers, so the cube must start each electron at zero); rows of X outside are left as
  // they are. n == 0: nothing. The fft method only (its FarSeries builds the kernel).
  void project(int k_lo, int n);
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
