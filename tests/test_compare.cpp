// ctest-label: e2e
// edm compare (edm/compare.hpp, apps/cmd_compare.cpp; share/docs/compare.md): two runs of one
// campaign compare to exactly 0; runs at newton_iters 2 and 4 differ by what the test computes
// itself from the field components (its own sums, not edm's); the --tol verdict and exit code
// flip at that difference; runs of another screen are refused naming the key; a run without
// spectrum.h5 is compared on what both have; a damaged field.h5 is the FieldFile's id.
#define BOOST_TEST_MODULE compare
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <complex>
#include <cstdio>
#include <fstream>

#include "edm/compare.hpp"
#include "edm/error.hpp"
#include "edm/field_file.hpp"
#include "edm/run_files.hpp"
#include "edm/spectrum_file.hpp"
#include "spawn.hpp"
#include "test_support.hpp"

namespace fs = std::filesystem;
using edm::test::run_edm;

namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// The small e2e cell (flat screen 2 cm downstream, where the retarded-time Newton steps matter)
// with the run's direct spectra on, so that spectrum.h5's /direct (complex amplitudes) is compared too.
std::string cell_text(const std::string& accumulator_lines, const std::string& screen = "") {
  edm::test::SmallCell cell;
  cell.electrons = 8;
  if (!screen.empty()) cell.screen = screen;
  cell.accumulator_lines = accumulator_lines;
  return edm::test::small_cell(cell) + edm::test::small_far_spectra("", 4);
}

fs::path run_of(const std::string& tag, const std::string& text) {
  const fs::path dir = edm::test::temp_dir("compare_" + tag);
  const auto campaign = edm::test::write_file(dir, "cell.toml", text);
  const auto r = run_edm("run " + campaign.string() + " --quiet --output " + (dir / "run").string());
  if (r.exit_code != 0) throw std::runtime_error("edm run of " + tag + " failed:\n" + r.output);
  return dir / "run";
}

const fs::path& run_a() {
  static const fs::path p = run_of("a", cell_text(""));
  return p;
}
const fs::path& run_a_again() {
  static const fs::path p = run_of("a_again", cell_text(""));
  return p;
}
const fs::path& run_newton4() {
  static const fs::path p = run_of("newton4", cell_text("newton_iters = 4\n"));
  return p;
}

edm::CompareResult compare(const fs::path& a, const fs::path& b) {
  const auto fa = edm::FieldFile::open(edm::RunFolder(a).field());
  const auto fb = edm::FieldFile::open(edm::RunFolder(b).field());
  std::unique_ptr<edm::SpectrumFile> sa, sb;
  if (edm::RunFolder(a).has_spectrum()) sa = std::make_unique<edm::SpectrumFile>(edm::SpectrumFile::open(edm::RunFolder(a).spectrum()));
  if (edm::RunFolder(b).has_spectrum()) sb = std::make_unique<edm::SpectrumFile>(edm::SpectrumFile::open(edm::RunFolder(b).spectrum()));
  return edm::compare_runs(fa, fb, sa.get(), sb.get());
}

std::string cli(const fs::path& a, const fs::path& b, const std::string& more = "") {
  return "compare " + a.string() + " " + b.string() + more;
}

char buf[64];
std::string fmt(double v) {
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

// The complex datasets of /direct: value, amplitude and phase rows against sums written here from
// the datasets as SpectrumFile reads them (B the reference; phase weighted by |b|²). Returns how
// many datasets were checked.
int check_complex_rows(const edm::CompareResult& r, const fs::path& a, const fs::path& b) {
  const auto sa = edm::SpectrumFile::open(edm::RunFolder(a).spectrum());
  const auto sb = edm::SpectrumFile::open(edm::RunFolder(b).spectrum());
  const auto da = sa.datasets(edm::SpectrumPart::Direct), db = sb.datasets(edm::SpectrumPart::Direct);
  BOOST_REQUIRE_EQUAL(da.size(), db.size());
  int checked = 0;
  for (std::size_t k = 0; k < da.size(); ++k) {
    if (!da[k].complex) continue;
    double d2 = 0, b2 = 0, amp_d2 = 0, w = 0, wphi = 0;
    for (std::size_t i = 0; i < da[k].real.size(); ++i) {
      const std::complex<double> x(da[k].real[i], da[k].imag[i]), y(db[k].real[i], db[k].imag[i]);
      d2 += std::norm(x - y);
      b2 += std::norm(y);
      amp_d2 += std::pow(std::abs(x) - std::abs(y), 2);
      double dphi = std::arg(x) - std::arg(y);
      while (dphi > M_PI) dphi -= 2 * M_PI;
      while (dphi <= -M_PI) dphi += 2 * M_PI;
      if (std::abs(x) > 0 && std::abs(y) > 0) w += std::norm(y), wphi += std::norm(y) * dphi * dphi;
    }
    const double expect[3] = {std::sqrt(d2 / b2), std::sqrt(amp_d2 / b2), std::sqrt(wphi / w)};
    const char* measure[3] = {"value", "amplitude", "phase"};
    for (int m = 0; m < 3; ++m) {
      const edm::CompareRow* row = nullptr;
      for (const auto& x : r.rows)
        if (x.name == da[k].name && x.measure == measure[m]) row = &x;
      BOOST_TEST_CONTEXT(da[k].name << " " << measure[m]) {
        BOOST_REQUIRE(row);
        BOOST_TEST(row->rel_l2 == expect[m], boost::test_tools::tolerance(1e-9));
        BOOST_TEST(row->rel_l2 > 0.0);
      }
    }
    ++checked;
  }
  return checked;
}

}  // namespace

