// ctest-label: e2e
// Pixel sharding over the devices of one process (accumulator.sharding = "pixels", issue 32): two
// PoCL devices, each a tile of screen rows and every electron, write a field.h5 bit-identical
// (memcmp, every dataset) to one device's, batched or not; run.toml records the sharding and why;
// more devices than screen rows are refused naming the key; "auto" records the cost model's choice.
// The same through the ShardedFieldAccumulator alone, on analytic splines, with uneven rows.
#define BOOST_TEST_MODULE pixel_sharding
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <numbers>

#include <toml++/toml.h>

#include "analytic_splines.hpp"
#include "edm/campaign.hpp"
#include "edm/device.hpp"
#include "edm/error.hpp"
#include "edm/plugins.hpp"
#include "edm/run.hpp"
#include "edm/sharded.hpp"
#include "edm/writer.hpp"
#include "spawn.hpp"

namespace fs = std::filesystem;
using namespace edm;

namespace {

struct TwoPoclDevices {
  TwoPoclDevices() { setenv("POCL_DEVICES", "pthread pthread", 0); }
};
BOOST_TEST_GLOBAL_FIXTURE(TwoPoclDevices);

// test_run's small inverse-Thomson cell with an odd row count (uneven tiles: 4 + 3 rows).
test::SmallCell cell_text(int ny) {
  return {.mode = "split",
          .electrons = 8,
          .screen = "half_width_x = 6e-5\nhalf_width_y = 4e-5\nnx = 8\nny = " + std::to_string(ny) + "\nsamples = 256\n",
          .electron_batch = "",
          .devices = "",
          .trajectory_lines = "knots_per_period = 16\npadding = 4.0\n"};
}

struct Quiet : RunObserver {};

RunSummary run_cell(const fs::path& out, std::vector<Override> overrides, int ny = 7) {
  overrides.push_back({"run.output", "\"" + out.string() + "\"", Origin::CommandLine});
  const auto registry = PluginRegistry::discover();
  Campaign c = parse_campaign(test::small_cell(cell_text(ny)), "cell.toml", overrides,
                              registry.get("inverse_thomson").keys(), false);
  Quiet q;
  return run_campaign(c, registry, RunOptions{}, q);
}

const std::vector<std::string> kDatasets = {"/E/x", "/E/y", "/E/z", "/B/x", "/B/y", "/B/z",
                                            "/E_far/x", "/E_far/y", "/E_far/z", "/B_far/x",
                                            "/B_far/y", "/B_far/z"};

void require_two_devices() {
  int fp64 = 0;
  for (const auto& d : list_devices()) fp64 += d.fp64;
  BOOST_REQUIRE_MESSAGE(fp64 >= 2, "needs two FP64 devices (POCL_DEVICES=\"pthread pthread\")");
}

}  // namespace

BOOST_AUTO_TEST_CASE(two_devices_by_pixels_equal_one_bit_for_bit) {
  require_two_devices();
  const auto dir = test::temp_dir("pixshard");
  run_cell(dir / "one", {{"accumulator.devices", "\"0\""}});
  for (const char* B : {"0", "3"}) {
    const auto out = dir / (std::string("two") + B);
    const RunSummary s = run_cell(out, {{"accumulator.devices", "\"0,1\""},
                                        {"accumulator.sharding", "\"pixels\""},
                                        {"accumulator.electron_batch", B}});
    BOOST_TEST(s.sharding == "pixels");
    for (const auto& name : kDatasets) {
      const auto a = read_field_component(out / "field.h5", name);
      const auto b = read_field_component(dir / "one" / "field.h5", name);
      BOOST_TEST_REQUIRE(a.size() == b.size());
      double norm = 0;
      for (double v : b) norm += v * v;
      BOOST_TEST(norm > 0, name);
      BOOST_TEST(std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0, "B = " << B << ", " << name);
    }
    const auto m = toml::parse_file((out / "run.toml").string());
    BOOST_TEST(m["config"]["sharding"].value_or(std::string()) == "pixels");
    BOOST_TEST(m["config"]["sharding_setting"].value_or(std::string()) == "pixels");
    BOOST_TEST(m["config"]["sharding_reason"].value_or(std::string()) == "accumulator.sharding");
  }
}

