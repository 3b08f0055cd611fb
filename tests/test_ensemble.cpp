// ctest-label: unit
// Electron ensembles: sunflower disk (deterministic, inside the radius, equal area), the CSV reader
// and its file:line errors, the seeded Gaussian beam (statistics within sampling error,
// reproducible per seed), and the straight-line placement at a laser phase.
#define BOOST_TEST_MODULE ensemble
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <fstream>

#include "edm/ensemble.hpp"
#include "edm/error.hpp"
#include "test_support.hpp"

using namespace edm;

namespace {
std::string write_file(const std::string& name, const std::string& text) {
  static const auto dir = edm::test::temp_dir("ensemble");
  const auto p = (dir / name).string();
  std::ofstream(p) << text;
  return p;
}

// Expects a ConfigError whose message contains every fragment.
void expect_error(const std::string& path, std::initializer_list<std::string> fragments) {
  try {
    read_electron_csv(path);
    BOOST_ERROR("no error for " << path);
  } catch (const ConfigError& e) {
    const std::string what = e.what();
    BOOST_TEST_MESSAGE("CSV error: " << what);
    for (const auto& f : fragments) BOOST_TEST(what.find(f) != std::string::npos, what << " ∌ " << f);
  }
}

struct Moments {
  double mean = 0, rms = 0;
};
Moments moments(const std::vector<ElectronInit>& v, double ElectronInit::*m) {
  Moments r;
  for (auto& e : v) r.mean += e.*m;
  r.mean /= v.size();
  for (auto& e : v) r.rms += (e.*m - r.mean) * (e.*m - r.mean);
  r.rms = std::sqrt(r.rms / v.size());
  return r;
}
}  // namespace

BOOST_AUTO_TEST_CASE(sunflower) {
  const double R = 5e-6;
  const auto a = sunflower_disk(200, R);
  const auto b = sunflower_disk(200, R);
  BOOST_REQUIRE(a.size() == 200);
  int inner = 0;
  double mx = 0, my = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    BOOST_TEST(a[i].x == b[i].x);  // deterministic
    BOOST_TEST(a[i].y == b[i].y);
    const double r = std::hypot(a[i].x, a[i].y);
    BOOST_TEST(r <= R);
    BOOST_TEST(a[i].z == 0.0);
    BOOST_TEST(a[i].uz == 0.0);
    if (r < R / std::sqrt(2.0)) ++inner;
    mx += a[i].x;
    my += a[i].y;
    for (std::size_t j = 0; j < i; ++j)  // no two electrons on top of each other
      BOOST_TEST(std::hypot(a[i].x - a[j].x, a[i].y - a[j].y) > 0.1 * R / std::sqrt(200.0));
  }
  // Equal area per point: exactly half of the points inside R/√2 ((k + ½)/N < ½).
  BOOST_TEST(inner == 100);
  // The golden-angle spiral is balanced: centroid within a few % of R.
  BOOST_TEST(std::hypot(mx, my) / 200 < 0.02 * R);
  BOOST_TEST(sunflower_disk(1, R).size() == 1);
}

BOOST_AUTO_TEST_CASE(csv_valid) {
  const auto p = write_file("ok.csv",
                            "# electrons for a test\n"
                            "t0,x,y,z,ux,uy,uz\n"
                            "0, 1e-6, -2e-6, 0, 0, 0, 9.9  # a comment\n"
                            "\n"
                            "1.5e-15,0,0,3e-6,0.1,-0.2,0\n");
  const auto v = read_electron_csv(p);
  BOOST_REQUIRE(v.size() == 2);
  BOOST_TEST(v[0].x == 1e-6);
  BOOST_TEST(v[0].y == -2e-6);
  BOOST_TEST(v[0].uz == 9.9);
  BOOST_TEST(v[1].t0 == 1.5e-15);
  BOOST_TEST(v[1].uy == -0.2);
  // Header-less files are fine too.
  BOOST_TEST(read_electron_csv(write_file("nohead.csv", "0,0,0,0,0,0,1\n")).size() == 1);
  // A subnormal value is the number written (glibc's strtod flags it ERANGE; it used to be refused
  // as "not a number"); only an overflow to ±Inf is refused.
  const auto tiny = read_electron_csv(write_file("tiny.csv", "1e-320,0,0,0,0,0,1\n"));
  BOOST_REQUIRE(tiny.size() == 1);
  BOOST_TEST(tiny[0].t0 == 1e-320);
  expect_error(write_file("huge.csv", "1e400,0,0,0,0,0,1\n"), {"huge.csv:1:", "column t0"});
}

