// ctest-label: unit
// Sweeps (share/docs/sweeps.md) in the library: [sweep] axes as lists and ranges, grid and zip
// expansion in file order, stable labels, every bad input with its id, and the campaign table:
// one state file per cell merged under a lock, so concurrent writers lose no row.
#define BOOST_TEST_MODULE sweep
#include <boost/test/unit_test.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <fstream>
#include <functional>

#include "campaign_support.hpp"
#include "synthetic_run.hpp"
#include "edm/error.hpp"
#include "edm/sweep.hpp"
#include "test_support.hpp"

namespace fs = std::filesystem;
using namespace edm;

namespace {

const char* kBase = R"(
[run]
scenario = "inverse_thomson"
[screen]
nx = 4
ny = 4
)";

fs::path write(const std::string& sweep, const std::string& tag = "s") {
  const fs::path dir = test::temp_dir("sweep_" + tag);
  const fs::path p = dir / "c.toml";
  std::ofstream(p) << kBase << "[sweep]\n" << sweep;
  return p;
}

SweepSpec spec_of(const fs::path& p) { return read_sweep(p, "inverse_thomson", {}); }

std::string id_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.id();
  }
  return "none";
}

}  // namespace

BOOST_AUTO_TEST_CASE(grid_is_the_product_in_file_order) {
  // electrons.gamma is written first: it varies slowest although toml++ sorts keys.
  const auto s = spec_of(write("electrons.gamma = [2.0, 5.0]\nlaser.a0 = [0.1, 0.5, 1.0]\n"));
  BOOST_REQUIRE_EQUAL(s.axes.size(), 2u);
  BOOST_TEST(s.axes[0].key == "electrons.gamma");
  const auto cells = expand_sweep(s);
  BOOST_REQUIRE_EQUAL(cells.size(), 6u);
  BOOST_TEST(cells[0].label == "gamma=2.0,a0=0.1");
  BOOST_TEST(cells[1].label == "gamma=2.0,a0=0.5");
  BOOST_TEST(cells[5].label == "gamma=5.0,a0=1.0");
  BOOST_TEST(cells[4].index == 4u);
  BOOST_REQUIRE_EQUAL(cells[4].overrides.size(), 2u);
  BOOST_TEST(cells[4].overrides[1].key == "laser.a0");
  BOOST_TEST(cells[4].overrides[1].value == "0.5");
}

BOOST_AUTO_TEST_CASE(zip_ranges_strings_and_quoted_keys) {
  const auto s = spec_of(write("mode = \"zip\"\n\"laser.a0\" = { from = 0.1, to = 0.3, count = 3 }\n"
                               "laser.polarization = [\"linear\", \"circular_plus\", \"circular_minus\"]\n"
                               "trajectory.knots_per_period = { from = 8, to = 24, count = 3 }\n"));
  const auto cells = expand_sweep(s);
  BOOST_REQUIRE_EQUAL(cells.size(), 3u);
  BOOST_TEST(cells[1].label == "a0=0.2,polarization=circular_plus,knots_per_period=16");
  BOOST_TEST(cells[2].overrides[0].value == "0.3");  // the end exactly
  BOOST_TEST(cells[2].overrides[1].value == "\"circular_minus\"");
  BOOST_TEST(cells[2].overrides[2].value == "24");  // integers stay integers
  const auto log = expand_sweep(spec_of(write("laser.a0 = { from = 0.01, to = 1.0, count = 3, scale = \"log\" }\n")));
  BOOST_TEST(log[1].overrides[0].value == "0.1");
}

BOOST_AUTO_TEST_CASE(labels_name_the_whole_key_when_two_axes_share_a_name) {
  const auto cells = expand_sweep(spec_of(write("screen.nx = [4, 8]\nscreen.ny = [4]\n"
                                                "trajectory.padding = [3.0]\nelectrons.sigma_x = [1e-6]\n")));
  BOOST_TEST(cells[1].label == "nx=8,ny=4,padding=3.0,sigma_x=1e-06");
  const auto shared = expand_sweep(spec_of(write("laser.waist = [1e-5]\nlaser.duration = [1e-14]\n")));
  BOOST_TEST(shared[0].label == "waist=1e-05,duration=1e-14");
}

