// The detector screen (normalised) and its observer window: built and validated from the campaign,
// screen-relative arrival times (nearest pixel / farthest corner extremes) and the corner-anchored auto
// window. Observer times are screen-relative (share/docs/design.md, conventions).
#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <sstream>

#include "edm/directions.hpp"
#include "edm/error.hpp"
#include "edm/schema.hpp"
#include "edm/screen.hpp"

namespace edm {

const char* bucket_name(int bucket) {
  switch (bucket) {
    case 0: return "E";
    case 1: return "B";
    case 2: return "E_far";
    case 3: return "B_far";
    default: return "?";
  }
}

double Screen::arrival_rel(const double y[8], double px, double py) const {
  // t − |r − x| = t_rel + |Z| − R with R = d + ρ²/(R + d), d = |Z| − s z: the |Z| cancels exactly
  // on paper, so it is never formed (a screen at 10⁹ wavelengths keeps its digits).
  const double s = z >= 0 ? 1.0 : -1.0;
  const double d = std::abs(z) - s * y[3];
  const double dx = px - y[1], dy = py - y[2];
  const double rho2 = dx * dx + dy * dy;
  const double R = std::sqrt(rho2 + d * d);
  return (y[0] - s * y[3]) + rho2 / (R + d);
}

namespace {
// The arrival time grows with the transverse distance ρ² = Δx² + Δy² (ρ²/(R + d) = R − d), and ρ²
// is separable, so the extremes are the nearest / farthest grid coordinate on each axis.
int nearest_index(double x, int n, double half) {
  if (n == 1) return 0;
  const double f = (x + half) / (2.0 * half) * (n - 1);
  if (!(f > 0)) return 0;
  if (f >= n - 1) return n - 1;
  return int(std::lround(f));
}
// The same on a tile's rows: the full screen's nearest row, clamped into the tile, in the tile's
// numbering (ρ² grows monotonically away from the nearest row, so the clamp is the tile's nearest).
int nearest_row(const Screen& s, double y) {
  const int j = nearest_index(y, s.full_ny(), s.half_y) - s.row0;
  return std::clamp(j, 0, s.ny - 1);
}
}  // namespace

double Screen::light_front_sign() const {
  if (angular()) return grid.axis == ScreenAxis::MinusZ ? -1.0 : 1.0;
  return z >= 0 ? 1.0 : -1.0;
}

double Screen::arrival_rel_dir(const double y[8], std::size_t p) const {
  const auto& n = directions[p].n;
  const double s = light_front_sign();
  const double w = n_z_minus_sign(n, s);
  // The operations of lw_dir_psi / lw_dir_arrival (cl/lw_direction.cl), no FMA.
  const double lc = y[0] - s * y[3];
  const double psi = ((lc - n[0] * y[1]) - n[1] * y[2]) - w * y[3];
  if (far_field()) return psi;
  const double d = z - ((n[0] * y[1] + n[1] * y[2]) + n[2] * y[3]);
  const double c0 = n[1] * y[3] - n[2] * y[2], c1 = n[2] * y[1] - n[0] * y[3], c2 = n[0] * y[2] - n[1] * y[1];
  const double q2 = c0 * c0 + c1 * c1 + c2 * c2;
  return psi + q2 / (std::sqrt(q2 + d * d) + d);
}

double Screen::arrival_rel_at(const double y[8], int ix, int iy) const {
  if (angular()) return arrival_rel_dir(y, std::size_t(iy) * std::size_t(nx) + std::size_t(ix));
  return arrival_rel(y, pixel_x(ix), pixel_y(iy));
}

double Screen::earliest_arrival_rel(const double y[8]) const {
  if (angular()) {  // no separable structure on a sphere of directions: every direction
    double best = std::numeric_limits<double>::infinity();
    for (std::size_t p = 0; p < directions.size(); ++p) best = std::min(best, arrival_rel_dir(y, p));
    return best;
  }
  int i = nearest_index(y[1], nx, half_x), j = nearest_row(*this, y[2]);
  // Guard against rounding at half-way points: look at the neighbours too.
  double best = std::numeric_limits<double>::infinity();
  for (int a = std::max(0, i - 1); a <= std::min(nx - 1, i + 1); ++a)
    for (int b = std::max(0, j - 1); b <= std::min(ny - 1, j + 1); ++b)
      best = std::min(best, arrival_rel(y, pixel_x(a), pixel_y(b)));
  return best;
}

double Screen::latest_arrival_rel(const double y[8]) const {
  if (angular()) {
    double worst = -std::numeric_limits<double>::infinity();
    for (std::size_t p = 0; p < directions.size(); ++p) worst = std::max(worst, arrival_rel_dir(y, p));
    return worst;
  }
  const double x0 = pixel_x(0), x1 = pixel_x(nx - 1), y0 = pixel_y(0), y1 = pixel_y(ny - 1);
  const double px = std::abs(x0 - y[1]) >= std::abs(x1 - y[1]) ? x0 : x1;
  const double py = std::abs(y0 - y[2]) >= std::abs(y1 - y[2]) ? y0 : y1;
  return arrival_rel(y, px, py);
}

namespace {

// The observer times are absolute (t_start + k dt, share/docs/outputs.md): at a distance where a
// double no longer resolves dt next to the light's travel time the axis collapses (screen.distance
// = 1e30: every sample at one time, a run that "succeeded" with a field.h5 edm spectrum then refuses
// as damaged; found by tests/test_hostile). The times must be good to a thousandth of a step.
void refuse_unresolved_times(const ScreenSection& s, const Screen& scr, const Normalization& units) {
  constexpr double kStepFraction = 1e-3;
  const double t_far = std::abs(scr.t0_rel + scr.time_offset()) + double(std::max<std::int64_t>(std::int64_t(scr.samples), 1)) * scr.dt;
  const double rounding = t_far * std::numeric_limits<double>::epsilon();
  if (std::isfinite(t_far) && rounding <= kStepFraction * scr.dt) return;
  std::ostringstream os;
  os << "screen.distance = " << s.distance << " m: the observer times (about " << t_far * units.time()
     << " s) cannot resolve the sample step dt = " << scr.dt * units.time()
     << " s to a thousandth in double precision (far enough out, every sample gets one time); at this step the screen may be at most about "
     << kStepFraction * scr.dt / std::numeric_limits<double>::epsilon() * units.length()
     << " m away (or t_start that much later): for the far field use screen.type = \"angular\" with "
        "distance = \"infinity\"";
  throw ConfigError("EDM-CFG-661", os.str());
}

}  // namespace

Screen make_screen(const ScreenSection& s, const Normalization& units) {
  auto bad = [](const std::string& key, const std::string& why) {
    return ConfigError("EDM-CFG-040", "screen." + key + ": " + why);
  };
  // A section built in code has not been through the key table: the guards ask the table.
  const char* id = "EDM-CFG-040";
  check_key_value("screen.nx", s.nx, id);
  check_key_value("screen.ny", s.ny, id);
  // samples = "auto" (−1) is sized by the run driver to the burst's light (window = burst only).
  const bool auto_samples = s.samples == -1 && s.window == ScreenWindow::Burst;
  if (s.samples == -1 && !auto_samples)
    throw bad("samples", "\"auto\" (sized to the burst's light) needs window = \"burst\"");
  if (!auto_samples) check_key_value("screen.samples", s.samples, id);
  check_key_value("screen.samples_per_period", s.samples_per_period, id);
  check_key_value("screen.distance", s.distance, id);
  check_key_value("screen.half_width_x", s.half_width_x, id);
  check_key_value("screen.half_width_y", s.half_width_y, id);
  check_key_value("screen.window", s.window, id);
  if (!(units.omega > 0) || !std::isfinite(units.omega))
    throw ConfigError("EDM-CFG-041", "laser.wavelength: the normalisation needs a positive wavelength");
  if (s.window == ScreenWindow::Explicit) check_key_value("screen.t_start", s.t_start, id);
  check_key_value("screen.type", s.type, id);
  if (s.type == ScreenType::Flat && is_far_field(s.distance))
    throw ConfigError("EDM-CFG-606", "screen.distance = infinity: a flat screen needs a finite distance; "
                                     "the far field is screen.type = \"angular\"");
  if (s.type == ScreenType::Angular && !(s.distance > 0))
    throw ConfigError("EDM-CFG-607", "screen.distance = " + std::to_string(s.distance) +
                                         ": the angular screen's sphere radius must be positive (or \"infinity\"); "
                                         "screen.axis sets the side");
  // Pixel count must fit the device index types (int pixels, 64-bit slots).
  if (std::uint64_t(s.nx) * std::uint64_t(s.ny) > std::uint64_t(std::numeric_limits<int>::max()))
    throw bad("nx", "nx × ny exceeds 2^31 − 1 pixels");

  Screen scr;
  if (s.type == ScreenType::Angular) {
    scr.type = ScreenType::Angular;
    scr.grid = make_direction_grid(s);
    scr.directions = direction_cells(scr.grid);
  }
  scr.nx = s.nx;
  scr.ny = s.ny;
  scr.samples = auto_samples ? 1 : s.samples;  // auto: PreparedCell sets it once the burst is known
  scr.half_x = scr.angular() ? 0.0 : s.half_width_x / units.length();
  scr.half_y = scr.angular() ? 0.0 : s.half_width_y / units.length();
  scr.z = s.distance / units.length();
  scr.dt = 2.0 * std::numbers::pi / s.samples_per_period;  // T/samples_per_period, T = 2π/ω
  // Explicit window: absolute lab time → screen-relative (t − |Z|, c = 1).
  // Angular: t − R on a sphere, t itself (t − n̂·x) at infinity (Screen::time_offset).
  scr.t0_rel = s.window == ScreenWindow::Explicit ? s.t_start / units.time() - scr.time_offset() : 0.0;
  refuse_unresolved_times(s, scr, units);
  return scr;
}

Screen screen_tile(const Screen& full, int iy0, int iy1) {
  if (!(0 <= iy0 && iy0 < iy1 && iy1 <= full.ny))
    throw Error("EDM-TILE-001", "a tile of rows [" + std::to_string(iy0) + ", " + std::to_string(iy1) +
                                    ") does not lie within the screen's " + std::to_string(full.ny) + " rows");
  Screen t;
  t.nx = full.nx;
  t.ny = iy1 - iy0;
  t.samples = full.samples;
  t.half_x = full.half_x;
  t.half_y = full.half_y;
  t.z = full.z;
  t.dt = full.dt;
  t.t0_rel = full.t0_rel;
  t.row0 = full.row0 + iy0;
  t.rows_total = full.full_ny();
  t.type = full.type;
  t.grid = full.grid;
  if (full.angular()) {
    const auto first = full.directions.begin() + std::ptrdiff_t(iy0) * full.nx;
    t.directions.assign(first, first + std::ptrdiff_t(t.ny) * full.nx);
  }
  return t;
}

Screen whole_screen_shape(const Screen& tile) {
  Screen w;
  w.nx = tile.nx;
  w.ny = tile.full_ny();
  w.samples = tile.samples;
  w.half_x = tile.half_x;
  w.half_y = tile.half_y;
  w.z = tile.z;
  w.dt = tile.dt;
  w.t0_rel = tile.t0_rel;
  w.type = tile.type;
  w.grid = tile.grid;
  return w;
}

std::vector<std::pair<int, int>> split_rows(int ny, int k, const std::string& what) {
  if (!(k >= 1 && k <= ny))
    throw ConfigError("EDM-TILE-002", what + ": " + std::to_string(k) + " tiles of a screen of " +
                                          std::to_string(ny) + " rows (screen.ny): a tile needs at least one row, so "
                                          "at most " + std::to_string(ny) + " tiles");
  std::vector<std::pair<int, int>> out;
  out.reserve(std::size_t(k));
  const int base = ny / k, taller = ny % k;
  for (int i = 0, y = 0; i < k; ++i) {
    const int h = base + (i < taller ? 1 : 0);
    out.emplace_back(y, y + h);
    y += h;
  }
  return out;
}

void choose_window(Screen& screen, const std::vector<std::array<double, 8>>& initial_states) {
  if (initial_states.empty()) return;
  double latest = -std::numeric_limits<double>::infinity();
  for (const auto& y : initial_states) latest = std::max(latest, screen.latest_arrival_rel(y.data()));
  screen.t0_rel = latest;
}

}  // namespace edm
