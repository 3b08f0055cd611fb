// ctest-label: e2e
// Whole runs through libedm and the edm binary: batching is bit-identical to the single pass on one
// device, sharding over two devices agrees to tol::sharded, bad input leaves no field.h5 behind, and
// host memory at fixed electron_batch does not grow with the number of electrons.
#define BOOST_TEST_MODULE run
#include <boost/test/unit_test.hpp>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <regex>

#include "edm/campaign.hpp"
#include "edm/device.hpp"
#include "edm/error.hpp"
#include "edm/plugins.hpp"
#include "edm/run.hpp"
#include "edm/writer.hpp"
#include "spawn.hpp"

namespace fs = std::filesystem;
using namespace edm;

namespace {

// Two PoCL devices on one platform (NOTES.md) must be asked for before OpenCL starts.
struct TwoPoclDevices {
  TwoPoclDevices() { setenv("POCL_DEVICES", "pthread pthread", 0); }
};
BOOST_TEST_GLOBAL_FIXTURE(TwoPoclDevices);

// A small inverse-Thomson cell: 8 electrons, 8 × 6 pixels, 256 samples; electron_batch and the
// devices are left to each test.
test::SmallCell run_cell_text(const std::string& extra_screen = "") {
  return {
      .mode = "split",
      .electrons = 8,
      .screen = "half_width_x = 6e-5\nhalf_width_y = 4e-5\nnx = 8\nny = 6\nsamples = 256\n" + extra_screen,
      .electron_batch = "",
      .devices = "",
      .trajectory_lines = "knots_per_period = 16\npadding = 4.0\n"};
}
const std::string kCell = test::small_cell(run_cell_text());

struct Quiet : RunObserver {};

RunSummary run_cell(const fs::path& out, std::vector<Override> overrides) {
  overrides.push_back({"run.output", "\"" + out.string() + "\"", Origin::CommandLine});
  const auto registry = PluginRegistry::discover();
  Campaign c = parse_campaign(kCell, "cell.toml", overrides, registry.get("inverse_thomson").keys(), false);
  Quiet q;
  return run_campaign(c, registry, RunOptions{}, q);
}

const std::vector<std::string> kDatasets = {"/E/x", "/E/y", "/E/z", "/B/x", "/B/y", "/B/z",
                                            "/E_far/x", "/E_far/y", "/E_far/z", "/B_far/x",
                                            "/B_far/y", "/B_far/z"};

std::vector<double> read(const fs::path& run, const std::string& name) {
  return read_field_component(run / "field.h5", name);
}

}  // namespace

BOOST_AUTO_TEST_CASE(batched_runs_are_bit_identical_to_the_single_pass) {
  const auto dir = test::temp_dir("batch");
  run_cell(dir / "single", {{"accumulator.devices", "\"0\""}});
  for (const char* overlap : {"true", "false"}) {
    for (const char* B : {"1", "3", "7", "8"}) {
      const auto out = dir / (std::string("b") + B + overlap);
      RunSummary s = run_cell(out, {{"accumulator.devices", "\"0\""},
                                    {"accumulator.electron_batch", B},
                                    {"accumulator.batch_overlap", overlap}});
      BOOST_TEST(s.batches == (8 + std::stoul(B) - 1) / std::stoul(B));
      // The field and the γ trace (fixed-point sums: the mean too is bit-identical).
      auto names = kDatasets;
      names.insert(names.end(), {"/gamma/mean", "/gamma/min", "/gamma/max"});
      for (const auto& name : names) {
        const bool trace = name.rfind("/gamma/", 0) == 0;
        const auto a = trace ? read_dataset_1d(dir / "single" / "field.h5", name) : read(dir / "single", name);
        const auto b = trace ? read_dataset_1d(out / "field.h5", name) : read(out, name);
        BOOST_REQUIRE_EQUAL(a.size(), b.size());
        BOOST_TEST(std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0,
                   "B = " << B << " overlap = " << overlap << ": " << name << " differs");
      }
    }
  }
}

// The last batch in slabs of rows (written while later slabs compute) and the first batch in
// pieces (launched as they are solved) change only when the additions happen, not which or in what
// order: still bit-identical to the single pass. 8 electrons × 36 is enough for the pieces (the
// first batch of 288 is solved as 64, 128, 96) and 6 rows give 3 slabs of 2 (or 6 of 1).
BOOST_AUTO_TEST_CASE(slabbed_last_batch_and_pieces_are_bit_identical_to_the_single_pass) {
  const auto dir = test::temp_dir("slabs");
  const std::vector<Override> small = {{"accumulator.devices", "\"0\""}, {"screen.samples", "64"},
                                       {"electrons.count", "320"}};
  auto with = [&](std::vector<Override> more) {
    more.insert(more.end(), small.begin(), small.end());
    return more;
  };
  run_cell(dir / "single", with({}));
  for (const char* slabs : {"3", "6"}) {
    const auto out = dir / (std::string("s") + slabs);
    RunSummary s = run_cell(out, with({{"accumulator.electron_batch", "288"}, {"accumulator.tail_slabs", slabs}}));
    BOOST_TEST(s.batches == 2u);
    BOOST_TEST(s.tail_slabs == std::stoi(slabs));
    for (const auto& name : kDatasets) {
      const auto a = read(dir / "single", name), b = read(out, name);
      BOOST_REQUIRE_EQUAL(a.size(), b.size());
      BOOST_TEST(std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0,
                 "tail_slabs = " << slabs << ": " << name << " differs");
    }
  }
}

