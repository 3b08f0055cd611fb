// The angular screen's directions (screen.type = "angular"): a grid of unit vectors n̂ about a
// chosen axis, each with the solid angle of its cell, and the far-field limit (screen.distance =
// "infinity"). share/docs/campaign.md (the angular screen) and share/docs/design.md (conventions)
// say what the keys mean; share/docs/outputs.md how field.h5 stores the grid.
//
// Grid index (i, j), i along the first angle (nx of them), j along the second (ny): direction
// (i, j) is cell j·nx + i, the pixel order of the flat screen (iy·nx + ix).
//   angles = "xy":    θx_i, θy_j from theta_x_min..max, theta_y_min..max (endpoints included; one
//                     value: the middle of the range). n̂ ∝ tan θx e1 + tan θy e2 + a — the direction
//                     of the point (Z tan θx, Z tan θy) of a flat screen at distance Z on the axis,
//                     so θx = atan(x/Z); |θ| < π/2.
//   angles = "polar": θ_i from theta_min..max (0 ≤ θ ≤ π, from the axis), φ_j from phi_min..max
//                     (a span of at most 2π, from e1 towards e2): n̂ = sin θ (cos φ e1 + sin φ e2) +
//                     cos θ a.
// The axis frame (e1, e2, a), right-handed: z: (x, y, z); -z: (x, −y, −z); x: (y, z, x);
// -x: (y, −z, −x); y: (z, x, y); -y: (z, −x, −y) — signed permutations, so exact.
// A cell is the grid point's share of the range: [θ − Δ/2, θ + Δ/2] clipped to the range (the
// edges get half cells, the trapezoid weights), the whole range for a single value; its solid
// angle is exact (closed form), and the cells tile the grid's range.
#pragma once
#include <array>
#include <cmath>
#include <cstdint>
#include <vector>

#include "edm/campaign.hpp"

namespace edm {

// The frame of screen.axis: e1, e2 and the axis a (e1 × e2 = a).
struct AxisFrame {
  std::array<double, 3> e1, e2, a;
};
AxisFrame axis_frame(ScreenAxis axis);

struct DirectionGrid {
  AngleGrid angles = AngleGrid::XY;
  ScreenAxis axis = ScreenAxis::PlusZ;
  int nx = 1, ny = 1;
  double lo1 = 0, hi1 = 0;  // rad: θx (xy) or θ (polar), nx values
  double lo2 = 0, hi2 = 0;  // rad: θy (xy) or φ (polar), ny values

  // The angles of grid point i (first) and j (second): lo + i (hi − lo)/(n − 1); the middle of
  // the range for n = 1.
  double angle1(int i) const;
  double angle2(int j) const;
  // The spacing of each angle (rad): (hi − lo)/(n − 1); the range's width for n = 1.
  double spacing1() const;
  double spacing2() const;
  std::uint64_t count() const { return std::uint64_t(nx) * std::uint64_t(ny); }
};

// One direction of the grid: n̂ (unit, lab frame) and the solid angle of its cell (sr).
struct DirectionCell {
  std::array<double, 3> n;
  double solid_angle = 0;
};

// Builds and checks the grid from the [screen] keys (type = angular): ConfigError naming the key
// for a range that wraps past the pole (polar θ outside [0, π], xy |θ| ≥ π/2, a φ span over 2π),
// a zero-width or reversed range with more than one value (max ≤ min), a non-finite angle
// (EDM-CFG-600..604).
DirectionGrid make_direction_grid(const ScreenSection& s);

// n̂ of direction (i, j) and its cell's solid angle.
DirectionCell direction_cell(const DirectionGrid& g, int i, int j);
// Every direction, index j·nx + i (the pixel order of the flat screen).
std::vector<DirectionCell> direction_cells(const DirectionGrid& g);

// n_z − s for s = ±1 without cancellation where n_z ≈ s (n̂ near the ±z axis): −s(n_x² + n_y²)/
// (1 + |n_z|). The kernel forms t − n̂·x as (t − s z) − n_x x − n_y y − (n_z − s) z, with t − s z the
// light front the device already holds (cl/lw_slot.cl), so that t − n̂·x keeps its digits at high γ.
double n_z_minus_sign(const std::array<double, 3>& n, double s);

// Whether a distance (normalised or SI) is the far-field limit.
inline bool is_far_field(double distance) { return std::isinf(distance) && distance > 0; }

}  // namespace edm
