// ctest-label: e2e
// edm compare used on two physics cross-checks (issue 31 items 2 and 3; share/docs/compare.md and
// share/docs/lpwa.md record the numbers):
// - the RK4 retarded-time kernel against the Newton kernel on the small e2e cell: the largest relative
//   L2 of field.h5 within the rk4 kernel's stated tolerance (its sub-step bound, measured against
//   the host reference and Newton in test_rk4_kernel: 3e-8), and not zero (two solvers, not one);
// - LPWA against the numeric trajectories on the thomson LG campaign (share/campaigns/thomson_lg.toml,
//   CI-sized: 8 electrons, 5 × 5 directions in the far field, where LPWA runs are meant to be
//   compared), each field component within twice the LPWA error estimate ε (plugins/common/lpwa.hpp),
//   computed here from the campaign's a0, waist and duration; the campaign at its own 4 µm waist is
//   outside LPWA's validity and refused (EDM-CFG-731), which the test checks too.
// - mirror runs: thomson against inverse_thomson at γ = 1 (and γ → 1) with edm compare --mirror-z.
#define BOOST_TEST_MODULE compare_models
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <fstream>
#include <numbers>
#include <sstream>

#include "../plugins/common/lpwa.hpp"
#include "edm/compare.hpp"
#include "edm/field_file.hpp"
#include "edm/run_files.hpp"
#include "spawn.hpp"
#include "test_support.hpp"

namespace fs = std::filesystem;
using edm::test::run_edm;

namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

fs::path run_of(const std::string& tag, const std::string& text, const std::string& more = "") {
  const fs::path dir = edm::test::temp_dir("compare_models_" + tag);
  const auto campaign = edm::test::write_file(dir, "cell.toml", text);
  const auto r = run_edm("run " + campaign.string() + " --quiet --output " + (dir / "run").string() + more);
  if (r.exit_code != 0) throw std::runtime_error("edm run of " + tag + " failed:\n" + r.output);
  return dir / "run";
}

edm::CompareResult compare(const fs::path& a, const fs::path& b) {
  const auto fa = edm::FieldFile::open(edm::RunFolder(a).field());
  const auto fb = edm::FieldFile::open(edm::RunFolder(b).field());
  return edm::compare_runs(fa, fb, nullptr, nullptr);
}

std::string fmt(double v) {
  std::ostringstream o;
  o.precision(6);
  o << v;
  return o.str();
}

// The rk4 kernel's stated tolerance (share/docs/design.md, "The second kernel"; test_rk4_kernel's
// kRk4VsReference): relative L2 of its cube against Newton's with substeps = "auto", from the bound
// that a sub-step moves τ by at most an eighth of a knot spacing.
constexpr double kRk4VsNewton = 3e-8;

// The small cell with 8 electrons; the reference Newton solve at 8 steps a sample, converged to
// rounding, so that what edm compare measures is the march's error alone.
std::string kernel_cell(const std::string& accumulator_lines) {
  edm::test::SmallCell cell;
  cell.electrons = 8;
  cell.accumulator_lines = accumulator_lines;
  return edm::test::small_cell(cell);
}

}  // namespace

BOOST_AUTO_TEST_CASE(rk4_against_newton_within_the_rk4_bound) {
  const fs::path rk4 = run_of("rk4", kernel_cell("kernel = \"rk4\"\nsubsteps = \"auto\"\n"));
  const fs::path newton = run_of("newton", kernel_cell("kernel = \"newton\"\nnewton_iters = 8\n"));
  const auto r = compare(rk4, newton);
  BOOST_REQUIRE_EQUAL(r.rows.size(), 6u);
  const edm::CompareRow* worst = r.largest();
  BOOST_REQUIRE(worst);
  for (const auto& row : r.rows)
    BOOST_TEST_MESSAGE("rk4 vs newton: " << row.name << " rel L2 " << row.rel_l2 << ", max |a-b| " << row.max_abs
                                         << " " << row.unit);
  BOOST_TEST(worst->rel_l2 <= kRk4VsNewton, worst->name << " rel L2 " << worst->rel_l2);
  BOOST_TEST(worst->rel_l2 > 0.0, "two solvers of the retarded time: not the same bits");
  const auto out = run_edm("compare " + rk4.string() + " " + newton.string() + " --tol " + fmt(kRk4VsNewton));
  BOOST_TEST(out.exit_code == 0, out.output);
  BOOST_TEST(contains(out.output, "PASS: largest relative L2 "), out.output);
  // The verdict is the reported number against --tol: below it the same runs FAIL, exit 8.
  const auto tight = run_edm("compare " + rk4.string() + " " + newton.string() + " --tol " + fmt(worst->rel_l2 / 2));
  BOOST_TEST(tight.exit_code == 8, tight.output);
  BOOST_TEST(contains(tight.output, "FAIL: largest relative L2 "), tight.output);
}

