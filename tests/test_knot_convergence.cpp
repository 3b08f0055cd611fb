// ctest-label: physics
// Accuracy only improves with resolution: one electron solved at 8, 16, 64, 256 and 1024 knots per
// period and summed by the kernel, against the field of the exact trajectory (exact_field.hpp: the
// light-front closed form, Brent roots, the Liénard–Wiechert form). The relative L2 error must fall
// until it reaches its floor and never rise past it by more than 2×; uniform motion (a0 = 0) must
// sit at or below 1e-10 at every resolution. Uniform motion gave 3.7e-6 at 16 knots and 8.9e-3 at
// 1024: the spline's residual was formed from absolute knot positions (10³–10⁴ in laser units), whose
// rounding the quintic divides by h² (found by a tester; trajectory.cpp, Knots::dx).
#define BOOST_TEST_MODULE knot_convergence
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cstdio>
#include <numbers>

#include "edm/accumulator.hpp"
#include "edm/campaign.hpp"
#include "edm/coverage.hpp"
#include "edm/device.hpp"
#include "edm/run.hpp"
#include "edm/tracks.hpp"
#include "exact_field.hpp"
#include "test_support.hpp"

using namespace edm;

namespace {

constexpr int kKnots[] = {8, 16, 64, 256, 1024};
// Past its floor the error may wobble by rounding, never grow: at most this factor above the best so far.
constexpr double kRiseFactor = 2.0;
// Uniform motion has no acceleration: the spline is the exact straight line, and what is left is the
// roots' and the sums' rounding.
constexpr double kUniformFloor = 1e-10;

std::string campaign_text(double a0, int knots, const std::string& trajectory_lines) {
  char text[1200];
  std::snprintf(text, sizeof text,
                "[run]\nscenario = \"inverse_thomson\"\nmode = \"total\"\n[laser]\nprofile = \"plane_wave\"\n"
                "a0 = %.17g\nduration = 10.7e-15\n[electrons]\ndistribution = \"sunflower\"\ncount = 1\n"
                "radius = 0.0\ngamma = 5.0\n[trajectory]\nknots_per_period = %d\n%s[screen]\ndistance = 0.002\n"
                "half_width = 2e-6\nnx = 3\nny = 3\nsamples = 384\nsamples_per_period = 512\n",
                a0, knots, trajectory_lines.c_str());
  return text;
}

// The same electron as an external track: its exact orbit (from the solved start) sampled at
// `per_period` points per Doppler-shifted period over its whole solved span, in SI, into tracks.h5.
std::string exact_track(double a0, int per_period) {
  const auto registry = PluginRegistry::discover();
  const Campaign c = parse_campaign(campaign_text(a0, 64, ""), "track source", {}, registry.get("inverse_thomson").keys(), false);
  PreparedCell prepared(c, registry);
  const SplineBatch batch = prepared.solve(0, 1);
  const test::ExactElectron e = test::exact_electron(c, prepared, batch);
  const double T = prepared.units().time(), L = prepared.units().length();
  const double dtau = 2 * std::numbers::pi / e.orbit->h() / per_period;
  std::vector<TrackData> tracks(1);
  TrackData& t = tracks[0];
  // A period beyond the solved span each side: the resampled knots stop up to one spacing before
  // the track's end, and the track must still cover the window at the coarsest resolution.
  const double pad = 2 * std::numbers::pi / e.orbit->h();
  for (double tau = -pad; tau <= e.tau_hi + pad; tau += dtau) {
    const auto y = e.orbit->state(tau);
    t.t.push_back(y[0] * T);
    t.x.push_back(y[1] * L);
    t.y.push_back(y[2] * L);
    t.z.push_back(y[3] * L);
    t.ux.push_back(y[5]);
    t.uy.push_back(y[6]);
    t.uz.push_back(y[7]);
  }
  const auto path = test::temp_dir("knot_track") / "tracks.h5";
  write_tracks(path.string(), tracks);
  return "model = \"tracks\"\nfile = \"" + path.string() + "\"\n";
}

// The kernel's field against the exact one for one electron (inverse Thomson, γ = 5 head-on, plane
// wave of amplitude a0) on a 3 × 3 flat screen 2 mm away, at `knots` knots per period; solved by edm,
// or resampled from a track (trajectory_lines).
double field_error(double a0, int knots, const std::string& trajectory_lines = "") {
  const auto registry = PluginRegistry::discover();
  const Campaign c = parse_campaign(campaign_text(a0, knots, trajectory_lines), "knot convergence", {},
                                    registry.get("inverse_thomson").keys(), false);
  PreparedCell prepared(c, registry);
  const SplineBatch batch = prepared.solve(0, 1);
  const Screen& screen = prepared.screen();
  KernelOptions ko;
  ko.newton_iters = 8;  // the roots converged well past the spline's error (2 and 8 gave the same bits)
  const std::vector<double> Ek = test::kernel_cube(screen, batch, ko);  // [comp][iy][ix][k]
  const test::ExactElectron e = test::exact_electron(c, prepared, batch);
  const double Z = screen.z, absZ = std::abs(Z);
  return test::relative_l2_vs_reference(Ek, screen, [&](int ix, int iy, int k) {
    return test::exact_screen_field(e, screen.pixel_x(ix), screen.pixel_y(iy), Z, screen.t_rel(k) + absZ);
  });
}

// The errors over kKnots: each at most kRiseFactor above the smallest before it.
std::vector<double> check_convergence(double a0, const std::string& label, const std::string& trajectory_lines = "") {
  std::vector<double> err;
  double best = INFINITY;
  for (const int k : kKnots) {
    const double r = field_error(a0, k, trajectory_lines);
    BOOST_TEST_MESSAGE(label << ": " << k << " knots per period, relative L2 " << r);
    BOOST_TEST(r <= kRiseFactor * best, label << ": " << k << " knots per period, " << r << " rose above " << best);
    best = std::min(best, r);
    err.push_back(r);
  }
  return err;
}

}  // namespace

BOOST_AUTO_TEST_CASE(uniform_motion_sits_at_the_floor_at_every_resolution) {
  for (const double r : check_convergence(0.0, "uniform motion")) BOOST_TEST(r <= kUniformFloor);
}

BOOST_AUTO_TEST_CASE(a_plane_wave_electron_converges_with_the_knots) {
  const auto err = check_convergence(0.5, "plane wave a0 = 0.5");
  // And it converges: the finest resolution is far better than the coarsest.
  BOOST_TEST(err.back() < 1e-3 * err.front());
}

// The same electron given as an external track (its exact orbit, 256 samples per period): the
// resampled spline converges until the track's own interpolation error, and never rises past it.
// A uniform track gave 6e-6 at 16 knots, 3e-4 at 128 and 2e-2 at 1024 before.
BOOST_AUTO_TEST_CASE(a_track_converges_and_never_rises) {
  for (const double r : check_convergence(0.0, "uniform track", exact_track(0.0, 256))) BOOST_TEST(r <= kUniformFloor);
  const auto err = check_convergence(0.5, "plane-wave track a0 = 0.5", exact_track(0.5, 256));
  BOOST_TEST(err.back() < 1e-2 * err.front());
}
