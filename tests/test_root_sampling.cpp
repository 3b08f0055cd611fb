// ctest-label: physics
// The retarded-time roots' sampling (share/docs/campaign.md, "accumulator.newton_iters"): the field
// kernel takes exactly accumulator.newton_iters Newton steps per sample from a warm start, so a
// window that samples the Doppler-shifted laser period too coarsely gets unconverged roots and a
// silently wrong field. On the exact plane-wave head-on case (inverse Thomson, γ = 5, a0 = 0.5, the
// angular screen at infinity), the kernel's far field against the exact trajectory's: wherever the
// check (root_sampling's Q against min_samples_per_doppler_efold) calls a sampling converged, the field is as
// good as with fully converged roots; where it is not, a run warns, screen.strict refuses it
// (EDM-WIN-020), and run.toml records P and the verdict.
#define BOOST_TEST_MODULE root_sampling
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <tuple>
#include <sstream>
#include <toml++/toml.h>

#include "edm/accumulator.hpp"
#include "edm/campaign.hpp"
#include "edm/coverage.hpp"
#include "edm/device.hpp"
#include "edm/error.hpp"
#include "edm/laser.hpp"
#include "edm/plugins.hpp"
#include "edm/run.hpp"
#include "exact_field.hpp"
#include "spawn.hpp"
#include "test_support.hpp"
#include "device_cube.hpp"

using namespace edm;
namespace fs = std::filesystem;

namespace {

// Newton steps that converge every root of these samplings to rounding: the reference error (the
// spline's interpolation alone) at each sampling.
constexpr int kConvergedIters = 16;
// "Converged to the field's accuracy" (coverage.cpp's thresholds): the error with the roots the
// kernel takes within this factor of the error with fully converged roots.
constexpr double kConvergedFactor = 2.0;
// The run's P (its pilots: here the one electron) and root_sampling called directly are the same
// operations on the same solved spline: equal to rounding.
constexpr double kSameP = 1e-12;

// The angular screen at infinity (far field), or with flat = true the flat screen of
// tests/test_field_exact.cpp (3 × 3 pixels of ±2 µm at 2 mm: near and far parts, the flat screen's
// own retarded-time step on the squared light cone).
std::string head_on(int samples_per_period, int newton_iters, bool strict = false, double a0 = 0.5, bool flat = false) {
  const std::string screen = flat ? "[screen]\ndistance = 0.002\nhalf_width = 2e-6\nnx = 3\nny = 3\n"
                                  : "[screen]\ntype = \"angular\"\ndistance = \"infinity\"\nangles = \"xy\"\n"
                                    "theta_x_min = -0.1\ntheta_x_max = 0.1\ntheta_y_min = -0.1\ntheta_y_max = 0.1\n"
                                    "nx = 3\nny = 2\n";
  return "[run]\nscenario = \"inverse_thomson\"\nmode = \"total\"\n[laser]\nprofile = \"plane_wave\"\n"
         "a0 = " + std::to_string(a0) + "\nduration = 10.7e-15\n[electrons]\ndistribution = \"sunflower\"\ncount = 1\nradius = 0.0\n"
         "gamma = 5.0\n[trajectory]\nknots_per_period = 128\n" + screen + "samples = 384\nsamples_per_period = " +
         std::to_string(samples_per_period) + "\nstrict = " + (strict ? "true" : "false") +
         "\n[accumulator]\nnewton_iters = " + std::to_string(newton_iters) + "\n";
}

Campaign parse(const std::string& text, const fs::path& out = {}) {
  const auto registry = PluginRegistry::discover();
  std::vector<Override> o;
  if (!out.empty()) o.push_back({"run.output", "\"" + out.string() + "\"", Origin::CommandLine});
  return parse_campaign(text, "head_on.toml", o, registry.get("inverse_thomson").keys(), false);
}

// One sampling: P from the solved spline, and the relative L2 error of the kernel's far field per
// Newton step count against the exact trajectory's.
struct Sampling {
  double P = 0, Q = 0;
  std::map<int, double> error;
};

Sampling measure(int samples_per_period, const std::vector<int>& iters, double a0 = 0.5, bool flat = false) {
  const auto registry = PluginRegistry::discover();
  const Campaign c = parse(head_on(samples_per_period, 2, false, a0, flat));
  PreparedCell prepared(c, registry);
  const SplineBatch batch = prepared.solve(0, 1);
  const Screen& screen = prepared.screen();
  Sampling out;
  const RootSampling rs = root_sampling(screen, batch, prepared.burst(), 2 * std::numbers::pi);
  out.P = rs.samples_per_period;
  out.Q = rs.samples_per_doppler_efold;

  const test::ExactElectron exact = test::exact_electron(c, prepared, batch);
  const std::size_t n = 3 * screen.pixels() * screen.samples;
  std::vector<double> ref(n);
  for (int iy = 0; iy < screen.ny; ++iy)
    for (int ix = 0; ix < screen.nx; ++ix)
      for (int k = 0; k < screen.samples; ++k) {
        const auto e = flat ? test::exact_screen_field(exact, screen.pixel_x(ix), screen.pixel_y(iy), screen.z,
                                                       screen.t_rel(k) + std::abs(screen.z))
                            : test::exact_far_field(exact, screen.directions[std::size_t(iy) * screen.nx + ix].n,
                                                    screen.t_rel(k));
        for (int comp = 0; comp < 3; ++comp)
          ref[((std::size_t(comp) * screen.ny + iy) * screen.nx + ix) * screen.samples + k] = e[comp];
      }
  for (const int it : iters) {
    KernelOptions o;
    o.newton_iters = it;
    FieldAccumulator acc(test::env_device(), screen, Mode::Total, o);
    acc.accumulate(batch);
    const std::size_t row = std::size_t(screen.nx) * screen.samples;
    std::vector<double> E(n, std::nan(""));
    acc.finish(
        [&](int b, int c, int iy0, int iy1, const double* d) {
          if (b == 0) std::memcpy(E.data() + (std::size_t(c) * screen.ny + iy0) * row, d, std::size_t(iy1 - iy0) * row * 8);
        },
        2);
    out.error[it] = test::relative_l2(E, ref);
  }
  return out;
}

struct Recorder : RunObserver {
  std::vector<std::string> warnings;
  void warning(const std::string& m) override { warnings.push_back(m); }
  bool warned(const std::string& part) const {
    for (const auto& w : warnings)
      if (w.find(part) != std::string::npos) return true;
    return false;
  }
};

RunSummary dry_run(const std::string& text, Recorder& rec) {
  RunOptions o;
  o.dry_run = true;
  return run_campaign(parse(text, test::temp_dir("root_sampling_dry")), PluginRegistry::discover(), o, rec);
}

}  // namespace