namespace {

// share/campaigns/thomson_lg.toml up to its [screen], with 8 electrons, `waist` and the far field on
// 5 × 5 directions within ±0.2 rad of the axis (where its vortex harmonics live).
std::string lg_cell(const std::string& waist, const std::string& model) {
  std::ifstream in(edm::test::source_dir() / "share/campaigns/thomson_lg.toml");
  std::stringstream ss;
  ss << in.rdbuf();
  std::string t = ss.str();
  t = t.substr(0, t.find("[screen]"));
  t.replace(t.find("count = 128"), 11, "count = 8");
  t.replace(t.find("waist = 4e-6"), 12, "waist = " + waist);
  t.replace(t.find("output = \"runs/thomson_lg\"\n"), 27, "");
  return t +
         "[screen]\ntype = \"angular\"\ndistance = \"infinity\"\nnx = 5\nny = 5\n"
         "theta_x_min = -0.2\ntheta_x_max = 0.2\ntheta_y_min = -0.2\ntheta_y_max = 0.2\n"
         "samples = 512\nsamples_per_period = 16\nwindow = \"explicit\"\nt_start = -4.3e-14\n[trajectory]\nmodel = \"" + model + "\"\n";
}

}  // namespace

BOOST_AUTO_TEST_CASE(lpwa_against_numeric_on_the_lg_campaign) {
  // The campaign's own focus, 4 µm: ε ≈ 0.40 > 0.3, refused naming the key.
  {
    const fs::path dir = edm::test::temp_dir("compare_models_lpwa_tight");
    const auto c = edm::test::write_file(dir, "cell.toml", lg_cell("4e-6", "lpwa"));
    const auto r = run_edm("run " + c.string() + " --quiet --output " + (dir / "run").string());
    BOOST_TEST(r.exit_code == 2, r.output);
    BOOST_TEST(contains(r.output, "[EDM-CFG-731]"), r.output);
    BOOST_TEST(contains(r.output, "trajectory.model"), r.output);
  }
  // At 8 µm (the laser otherwise as the campaign has it): ε from the estimate, in laser units.
  const double length = 800e-9 / (2 * std::numbers::pi), time = length / 299792458.0;
  const double eps = edm::lpwa::estimated_error(0.3, 8e-6 / length, 13.3e-15 / time, 0);
  BOOST_TEST_MESSAGE("LG cell, w0 = 8 µm: estimated LPWA error ε = " << eps);
  BOOST_REQUIRE(eps > 0.01 && eps < 0.3);  // valid, with the warning
  const fs::path lpwa = run_of("lpwa", lg_cell("8e-6", "lpwa"));
  const fs::path numeric = run_of("numeric", lg_cell("8e-6", "lorentz"));
  const auto r = compare(lpwa, numeric);
  BOOST_REQUIRE_EQUAL(r.rows.size(), 6u);
  // ε bounds the error of u (test_lpwa: 0.7–0.8 ε). The far field is that of the quiver (a0 < 1):
  // its transverse components carry u's error, and the emission direction's error, of the same
  // order (the kick turns u⊥ by ~ε), adds at most as much again, most in E_z and B_z, which are
  // of order θ u⊥: 2ε (share/docs/lpwa.md, "Through edm compare"; measured 1.0–1.2 ε).
  const double bound = 2 * eps;
  for (const auto& row : r.rows) {
    BOOST_TEST_MESSAGE("lpwa vs numeric: " << row.name << " rel L2 " << row.rel_l2 << " (" << row.rel_l2 / eps
                                           << " ε)");
    BOOST_TEST(row.rel_l2 < bound, row.name << " rel L2 " << row.rel_l2 << " against 2ε " << bound);
    BOOST_TEST(row.rel_l2 > 0.0);
  }
  const auto out = run_edm("compare " + lpwa.string() + " " + numeric.string() + " --tol " + fmt(bound));
  BOOST_TEST(out.exit_code == 0, out.output);
  BOOST_TEST(contains(out.output, "PASS: largest relative L2 "), out.output);
}

namespace {

// A mirror pair (issue 31: Thomson against inverse Thomson at γ → 1): electrons at rest on a
// sunflower disk, met by a linearly polarised Gaussian pulse whose peak crosses z = 0 at t = 0,
// along +z (thomson, screen 2 cm downstream) or along −z (inverse_thomson at electrons.gamma = 1, or
// 1 + gamma_minus_one, screen at −2 cm); one
// explicit window, so that both runs share the time axis whatever γ.
std::string mirror_cell(const std::string& scenario, const std::string& distance, const std::string& more = "") {
  return "[run]\nscenario = \"" + scenario +
         "\"\nmode = \"total\"\n[laser]\nprofile = \"gaussian\"\na0 = 0.3\nduration = 10.7e-15\nwaist = 10e-6\n"
         "polarization = \"linear\"\n[electrons]\ndistribution = \"sunflower\"\ncount = 8\nradius = 3e-6\n" +
         (scenario == "inverse_thomson" ? "gamma = 1.0\n" : "") + "[screen]\ndistance = " + distance +
         "\nhalf_width = 5e-4\nnx = 6\nny = 5\nsamples = 1024\nsamples_per_period = 32\nwindow = \"explicit\"\n"
         "t_start = 6.6699e-11\n" + more;
}

double largest_mirrored(const fs::path& a, const fs::path& b) {
  const auto fa = edm::FieldFile::open(edm::RunFolder(a).field());
  const auto fb = edm::FieldFile::open(edm::RunFolder(b).field());
  const auto r = edm::compare_runs(fa, fb, nullptr, nullptr, true);
  BOOST_REQUIRE_EQUAL(r.rows.size(), 6u);
  return r.largest()->rel_l2;
}

}  // namespace

