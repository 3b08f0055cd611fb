// Laser fields in normalised units (units.hpp): plane_wave (exact vacuum solution), gaussian
// (paraxial beam, first-order longitudinal fields), laguerre_gauss (LG_p^m; equals gaussian at
// p = m = 0). Propagation along s ẑ, s = ±1; the envelope centre crosses z = 0 at t = 0.
// Envelopes: gaussian exp(−(ξ/τ0)²), supergaussian exp(−(ξ/τ0)^(2p)) (a flat top of order p;
// p = 1 is the gaussian) and constant.
#pragma once
#include <cmath>
#include <memory>

#include "edm/campaign.hpp"
#include "edm/units.hpp"

namespace edm {

class Laser {
 public:
  virtual ~Laser() = default;
  // E and B (normalised) at event (t, x, y, z) (normalised). Thread-safe (const, no state).
  virtual void field(const double x4[4], double E[3], double B[3]) const = 0;
  int direction() const { return direction_; }  // s = ±1
  double a0() const { return a0_; }              // peak normalised amplitude (after pulse_energy)
  double tau0() const { return tau0_; }          // envelope duration, normalised (0 = constant)
  int order() const { return order_; }           // p of exp(−(ξ/τ0)^(2p)); 1 = gaussian
  // Phase variable ξ = t − s z (normalised) of the envelope centre is 0.

 protected:
  int direction_ = 1;
  double a0_ = 0, tau0_ = 0;
  int order_ = 1;
};

// The envelope's order p as the section defines it: laser.order for a supergaussian, 1 otherwise
// (a gaussian is the supergaussian of order 1; a constant envelope has no τ0 to raise).
inline int envelope_order(const LaserSection& section) {
  return section.envelope == Envelope::SuperGaussian ? section.order : 1;
}

// |ξ| at which the envelope exp(−(ξ/τ0)^(2p)) has fallen to exp(−x): τ0 x^(1/(2p)). Every span that
// ends where the envelope reaches a level (the scenario's window, the emission span) takes it from
// here, so that a flat top ends them at its edge and not at the gaussian's.
inline double envelope_reach(double tau0, int order, double x) {
  return tau0 * (order == 1 ? std::sqrt(x) : std::pow(x, 1.0 / (2.0 * order)));  // the gaussian's to the bit
}

// ∫ g(ξ)² dξ over the whole line for g = exp(−(ξ/τ0)^(2p)): 2 τ0 Γ(1 + 1/(2p)) 2^(−1/(2p))
// (τ0 √(π/2) at p = 1), the duration in a pulse energy (share/docs/campaign.md).
inline double envelope_energy_length(double tau0, int order) {
  const double k = 1.0 / (2.0 * order);
  return 2.0 * tau0 * std::tgamma(1.0 + k) * std::pow(2.0, -k);
}

// Builds the laser described by `section` with propagation direction s (the scenario's choice unless
// section.direction != 0). Throws ConfigError on impossible parameters.
std::unique_ptr<Laser> make_laser(const LaserSection& section, const Normalization& units,
                                  int direction);

}  // namespace edm