BOOST_AUTO_TEST_CASE(csv_errors_name_file_and_line) {
  expect_error("/nonexistent/electrons.csv", {"/nonexistent/electrons.csv"});
  const auto bad = write_file("bad.csv", "t0,x,y,z,ux,uy,uz\n0,0,0,0,0,0,1\n0,0,zero,0,0,0,1\n");
  expect_error(bad, {bad + ":3:", "column y", "zero"});
  const auto nan = write_file("nan.csv", "# c\n0,0,0,0,0,0,1\n0,0,0,nan,0,0,1\n");
  expect_error(nan, {nan + ":3:", "column z", "finite"});
  const auto cols = write_file("cols.csv", "0,0,0,0,0,0,1\n0,0,0,0,0,1\n");
  expect_error(cols, {cols + ":2:", "7 columns", "found 6"});
  const auto big = write_file("big.csv", "0,0,0,0,0,0,1e9\n");
  expect_error(big, {big + ":1:", "|u|"});
  const auto empty = write_file("empty.csv", "# nothing\nt0,x,y,z,ux,uy,uz\n");
  expect_error(empty, {empty, "no electrons"});
  // A numeric first line with a typo is an error, not a header.
  const auto typo = write_file("typo.csv", "0,0,0,0,0,0,1x\n");
  expect_error(typo, {typo + ":1:", "column uz"});
}

BOOST_AUTO_TEST_CASE(gaussian_beam_statistics_and_reproducibility) {
  ElectronsSection s;
  s.count = 20000;
  s.sigma_x = 2e-6;
  s.sigma_y = 1e-6;
  s.sigma_z = 5e-6;
  s.energy_spread = 0.01;
  s.emittance_x = 1e-6;
  s.emittance_y = 2e-6;
  const double gamma = 50;
  const auto a = gaussian_beam(s, gamma, 7);
  const auto b = gaussian_beam(s, gamma, 7);
  const auto c = gaussian_beam(s, gamma, 8);
  BOOST_REQUIRE(a.size() == s.count);
  bool same = true, differ = false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    same &= a[i].x == b[i].x && a[i].uz == b[i].uz && a[i].ux == b[i].ux;
    differ |= a[i].x != c[i].x;
  }
  BOOST_TEST(same);    // same seed → same electrons
  BOOST_TEST(differ);  // different seed → different electrons
  // A prefix does not depend on the count (per-electron streams): ranks can generate slices.
  ElectronsSection s10 = s;
  s10.count = 10;
  const auto head = gaussian_beam(s10, gamma, 7);
  for (std::size_t i = 0; i < 10; ++i) BOOST_TEST(head[i].y == a[i].y);

  // Sampling errors: mean σ/√N, rms σ/√(2N); accept 4 standard errors.
  const double N = double(s.count);
  auto check = [&](const char* name, double ElectronInit::*m, double sigma) {
    const auto mo = moments(a, m);
    BOOST_TEST_MESSAGE(name << ": mean " << mo.mean << ", rms " << mo.rms << " (σ " << sigma << ")");
    BOOST_TEST(std::abs(mo.mean) < 4 * sigma / std::sqrt(N));
    BOOST_TEST(std::abs(mo.rms - sigma) < 4 * sigma / std::sqrt(2 * N));
  };
  check("x", &ElectronInit::x, s.sigma_x);
  check("y", &ElectronInit::y, s.sigma_y);
  check("z", &ElectronInit::z, s.sigma_z);
  check("ux", &ElectronInit::ux, s.emittance_x / s.sigma_x);  // ε_n = σ_x σ_ux
  check("uy", &ElectronInit::uy, s.emittance_y / s.sigma_y);
  double gm = 0, g2 = 0;
  for (auto& e : a) {
    const double g = std::sqrt(1 + e.ux * e.ux + e.uy * e.uy + e.uz * e.uz);
    gm += g;
    g2 += g * g;
    BOOST_TEST(e.t0 == 0.0);
  }
  gm /= N;
  const double grms = std::sqrt(g2 / N - gm * gm);
  BOOST_TEST_MESSAGE("γ: mean " << gm << ", relative rms " << grms / gm);
  BOOST_TEST(std::abs(gm / gamma - 1) < 4 * s.energy_spread / std::sqrt(N));
  BOOST_TEST(std::abs(grms / gamma - s.energy_spread) < 4 * s.energy_spread / std::sqrt(2 * N));
}

