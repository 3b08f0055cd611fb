// The angular screen's direction grid (edm/directions.hpp): the [screen] angle keys checked and
// turned into unit vectors n̂ about the chosen axis, with the exact solid angle of each cell.
#include "edm/directions.hpp"

#include <algorithm>
#include <numbers>
#include <string>

#include "edm/error.hpp"

namespace edm {

AxisFrame axis_frame(ScreenAxis axis) {
  switch (axis) {
    case ScreenAxis::PlusZ: return {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
    case ScreenAxis::MinusZ: return {{1, 0, 0}, {0, -1, 0}, {0, 0, -1}};
    case ScreenAxis::PlusX: return {{0, 1, 0}, {0, 0, 1}, {1, 0, 0}};
    case ScreenAxis::MinusX: return {{0, 1, 0}, {0, 0, -1}, {-1, 0, 0}};
    case ScreenAxis::PlusY: return {{0, 0, 1}, {1, 0, 0}, {0, 1, 0}};
    case ScreenAxis::MinusY: return {{0, 0, 1}, {-1, 0, 0}, {0, -1, 0}};
  }
  throw ConfigError("EDM-CFG-605", "screen.axis: not one of z, -z, x, -x, y, -y (as a number: " +
                                       std::to_string(int(axis)) + ")");
}

namespace {

double grid_value(double lo, double hi, int n, int i) {
  return n == 1 ? lo + 0.5 * (hi - lo) : lo + (hi - lo) * i / (n - 1);
}

// The cell of grid point i: [value − Δ/2, value + Δ/2] clipped to [lo, hi]; the range for n = 1.
void cell_bounds(double lo, double hi, int n, int i, double& a, double& b) {
  if (n == 1) {
    a = lo;
    b = hi;
    return;
  }
  const double half = 0.5 * (hi - lo) / (n - 1);
  const double v = grid_value(lo, hi, n, i);
  a = i == 0 ? lo : v - half;
  b = i == n - 1 ? hi : v + half;
}

// The solid angle of the gnomonic rectangle [a1, a2] × [b1, b2] in (tan θx, tan θy): the
// antiderivative of 1/(1 + a² + b²)^{3/2} is atan(ab/√(1 + a² + b²)).
double gnomonic_corner(double a, double b) { return std::atan(a * b / std::sqrt(1.0 + a * a + b * b)); }

std::array<double, 3> in_frame(const AxisFrame& f, double l1, double l2, double l3) {
  std::array<double, 3> n{};
  for (int c = 0; c < 3; ++c) n[c] = l1 * f.e1[c] + l2 * f.e2[c] + l3 * f.a[c];
  return n;
}

// One angle range: finite, not reversed, not of zero width with several values, within [min, max].
void check_range(const char* lo_key, const char* hi_key, double lo, double hi, int n, double min_allowed,
                 double max_allowed, bool open, const char* why) {
  for (auto [key, v] : {std::pair{lo_key, lo}, std::pair{hi_key, hi}}) {
    if (!std::isfinite(v))
      throw ConfigError("EDM-CFG-600", std::string("screen.") + key + " = " + std::to_string(v) +
                                           ": an angle must be a finite number (rad)");
    const bool outside = open ? !(v > min_allowed && v < max_allowed) : !(v >= min_allowed && v <= max_allowed);
    if (outside)
      throw ConfigError("EDM-CFG-601", std::string("screen.") + key + " = " + std::to_string(v) +
                                           " rad wraps past the pole: " + why);
  }
  if (hi < lo)
    throw ConfigError("EDM-CFG-602", std::string("screen.") + hi_key + " = " + std::to_string(hi) +
                                         " is below screen." + lo_key + " = " + std::to_string(lo));
  if (n > 1 && !(hi > lo))
    throw ConfigError("EDM-CFG-602", std::string("screen.") + lo_key + " = screen." + hi_key + " = " +
                                         std::to_string(lo) + ": a zero-width grid of " + std::to_string(n) +
                                         " directions (use one value, or a range)");
}

}  // namespace

double DirectionGrid::angle1(int i) const { return grid_value(lo1, hi1, nx, i); }
double DirectionGrid::angle2(int j) const { return grid_value(lo2, hi2, ny, j); }
double DirectionGrid::spacing1() const { return nx == 1 ? hi1 - lo1 : (hi1 - lo1) / (nx - 1); }
double DirectionGrid::spacing2() const { return ny == 1 ? hi2 - lo2 : (hi2 - lo2) / (ny - 1); }

DirectionGrid make_direction_grid(const ScreenSection& s) {
  if (s.nx < 1 || s.ny < 1)
    throw ConfigError("EDM-CFG-603", "screen.nx, screen.ny: an angular grid needs at least one direction each (got " +
                                         std::to_string(s.nx) + " × " + std::to_string(s.ny) + ")");
  DirectionGrid g;
  g.angles = s.angles;
  g.axis = s.axis;
  axis_frame(s.axis);  // checks the axis of a section built in code
  g.nx = s.nx;
  g.ny = s.ny;
  constexpr double pi = std::numbers::pi;
  if (s.angles == AngleGrid::XY) {
    const char* why = "angles = \"xy\" needs |theta| < pi/2 (use angles = \"polar\" beyond)";
    check_range("theta_x_min", "theta_x_max", s.theta_x_min, s.theta_x_max, s.nx, -pi / 2, pi / 2, true, why);
    check_range("theta_y_min", "theta_y_max", s.theta_y_min, s.theta_y_max, s.ny, -pi / 2, pi / 2, true, why);
    g.lo1 = s.theta_x_min, g.hi1 = s.theta_x_max, g.lo2 = s.theta_y_min, g.hi2 = s.theta_y_max;
  } else if (s.angles == AngleGrid::Polar) {
    check_range("theta_min", "theta_max", s.theta_min, s.theta_max, s.nx, 0.0, pi, false,
                "the polar angle lies in [0, pi]");
    check_range("phi_min", "phi_max", s.phi_min, s.phi_max, s.ny, -2 * pi, 2 * pi, false,
                "phi lies within [-2 pi, 2 pi]");
    if (s.phi_max - s.phi_min > 2 * pi)
      throw ConfigError("EDM-CFG-601", "screen.phi_max − screen.phi_min = " + std::to_string(s.phi_max - s.phi_min) +
                                           " rad: the azimuth wraps past a full turn (at most 2 pi)");
    g.lo1 = s.theta_min, g.hi1 = s.theta_max, g.lo2 = s.phi_min, g.hi2 = s.phi_max;
  } else {
    throw ConfigError("EDM-CFG-604", "screen.angles: not one of xy, polar (as a number: " +
                                         std::to_string(int(s.angles)) + ")");
  }
  return g;
}

DirectionCell direction_cell(const DirectionGrid& g, int i, int j) {
  const AxisFrame f = axis_frame(g.axis);
  DirectionCell c;
  double a1, a2, b1, b2;
  cell_bounds(g.lo1, g.hi1, g.nx, i, a1, a2);
  cell_bounds(g.lo2, g.hi2, g.ny, j, b1, b2);
  if (g.angles == AngleGrid::XY) {
    const double a = std::tan(g.angle1(i)), b = std::tan(g.angle2(j));
    const double inv = 1.0 / std::sqrt(1.0 + a * a + b * b);
    c.n = in_frame(f, a * inv, b * inv, inv);
    const double ta1 = std::tan(a1), ta2 = std::tan(a2), tb1 = std::tan(b1), tb2 = std::tan(b2);
    c.solid_angle = gnomonic_corner(ta2, tb2) - gnomonic_corner(ta1, tb2) - gnomonic_corner(ta2, tb1) +
                    gnomonic_corner(ta1, tb1);
  } else {
    const double th = g.angle1(i), ph = g.angle2(j);
    c.n = in_frame(f, std::sin(th) * std::cos(ph), std::sin(th) * std::sin(ph), std::cos(th));
    // cos θ1 − cos θ2 = 2 sin((θ1 + θ2)/2) sin((θ2 − θ1)/2): no cancellation for narrow cells.
    c.solid_angle = 2.0 * std::sin(0.5 * (a1 + a2)) * std::sin(0.5 * (a2 - a1)) * (b2 - b1);
  }
  return c;
}

std::vector<DirectionCell> direction_cells(const DirectionGrid& g) {
  std::vector<DirectionCell> out;
  out.reserve(g.count());
  for (int j = 0; j < g.ny; ++j)
    for (int i = 0; i < g.nx; ++i) out.push_back(direction_cell(g, i, j));
  return out;
}

double n_z_minus_sign(const std::array<double, 3>& n, double s) {
  if (n[2] * s > 0) return -s * (n[0] * n[0] + n[1] * n[1]) / (1.0 + std::abs(n[2]));
  return n[2] - s;
}

}  // namespace edm
