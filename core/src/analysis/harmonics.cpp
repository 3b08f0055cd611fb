// Complex harmonic maps: the screen frame (azimuth and circular components about the normal), the
// band and peak-bin rules and the exact DFT row of one bin (conventions in edm/harmonics.hpp).
#include "edm/harmonics.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "edm/error.hpp"

namespace edm {

double screen_azimuth(double x, double y, int normal) { return std::atan2(normal * y, x); }

std::complex<double> circular_component(std::complex<double> ax, std::complex<double> ay, int sigma,
                                        int normal) {
  const std::complex<double> i_sigma_nu(0.0, double(sigma * normal));
  return (ax - i_sigma_nu * ay) / std::numbers::sqrt2;
}

std::pair<std::size_t, std::size_t> band_bins(double lo, double hi, double dw, std::size_t nw) {
  // The 1e-9 keeps a band edge that falls on a bin (n ω_b ± ½ ω_b on a grid of ω_b/M) inside.
  const std::size_t klo = std::size_t(std::max(0.0, std::ceil(lo / dw - 1e-9)));
  const std::size_t khi = std::min(nw - 1, std::size_t(std::max(0.0, std::floor(hi / dw + 1e-9))));
  return {klo, khi};
}

std::size_t harmonic_peak_bin(const std::vector<double>& dI_domega, std::size_t klo, std::size_t khi) {
  std::size_t best = klo;
  for (std::size_t k = klo; k <= khi && k < dI_domega.size(); ++k)
    if (dI_domega[k] > dI_domega[best]) best = k;
  return best;
}

HarmonicBin parse_harmonic_bin(const std::string& name) {
  if (name == "peak") return HarmonicBin::Peak;
  if (name == "nominal") return HarmonicBin::Nominal;
  throw ConfigError("EDM-OAM-006", "--harmonic-bin: unknown value '" + name + "' (peak | nominal)");
}

const char* harmonic_bin_name(HarmonicBin b) { return b == HarmonicBin::Peak ? "peak" : "nominal"; }

std::size_t harmonic_nominal_bin(double omega, double dw, std::size_t klo, std::size_t khi) {
  const double k = std::round(omega / dw);
  return std::clamp(std::size_t(std::max(0.0, k)), klo, khi);
}

std::vector<std::complex<double>> bin_kernel(const std::vector<double>& window, std::size_t k) {
  const std::size_t n = window.size();
  std::vector<std::complex<double>> c(n);
  const double step = 2 * std::numbers::pi / double(n);
  for (std::size_t j = 0; j < n; ++j) c[j] = window[j] * std::polar(1.0, step * double((j * k) % n));
  return c;
}

void fill_circular(HarmonicMaps& m) {
  const std::size_t nh = m.harmonics(), np = m.pixels();
  m.circular.assign(nh * 2 * np, {});
  for (std::size_t h = 0; h < nh; ++h) {
    const auto* ax = m.cartesian_map(h, 0);
    const auto* ay = m.cartesian_map(h, 1);
    for (std::size_t s = 0; s < 2; ++s) {
      auto* out = m.circular.data() + (h * 2 + s) * np;
      for (std::size_t p = 0; p < np; ++p) out[p] = circular_component(ax[p], ay[p], kSigmas[s], m.normal);
    }
  }
}

}  // namespace edm
