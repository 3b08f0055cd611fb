// The kinematics of a run's initial ensemble that the expected emission line depends on: recorded in
// run.toml [kinematics] by the driver (from the scenario's initial states, so it holds for every
// scenario, in the tree or not) and read back by `edm spectrum` (spectrum.hpp). Normalised units:
// momenta in m c. share/docs/outputs.md states the convention.
#pragma once
#include <cstdint>

namespace edm {

struct EnsembleKinematics {
  std::uint64_t electrons = 0;  // 0 = not known (nothing below is meaningful)
  int laser_direction = 0;      // s = ±1: the laser travels along s ẑ
  double light_front_h = 0;     // mean of h = γ − s u_z, conserved in a plane wave
  double gamma_mean = 0;        // mean γ
  double u_perp2_mean = 0;      // mean u_x² + u_y²
  double total_weight = 0;      // Σ of the electrons' macro-particle weights (= electrons when all are 1)
};

}  // namespace edm