BOOST_AUTO_TEST_CASE(bad_sweeps_have_their_ids) {
  BOOST_TEST(id_of([] { spec_of(write("laser.a00 = [0.1]\n")); }) == "EDM-SWP-002");
  BOOST_TEST(id_of([] { spec_of(write("nosuch.key = [0.1]\n")); }) == "EDM-SWP-002");
  BOOST_TEST(id_of([] { spec_of(write("laser.a0 = []\n")); }) == "EDM-SWP-003");
  BOOST_TEST(id_of([] { spec_of(write("laser.a0 = { from = 1.0, to = 2.0, count = 0 }\n")); }) == "EDM-SWP-003");
  BOOST_TEST(id_of([] { spec_of(write("mode = \"grid\"\n")); }) == "EDM-SWP-003");
  BOOST_TEST(id_of([] { spec_of(write("laser.a0 = 0.1\n")); }) == "EDM-SWP-004");
  BOOST_TEST(id_of([] { spec_of(write("laser.a0 = { from = 1.0, count = 2 }\n")); }) == "EDM-SWP-004");
  BOOST_TEST(id_of([] { spec_of(write("mode = \"product\"\nlaser.a0 = [0.1]\n")); }) == "EDM-SWP-005");
  BOOST_TEST(id_of([] { spec_of(write("run.output = [\"a\", \"b\"]\n")); }) == "EDM-SWP-006");
  BOOST_TEST(id_of([] {
               expand_sweep(spec_of(write("mode = \"zip\"\nlaser.a0 = [0.1, 0.2]\nelectrons.gamma = [2.0]\n")));
             }) == "EDM-SWP-007");
  BOOST_TEST(id_of([] { expand_sweep(spec_of(write("laser.a0 = [0.1, 0.1]\n"))); }) == "EDM-SWP-009");
  BOOST_TEST(id_of([] { expand_sweep(spec_of(write("laser.a0 = [0.001, 1e-3]\n"))); }) == "EDM-SWP-009");
  const fs::path none = test::temp_dir("sweep_none") / "c.toml";
  std::ofstream(none) << kBase;
  BOOST_TEST(id_of([&] { spec_of(none); }) == "EDM-SWP-001");
  BOOST_TEST(!has_sweep(none));
}

BOOST_AUTO_TEST_CASE(a_grid_over_the_limit_is_refused_with_its_count) {
  const auto s = spec_of(write("max_cells = 5\nlaser.a0 = [0.1, 0.2, 0.3]\nelectrons.gamma = [2.0, 3.0]\n"));
  try {
    expand_sweep(s);
    BOOST_FAIL("a grid of 6 cells passed max_cells = 5");
  } catch (const ConfigError& e) {
    BOOST_TEST(e.id() == "EDM-SWP-008");
    BOOST_TEST(std::string(e.what()).find("6 cells") != std::string::npos);
  }
  BOOST_TEST(expand_sweep(s, true).size() == 6u);  // --yes
}

