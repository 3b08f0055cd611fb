// ctest-label: unit
// Screen module: campaign → normalised screen and its validation, screen-relative arrival times and
// their extremes against brute force over every pixel, the corner-anchored auto window, and the
// coverage check (a trajectory that does not reach the window is reported, with its dropped slots).
#define BOOST_TEST_MODULE screen
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <numbers>
#include <random>

#include "analytic_splines.hpp"
#include "edm/error.hpp"
#include "edm/coverage.hpp"
#include "edm/screen.hpp"
#include "test_support.hpp"

using namespace edm;

namespace {

Screen small_screen(double z) {
  Screen s;
  s.nx = 7;
  s.ny = 5;
  s.samples = 40;
  s.half_x = 30;
  s.half_y = 12;
  s.z = z;
  s.dt = 0.25;
  return s;
}

bool message_has(const Error& e, const std::string& key) {
  return std::string(e.what()).find(key) != std::string::npos;
}

}  // namespace

BOOST_AUTO_TEST_CASE(make_screen_normalises) {
  ScreenSection sec;
  sec.distance = 0.05;
  sec.half_width_x = 2e-3;
  sec.half_width_y = 1e-3;
  sec.nx = 9;
  sec.ny = 4;
  sec.samples = 33;
  sec.samples_per_period = 256;
  const auto units = Normalization::from_wavelength(800e-9);
  Screen s = make_screen(sec, units);
  BOOST_TEST(s.nx == 9);
  BOOST_TEST(s.ny == 4);
  BOOST_TEST(s.samples == 33);
  BOOST_TEST(s.z == 0.05 / units.length(), boost::test_tools::tolerance(1e-15));
  BOOST_TEST(s.half_x == 2e-3 / units.length(), boost::test_tools::tolerance(1e-15));
  BOOST_TEST(s.half_y == 1e-3 / units.length(), boost::test_tools::tolerance(1e-15));
  BOOST_TEST(s.dt == 2 * std::numbers::pi / 256, boost::test_tools::tolerance(1e-15));
  BOOST_TEST(s.t0_rel == 0.0);
  // Explicit window: absolute lab time → screen-relative.
  sec.window = ScreenWindow::Explicit;
  sec.t_start = 0.2e-9;  // s, light needs 0.1668 ns to reach 5 cm
  s = make_screen(sec, units);
  BOOST_TEST(s.t0_rel == 0.2e-9 / units.time() - 0.05 / units.length(), boost::test_tools::tolerance(1e-12));
}

BOOST_AUTO_TEST_CASE(make_screen_rejects_bad_input) {
  const auto units = Normalization::from_wavelength(800e-9);
  auto expect = [&](ScreenSection sec, const std::string& key) {
    try {
      make_screen(sec, units);
      BOOST_ERROR("make_screen accepted a bad screen." + key);
    } catch (const ConfigError& e) {
      BOOST_TEST_MESSAGE("refused as intended: [" << e.id() << "] " << e.what());
      BOOST_TEST(message_has(e, "screen." + key));
    }
  };
  ScreenSection s;
  s.nx = 0;
  expect(s, "nx");
  s = {};
  s.ny = -3;
  expect(s, "ny");
  s = {};
  s.samples = 0;
  expect(s, "samples");
  s = {};
  s.distance = 0;
  expect(s, "distance");
  s = {};
  s.distance = std::numeric_limits<double>::infinity();
  expect(s, "distance");
  s = {};
  s.half_width_x = std::nan("");
  expect(s, "half_width_x");
  s = {};
  s.half_width_y = -1e-3;
  expect(s, "half_width_y");
  s = {};
  s.window = static_cast<ScreenWindow>(7);  // no word of the choice: only a cast makes one
  expect(s, "window");
}

BOOST_AUTO_TEST_CASE(arrival_matches_plain_light_cone) {
  // arrival_rel = t + |r − x| − |Z| (plain form, fine at a near screen), both screen signs.
  for (double z : {80.0, -80.0}) {
    Screen s = small_screen(z);
    const double y[8] = {3.5, 1.2, -0.7, 2.5, 2, 0, 0, 0};
    for (int i = 0; i < s.nx; ++i)
      for (int j = 0; j < s.ny; ++j) {
        const long double dx = s.pixel_x(i) - y[1], dy = s.pixel_y(j) - y[2], dz = z - y[3];
        const long double plain = y[0] + std::sqrt(dx * dx + dy * dy + dz * dz) - std::fabs(z);
        BOOST_TEST(s.arrival_rel(y, s.pixel_x(i), s.pixel_y(j)) == double(plain), boost::test_tools::tolerance(1e-13));
      }
  }
  // A screen at 10⁹ units: the transverse delay ρ²/(R + d) ≈ ρ²/(2d) keeps all its digits.
  Screen far = small_screen(1e9);
  const double y[8] = {0, 0, 0, 0, 1, 0, 0, 0};
  const double delay = far.arrival_rel(y, 3.0, 4.0);
  BOOST_TEST(delay == 25.0 / 2e9, boost::test_tools::tolerance(1e-14));
}

