// ctest-label: physics
// Tiles of a screen (screen_tile, split_rows: core/include/edm/screen.hpp): a FieldAccumulator built
// on rows [iy0, iy1) of a screen adds exactly what the full screen's accumulator adds to those rows,
// bit for bit (memcmp), for the newton kernel (scalar and vector lanes) and the rk4 kernel, in total
// and split mode, on flat and angular screens; its finish() hands over rows in the full screen's
// numbering; its layout fingerprint covers the window. Analytic splines (plane-wave orbits), as in
// test_sharded.
#define BOOST_TEST_MODULE pixel_tiles
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <cstring>
#include <limits>
#include <numbers>
#include <set>

#include "analytic_splines.hpp"
#include "device_cube.hpp"
#include "edm/accumulator.hpp"
#include "edm/directions.hpp"
#include "edm/error.hpp"
#include "edm/screen.hpp"
#include "test_support.hpp"

using namespace edm;

namespace {

constexpr double pi = std::numbers::pi;
constexpr double kInf = std::numeric_limits<double>::infinity();

// A flat screen off-centre in y (so no row is symmetric to another) with an odd row count.
Screen flat_screen() {
  Screen s;
  s.nx = 5, s.ny = 7, s.samples = 48;
  s.half_x = 300, s.half_y = 230, s.z = 2000;
  s.dt = 2 * pi / 16;
  return s;
}

Screen angular_screen(double R) {
  ScreenSection sec;
  sec.type = ScreenType::Angular;
  sec.angles = AngleGrid::Polar;
  sec.axis = ScreenAxis::MinusZ;
  sec.nx = 4, sec.ny = 7;
  sec.theta_min = 0.0, sec.theta_max = 0.5, sec.phi_min = 0.0, sec.phi_max = 5.0;
  Screen s;
  s.type = ScreenType::Angular;
  s.grid = make_direction_grid(sec);
  s.directions = direction_cells(s.grid);
  s.nx = sec.nx, s.ny = sec.ny, s.samples = 48;
  s.z = R;
  s.dt = 2 * pi / 32;
  return s;
}

// Three Thomson orbits (figure-8 and circular, different phases and offsets) covering the window.
test::CoveredBatch electrons(const Screen& s) {
  std::vector<test::Worldline> ws;
  for (int i = 0; i < 3; ++i)
    ws.push_back(test::plane_wave_orbit(i % 2 ? 0.35 : 0.5, i % 2 ? 0.35 : 0.0, 1.0, +1, 0.4 * i,
                                        {3.0 * i, -2.0 * i, 0.5 * i}));
  return test::covered_batch(s, ws, 2 * pi / 32);
}

// The cube of an accumulator on `screen` (a tile or whole) placed into a full-screen cube of
// `full_ny` rows, NaN where it wrote nothing; rows outside the tile's window fail the test.
void collect_into(std::vector<double>& cube, FieldAccumulator& acc, const Screen& screen, int full_ny, Mode mode) {
  const std::size_t row = std::size_t(screen.nx) * screen.samples;
  acc.finish(
      [&](int b, int c, int y0, int y1, const double* d) {
        BOOST_TEST_REQUIRE(y0 >= screen.row0);
        BOOST_TEST_REQUIRE(y1 <= screen.row0 + screen.ny);
        std::memcpy(cube.data() + ((std::size_t(b) * 3 + c) * full_ny + y0) * row, d,
                    std::size_t(y1 - y0) * row * sizeof(double));
      },
      2);  // slabs of two rows: several slabs per tile where it has more than two rows
  (void)mode;
}

std::vector<double> nan_cube(const Screen& s, Mode mode) {
  return std::vector<double>(std::size_t(bucket_count(mode)) * 3 * s.pixels() * s.samples, std::nan(""));
}

// Every split of the screen into 1, 2, 3 (uneven) and ny tiles, each tile on its own accumulator,
// equals the single pass bit for bit.
void check_tiles(const char* what, const Screen& s0, Mode mode, const KernelOptions& o) {
  const test::CoveredBatch cb = electrons(s0);
  const Screen& s = cb.screen;
  FieldAccumulator whole(test::env_device(), s, mode, o);
  whole.accumulate(cb.batch);
  std::vector<double> ref = nan_cube(s, mode);
  collect_into(ref, whole, s, s.ny, mode);
  double norm = 0;
  for (double v : ref) norm += v * v;
  BOOST_TEST_REQUIRE(std::isfinite(norm), what);
  BOOST_TEST_REQUIRE(norm > 0, what);
  for (int k : {1, 2, 3, s.ny}) {
    std::vector<double> cube = nan_cube(s, mode);
    for (const auto& [iy0, iy1] : split_rows(s.ny, k)) {
      const Screen t = screen_tile(s, iy0, iy1);
      FieldAccumulator acc(test::env_device(), t, mode, o);
      acc.accumulate(cb.batch);
      collect_into(cube, acc, t, s.ny, mode);
    }
    BOOST_TEST(std::memcmp(cube.data(), ref.data(), ref.size() * sizeof(double)) == 0,
               what << ", " << k << " tiles");
  }
}

KernelOptions kernel(FieldKernel k, int simd = 0) {
  KernelOptions o;
  o.kernel = k;
  if (simd) o.simd = simd;
  return o;
}

}  // namespace