// A range's count is checked against the limit before any value is made: count = 1e11 used to grow
// the host's memory without bound in read_sweep (even for --dry-run) instead of being refused as a
// long list is. --yes lifts max_cells, not the ceiling of a million cells.
BOOST_AUTO_TEST_CASE(a_huge_range_is_refused_before_its_values_are_made) {
  for (const char* count : {"100000000000", "1000000000000000000"}) {
    const fs::path p = write(std::string("laser.a0 = { from = 0.1, to = 0.2, count = ") + count + " }\n", "huge");
    for (bool yes : {false, true}) {
      try {
        read_sweep(p, "inverse_thomson", {}, yes);
        BOOST_FAIL("a range of " << count << " values was expanded");
      } catch (const ConfigError& e) {
        BOOST_TEST(e.id() == "EDM-SWP-008");
        BOOST_TEST(std::string(e.what()).find(std::string(count) + " values") != std::string::npos, e.what());
        BOOST_TEST(std::string(e.what()).find("laser.a0") != std::string::npos, e.what());
        // Over the ceiling with or without --yes: the message does not offer --yes.
        BOOST_TEST(std::string(e.what()).find("even with --yes") != std::string::npos, e.what());
        BOOST_TEST(std::string(e.what()).find("pass --yes") == std::string::npos, e.what());
      }
    }
  }
  const fs::path p = write("max_cells = 5\nlaser.a0 = { from = 0.1, to = 0.6, count = 6 }\n", "range6");
  BOOST_TEST(id_of([&] { read_sweep(p, "inverse_thomson", {}); }) == "EDM-SWP-008");
  BOOST_TEST(expand_sweep(read_sweep(p, "inverse_thomson", {}, true), true).size() == 6u);  // --yes
  // A grid of short ranges over the ceiling: refused with --yes too, before its cells are made.
  const auto big = read_sweep(write("max_cells = 2000000\nlaser.a0 = { from = 0.1, to = 0.2, count = 1001 }\n"
                                    "electrons.gamma = { from = 2.0, to = 3.0, count = 1001 }\n", "ceiling"),
                              "inverse_thomson", {}, true);
  BOOST_TEST(id_of([&] { expand_sweep(big, true); }) == "EDM-SWP-008");
}

// A NaN end made every value 'nan', reported as one label repeated (EDM-SWP-009); an infinite one
// made NaN steps. Both are refused naming the key.
BOOST_AUTO_TEST_CASE(a_range_end_that_is_not_finite_is_refused_naming_the_key) {
  for (const char* ends : {"from = 0.1, to = nan", "from = nan, to = 0.2", "from = 0.1, to = inf", "from = -inf, to = 1.0"}) {
    const fs::path p = write(std::string("laser.a0 = { ") + ends + ", count = 2 }\n", "nan");
    try {
      expand_sweep(read_sweep(p, "inverse_thomson", {}));
      BOOST_FAIL("a range with " << ends << " passed");
    } catch (const ConfigError& e) {
      BOOST_TEST(e.id() == "EDM-SWP-031", ends << ": " << e.what());
      BOOST_TEST(std::string(e.what()).find("'laser.a0'") != std::string::npos, e.what());
    }
  }
}

BOOST_AUTO_TEST_CASE(edm_run_refuses_a_sweep_and_the_cells_read_the_base) {
  const fs::path p = write("laser.a0 = [0.1, 0.2]\n");
  BOOST_TEST(id_of([&] { load_campaign(p, {}); }) == "EDM-SWP-012");
  const auto plugins = PluginRegistry::discover();
  const auto s = read_sweep(p, "inverse_thomson", plugins.get("inverse_thomson").keys());
  const auto cells = expand_sweep(s);
  const Campaign c = cell_campaign(s, cells[1], {{"screen.nx", "6", Origin::CommandLine}}, "out", plugins);
  BOOST_TEST(c.laser.a0 == 0.2);
  BOOST_TEST(c.screen.nx == 6);
  BOOST_TEST(c.run.output == (fs::path("out") / "a0=0.2").string());
}