BOOST_AUTO_TEST_CASE(two_devices_agree_with_one) {
  const auto devices = list_devices();
  int fp64 = 0;
  for (const auto& d : devices) fp64 += d.fp64;
  BOOST_REQUIRE_MESSAGE(fp64 >= 2, "needs two FP64 devices (POCL_DEVICES=\"pthread pthread\")");
  const auto dir = test::temp_dir("shard");
  run_cell(dir / "one", {{"accumulator.devices", "\"0\""}});
  for (const char* B : {"0", "3"}) {
    const auto out = dir / (std::string("two") + B);
    run_cell(out, {{"accumulator.devices", "\"0,1\""}, {"accumulator.electron_batch", B}});
    for (const auto& name : kDatasets) {
      const double rel = test::relative_l2(read(out, name), read(dir / "one", name));
      BOOST_TEST_MESSAGE("two devices, B = " << B << ", " << name << ": relative L2 " << rel);
      BOOST_TEST(rel < test::tol::sharded);
    }
  }
}

BOOST_AUTO_TEST_CASE(manifest_records_batching_and_timing) {
  const auto dir = test::temp_dir("manifest");
  RunSummary s = run_cell(dir / "r", {{"accumulator.electron_batch", "3"}});
  auto m = toml::parse_file((dir / "r" / "run.toml").string());
  BOOST_TEST(m["config"]["electron_batch"].value_or(int64_t(-1)) == 3);
  BOOST_TEST(m["config"]["batch_overlap"].value_or(false) == true);
  BOOST_TEST(m["electrons"]["batches"].value_or(int64_t(0)) == 3);
  BOOST_TEST(m["timing"]["trajectories"].value_or(-1.0) > 0.0);
  BOOST_TEST(m["timing"]["trajectories_overlapped"].value_or(-1.0) >= 0.0);
  BOOST_TEST(m["timing"]["trajectories_overlapped"].value_or(0.0) <= m["timing"]["trajectories"].value_or(0.0));
  BOOST_TEST(m["timing"]["kernel"].value_or(-1.0) > 0.0);
  BOOST_TEST(m["memory"]["host_peak_rss"].value_or(0.0) > 0.0);
  BOOST_TEST(m["memory"]["spline_bytes_per_electron"].value_or(0.0) > 0.0);
  BOOST_TEST(m["window"]["covered"].value_or(false) == true);
  BOOST_TEST(m["config"]["origin"]["accumulator.electron_batch"].value_or(std::string()) == "command line");
  BOOST_TEST(s.coverage.clipped_electrons() == 0u);
}

// ---- the edm binary: bad input gives the intended error and leaves no field.h5 ----------------

namespace {
fs::path write_campaign(const fs::path& dir, const std::string& extra_screen = "") {
  return test::write_file(dir, "cell.toml", test::small_cell(run_cell_text(extra_screen)));
}
using test::run_edm;
}  // namespace

BOOST_AUTO_TEST_CASE(bad_input_leaves_no_field_file) {
  const auto dir = test::temp_dir("bad");
  const auto campaign = write_campaign(dir);
  struct Case {
    std::string args, expect;
    int code;
  } cases[] = {
      {"--set screen.nx=0", "nx", 2},
      {"--device 7", "7", 2},
      {"--device no-such-device-anywhere", "no-such-device-anywhere", 2},
      {"--set screen.window='\"explicit\"' --set screen.t_start=1e-3", "t_start", 2},
      {"--set accumulator.devices='\"0\"' --set electrons.count=-1", "count", 2},
  };
  int i = 0;
  for (const auto& c : cases) {
    const auto out = dir / ("out" + std::to_string(i++));
    auto r = run_edm("run " + campaign.string() + " --quiet --output " + out.string() + " " + c.args);
    BOOST_TEST_MESSAGE("edm run " << c.args << " → exit " << r.exit_code << ": " << r.output);
    BOOST_TEST(r.exit_code == c.code, c.args << ": exit " << r.exit_code);
    BOOST_TEST(r.output.find(c.expect) != std::string::npos, c.args << ": message lacks " << c.expect);
    BOOST_TEST(!fs::exists(out / "field.h5"));
    BOOST_TEST(!fs::exists(out / "field.h5.partial"));
  }
}

