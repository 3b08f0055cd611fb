// Laser fields in normalised units (units.hpp): plane_wave (exact vacuum solution), gaussian
// (paraxial beam, first-order longitudinal fields), laguerre_gauss (LG_p^m; equals gaussian at
// p = m = 0). Propagation along s ẑ, s = ±1; the envelope centre crosses z = 0 at t = 0.
#pragma once
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
  // Phase variable ξ = t − s z (normalised) of the envelope centre is 0.

 protected:
  int direction_ = 1;
  double a0_ = 0, tau0_ = 0;
};

// Builds the laser described by `section` with propagation direction s (the scenario's choice unless
// section.direction != 0). Throws ConfigError on impossible parameters.
std::unique_ptr<Laser> make_laser(const LaserSection& section, const Normalization& units,
                                  int direction);

}  // namespace edm