BOOST_AUTO_TEST_CASE(the_check_calls_converged_only_what_is) {
  // (a0, samples_per_period, flat): the review's case at a0 = 0.5 (T/128, T/256, T/512), and at a0 = 1
  // and 2 samplings just above a threshold (Q ≈ 4.01 for 2 steps, Q ≈ 1.33 below the 3-step one), where
  // a threshold in P alone would call 2 steps converged at errors of 1e-5 (share/docs/campaign.md); on
  // the flat screen, T/512 at a0 = 0.5 (Q ≈ 4.07: two steps leave 23 times the converged error, which
  // the far field's 2-step threshold would have called converged) and samplings at the flat screen's
  // own thresholds (Q ≈ 6.61 for 2 steps, 1.83 for 3).
  const std::vector<std::tuple<double, int, bool>> cases{{0.5, 128, false}, {0.5, 256, false}, {0.5, 512, false},
                                                         {1.0, 1152, false}, {2.0, 768, false}, {0.5, 512, true},
                                                         {0.5, 832, true}, {2.0, 1408, true}};
  const std::vector<int> iters{1, 2, 3, 4, kConvergedIters};
  for (const auto& [a0, spp, flat] : cases) {
    const Sampling m = measure(spp, iters, a0, flat);
    const double floor = m.error.at(kConvergedIters);
    for (const int it : iters) {
      const bool called = m.Q >= min_samples_per_doppler_efold(it, !flat);
      const bool converged = m.error.at(it) <= kConvergedFactor * floor;
      BOOST_TEST_MESSAGE((flat ? "flat " : "") << "a0 = " << a0 << ", T/" << spp << ": P = " << m.P << ", Q = " << m.Q << ", newton_iters = "
                                 << it << ": rel L2 " << m.error.at(it) << " (converged " << floor << "), check says "
                                 << (called ? "converged" : "not"));
      // The check never calls converged what is not.
      if (called) BOOST_TEST(converged, (flat ? "flat, " : "") << "a0 = " << a0 << ", T/" << spp << ", newton_iters = " << it << ", Q = " << m.Q);
    }
    if (flat && a0 == 0.5 && spp == 512) {  // two steps are not converged on the flat screen, three are
      BOOST_TEST(m.error.at(2) > kConvergedFactor * floor);
      BOOST_TEST(m.error.at(3) <= kConvergedFactor * floor);
      BOOST_TEST(m.Q < min_samples_per_doppler_efold(2, false));
      BOOST_TEST(m.Q >= min_samples_per_doppler_efold(3, false));
    }
    if (!flat && a0 == 0.5 && spp == 256) {  // the review's case: 2 steps are not converged there, 4 are
      BOOST_TEST(m.error.at(2) > kConvergedFactor * floor);
      BOOST_TEST(m.error.at(4) <= kConvergedFactor * floor);
      BOOST_TEST(m.Q < min_samples_per_doppler_efold(2, true));
      BOOST_TEST(m.Q >= min_samples_per_doppler_efold(4, true));
    }
  }
}