BOOST_AUTO_TEST_CASE(split_rows_makes_near_equal_contiguous_tiles) {
  const auto t = split_rows(7, 3);
  BOOST_TEST_REQUIRE(t.size() == 3u);
  BOOST_TEST((t[0] == std::pair<int, int>{0, 3}));
  BOOST_TEST((t[1] == std::pair<int, int>{3, 5}));
  BOOST_TEST((t[2] == std::pair<int, int>{5, 7}));
  for (int ny : {1, 2, 5, 11})
    for (int k = 1; k <= ny; ++k) {
      const auto s = split_rows(ny, k);
      BOOST_TEST_REQUIRE(s.size() == std::size_t(k));
      int y = 0, lo = ny, hi = 0;
      for (const auto& [a, b] : s) {
        BOOST_TEST(a == y);
        lo = std::min(lo, b - a), hi = std::max(hi, b - a);
        y = b;
      }
      BOOST_TEST(y == ny);
      BOOST_TEST(lo >= 1);
      BOOST_TEST(hi - lo <= 1);
    }
}

BOOST_AUTO_TEST_CASE(more_tiles_than_rows_is_refused_naming_the_setting) {
  try {
    split_rows(4, 5, "accumulator.devices");
    BOOST_FAIL("5 tiles of 4 rows accepted");
  } catch (const ConfigError& e) {
    BOOST_TEST(std::string(e.id()) == "EDM-TILE-002");
    BOOST_TEST(std::string(e.what()).find("accumulator.devices") != std::string::npos, e.what());
    BOOST_TEST(std::string(e.what()).find("screen.ny") != std::string::npos, e.what());
  }
  BOOST_CHECK_THROW(split_rows(4, 0), ConfigError);
  const Screen s = flat_screen();
  for (auto [a, b] : {std::pair{-1, 2}, std::pair{3, 3}, std::pair{2, 8}}) {
    try {
      screen_tile(s, a, b);
      BOOST_FAIL("tile [" << a << ", " << b << ") accepted");
    } catch (const Error& e) {
      BOOST_TEST(std::string(e.id()) == "EDM-TILE-001");
    }
  }
}