BOOST_AUTO_TEST_CASE(portable_rng) {
  // Uniform in (0, 1], normal with unit variance, and streams independent of each other.
  PortableRng r(1, 0), r2(1, 0), r3(1, 1);
  double m = 0, v = 0;
  const int n = 100000;
  bool streams_differ = false;
  for (int i = 0; i < n; ++i) {
    const double u = r.uniform();
    BOOST_REQUIRE(u > 0.0);
    BOOST_REQUIRE(u <= 1.0);
    BOOST_REQUIRE(u == r2.uniform());
    streams_differ |= r3.uniform() != u;
  }
  BOOST_TEST(streams_differ);
  for (int i = 0; i < n; ++i) {
    const double g = r.normal();
    m += g;
    v += g * g;
  }
  m /= n;
  v = v / n - m * m;
  BOOST_TEST_MESSAGE("normal(): mean " << m << ", variance " << v);
  BOOST_TEST(std::abs(m) < 4 / std::sqrt(double(n)));
  BOOST_TEST(std::abs(v - 1) < 4 * std::sqrt(2.0 / n));
}

BOOST_AUTO_TEST_CASE(place_at_phase_straight_line) {
  const Normalization units = Normalization::from_wavelength(800e-9);
  const ElectronInit e{1e-15, 1e-6, -2e-6, 3e-6, 0.3, -0.1, 4.0};
  for (int s : {+1, -1}) {
    double y[8];
    place_at_phase(e, units, s, -50.0, y);
    BOOST_TEST(std::abs((y[0] - s * y[3]) + 50.0) < 1e-12);  // at the phase asked
    BOOST_TEST(std::abs(y[4] * y[4] - y[5] * y[5] - y[6] * y[6] - y[7] * y[7] - 1) < 1e-14);
    // Following the straight line back to t0 returns the electron's given position.
    const double dt = e.t0 / units.time() - y[0];
    BOOST_TEST(std::abs(y[1] + y[5] / y[4] * dt - e.x / units.length()) < 1e-12);
    BOOST_TEST(std::abs(y[3] + y[7] / y[4] * dt - e.z / units.length()) < 1e-12);
  }
}

// A header names the columns, in any order: the rows are read by those names. A header in another
// order was read by position (t0 = the x column's 1 s: found by a tester). A header that names
// something else, a column twice, or lacks one is refused naming the file, line and column.
BOOST_AUTO_TEST_CASE(csv_columns_are_read_by_their_header_names) {
  const auto p = write_file("order.csv", "# reordered\nx, uz, t0, weight, y, ux, z, uy\n1e-6, 9.9, 2e-15, 3, -2e-6, 0.1, 4e-6, -0.2\n");
  const auto v = read_electron_csv(p);
  BOOST_REQUIRE(v.size() == 1);
  BOOST_TEST(v[0].t0 == 2e-15);
  BOOST_TEST(v[0].x == 1e-6);
  BOOST_TEST(v[0].y == -2e-6);
  BOOST_TEST(v[0].z == 4e-6);
  BOOST_TEST(v[0].ux == 0.1);
  BOOST_TEST(v[0].uy == -0.2);
  BOOST_TEST(v[0].uz == 9.9);
  BOOST_TEST(v[0].weight == 3.0);
  // The same file in the documented order gives the same electron.
  const auto same = read_electron_csv(write_file("plain_order.csv", "2e-15,1e-6,-2e-6,4e-6,0.1,-0.2,9.9,3\n"));
  BOOST_TEST(same[0].t0 == v[0].t0);
  BOOST_TEST(same[0].uz == v[0].uz);
  const auto unknown = write_file("unknown.csv", "t0,x,y,z,px,uy,uz\n0,0,0,0,0,0,1\n");
  expect_error(unknown, {unknown + ":1:", "'px'", "t0,x,y,z,ux,uy,uz"});
  const auto twice = write_file("twice.csv", "t0,x,y,z,ux,uy,uz,x\n0,0,0,0,0,0,1,0\n");
  expect_error(twice, {twice + ":1:", "'x' twice"});
  const auto lacks = write_file("lacks.csv", "t0,x,y,z,ux,uy\n0,0,0,0,0,0\n");
  expect_error(lacks, {lacks + ":1:", "lacks column 'uz'"});
  const auto short_row = write_file("short_row.csv", "uz,t0,x,y,z,ux,uy\n1,0,0,0,0,0\n");
  expect_error(short_row, {short_row + ":2:", "found 6"});
}
