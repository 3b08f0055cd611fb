// ctest-label: e2e
// The burst and the observer window (share/docs/campaign.md, "The burst, and windows that miss it"):
// the burst is found on a solved trajectory where the envelope says; a window that misses it is
// warned about, refused under screen.strict, and recorded in run.toml; window = "burst" places the
// window on the burst's light (samples = "auto" sizes it), also at an a0 where the pulse stretches
// the light far beyond what the free straight lines predict; a burst window with too few samples is
// warned about or refused.
#define BOOST_TEST_MODULE burst_window
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <toml++/toml.h>

#include "edm/campaign.hpp"
#include "edm/coverage.hpp"
#include "edm/error.hpp"
#include "edm/plugins.hpp"
#include "edm/run.hpp"
#include "spawn.hpp"
#include "test_support.hpp"

namespace fs = std::filesystem;
using namespace edm;

namespace {

// An inverse-Thomson cell (the light's duration on the screen is Doppler-compressed by ~1/(4γ²)).
const std::string kCell = test::small_cell({.mode = "split",
                                                  .electrons = 6,
                                                  .screen = "half_width_x = 6e-5\nhalf_width_y = 4e-5\nnx = 6\nny = 4\nsamples = 256\n",
                                                  .electron_batch = "",
                                                  .trajectory_lines = "knots_per_period = 16\npadding = 4.0\n"});

// The burst's phases are found by bisection on the quintic to 1e-15 of a knot interval; ξ itself
// carries the rounding of t and z (|t| ~ 1e3 normalised at the start): 1e-9 of τ0 is far above
// both and far below anything the window check could notice.
constexpr double kPhaseTol = 1e-9;

struct Recorder : RunObserver {
  std::vector<std::string> warnings;
  void warning(const std::string& m) override { warnings.push_back(m); }
  bool warned(const std::string& part) const {
    for (const auto& w : warnings)
      if (w.find(part) != std::string::npos) return true;
    return false;
  }
};

Campaign cell(const fs::path& out, std::vector<Override> overrides) {
  overrides.push_back({"run.output", "\"" + out.string() + "\"", Origin::CommandLine});
  const auto registry = PluginRegistry::discover();
  return parse_campaign(kCell, "cell.toml", overrides, registry.get("inverse_thomson").keys(), false);
}

RunSummary run(const fs::path& out, std::vector<Override> overrides, Recorder& rec) {
  const auto registry = PluginRegistry::discover();
  return run_campaign(cell(out, std::move(overrides)), registry, RunOptions{}, rec);
}

Override set(const std::string& key, const std::string& value) { return {key, value, Origin::CommandLine}; }

// The window: sample 0 and the last sample, screen-relative.
double t_last(const Screen& s) { return s.t_rel(s.samples - 1); }

// An explicit t_start (s) far before the interaction's light: the window ends long before the burst.
std::string early_t_start(const fs::path& probe) {
  Recorder r;
  const RunSummary s = run(probe, {}, r);
  const double T = Normalization::from_wavelength(cell(probe, {}).laser.wavelength).time();
  char b[64];
  std::snprintf(b, sizeof b, "%.17g", (s.screen.t0_rel + std::abs(s.screen.z)) * T - 200e-15);
  return b;
}

}  // namespace

BOOST_AUTO_TEST_CASE(the_burst_is_where_the_envelope_is_on_the_solved_trajectory) {
  const auto registry = PluginRegistry::discover();
  const Campaign c = cell(test::temp_dir("burst_states"), {});
  PreparedCell prepared(c, registry);
  const BurstSpec& burst = prepared.burst();
  const double tau0 = c.laser.duration / prepared.units().time();
  BOOST_TEST(burst.xi_lo == -tau0);
  BOOST_TEST(burst.xi_hi == tau0);
  BOOST_TEST(burst.direction == -1);  // inverse Thomson: the laser runs along −z

  const SplineBatch b = prepared.solve(0, 3);
  for (const auto& e : b.electrons) {
    double ys[8], ye[8];
    BOOST_REQUIRE(burst_states(b, e, burst, ys, ye));
    BOOST_TEST(std::abs((ys[0] + ys[3]) - (-tau0)) < kPhaseTol * tau0);  // ξ = t − s z, s = −1
    BOOST_TEST(std::abs((ye[0] + ye[3]) - tau0) < kPhaseTol * tau0);
    // Later along the worldline, so its light arrives later at every pixel.
    const Screen& sc = prepared.screen();
    BOOST_TEST(sc.arrival_rel(ye, 0, 0) > sc.arrival_rel(ys, 0, 0));
  }
  // A burst the spline never reaches is no burst.
  BurstSpec beyond = burst;
  beyond.xi_lo = 1e6;
  beyond.xi_hi = 2e6;
  double ys[8], ye[8];
  BOOST_TEST(!burst_states(b, b.electrons[0], beyond, ys, ye));
}

