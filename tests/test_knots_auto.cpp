// ctest-label: physics
// trajectory.knots_per_period = "auto" (issue 30, item 3): the knots chosen from pilot electrons solved
// at K and 2K meet trajectory.tolerance. The chosen K is checked against the field of the exact
// plane-wave trajectory (exact_field.hpp: the light-front closed form, Brent roots, the
// Liénard–Wiechert form), which the choice never sees; a tighter tolerance takes more knots; the
// choice and its estimates are recorded in run.toml and printed by --dry-run; bad values are refused
// naming the key; an integer is used as given.
#define BOOST_TEST_MODULE knots_auto
#include <boost/test/unit_test.hpp>

#include <cstdio>
#include <cstring>

#include <toml++/toml.h>

#include "edm/campaign.hpp"
#include "edm/error.hpp"
#include "edm/run.hpp"
#include "edm/run_files.hpp"
#include "edm/run_manifest.hpp"
#include "exact_field.hpp"
#include "spawn.hpp"
#include "test_support.hpp"

using namespace edm;

namespace {

// The chosen K's field error against the exact one may exceed the tolerance by this factor: the
// estimate is the difference of K and 2K on the pilot screen (3 × 3 pixels, up to 256 samples), the
// error is measured on the run's screen (384 samples); 2K's own error (~1/16 of K's) is in the
// estimate, and the floor (4e-9, which K and 2K share) in the error, not in the estimate.
constexpr double kToleranceFactor = 2.0;

// test_knot_convergence's electron: inverse Thomson, γ = 5 head-on on a plane wave of amplitude
// a0 = 0.5, a 3 × 3 flat screen 2 mm away; `trajectory` holds the [trajectory] lines.
std::string campaign_text(const std::string& trajectory) {
  return "[run]\nscenario = \"inverse_thomson\"\nmode = \"total\"\n[laser]\nprofile = \"plane_wave\"\n"
         "a0 = 0.5\nduration = 10.7e-15\n[electrons]\ndistribution = \"sunflower\"\ncount = 1\n"
         "radius = 0.0\ngamma = 5.0\n[trajectory]\n" +
         trajectory +
         "[screen]\ndistance = 0.002\nhalf_width = 2e-6\nnx = 3\nny = 3\nsamples = 384\n"
         "samples_per_period = 512\n";
}

Campaign parse(const std::string& trajectory) {
  const auto registry = PluginRegistry::discover();
  return parse_campaign(campaign_text(trajectory), "knots auto", {}, registry.get("inverse_thomson").keys(), false);
}

// The kernel's field of the prepared cell's electron against the exact one: relative L2.
double exact_error(const Campaign& c, const PreparedCell& prepared) {
  const SplineBatch batch = prepared.solve(0, 1);
  const Screen& screen = prepared.screen();
  KernelOptions ko;
  ko.newton_iters = 8;  // the roots converged well past the spline's error
  const std::vector<double> Ek = test::kernel_cube(screen, batch, ko);
  const test::ExactElectron e = test::exact_electron(c, prepared, batch);
  const double Z = screen.z, absZ = std::abs(Z);
  return test::relative_l2_vs_reference(Ek, screen, [&](int ix, int iy, int k) {
    return test::exact_screen_field(e, screen.pixel_x(ix), screen.pixel_y(iy), Z, screen.t_rel(k) + absZ);
  });
}

struct Chosen {
  int knots = 0;
  double estimate = 0, error = 0;
};

// "auto" at `tolerance`: the choice, its estimate and the chosen K's error against the exact field.
Chosen choose(double tolerance) {
  char lines[120];
  std::snprintf(lines, sizeof lines, "knots_per_period = \"auto\"\ntolerance = %.17g\n", tolerance);
  const Campaign c = parse(lines);
  const auto registry = PluginRegistry::discover();
  PreparedCell prepared(c, registry);
  const KnotsChoice& k = prepared.knots();
  BOOST_TEST(k.automatic);
  BOOST_TEST(k.tolerance == tolerance);
  BOOST_REQUIRE(!k.estimates.empty());
  BOOST_TEST(k.estimates.back().first == k.knots_per_period);
  BOOST_TEST(prepared.solve_options().knots_per_period == k.knots_per_period);
  // Every K before the chosen one missed the tolerance; the ladder doubles from 8.
  for (std::size_t i = 0; i < k.estimates.size(); ++i) {
    BOOST_TEST(k.estimates[i].first == (8 << i));
    if (i + 1 < k.estimates.size()) BOOST_TEST(k.estimates[i].second > tolerance);
  }
  Chosen r{k.knots_per_period, k.estimate(), exact_error(c, prepared)};
  BOOST_TEST_MESSAGE("tolerance " << tolerance << ": K = " << r.knots << ", estimate " << r.estimate
                                  << ", error against the exact field " << r.error);
  return r;
}

std::string error_id(const std::function<void()>& f, std::string* what = nullptr) {
  try {
    f();
  } catch (const Error& e) {
    if (what) *what = e.what();
    return e.id();
  }
  return "none";
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

BOOST_AUTO_TEST_CASE(auto_meets_the_tolerance_against_the_exact_field) {
  const Chosen loose = choose(1e-6), tight = choose(1e-8);
  for (const auto& [tolerance, r] : {std::pair{1e-6, loose}, std::pair{1e-8, tight}}) {
    BOOST_TEST(r.estimate <= tolerance);
    BOOST_TEST(r.error <= kToleranceFactor * tolerance, "K = " << r.knots << ": error " << r.error);
  }
  BOOST_TEST(tight.knots > loose.knots);
}

// The chosen K is the solver's: the splines equal those of the same K given as an integer, bit for bit.
BOOST_AUTO_TEST_CASE(auto_solves_as_the_integer_it_chose) {
  const auto registry = PluginRegistry::discover();
  const Campaign a = parse("knots_per_period = \"auto\"\ntolerance = 1e-6\n");
  PreparedCell pa(a, registry);
  const int K = pa.knots().knots_per_period;
  const Campaign n = parse("knots_per_period = " + std::to_string(K) + "\n");
  PreparedCell pn(n, registry);
  BOOST_TEST(!pn.knots().automatic);
  BOOST_TEST(pn.knots().estimates.empty());
  BOOST_TEST(pn.knots().knots_per_period == K);
  const SplineBatch sa = pa.solve(0, 1), sn = pn.solve(0, 1);
  BOOST_REQUIRE(sa.coef.size() == sn.coef.size());
  BOOST_TEST(std::memcmp(sa.coef.data(), sn.coef.data(), sa.coef.size() * sizeof(double)) == 0);
}

BOOST_AUTO_TEST_CASE(bad_values_are_refused_naming_the_key) {
  std::string what;
  BOOST_TEST(error_id([] { parse("knots_per_period = \"Auto\"\n"); }, &what) == "EDM-CFG-008");
  BOOST_TEST(contains(what, "knots_per_period"), what);
  // 1e-9 is below the floor: the estimate says 2.7e-10 at 256 knots per period where the field is
  // 4.1e-9 off the exact one (the solver's share of the floor is common to K and 2K).
  for (const char* t : {"0", "1e-30", "1e-9", "-1e-6", "0.5"}) {
    BOOST_TEST(error_id([&] { parse(std::string("knots_per_period = \"auto\"\ntolerance = ") + t + "\n"); }, &what) ==
               "EDM-CFG-006", t);
    BOOST_TEST(contains(what, "tolerance"), what);
  }
  BOOST_TEST(error_id([] { parse("knots_per_period = -1\n"); }, &what) == "EDM-CFG-006");
  // A tolerance the ladder cannot reach within trajectory.max_knots: refused before the run, with the
  // estimates so far.
  // A trajectory.max_knots that holds the pilot at 32 knots per period, not at 64 (the knots grow in
  // proportion: the budget at 16, times 2.5).
  const auto registry = PluginRegistry::discover();
  const double at16 = PreparedCell(parse("knots_per_period = 16\n"), registry).budget().max_knots;
  const Campaign c = parse("knots_per_period = \"auto\"\ntolerance = 1e-8\nmax_knots = " +
                           std::to_string(std::int64_t(2.5 * at16)) + "\n");
  BOOST_TEST(error_id([&] { PreparedCell p(c, registry); }, &what) == "EDM-CFG-302");
  BOOST_TEST(contains(what, "trajectory.tolerance"), what);
  BOOST_TEST(contains(what, "trajectory.max_knots"), what);
}

// edm run: run.toml's [config] holds the chosen integer (RunManifest::knots_per_period reads it), the
// setting, the tolerance and the estimates; [campaign] keeps "auto", and a replay chooses the same K;
// --dry-run prints the choice. An integer is recorded as given, without tolerance or estimates.
BOOST_AUTO_TEST_CASE(run_toml_records_the_choice) {
  const auto dir = test::temp_dir("knots_auto");
  for (const std::string setting : {"\"auto\"", "24"}) {
    const bool automatic = setting == "\"auto\"";
    const auto file = test::write_file(dir, automatic ? "auto.toml" : "fixed.toml",
                                       campaign_text("knots_per_period = " + setting + "\ntolerance = 1e-6\n"));
    const auto out = dir / (automatic ? "auto" : "fixed");
    const auto dry = test::run_edm("run " + file.string() + " --dry-run --output " + out.string());
    BOOST_TEST(dry.exit_code == 0, dry.output);
    const auto r = test::run_edm("run " + file.string() + " --quiet --output " + out.string());
    BOOST_REQUIRE_MESSAGE(r.exit_code == 0, r.output);
    const RunManifest m = RunManifest::read(RunFolder(out));
    const toml::table t = toml::parse_file((out / "run.toml").string());
    const auto& cfg = *t["config"].as_table();
    BOOST_TEST(cfg["knots_per_period_setting"].value_or(std::string()) == (automatic ? "auto" : "24"));
    if (!automatic) {
      BOOST_TEST(m.knots_per_period() == 24);
      BOOST_TEST(!cfg.contains("tolerance"));
      BOOST_TEST(!cfg.contains("knots_estimates"));
      BOOST_TEST(contains(dry.output, "knots:   24 per period\n"), dry.output);
      continue;
    }
    const auto* est = cfg["knots_estimates"].as_array();
    BOOST_REQUIRE(est);
    BOOST_REQUIRE(!est->empty());
    const auto& last = *est->back().as_array();
    BOOST_TEST(m.knots_per_period() == last[0].value_or(0));
    BOOST_TEST(last[1].value_or(1.0) <= 1e-6);
    BOOST_TEST(cfg["tolerance"].value_or(0.0) == 1e-6);
    BOOST_TEST(t["campaign"]["trajectory"]["knots_per_period"].value_or(std::string()) == "auto");
    BOOST_TEST(contains(dry.output, "knots:   " + std::to_string(m.knots_per_period()) + " per period (auto:"),
               dry.output);
    // A replay of run.toml chooses again, and the same.
    const auto again = dir / "replay";
    const auto rr = test::run_edm("run " + (out / "run.toml").string() + " --quiet --output " + again.string());
    BOOST_REQUIRE_MESSAGE(rr.exit_code == 0, rr.output);
    const toml::table t2 = toml::parse_file((again / "run.toml").string());
    BOOST_TEST(t2["config"]["knots_per_period"].value_or(0) == m.knots_per_period());
    BOOST_TEST(t2["config"]["knots_per_period_setting"].value_or(std::string()) == "auto");
  }
}