BOOST_AUTO_TEST_CASE(auto_records_its_choice_and_one_device_is_by_electrons) {
  require_two_devices();
  const auto dir = test::temp_dir("pixauto");
  const RunSummary two = run_cell(dir / "two", {{"accumulator.devices", "\"0,1\""}});
  BOOST_TEST((two.sharding == "pixels" || two.sharding == "electrons"));
  BOOST_TEST(two.sharding_reason.rfind("auto: ", 0) == 0u, two.sharding_reason);
  const auto m = toml::parse_file((dir / "two" / "run.toml").string());
  BOOST_TEST(m["config"]["sharding"].value_or(std::string()) == two.sharding);
  BOOST_TEST(m["config"]["sharding_setting"].value_or(std::string()) == "auto");
  const RunSummary one = run_cell(dir / "one", {{"accumulator.devices", "\"0\""}, {"accumulator.sharding", "\"pixels\""}});
  BOOST_TEST(one.sharding == "electrons");
  BOOST_TEST(one.sharding_reason == "one device");
}

BOOST_AUTO_TEST_CASE(more_devices_than_rows_are_refused_naming_the_key) {
  require_two_devices();
  const auto dir = test::temp_dir("pixrows");
  try {
    run_cell(dir / "r", {{"accumulator.devices", "\"0,1\""}, {"accumulator.sharding", "\"pixels\""}}, 1);
    BOOST_FAIL("two devices by pixels on one row accepted");
  } catch (const ConfigError& e) {
    BOOST_TEST(std::string(e.id()) == "EDM-TILE-002");
    BOOST_TEST(std::string(e.what()).find("accumulator.sharding") != std::string::npos, e.what());
  }
  BOOST_TEST(!fs::exists(dir / "r" / "field.h5"));
}

BOOST_AUTO_TEST_CASE(sharded_accumulator_by_pixels_equals_one_device) {
  require_two_devices();
  Screen s;
  s.nx = 5, s.ny = 7, s.samples = 48;
  s.half_x = 300, s.half_y = 230, s.z = 2000;
  s.dt = 2 * std::numbers::pi / 16;
  std::vector<test::Worldline> ws;
  for (int i = 0; i < 3; ++i)
    ws.push_back(test::plane_wave_orbit(i % 2 ? 0.35 : 0.5, i % 2 ? 0.35 : 0.0, 1.0, +1, 0.4 * i, {3.0 * i, -2.0 * i, 0.5 * i}));
  const test::CoveredBatch cb = test::covered_batch(s, ws, 2 * std::numbers::pi / 32);
  const auto devices = select_devices("0,1");
  for (Mode mode : {Mode::Total, Mode::Split}) {
    const std::size_t row = std::size_t(s.nx) * s.samples;
    const auto cube = [&](ShardedFieldAccumulator& acc) {
      std::vector<double> out(std::size_t(bucket_count(mode)) * 3 * s.ny * row, std::nan(""));
      int rows_seen = 0;
      acc.finish([&](int b, int c, int y0, int y1, const double* d) {
        if (b == 0 && c == 0) rows_seen += y1 - y0;  // every row handed over once
        std::memcpy(out.data() + ((std::size_t(b) * 3 + c) * s.ny + y0) * row, d, std::size_t(y1 - y0) * row * 8);
      }, 2);
      BOOST_TEST(rows_seen == s.ny);
      return out;
    };
    ShardedFieldAccumulator one({devices[0]}, cb.screen, mode, KernelOptions{});
    one.accumulate(cb.batch);
    ShardedFieldAccumulator two(devices, cb.screen, mode, KernelOptions{}, Sharding::Pixels);
    BOOST_TEST((two.owned_rows() == std::vector<std::pair<int, int>>{{0, 4}, {4, 7}}));
    two.accumulate(cb.batch);
    const auto a = cube(one), b = cube(two);
    BOOST_TEST(std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0);
  }
}