BOOST_AUTO_TEST_CASE(the_auto_window_holds_the_burst_and_says_so) {
  Recorder rec;
  const fs::path out = test::temp_dir("burst_auto") / "run";
  const RunSummary s = run(out, {}, rec);
  BOOST_TEST(s.coverage.burst_missed_electrons() == 0u);
  BOOST_TEST(!rec.warned("burst"));
  const auto m = toml::parse_file((out / "run.toml").string());
  BOOST_TEST(m["window"]["burst_missed_electrons"].value_or(-1) == 0);
  BOOST_TEST(m["window"]["strict"].value_or(true) == false);
  // The first and last light are recorded as absolute lab times and bracket the laser peak's light.
  const double first = m["window"]["burst_first_arrival"].value_or(0.0);
  const double last = m["window"]["burst_last_arrival"].value_or(0.0);
  BOOST_TEST(first > 0.0);
  BOOST_TEST(last > first);
}

BOOST_AUTO_TEST_CASE(a_window_that_misses_the_burst_is_warned_about_and_refused_under_strict) {
  const fs::path dir = test::temp_dir("burst_missed");
  const std::string t_start = early_t_start(dir / "probe");
  const std::vector<Override> early = {set("screen.window", "\"explicit\""), set("screen.t_start", t_start)};

  Recorder rec;
  const fs::path out = dir / "warned";
  const RunSummary s = run(out, early, rec);
  BOOST_TEST(s.coverage.clipped_electrons() == 0u);  // the trajectories do cover the window...
  BOOST_TEST(s.coverage.burst_missed_electrons() == 6u);  // ...but it holds none of the burst
  BOOST_TEST(rec.warned("holds none of the burst's light"), "warnings: " << rec.warnings.size());
  const auto m = toml::parse_file((out / "run.toml").string());
  BOOST_TEST(m["window"]["covered"].value_or(false) == true);
  BOOST_TEST(m["window"]["burst_missed_electrons"].value_or(0) == 6);
  BOOST_TEST(m["window"]["burst_in_window"].value_or(true) == false);
  // The burst's light comes after the window's last sample.
  const double dt = m["screen"]["dt"].value_or(0.0);
  const double window_end = m["screen"]["t_start"].value_or(0.0) + dt * (m["screen"]["samples"].value_or(0) - 1);
  BOOST_TEST(m["window"]["burst_first_arrival"].value_or(0.0) > window_end);

  auto strict = early;
  strict.push_back(set("screen.strict", "true"));
  Recorder quiet;
  const fs::path refused = dir / "strict";
  std::string id;
  try {
    run(refused, strict, quiet);
  } catch (const PhysicsError& e) {
    id = e.id();
  }
  BOOST_TEST(id == "EDM-WIN-011");
  BOOST_TEST(!fs::exists(refused / "field.h5"));
  BOOST_TEST(!fs::exists(refused / "field.h5.partial"));
}