// At γ = 1 the two campaigns are one situation seen in a mirror: the inverse_thomson run's equations
// are the thomson run's under z → −z, which negates operands and leaves every rounding as it was
// (IEEE rounding is symmetric under negation), so edm compare --mirror-z finds 0 (--tol 0). As γ → 1
// from above the difference is of first order in β = √(2(γ−1)) (the charge's Doppler and aberration
// factors and its velocity field): measured 2.0 β at γ − 1 = 1e-10 and 1e-8 (and 1e-6); held to 4 β,
// and to the linear scaling (β × 10: the difference × 10 within 10 %).
BOOST_AUTO_TEST_CASE(mirror_runs_thomson_against_inverse_thomson_at_gamma_1) {
  const fs::path th = run_of("mirror_th", mirror_cell("thomson", "0.02"));
  const fs::path it = run_of("mirror_it", mirror_cell("inverse_thomson", "-0.02"));
  BOOST_TEST(largest_mirrored(th, it) == 0.0);
  const auto out = run_edm("compare " + th.string() + " " + it.string() + " --mirror-z --tol 0");
  BOOST_TEST(out.exit_code == 0, out.output);
  BOOST_TEST(contains(out.output, "PASS: largest relative L2 0 ("), out.output);
  // Without the mirror the runs are not of one screen: refused naming the distance.
  const auto plain = run_edm("compare " + th.string() + " " + it.string());
  BOOST_TEST(plain.exit_code == 2, plain.output);
  BOOST_TEST(contains(plain.output, "screen.distance differs"), plain.output);
  // The mirror is checked too: B's screen must be at minus A's distance.
  const auto same_side = run_edm("compare " + th.string() + " " + th.string() + " --mirror-z");
  BOOST_TEST(same_side.exit_code == 2, same_side.output);
  BOOST_TEST(contains(same_side.output, "screen.distance is not mirrored"), same_side.output);

  double prev = 0;
  for (const char* gm1 : {"1e-10", "1e-8"}) {
    const std::string more = std::string("[inverse_thomson]\ngamma_minus_one = ") + gm1 + "\n";
    const fs::path moving = run_of(std::string("mirror_it_") + gm1, mirror_cell("inverse_thomson", "-0.02", more));
    const double beta = std::sqrt(2 * std::stod(gm1)), d = largest_mirrored(th, moving);
    BOOST_TEST_MESSAGE("mirror, γ − 1 = " << gm1 << ": largest rel L2 " << d << " = " << d / beta << " β");
    BOOST_TEST(d > 0.0);
    BOOST_TEST(d <= 4 * beta);
    if (prev > 0) BOOST_TEST(d / prev == 10.0, boost::test_tools::tolerance(0.1));
    prev = d;
  }
}

// The same mirror pair in run.mode = "potential": A is a polar vector (A_z flips under z → −z) and
// φ/c a scalar, so the mirrored potentials agree to the bit as the fields do. Before the potential's
// sign was applied, /A/z differed by 2‖A_z‖ under --mirror-z.
BOOST_AUTO_TEST_CASE(mirror_runs_of_the_four_potential) {
  auto potential = [](std::string cell) { return cell.replace(cell.find("mode = \"total\""), 14, "mode = \"potential\""); };
  const fs::path th = run_of("mirror_pot_th", potential(mirror_cell("thomson", "0.02")));
  const fs::path it = run_of("mirror_pot_it", potential(mirror_cell("inverse_thomson", "-0.02")));
  const auto fa = edm::FieldFile::open(edm::RunFolder(th).field());
  const auto fb = edm::FieldFile::open(edm::RunFolder(it).field());
  const auto r = edm::compare_runs(fa, fb, nullptr, nullptr, true);
  BOOST_REQUIRE_EQUAL(r.rows.size(), 4u);  // /A/x, /A/y, /A/z, /A0
  for (const auto& row : r.rows) BOOST_TEST(row.rel_l2 == 0.0, row.name);
  // A_z is not zero here, so the sign matters.
  std::vector<double> az;
  fa.read_potential_rows(2, 0, fa.geometry().ny, az);
  double peak = 0;
  for (double v : az) peak = std::max(peak, std::abs(v));
  BOOST_TEST(peak > 0.0);
  for (const char* both : {"", " --mirror-z --tol 0"}) {
    const auto out = run_edm("compare " + th.string() + " " + it.string() + both);
    BOOST_TEST(out.exit_code == (*both ? 0 : 2), out.output);
  }
}