BOOST_AUTO_TEST_CASE(same_campaign_compares_to_zero) {
  const auto r = compare(run_a(), run_a_again());
  BOOST_REQUIRE_GE(r.rows.size(), 6u);  // /E/{x,y,z}, /B/{x,y,z} at least
  bool direct = false;
  for (const auto& row : r.rows) {
    BOOST_TEST_CONTEXT(row.file << " " << row.name << " " << row.measure) {
      BOOST_TEST(row.rel_l2 == 0.0);
      BOOST_TEST(row.max_abs == 0.0);
      BOOST_TEST(row.elements > 0u);
    }
    direct = direct || (row.file == "spectrum.h5" && row.measure == "phase");
  }
  BOOST_TEST(direct, "spectrum.h5's complex /direct amplitudes are compared in phase");
  BOOST_TEST(r.only_a.empty());
  BOOST_TEST(r.only_b.empty());
  const auto out = run_edm(cli(run_a(), run_a_again(), " --tol 0"));
  BOOST_TEST(out.exit_code == 0, out.output);
  BOOST_TEST(contains(out.output, "PASS: largest relative L2 0 ("), out.output);
}

// The field components' differences computed here, from the components read whole, against edm's
// slab-by-slab sums; the verdict then flips at the largest of them.
BOOST_AUTO_TEST_CASE(newton_iters_2_vs_4_against_own_sums) {
  const auto r = compare(run_newton4(), run_a());
  int checked = 0;
  for (const auto& row : r.rows) {
    if (row.file != "field.h5") continue;
    const auto a = edm::read_field_component(edm::RunFolder(run_newton4()).field(), row.name);
    const auto b = edm::read_field_component(edm::RunFolder(run_a()).field(), row.name);
    BOOST_REQUIRE_EQUAL(a.size(), b.size());
    long double d2 = 0, b2 = 0, mx = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
      const long double d = (long double)a[i] - b[i];
      d2 += d * d;
      b2 += (long double)b[i] * b[i];
      mx = std::max(mx, std::fabs(d));
    }
    const double rel = double(std::sqrt(d2 / b2));
    BOOST_TEST_CONTEXT(row.name) {
      BOOST_TEST(row.elements == a.size());
      BOOST_TEST(row.rel_l2 == rel, boost::test_tools::tolerance(1e-9));
      BOOST_TEST(row.max_abs == double(mx), boost::test_tools::tolerance(1e-12));
    }
    ++checked;
  }
  BOOST_TEST(checked == 6);
  // /direct is summed from the trajectories, not from the samples: the Newton steps leave it as it is.
  for (const auto& row : r.rows)
    if (row.file == "spectrum.h5") BOOST_TEST(row.rel_l2 == 0.0, row.name << " " << row.measure);
  const edm::CompareRow* worst = r.largest();
  BOOST_REQUIRE(worst);
  BOOST_TEST_MESSAGE("newton_iters 4 vs 2: largest rel L2 " << worst->rel_l2 << " (" << worst->name << " "
                                                          << worst->measure << ")");
  // Small (both converge the retarded time) but not zero (one more pair of Newton steps moves it).
  BOOST_TEST(worst->rel_l2 > 0.0);
  BOOST_TEST(worst->rel_l2 < 1e-2);
  for (const auto& row : r.rows) BOOST_TEST(row.rel_l2 <= worst->rel_l2);

  const auto pass = run_edm(cli(run_newton4(), run_a(), " --tol " + fmt(worst->rel_l2 * 1.01)));
  BOOST_TEST(pass.exit_code == 0, pass.output);
  BOOST_TEST(contains(pass.output, "PASS: largest relative L2 "), pass.output);
  const auto fail = run_edm(cli(run_newton4(), run_a(), " --tol " + fmt(worst->rel_l2 * 0.99)));
  BOOST_TEST(fail.exit_code == 8, fail.output);
  BOOST_TEST(contains(fail.output, "FAIL: largest relative L2 "), fail.output);
  BOOST_TEST(contains(fail.output, "(" + worst->name), fail.output);
  const auto json = run_edm(cli(run_newton4(), run_a(), " --json --tol 0"));
  BOOST_TEST(json.exit_code == 8, json.output);
  BOOST_TEST(contains(json.output, "\"pass\": false"), json.output);
  BOOST_TEST(contains(json.output, "\"dataset\": \"" + worst->name + "\""), json.output);
}