namespace {
// EDM_MAX_DEVICE_ALLOCATION (or another cap) for the scope of one check.
struct AllocationCap {
  const char* name;
  explicit AllocationCap(std::uint64_t bytes, const char* var = "EDM_MAX_DEVICE_ALLOCATION") : name(var) {
    setenv(name, std::to_string(bytes).c_str(), 1);
  }
  ~AllocationCap() { unsetenv(name); }
};
// One bucket of the cell's cube: 3 components × 256 samples × 8 × ny pixels, in doubles.
std::uint64_t bucket_bytes(int ny) { return 3ull * 256 * 8 * std::uint64_t(ny) * sizeof(double); }
}  // namespace

BOOST_AUTO_TEST_CASE(a_screen_four_times_the_allowed_allocation_runs_in_passes_bit_for_bit) {
  require_two_devices();
  const auto dir = test::temp_dir("passes");
  const RunSummary one = run_cell(dir / "one", {{"accumulator.devices", "\"0\""}});
  BOOST_TEST(one.passes == 1);
  struct Case {
    const char* name;
    std::vector<Override> set;
    int min_passes;
  };
  const std::vector<Case> cases = {
      {"one device, batches of 3", {{"accumulator.devices", "\"0\""}, {"accumulator.electron_batch", "3"}}, 4},
      {"one device, single pass", {{"accumulator.devices", "\"0\""}}, 4},
      {"two devices by pixels", {{"accumulator.devices", "\"0,1\""}, {"accumulator.sharding", "\"pixels\""}}, 4},
      {"two devices by electrons", {{"accumulator.devices", "\"0,1\""}, {"accumulator.sharding", "\"electrons\""}}, 4}};
  for (const auto& c : cases) {
    const auto out = dir / (std::string("p") + std::to_string(&c - cases.data()));
    RunSummary s;
    {
      const AllocationCap cap(bucket_bytes(7) / 4);  // a quarter of the cube's bucket: one row per tile
      s = run_cell(out, c.set);
    }
    BOOST_TEST(s.passes >= c.min_passes, c.name << ": " << s.passes << " passes");
    const auto m = toml::parse_file((out / "run.toml").string());
    BOOST_TEST(m["config"]["passes"].value_or(0) == s.passes, c.name);
    for (const auto& name : kDatasets) {
      const auto a = read_field_component(out / "field.h5", name);
      const auto b = read_field_component(dir / "one" / "field.h5", name);
      BOOST_TEST_REQUIRE(a.size() == b.size());
      if (c.set.size() > 1 && std::string(c.name).find("electrons") != std::string::npos) {
        BOOST_TEST(test::relative_l2(a, b) < test::tol::sharded, c.name << ", " << name);  // a reduce's rounding
      } else {
        BOOST_TEST(std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0, c.name << ", " << name);
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(a_tile_that_cannot_hold_one_batch_of_splines_is_refused) {
  const auto dir = test::temp_dir("tilesplines");
  // One row's four buckets fit the device's memory; beside them, the splines of 8 electrons do not.
  const AllocationCap cap(4 * bucket_bytes(1) + 1000, "EDM_MAX_DEVICE_MEMORY");
  try {
    run_cell(dir / "r", {{"accumulator.devices", "\"0\""}});
    BOOST_FAIL("a batch of splines larger than the allowed allocation accepted");
  } catch (const ConfigError& e) {
    BOOST_TEST(std::string(e.id()) == "EDM-TILE-004");
    BOOST_TEST(std::string(e.what()).find("accumulator.electron_batch") != std::string::npos, e.what());
  }
  BOOST_TEST(!fs::exists(dir / "r" / "field.h5"));
}