BOOST_AUTO_TEST_CASE(a_tile_has_the_full_screens_pixels_bit_for_bit) {
  const Screen s = flat_screen();
  for (int k : {2, 3}) {
    for (const auto& [a, b] : split_rows(s.ny, k)) {
      const Screen t = screen_tile(s, a, b);
      BOOST_TEST(t.ny == b - a);
      BOOST_TEST(t.full_ny() == s.ny);
      BOOST_TEST(t.is_tile());
      for (int j = 0; j < t.ny; ++j) BOOST_TEST(std::memcmp(&(const double&)t.pixel_y(j), &(const double&)s.pixel_y(a + j), 8) == 0);
      // A tile of a tile keeps the full screen's numbering.
      if (t.ny > 1) {
        const Screen tt = screen_tile(t, 1, t.ny);
        BOOST_TEST(tt.row0 == a + 1);
        BOOST_TEST(tt.pixel_y(0) == s.pixel_y(a + 1));
      }
    }
  }
  // The whole screen as its own single tile is no tile.
  BOOST_TEST(!screen_tile(s, 0, s.ny).is_tile());
  // Angular: the tile's rows of directions.
  const Screen ang = angular_screen(kInf);
  const Screen t = screen_tile(ang, 2, 5);
  BOOST_TEST_REQUIRE(t.directions.size() == std::size_t(3 * ang.nx));
  for (std::size_t p = 0; p < t.directions.size(); ++p)
    BOOST_TEST((t.directions[p].n == ang.directions[2 * std::size_t(ang.nx) + p].n));
}

BOOST_AUTO_TEST_CASE(a_tiles_arrival_extremes_are_over_its_own_pixels) {
  // Brute force over the tile's pixels, against the separable shortcut of Screen.
  const Screen s = flat_screen();
  const std::array<double, 8> y{0.3, 40.0, 150.0, 2.0, 1.0, 0.0, 0.0, 0.0};
  for (const auto& [a, b] : split_rows(s.ny, 3)) {
    const Screen t = screen_tile(s, a, b);
    double lo = kInf, hi = -kInf;
    for (int iy = 0; iy < t.ny; ++iy)
      for (int ix = 0; ix < t.nx; ++ix) {
        lo = std::min(lo, t.arrival_rel_at(y.data(), ix, iy));
        hi = std::max(hi, t.arrival_rel_at(y.data(), ix, iy));
      }
    BOOST_TEST(t.earliest_arrival_rel(y.data()) == lo);
    BOOST_TEST(t.latest_arrival_rel(y.data()) == hi);
  }
}

BOOST_AUTO_TEST_CASE(newton_tiles_equal_the_single_pass_flat) {
  for (Mode m : {Mode::Total, Mode::Split}) {
    check_tiles(m == Mode::Total ? "newton, flat, total" : "newton, flat, split", flat_screen(), m,
                kernel(FieldKernel::Newton));
    check_tiles(m == Mode::Total ? "newton lanes, flat, total" : "newton lanes, flat, split", flat_screen(), m,
                kernel(FieldKernel::Newton, 4));
  }
}

BOOST_AUTO_TEST_CASE(rk4_tiles_equal_the_single_pass) {
  for (Mode m : {Mode::Total, Mode::Split})
    check_tiles(m == Mode::Total ? "rk4, flat, total" : "rk4, flat, split", flat_screen(), m, kernel(FieldKernel::Rk4));
}

BOOST_AUTO_TEST_CASE(newton_tiles_equal_the_single_pass_angular) {
  for (double R : {300.0, kInf})
    for (Mode m : {Mode::Total, Mode::Split})
      check_tiles(std::isinf(R) ? "angular at infinity" : "angular, R = 300", angular_screen(R), m,
                  kernel(FieldKernel::Newton));
}

BOOST_AUTO_TEST_CASE(a_tiles_layout_fingerprint_covers_its_window) {
  // Tiles of one height share a pixel permutation: their raw layouts must still differ, so that a
  // checkpoint of one tile is never restored into another.
  const Screen s = flat_screen();
  KernelOptions o;
  o.pixel_order = PixelOrder::Rows;
  std::set<std::uint64_t> hashes;
  for (const auto& [a, b] : split_rows(s.ny, s.ny))
    hashes.insert(FieldAccumulator(test::env_device(), screen_tile(s, a, b), Mode::Total, o).layout_hash());
  BOOST_TEST(hashes.size() == std::size_t(s.ny));
  // A whole screen of the same height as a tile: another layout too.
  Screen one_row = s;
  one_row.ny = 1;
  hashes.insert(FieldAccumulator(test::env_device(), one_row, Mode::Total, o).layout_hash());
  BOOST_TEST(hashes.size() == std::size_t(s.ny) + 1);
}