// A coarser quadrature of the direct spectra (2 nodes, 3 rad a sub-piece) on the same screen:
// /direct's complex amplitudes differ, in amplitude and in phase; the field does not.
BOOST_AUTO_TEST_CASE(complex_rows_against_own_sums) {
  const fs::path other = run_of("nodes", cell_text("") + "nodes = 2\nphase = 3\n");
  const auto r = compare(other, run_a());
  BOOST_TEST(check_complex_rows(r, other, run_a()) == 1);
}

BOOST_AUTO_TEST_CASE(other_screen_is_refused_naming_the_key) {
  const fs::path other = run_of("nx12", cell_text("", "half_width = 5e-5\nnx = 12\nny = 8\nsamples = 384\n"));
  const auto out = run_edm(cli(run_a(), other));
  BOOST_TEST(out.exit_code == 2, out.output);
  BOOST_TEST(contains(out.output, "[EDM-CMP-001]"), out.output);
  BOOST_TEST(contains(out.output, "screen.nx differs (10 in A, 12 in B)"), out.output);
  BOOST_TEST(!contains(out.output, "PASS"), out.output);

  const fs::path wider = run_of("wide", cell_text("", "half_width = 6e-5\nnx = 10\nny = 8\nsamples = 384\n"));
  const auto axis = run_edm(cli(run_a(), wider));
  BOOST_TEST(axis.exit_code == 2, axis.output);
  BOOST_TEST(contains(axis.output, "[EDM-CMP-001]"), axis.output);
  BOOST_TEST(contains(axis.output, "x axis differs at index 0"), axis.output);

  std::string split = cell_text("");
  split.replace(split.find("mode = \"total\""), 14, "mode = \"split\"");
  const auto mode = run_edm(cli(run_of("split", split), run_a()));
  BOOST_TEST(mode.exit_code == 2, mode.output);
  BOOST_TEST(contains(mode.output, "[EDM-CMP-001]"), mode.output);
  BOOST_TEST(contains(mode.output, "mode differs (split in A, total in B)"), mode.output);
}

BOOST_AUTO_TEST_CASE(one_run_without_spectrum_is_compared_on_what_both_have) {
  const fs::path dir = edm::test::temp_dir("compare_nospec") / "run";
  fs::create_directories(dir);
  for (const char* f : {"run.toml", "field.h5"}) fs::copy_file(run_a() / f, dir / f);
  const auto r = compare(run_a(), dir);
  BOOST_TEST(r.rows.size() == 6u);
  BOOST_REQUIRE(r.only_a.size() == 1u);
  BOOST_TEST(contains(r.only_a[0], "/direct"));
  const auto out = run_edm(cli(run_a(), dir));
  BOOST_TEST(out.exit_code == 0, out.output);
  BOOST_TEST(contains(out.output, "only in A: spectrum.h5 /direct"), out.output);
}

BOOST_AUTO_TEST_CASE(damaged_field_file_is_the_field_file_error) {
  const fs::path dir = edm::test::temp_dir("compare_damaged") / "run";
  fs::create_directories(dir);
  for (const char* f : {"run.toml", "field.h5"}) fs::copy_file(run_a() / f, dir / f);
  std::ofstream(dir / "field.h5", std::ios::trunc) << "not an HDF5 file\n";
  const auto out = run_edm(cli(run_a(), dir));
  BOOST_TEST(out.exit_code == 4, out.output);
  BOOST_TEST(contains(out.output, "[EDM-IO-010]"), out.output);
  BOOST_TEST(contains(out.output, (dir / "field.h5").string()), out.output);
  BOOST_TEST(!contains(out.output, "PASS"), out.output);
}

BOOST_AUTO_TEST_CASE(bad_arguments) {
  const auto tol = run_edm(cli(run_a(), run_a(), " --tol -1"));
  BOOST_TEST(tol.exit_code == 2, tol.output);
  BOOST_TEST(contains(tol.output, "[EDM-CMP-002]"), tol.output);
  const auto one = run_edm("compare " + run_a().string());
  BOOST_TEST(one.exit_code == 2, one.output);
  BOOST_TEST(contains(one.output, "[EDM-CLI-002]"), one.output);
}
