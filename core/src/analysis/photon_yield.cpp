// on_axis_line_yield (edm/photon_yield.hpp): the centre pixel's spectrum at the run's expected line,
// converted to photons by ħω (edm/photon_units.hpp).
#include "edm/photon_yield.hpp"

#include "edm/photon_units.hpp"

namespace edm {

LineYield on_axis_line_yield(const SpectrumResult& r, const RunPhysics& physics) {
  LineYield y;
  // The line of the harmonics where they are of the line (--gamma, --a0 set it): the yield was
  // given at the run's own line whatever --gamma said (found by a hostile tester).
  const bool asked = r.of == HarmonicBase::Line && r.base_omega > 0;
  if (!(asked || line_known(physics)) || r.omega.size() < 2 || r.on_axis.size() != r.omega.size()) return y;
  y.line_omega = asked ? r.base_omega : expected_line_omega(physics);
  const double dw = r.omega[1] - r.omega[0];
  const double f = y.line_omega / dw;
  const std::size_t k = std::size_t(f);
  if (!(f >= 0) || k + 1 >= r.omega.size()) return y;  // above the last bin: nothing to interpolate
  const double t = f - double(k);
  y.d2W = (1 - t) * r.on_axis[k] + t * r.on_axis[k + 1];
  y.photons_per_bw = photons_per_bandwidth(y.d2W);
  y.photons_per_omega = photons_per_unit_omega(y.d2W, y.line_omega);
  y.known = true;
  return y;
}

}  // namespace edm
