// The frequency grid of the direct spectra (edm/photon_units.hpp), with its checks: the grid is
// built in code as well as from a campaign, so the rules are checked here, where both pass.
#include "edm/photon_units.hpp"

#include <cmath>
#include <initializer_list>
#include <string>
#include <utility>

#include "edm/error.hpp"

namespace edm {

std::vector<double> spectra_frequencies(const SpectraSection& s, double laser_omega) {
  if (s.count < 1)
    throw ConfigError("EDM-CFG-622", "[spectra] count: must be >= 1 (frequencies on the grid), got " +
                                         std::to_string(s.count));
  if (s.scale == SpectraScale::Log && !(s.omega_min > 0.0))
    throw ConfigError("EDM-CFG-623", "[spectra] omega_min: a log grid (scale = \"log\") needs omega_min > 0, got " +
                                         std::to_string(s.omega_min));
  for (const auto& [key, v] : {std::pair{"omega_min", s.omega_min}, std::pair{"omega_max", s.omega_max}})
    if (!(v > 0.0) || !std::isfinite(v))
      throw ConfigError("EDM-CFG-620", std::string("[spectra] ") + key + ": must be > 0 and finite, got " +
                                           std::to_string(v));
  if (s.omega_max < s.omega_min)
    throw ConfigError("EDM-CFG-621", "[spectra] omega_max (" + std::to_string(s.omega_max) +
                                         ") is below omega_min (" + std::to_string(s.omega_min) + ")");
  const double unit = s.unit == SpectraUnit::EV ? ev_to_omega(1.0) : laser_omega;
  const double lo = s.omega_min * unit, hi = s.omega_max * unit;
  std::vector<double> w(std::size_t(s.count));
  const int n = s.count;
  for (int k = 0; k < n; ++k) {
    const double f = n == 1 ? 0.0 : double(k) / double(n - 1);
    w[std::size_t(k)] = s.scale == SpectraScale::Log ? lo * std::pow(hi / lo, f) : lo + (hi - lo) * f;
  }
  w.back() = n == 1 ? lo : hi;  // the bound exactly, whatever the rounding of the last step
  return w;
}

}  // namespace edm