// EDM_ROOT_SAMPLING_EXPLORE="a0 spp,spp,... iters,iters,... [flat]": the measurement behind coverage.cpp's
// thresholds, printed only (share/docs/campaign.md, "accumulator.newton_iters", has the command).
BOOST_AUTO_TEST_CASE(explore, *boost::unit_test::disabled()) {
  // Disabled: run by name (--run_test=explore) with the variable set.
  const char* e = std::getenv("EDM_ROOT_SAMPLING_EXPLORE");
  BOOST_REQUIRE_MESSAGE(e, "set EDM_ROOT_SAMPLING_EXPLORE");
  std::istringstream in(e);
  double a0 = 0;
  std::string spps, iters, screen;
  in >> a0 >> spps >> iters >> screen;
  const bool flat = screen == "flat";
  auto list = [](const std::string& t) {
    std::vector<int> v;
    std::istringstream s(t);
    for (std::string x; std::getline(s, x, ',');) v.push_back(std::stoi(x));
    return v;
  };
  for (const int spp : list(spps)) {
    const Sampling m = measure(spp, list(iters), a0, flat);
    for (const auto& [it, err] : m.error)
      BOOST_TEST_MESSAGE((flat ? "flat " : "") << "a0 = " << a0 << ", T/" << spp << ": P = " << m.P << ", Q = " << m.Q << ", newton_iters = " << it << ": rel L2 " << err);
  }
}

BOOST_AUTO_TEST_CASE(a_coarse_sampling_warns_and_strict_refuses) {
  Recorder warned;
  const RunSummary two = dry_run(head_on(256, 2), warned);
  BOOST_TEST(!two.roots_converged);
  BOOST_TEST(warned.warned("accumulator.newton_iters = 2"));
  // Q ≈ 1.81 there: 3 steps meet their threshold (and measure converged, 1.17e-8 against 1.17e-8).
  BOOST_TEST(newton_iters_needed(two.root_sampling.samples_per_doppler_efold, true) == 3);
  BOOST_TEST(warned.warned("set accumulator.newton_iters = 3 or screen.samples_per_period >= "));
  BOOST_TEST(warned.warned("direction ("));

  // The same P as the check on the solved spline directly.
  const auto registry = PluginRegistry::discover();
  PreparedCell prepared(parse(head_on(256, 2)), registry);
  const double P = root_sampling(prepared.screen(), prepared.solve(0, 1), prepared.burst(), 2 * std::numbers::pi)
                       .samples_per_period;
  BOOST_TEST(std::abs(two.root_sampling.samples_per_period - P) <= kSameP * P);

  Recorder strict;
  try {
    dry_run(head_on(256, 2, true), strict);
    BOOST_FAIL("screen.strict = true ran a sampling the roots do not converge at");
  } catch (const PhysicsError& e) {
    BOOST_TEST(e.id() == std::string("EDM-WIN-020"));
    BOOST_TEST(std::string(e.what()).find("screen.strict = true") != std::string::npos, e.what());
  }

  // A real run under strict: refused before any device time, no field.h5 left.
  const fs::path refused = test::temp_dir("root_sampling_strict") / "run";
  BOOST_CHECK_THROW(run_campaign(parse(head_on(256, 2, true), refused), registry, RunOptions{}, strict), PhysicsError);
  BOOST_TEST(!fs::exists(refused / "field.h5"));

  Recorder four;
  const RunSummary ok = dry_run(head_on(256, 4, true), four);
  BOOST_TEST(ok.roots_converged);
  BOOST_TEST(!four.warned("newton_iters"));
}

BOOST_AUTO_TEST_CASE(run_toml_records_the_sampling) {
  const fs::path dir = test::temp_dir("root_sampling_run");
  for (const int iters : {2, 4}) {
    Recorder rec;
    const fs::path out = dir / ("iters" + std::to_string(iters));
    const RunSummary s = run_campaign(parse(head_on(256, iters), out), PluginRegistry::discover(), RunOptions{}, rec);
    const toml::table m = toml::parse_file((out / "run.toml").string());
    BOOST_TEST(m["window"]["root_samples_per_period"].value_or(0.0) == s.root_sampling.samples_per_period);
    BOOST_TEST(m["window"]["roots_converged"].value_or(iters == 2) == (iters == 4));
  }
}

BOOST_AUTO_TEST_CASE(the_test_cell_and_its_neighbours_report_their_sampling) {
  // test::small_cell (γ = 3 head-on, 128 samples per period) as most e2e tests run it: its P, and
  // whether it warns at the default newton_iters, reported (share/docs/campaign.md has the table).
  Recorder rec;
  const RunSummary s = dry_run(test::small_cell(), rec);
  BOOST_TEST_MESSAGE("small_cell: P = " << s.root_sampling.samples_per_period << ", Q = "
                                        << s.root_sampling.samples_per_doppler_efold << ", converged at newton_iters = 2: "
                                        << s.roots_converged);
  BOOST_TEST(s.root_sampling.known());
  BOOST_TEST(rec.warned("newton_iters") == !s.roots_converged);
}