BOOST_AUTO_TEST_CASE(the_burst_window_with_auto_samples_holds_the_whole_burst) {
  Recorder rec;
  const RunSummary s = run(test::temp_dir("burst_window") / "run",
                           {set("screen.window", "\"burst\""), set("screen.samples", "\"auto\"")}, rec);
  const auto& cov = s.coverage;
  BOOST_TEST(cov.burst_missed_electrons() == 0u);
  BOOST_TEST(cov.burst_cut_electrons() == 0u);
  BOOST_TEST(rec.warnings.empty());
  // Lead and tail of at least 16 samples around the light the solved trajectories give (computed
  // after the window was fixed, from the splines, not from the prediction).
  const Screen& sc = s.screen;
  BOOST_TEST(cov.burst_first() - sc.t0_rel >= 16 * sc.dt * (1 - 1e-9));
  BOOST_TEST(t_last(sc) - cov.burst_last() >= 15 * sc.dt);
  // Narrow: the burst's light plus lead and tail, far fewer than the 256 samples of the auto window.
  const double span = (cov.burst_last() - cov.burst_first()) / sc.dt;
  BOOST_TEST(sc.samples >= span + 31);
  BOOST_TEST(sc.samples < 256);
}

BOOST_AUTO_TEST_CASE(the_burst_window_follows_light_the_pulse_stretches) {
  // At a0 = 2 the transverse quiver slows the electrons along z inside the pulse, so the burst's
  // light lasts longer on the screen; the free straight lines do not depend on a0 at all, so a
  // window that grows with a0 comes from the solved pilots.
  const fs::path dir = test::temp_dir("burst_stretched");
  const std::vector<Override> burst = {set("screen.window", "\"burst\""), set("screen.samples", "\"auto\"")};
  Recorder weak_rec;
  const int weak = run(dir / "weak", burst, weak_rec).screen.samples;
  auto strong = burst;
  strong.push_back(set("laser.a0", "2.0"));
  Recorder rec;
  const RunSummary s = run(dir / "strong", strong, rec);
  BOOST_TEST(s.screen.samples > 1.2 * weak, s.screen.samples << " samples at a0 = 2, " << weak << " at a0 = 0.3");
  BOOST_TEST(s.coverage.burst_missed_electrons() == 0u);
  BOOST_TEST(s.coverage.burst_cut_electrons() == 0u, "cut: " << s.coverage.burst_cut_electrons());
  BOOST_TEST(!rec.warned("burst"));
}

BOOST_AUTO_TEST_CASE(a_burst_window_with_too_few_samples_is_warned_about_or_refused) {
  const fs::path dir = test::temp_dir("burst_few");
  // 20 samples fewer than the sized window: the tail and the end of the burst's light are cut, its
  // start (16 samples of lead, then the delay to the farthest corner) is still inside.
  Recorder sized;
  const int enough = run(dir / "sized", {set("screen.window", "\"burst\""), set("screen.samples", "\"auto\"")}, sized)
                         .screen.samples;
  BOOST_REQUIRE(enough > 60);
  const std::string few = std::to_string(enough - 20);

  Recorder rec;
  const RunSummary s = run(dir / "warned", {set("screen.window", "\"burst\""), set("screen.samples", few)}, rec);
  BOOST_TEST(s.screen.samples == enough - 20);
  BOOST_TEST(rec.warned("samples = " + few));
  BOOST_TEST(rec.warned("samples = " + std::to_string(enough) + " (or \"auto\") covers it"));
  BOOST_TEST(s.coverage.burst_cut_electrons() > 0u);  // the solved electrons confirm it
  BOOST_TEST(s.coverage.burst_missed_electrons() == 0u);
  BOOST_TEST(rec.warned("the observer window cuts the burst's light"));

  Recorder quiet;
  std::string id;
  try {
    run(dir / "strict", {set("screen.window", "\"burst\""), set("screen.samples", few), set("screen.strict", "true")},
        quiet);
  } catch (const ConfigError& e) {
    id = e.id();
  }
  BOOST_TEST(id == "EDM-WIN-010");
  BOOST_TEST(!fs::exists(dir / "strict" / "field.h5"));
}

BOOST_AUTO_TEST_CASE(auto_samples_need_the_burst_window) {
  Recorder rec;
  std::string id, what;
  try {
    run(test::temp_dir("burst_auto_samples") / "run", {set("screen.samples", "\"auto\"")}, rec);
  } catch (const ConfigError& e) {
    id = e.id();
    what = e.what();
  }
  BOOST_TEST(id == "EDM-CFG-040");
  BOOST_TEST(what.find("screen.samples") != std::string::npos);
}
