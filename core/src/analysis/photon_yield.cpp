// on_axis_line_yield (edm/photon_yield.hpp): the spectrum of the sample nearest the axis at the
// run's expected line, unwindowed (the absolute number; spectrum.hpp says why), converted to
// photons by ħω (edm/photon_units.hpp).
#include "edm/photon_yield.hpp"

#include <algorithm>
#include <cmath>

#include "edm/error.hpp"
#include "edm/photon_units.hpp"

namespace edm {

double interpolate_at(const std::vector<double>& omega, const std::vector<double>& spectrum, double at) {
  if (omega.size() < 2 || spectrum.size() != omega.size() || !(at >= omega.front()) || !(at < omega.back()))
    return std::nan("");  // outside the grid: no bin on each side to interpolate between
  const std::size_t k = std::size_t(std::upper_bound(omega.begin(), omega.end(), at) - omega.begin()) - 1;
  const double t = (at - omega[k]) / (omega[k + 1] - omega[k]);
  return (1 - t) * spectrum[k] + t * spectrum[k + 1];
}

LineYield on_axis_line_yield(const SpectrumResult& r, const RunPhysics& physics) {
  LineYield y;
  // The line of the harmonics where they are of the line (--gamma, --a0 set it): the yield was
  // given at the run's own line whatever --gamma said (found by a hostile tester).
  // compute_spectrum found it (r.line_omega: the harmonics' base where that is the line).
  const bool asked = r.of == HarmonicBase::Line && r.base_omega > 0;
  if (!(r.line_omega > 0 || asked || line_known(physics))) return y;
  if (r.line_omega > 0 || asked) {
    y.line_omega = r.line_omega > 0 ? r.line_omega : r.base_omega;
  } else {
    try {
      y.line_omega = expected_line_omega(physics);
    } catch (const ConfigError&) {
      return y;  // a screen with no side (an angular axis along x or y): no line, so no yield
    }
  }
  y.d2W = interpolate_at(r.omega, r.on_axis_unwindowed, y.line_omega);
  if (!std::isfinite(y.d2W)) return y;  // above the last bin: nothing to interpolate
  y.d2W_window_corrected = r.window_gain_at_pulse > 0
                               ? interpolate_at(r.omega, r.on_axis, y.line_omega) / r.window_gain_at_pulse
                               : std::nan("");
  y.photons_per_bw = photons_per_bandwidth(y.d2W);
  y.photons_per_omega = photons_per_unit_omega(y.d2W, y.line_omega);
  y.known = true;
  return y;
}

}  // namespace edm
