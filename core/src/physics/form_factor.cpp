// The Gaussian form factor of the coherent sum (edm/form_factor.hpp; the derivation and its
// assumptions: share/docs/ensembles.md). Values are refused by name here, since spectra and tests
// build a GaussianBunch in code as well as from the campaign's electrons.form_factor_* keys.
#include "edm/form_factor.hpp"

#include <cmath>
#include <string>

#include "edm/error.hpp"
#include "edm/units.hpp"

namespace edm {
namespace {

void check_bunch(const GaussianBunch& b) {
  auto bad = [](const std::string& what) {
    throw ConfigError("EDM-CFG-644", "Gaussian form factor: " + what);
  };
  if (!(std::isfinite(b.sigma_z) && b.sigma_z >= 0)) bad("sigma_z = " + std::to_string(b.sigma_z) + " must be finite and >= 0 (m)");
  if (!(std::isfinite(b.sigma_r) && b.sigma_r >= 0)) bad("sigma_r = " + std::to_string(b.sigma_r) + " must be finite and >= 0 (m)");
  if (!(std::fabs(b.beta_z) < 1)) bad("beta_z = " + std::to_string(b.beta_z) + " must lie in (−1, 1)");
  if (!std::isfinite(b.drive_beta) || b.drive_beta == b.beta_z)
    bad("drive_beta = " + std::to_string(b.drive_beta) +
        " must be finite and differ from beta_z (electrons riding with their drive meet it all at once)");
}

}  // namespace

GaussianBunch laser_driven_bunch(double sigma_z, double sigma_r, double gamma_mean, double light_front_h,
                                 int laser_direction) {
  if (laser_direction != 1 && laser_direction != -1)
    throw ConfigError("EDM-CFG-644", "Gaussian form factor: laser direction " + std::to_string(laser_direction) +
                                         " is not +1 or -1");
  if (!(gamma_mean >= 1 && std::isfinite(gamma_mean)))
    throw ConfigError("EDM-CFG-644", "Gaussian form factor: gamma_mean = " + std::to_string(gamma_mean) + " must be >= 1");
  GaussianBunch b{sigma_z, sigma_r, laser_direction * (gamma_mean - light_front_h) / gamma_mean, double(laser_direction)};
  check_bunch(b);
  return b;
}

double form_factor_lever(double n_z, const GaussianBunch& b) {
  check_bunch(b);
  return (1.0 - b.drive_beta * n_z) / (b.drive_beta - b.beta_z);
}

double gaussian_form_factor(double omega, const double n[3], const GaussianBunch& b) {
  check_bunch(b);
  if (!(std::isfinite(omega) && omega >= 0))
    throw ConfigError("EDM-CFG-644", "Gaussian form factor: omega = " + std::to_string(omega) + " must be finite and >= 0");
  const double norm = std::sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
  if (!(norm > 0 && std::isfinite(norm)))
    throw ConfigError("EDM-CFG-644", "Gaussian form factor: the direction n̂ is zero or not finite");
  const double nz = n[2] / norm, nperp2 = (n[0] * n[0] + n[1] * n[1]) / (norm * norm);
  const double k = omega / si::c;
  const double L = form_factor_lever(nz, b);
  const double lz = k * b.sigma_z * L, lr2 = k * k * b.sigma_r * b.sigma_r * nperp2;
  return std::exp(-0.5 * (lz * lz + lr2));
}

}  // namespace edm
