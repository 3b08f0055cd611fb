// Internal: the one interface of a method of the direct spectra on one device (spectra.method =
// direct, fft or dft), and the one factory that builds the method the choice names
// (choose_spectra_method, edm/spectra.hpp: the campaign's, or the cost model's for "auto").
// SpectraAccumulator (field/spectra.cpp) checks the grid, the options and every batch once for all
// methods and hands the checked batches to the method it holds; so a method is only its sums: the
// quadrature over the spline pieces (field/spectra.cpp), or a transform of each electron's
// far-field series (field/spectra_fft.hpp, field/spectra_dft.hpp).
#pragma once
#include <cstdint>
#include <memory>
#include <span>

#include "edm/spectra.hpp"

namespace edm::detail {

class SpectraMethodImpl {
 public:
  virtual ~SpectraMethodImpl() = default;
  virtual SpectraMethod method() const = 0;
  // The batch's electrons (checked by SpectraAccumulator), in electron order, each with its weight
  // (the batch's own where `weights` is empty). Blocks until the splines are on the device.
  virtual void accumulate(const SplineBatch& batch, std::span<const double> weights) = 0;
  // The sums so far with their counters (waits for the device); accumulating goes on after.
  virtual SpectraSums snapshot() = 0;
  // The sums with their counters; the caller never accumulates again.
  virtual SpectraSums finish() = 0;
  // Replaces the sums and counters with `sums` (the grid checked by SpectraAccumulator), before any
  // accumulate().
  virtual void restore(const SpectraSums& sums) = 0;
  // Progress: the electrons of this object's launches whose work is done; never blocks.
  virtual std::uint64_t electrons_completed() = 0;
};

// The factory: the implementation of the method `choice` names (choose_spectra_method, which has
// resolved "auto") on `device`, grid and options checked by the caller. The fft method:
// ConfigError EDM-CFG-650 naming what it lacks; the dft method: EDM-CFG-651; DeviceError for memory
// or a library failure.
std::unique_ptr<SpectraMethodImpl> make_spectra_method(const SpectraChoice& choice, std::shared_ptr<Device> device,
                                                       const SpectraGrid& grid, const SpectraOptions& options);

}  // namespace edm::detail
