// The on-axis photon yield of a run at its expected line (edm spectrum prints it, edm info shows it):
// d²W/dωdΩ of the sample nearest the axis (spectrum.hpp nearest_axis_sample), unwindowed, at ω_1
// (run.toml [kinematics], spectrum.hpp expected_line_omega), interpolated linearly between the two
// bins around it, in photons per sr per 0.1 % bandwidth per shot (photon_units.hpp;
// share/docs/outputs.md "Photon units").
#pragma once
#include "edm/spectrum.hpp"

namespace edm {

struct LineYield {
  bool known = false;          // false: no line recorded, or it lies above the Nyquist frequency
  double line_omega = 0;       // ω_1, rad/s
  double d2W = 0;              // J·s/rad/sr at ω_1 (the on-axis sample, unwindowed: spectrum.hpp)
  // The windowed spectrum there divided by the window's gain w(t_c)² at the pulse: the cross-check
  // of d2W (equal for window none; NaN where the gain is 0).
  double d2W_window_corrected = 0;
  double photons_per_bw = 0;   // photons/sr in Δω = 10⁻³ ω_1
  double photons_per_omega = 0;  // photons per unit ω (rad/s) per sr
};

LineYield on_axis_line_yield(const SpectrumResult& spectrum, const RunPhysics& physics);

// `spectrum` at `at` on the increasing grid `omega`, linear between the two bins around it; NaN
// outside the grid.
double interpolate_at(const std::vector<double>& omega, const std::vector<double>& spectrum, double at);

}  // namespace edm
