// The detector screen and its observer-time window, normalised. Pixels sit on a regular grid
// x_i = −hwx + i·2hwx/(nx−1) (x = 0 when nx = 1), same for y, in the plane z = Z. Observer times are
// kept screen-relative, t_rel = t − |Z| (units c = 1), so that a far screen loses no digits
// (share/docs/design.md, screen-relative times); the absolute lab time is t_rel + |Z|.
// The angular screen (screen.type = "angular", edm/directions.hpp) has one direction n̂ per pixel
// (index iy·nx + ix): z is the sphere's radius R > 0 (observer at R n̂, t_rel = t − R) or +inf
// (the far field, t_rel = t − n̂·x: the observer time itself); half_x = half_y = 0.
#pragma once
#include <array>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "edm/campaign.hpp"
#include "edm/directions.hpp"
#include "edm/units.hpp"

namespace edm {

// Mode (run.mode) is a campaign choice: campaign.hpp.
inline int bucket_count(Mode m) { return m == Mode::Total ? 2 : 4; }  // E, B [, E_far, B_far]
const char* bucket_name(int bucket);  // "E", "B", "E_far", "B_far"

struct Screen {
  int nx = 1, ny = 1, samples = 1;
  double half_x = 0, half_y = 0;  // normalised
  double z = 0;                   // normalised, signed
  double dt = 0;                  // normalised
  double t0_rel = 0;              // t_rel of sample 0
  // A tile (screen_tile): rows [row0, row0 + ny) of a screen of rows_total rows, whose row j sits
  // where the full screen's row row0 + j does, bit for bit (pixel_y forms the full screen's
  // expression). rows_total = 0: the screen is whole (row0 = 0). Everything else (window, dt,
  // half widths, samples) is the full screen's; pixel indices (iy·nx + ix) are the tile's own.
  int row0 = 0;
  int rows_total = 0;

  int full_ny() const { return rows_total > 0 ? rows_total : ny; }
  bool is_tile() const { return rows_total > 0 && (row0 != 0 || ny != rows_total); }
  double pixel_x(int i) const { return nx == 1 ? 0.0 : -half_x + 2.0 * half_x * i / (nx - 1); }
  double pixel_y(int j) const {
    const int n = full_ny();
    return n == 1 ? 0.0 : -half_y + 2.0 * half_y * (row0 + j) / (n - 1);
  }
  double t_rel(int k) const { return t0_rel + dt * k; }
  std::uint64_t pixels() const { return std::uint64_t(nx) * ny; }
  std::uint64_t slots_per_electron() const { return pixels() * samples; }
  // Screen-relative arrival time t_rel of light emitted at state y toward pixel (px, py):
  // (t − s z) + ρ²/(R + |Z| − s z) − … written without cancellation (s = sign Z).
  double arrival_rel(const double y[8], double px, double py) const;
  // Earliest / latest arrival over all pixels (nearest pixel / farthest corner).
  double earliest_arrival_rel(const double y[8]) const;
  double latest_arrival_rel(const double y[8]) const;

  ScreenType type = ScreenType::Flat;
  DirectionGrid grid;                     // angular only
  std::vector<DirectionCell> directions;  // angular only: n̂ and solid angle per pixel
  bool angular() const { return type == ScreenType::Angular; }
  bool far_field() const { return angular() && is_far_field(z); }
  // s_z of the light front t − s_z z that the device forms: the sign of Z (flat); angular, −1 for
  // the axis −z, else +1.
  double light_front_sign() const;
  // Lab time − t_rel: |Z| (flat), R (sphere), 0 (far field).
  double time_offset() const { return far_field() ? 0.0 : std::abs(z); }
  // Arrival time t_rel at pixel (ix, iy), flat or angular (angular: arrival_rel_dir).
  double arrival_rel_at(const double y[8], int ix, int iy) const;
  // Angular: arrival time at direction p (iy·nx + ix): ψ + q²/(|R n̂ − x| + d) with ψ = t − n̂·x,
  // d = R − n̂·x, q² = |n̂ × x|²; ψ alone in the far field (cl/lw_direction.cl, same operations).
  double arrival_rel_dir(const double y[8], std::size_t p) const;
};

// Rows [iy0, iy1) of `full` (a whole screen or itself a tile; rows in `full`'s numbering) as a
// screen of their own: ny = iy1 − iy0, row0 and rows_total set so that its pixels are the full
// screen's, bit for bit, and an angular screen keeps its rows' slice of `directions`. The window,
// dt and the coverage of the full screen are not re-derived: a tile is never a new screen.
// Error EDM-SCR-001 unless 0 <= iy0 < iy1 <= full.ny.
Screen screen_tile(const Screen& full, int iy0, int iy1);
// The screen a tile belongs to, without its directions (shape, geometry and window only: what the
// kernels' tuning and a layout's fingerprint read): ny = full_ny(), row0 = rows_total = 0.
Screen whole_screen_shape(const Screen& tile);
// ny rows in k contiguous tiles of near-equal height ([iy0, iy1) each, in order; the first ny mod k
// one row taller). ConfigError EDM-SCR-002 naming `what` (the key or setting that asked for k
// tiles) unless 1 <= k <= ny: a tile has at least one row.
std::vector<std::pair<int, int>> split_rows(int ny, int k, const std::string& what = "tiles");

// Builds the screen from the campaign (checks sizes: nx, ny, samples ≥ 1, finite distances, …).
// t0_rel is left 0 for window = auto; choose_window sets it.
Screen make_screen(const ScreenSection& s, const Normalization& units);

// Corner-anchored window start for screens built by hand (tests, tools): sample 0 at the latest
// arrival, over all pixels and electrons, of light from the given initial states, so that no
// trajectory starting there begins inside the window. (`edm run`'s auto window is centred on the
// interaction and extends the trajectories instead: PreparedCell in run.hpp.)
void choose_window(Screen& screen, const std::vector<std::array<double, 8>>& initial_states);

}  // namespace edm