BOOST_AUTO_TEST_CASE(existing_results_are_never_overwritten_silently) {
  const auto dir = test::temp_dir("keep");
  const auto campaign = write_campaign(dir);
  const auto out = dir / "run";
  auto r1 = run_edm("run " + campaign.string() + " --quiet --output " + out.string());
  BOOST_REQUIRE_MESSAGE(r1.exit_code == 0, r1.output);
  const auto before = fs::last_write_time(out / "field.h5");
  const auto size = fs::file_size(out / "field.h5");
  auto r2 = run_edm("run " + campaign.string() + " --quiet --output " + out.string());
  BOOST_TEST(r2.exit_code == 2);
  BOOST_TEST(r2.output.find("--overwrite") != std::string::npos);
  BOOST_TEST((fs::last_write_time(out / "field.h5") == before));
  BOOST_TEST(fs::file_size(out / "field.h5") == size);
  // The manifest replays the run bit for bit.
  auto r3 = run_edm("run " + (out / "run.toml").string() + " --quiet --output " + (dir / "replay").string());
  BOOST_REQUIRE_MESSAGE(r3.exit_code == 0, r3.output);
  for (const auto& name : kDatasets) {
    const auto a = read(out, name), b = read(dir / "replay", name);
    BOOST_TEST((a == b), name << " differs after replay");
  }
}

// Host peak RSS at fixed B must not grow with N (a memory assertion, not a timing one). Child
// processes, so each VmHWM is its own; the manifest records it.
BOOST_AUTO_TEST_CASE(host_memory_does_not_grow_with_electrons_at_fixed_batch) {
  const auto dir = test::temp_dir("rss");
  const auto campaign = write_campaign(dir);
  auto peak = [&](int n, const std::string& batch) {
    const auto out = dir / ("n" + std::to_string(n) + "b" + batch);
    // A long trajectory (many knots) on a tiny screen: splines dominate memory, kernels are cheap.
    auto r = run_edm("run " + campaign.string() + " --quiet --output " + out.string() +
                 " --set electrons.count=" + std::to_string(n) + " --electron-batch " + batch +
                 " --set screen.nx=2 --set screen.ny=2 --set screen.samples=16 --set trajectory.knots_per_period=64"
                 " --set trajectory.padding=8");
    BOOST_REQUIRE_MESSAGE(r.exit_code == 0, r.output);
    auto m = toml::parse_file((out / "run.toml").string());
    return std::make_pair(m["memory"]["host_peak_rss"].value_or(0.0),
                          m["memory"]["spline_bytes_per_electron"].value_or(0.0));
  };
  const auto [u64, bpe] = peak(64, "0");
  const auto [u512, bpe2] = peak(512, "0");
  const auto [b64, bpe3] = peak(64, "16");
  const auto [b512, bpe4] = peak(512, "16");
  BOOST_TEST_MESSAGE("spline bytes per electron " << bpe << "; VmHWM unbatched N=64 " << u64 / 1e6
                                                  << " MB, N=512 " << u512 / 1e6 << " MB; B=16 N=64 "
                                                  << b64 / 1e6 << " MB, N=512 " << b512 / 1e6 << " MB");
  const double unbatched_growth = u512 - u64, batched_growth = b512 - b64;
  BOOST_TEST(unbatched_growth > 0.5 * 448 * bpe);  // the splines really were resident
  BOOST_TEST(batched_growth < 0.1 * unbatched_growth);
}

// The memory guard refuses a cube the device cannot hold before any trajectory is solved. A cube
// larger than the device runs in tiles of rows in turn (issue 32, test_pixel_sharding), so the
// guard refuses a screen of which not even one row fits: 200 000 pixels × 100 000 samples a row.
BOOST_AUTO_TEST_CASE(screen_too_large_for_the_device_is_refused_before_solving) {
  struct Phases : RunObserver {
    std::vector<std::string> seen;
    void phase(const std::string& name, const std::string&) override { seen.push_back(name); }
  } phases;
  const auto dir = test::temp_dir("guard");
  const auto registry = PluginRegistry::discover();
  Campaign c = parse_campaign(kCell, "cell.toml",
                              {{"screen.nx", "200000"}, {"screen.ny", "2000"}, {"screen.samples", "100000"},
                               {"accumulator.electron_batch", "\"auto\""},
                               {"run.output", "\"" + (dir / "out").string() + "\""}},
                              registry.get("inverse_thomson").keys(), false);
  try {
    run_campaign(c, registry, RunOptions{}, phases);
    BOOST_FAIL("a cube of 480 GB a row was accepted");
  } catch (const DeviceError& e) {
    BOOST_TEST_MESSAGE("guard: " << e.what());
    BOOST_TEST(std::string(e.what()).find("nx") != std::string::npos);
  }
  BOOST_TEST((std::find(phases.seen.begin(), phases.seen.end(), "trajectories") == phases.seen.end()));
  BOOST_TEST(!fs::exists(dir / "out" / "field.h5"));
}