// Eight processes record their cells at once: every row is in the table afterwards, and the table
// always parses (each file is written whole and renamed under the lock).
BOOST_AUTO_TEST_CASE(concurrent_writers_lose_no_row) {
  const fs::path p = write("laser.a0 = { from = 0.1, to = 0.8, count = 8 }\n", "conc");
  const auto plugins = PluginRegistry::discover();
  const auto s = read_sweep(p, "inverse_thomson", plugins.get("inverse_thomson").keys());
  const auto cells = expand_sweep(s);
  const fs::path out = p.parent_path() / "out";
  const std::string fp = campaign_fingerprint(s, cells, {}, plugins);
  open_campaign_folder(out, s, cells, fp);
  std::vector<pid_t> kids;
  for (const auto& c : cells) {
    const pid_t pid = ::fork();
    if (pid == 0) {
      int rc = 0;
      try {
        for (int round = 0; round < 5; ++round) {
          CellRecord r = cell_record(out, c);
          r.state = round == 4 ? CellState::Done : CellState::Running;
          r.results["energy"] = double(c.index);
          r.wall_s = round;
          record_cell(out, r);
          (void)read_campaign_table(out);
        }
      } catch (...) {
        rc = 1;
      }
      ::_exit(rc);
    }
    kids.push_back(pid);
  }
  for (pid_t k : kids) {
    int st = 0;
    ::waitpid(k, &st, 0);
    BOOST_TEST((WIFEXITED(st) && WEXITSTATUS(st) == 0));
  }
  const auto t = read_campaign_table(out);
  BOOST_REQUIRE_EQUAL(t.cells.size(), 8u);
  for (std::size_t i = 0; i < 8; ++i) {
    BOOST_TEST(t.cells[i].label == cells[i].label);
    BOOST_TEST(t.cells[i].state == CellState::Done);
    BOOST_TEST(t.cells[i].results.at("energy") == double(i));
  }
  // The table file itself (not only the state files) holds every done row.
  const toml::table root = toml::parse_file(table_path(out).string());
  std::size_t done = 0;
  for (auto&& row : *root["cell"].as_array()) done += (*row.as_table())["state"].value_or(std::string()) == "done";
  BOOST_TEST(done == 8u);
  // A folder of this campaign reopens; another campaign's fingerprint is refused, its cells kept.
  open_campaign_folder(out, s, cells, fp);
  BOOST_TEST(id_of([&] { open_campaign_folder(out, s, cells, "0123456789abcdef"); }) == "EDM-SWP-010");
  BOOST_TEST(read_campaign_table(out).cells[3].state == CellState::Done);
  // A claimed cell is busy for every other claim.
  CellClaim first(out, cells[0].label);
  BOOST_TEST(first.held());
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(CellClaim(out, cells[0].label).held() ? 1 : 0);
  int st = 0;
  ::waitpid(pid, &st, 0);
  BOOST_TEST((WIFEXITED(st) && WEXITSTATUS(st) == 0));
}

// Issue 29: an all-zero field's on-axis spectrum has no peak, and the table recorded the argmax of
// zeros as a line at 4 ω_L. The results leave the peak out then; a field with a line keeps it.
BOOST_AUTO_TEST_CASE(a_zero_field_records_no_peak) {
  test::SyntheticRun s;
  s.nx = s.ny = 5;
  s.samples = 512;  // 16 periods at T/32
  const double c0 = 299792458.0, w = 2 * M_PI * c0 / s.wavelength;
  const fs::path zero = test::make_synthetic_run("sweep_zero_field", s, [](double, double, double, double E[3], double B[3]) {
    E[0] = E[1] = E[2] = B[0] = B[1] = B[2] = 0;
  });
  const auto r0 = cell_results(zero);
  const auto peak = r0.find("peak_omega_on_axis");
  BOOST_TEST((peak == r0.end()), "a zero field recorded a peak at " << (peak == r0.end() ? 0.0 : peak->second / w)
                                                                     << " ω_L");
  BOOST_TEST(r0.at("energy") == 0.0);
  BOOST_TEST(r0.at("laser_omega") == w, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(fs::exists(zero / "spectrum.h5"));

  // A plane wave at 3 ω_L (bin 48 of 512 at T/32): its peak is there, to the interpolation's accuracy.
  const fs::path line = test::make_synthetic_run("sweep_line_field", s, [&](double, double, double t, double E[3], double B[3]) {
    E[0] = 1e3 * std::sin(3 * w * t), E[1] = E[2] = 0;
    B[0] = B[2] = 0, B[1] = E[0] / c0;
  });
  const auto r1 = cell_results(line);
  BOOST_REQUIRE(r1.count("peak_omega_on_axis"));
  BOOST_TEST(std::abs(r1.at("peak_omega_on_axis") / w - 3.0) < 0.01);
  BOOST_TEST(r1.at("energy") > 0.0);
}