BOOST_AUTO_TEST_CASE(arrival_extremes_vs_brute_force) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> U(-1, 1);
  for (double z : {60.0, -45.0}) {
    Screen s = small_screen(z);
    for (int trial = 0; trial < 400; ++trial) {
      // Positions inside and well outside the screen's transverse extent.
      const double y[8] = {5 * U(rng), 45 * U(rng), 20 * U(rng), 10 * U(rng), 1, 0, 0, 0};
      double lo = INFINITY, hi = -INFINITY;
      for (int i = 0; i < s.nx; ++i)
        for (int j = 0; j < s.ny; ++j) {
          const double a = s.arrival_rel(y, s.pixel_x(i), s.pixel_y(j));
          lo = std::min(lo, a);
          hi = std::max(hi, a);
        }
      BOOST_TEST(s.earliest_arrival_rel(y) == lo);
      BOOST_TEST(s.latest_arrival_rel(y) == hi);
    }
  }
  // Single-pixel axes (nx = 1 puts the pixel at x = 0).
  Screen s1 = small_screen(30);
  s1.nx = 1;
  const double y[8] = {0, 4, -3, 1, 1, 0, 0, 0};
  BOOST_TEST(s1.earliest_arrival_rel(y) == s1.arrival_rel(y, 0.0, s1.pixel_y(1)));
  BOOST_TEST(s1.latest_arrival_rel(y) == s1.arrival_rel(y, 0.0, s1.pixel_y(4)));
}

BOOST_AUTO_TEST_CASE(auto_window_is_corner_anchored) {
  Screen s = small_screen(70);
  std::vector<std::array<double, 8>> states = {{0, 0, 0, 0, 1, 0, 0, 0},
                                               {-2, 3, 1, -5, 1, 0, 0, 0},
                                               {1, -6, 2, 4, 1, 0, 0, 0}};
  choose_window(s, states);
  double latest = -INFINITY;
  for (auto& y : states)
    for (int i = 0; i < s.nx; ++i)
      for (int j = 0; j < s.ny; ++j) latest = std::max(latest, s.arrival_rel(y.data(), s.pixel_x(i), s.pixel_y(j)));
  // Sample 0 sits exactly at the latest arrival of any initial state at any pixel (a corner).
  BOOST_TEST(s.t0_rel == latest);
  BOOST_TEST_MESSAGE("auto window t0_rel = " << s.t0_rel);
}

BOOST_AUTO_TEST_CASE(coverage_detects_short_trajectory) {
  Screen s = small_screen(100);
  auto w = test::uniform_motion({0.5, -0.3, 0}, {0.1, 0.05, 0.6});
  choose_window(s, {test::state_at(w, 0.0)});
  const double t_last = s.t_rel(s.samples - 1);

  // Long enough: the last knot's light reaches every pixel after the last sample.
  double T = 1;
  while (s.earliest_arrival_rel(test::state_at(w, T).data()) <= t_last + 1) T += 1;
  SplineBatch ok;
  test::append_electron(ok, w, 0.0, 0.25, std::uint32_t(std::ceil(T / 0.25)), 0);
  auto good = check_coverage(s, ok);
  BOOST_TEST(good.clipped_electrons() == 0u);
  BOOST_TEST(good.dropped_slots() == 0u);
  BOOST_TEST(good.min_margin_start() >= 0.0);
  BOOST_TEST(good.min_margin_end() > 0.0);

  // Too short: ends half-way through the window for the nearest pixel.
  SplineBatch short_batch;
  const double T_short = T * 0.6;
  test::append_electron(short_batch, w, 0.0, 0.25, std::uint32_t(T_short / 0.25), 1);
  test::append_electron(short_batch, w, 0.0, 0.25, std::uint32_t(std::ceil(T / 0.25)), 2);
  auto bad = check_coverage(s, short_batch);
  BOOST_TEST_MESSAGE("short trajectory: margin_end = " << bad.records[0].margin_end << ", dropped "
                                                       << bad.records[0].dropped_slots << " slots");
  BOOST_TEST(bad.clipped_electrons() == 1u);
  BOOST_TEST(bad.records[0].clipped());
  BOOST_TEST(bad.records[0].electron == 1u);
  BOOST_TEST(!bad.records[1].clipped());
  BOOST_TEST(bad.min_margin_end() < 0.0);
  // Dropped slots against brute force: samples after the arrival of the last knot's light.
  const double tau_end = short_batch.electrons[0].tau_end();
  const auto y_end = test::state_at(w, tau_end);
  std::uint64_t brute = 0;
  for (int i = 0; i < s.nx; ++i)
    for (int j = 0; j < s.ny; ++j)
      for (int k = 0; k < s.samples; ++k)
        if (s.t_rel(k) > s.arrival_rel(y_end.data(), s.pixel_x(i), s.pixel_y(j))) ++brute;
  BOOST_TEST(brute > 0u);
  BOOST_TEST(bad.records[0].dropped_slots == brute);

  // A trajectory that starts after the window opened is clipped at the start.
  SplineBatch late;
  test::append_electron(late, w, 5.0, 0.25, std::uint32_t(std::ceil(T / 0.25)), 3);
  auto l = check_coverage(s, late);
  BOOST_TEST(l.records[0].margin_start < 0.0);
  BOOST_TEST(l.records[0].clipped());
}
