// The far-field cell of the series methods' tests (test_spectra_fft, test_spectra_dft): one thomson
// electron (a0 = 0.3, τ0 = 2 periods, 64 knots per period) and the angular screen at infinity, 3 × 2
// directions θ ≤ 0.6 rad about −z, 2048 samples at T/64 — the field of test_spectra's
// direct_vs_fft_of_the_device_far_field; and what both tests read from the sums.
#pragma once
#include <complex>
#include <memory>
#include <string>
#include <vector>

#include "edm/accumulator.hpp"
#include "edm/campaign.hpp"
#include "edm/device.hpp"
#include "edm/plugins.hpp"
#include "edm/run.hpp"
#include "edm/spectra.hpp"

namespace edm::test {

// Device 0 (PoCL in CI), opened once per test process.
std::shared_ptr<Device> far_device();

struct FarCell {
  PluginRegistry registry = PluginRegistry::discover();
  std::unique_ptr<Campaign> campaign;
  std::unique_ptr<PreparedCell> cell;
  SplineBatch batch;  // the electron, solved
  // `axis`: the screen's axis (screen.axis), −z unless a test needs directions about another one.
  explicit FarCell(const std::string& axis = "-z");
  const Screen& screen() const { return cell->screen(); }
  // The grid `omega` (laser ω) on the screen's directions, with the far screen for the series methods.
  SpectraGrid grid(std::vector<double> omega) const;
  // A linear grid [lo, hi] of n points.
  SpectraGrid linear(double lo, double hi, int n) const;
  // The device's own far-field cube of `b`, bucket E: [comp][pixel][k], on the cell's screen or on
  // `on` (the same directions, another window).
  std::vector<double> cube(const SplineBatch& b, const Screen* on = nullptr) const;
};

// The sums of `b` on `g` by `method`, electron groups of `group`.
SpectraSums run_spectra(const SpectraGrid& g, SpectraMethod method, const SplineBatch& b, int group = 4);
// Direction d's coherent amplitude, every `stride`-th frequency, the 3 components of each.
std::vector<std::complex<double>> coherent_amplitude(const SpectraSums& s, std::size_t d, std::size_t stride = 1);
// Building an accumulator of `method` (electron groups of `group`) on `g` is refused with error `id`,
// its message holding `words` (a Boost.Test check of the calling test).
void expect_refused(const SpectraGrid& g, SpectraMethod method, int group, const std::string& id,
                    const std::string& words);
// ‖a − b‖ / ‖b‖.
double rel_l2(const std::vector<std::complex<double>>& a, const std::vector<std::complex<double>>& b);

}  // namespace edm::test
