// ctest-label: e2e
// A screen larger than the devices runs in passes of rows (issue 32 b, c). The later passes launch
// the first pass's splines kept on the host when they fit the host budget left beside the batches,
// or solve every electron again when they do not (--max-host-memory): either way field.h5 equals the
// single pass bit for bit (memcmp, every dataset), and run.toml says which and why. The kept bytes
// are checked against the knots the run counted (every electron kept once). A SIGTERM during a later
// pass checkpoints that pass (the passes before it are in field.h5.partial), and `edm resume` gives
// the uninterrupted run's field.h5 bit for bit; a resume with other passes, or without the partial
// file, is refused naming the problem.
#define BOOST_TEST_MODULE pass_splines
#include <boost/test/unit_test.hpp>

#include <csignal>
#include <cstdlib>
#include <cstring>

#include <toml++/toml.h>

#include "edm/campaign.hpp"
#include "edm/checkpoint.hpp"
#include "edm/device.hpp"
#include "edm/error.hpp"
#include "edm/field_file.hpp"
#include "edm/plugins.hpp"
#include "edm/run.hpp"
#include "edm/trajectory.hpp"
#include "spawn.hpp"

namespace fs = std::filesystem;
using namespace edm;

namespace {

struct TwoPoclDevices {
  TwoPoclDevices() { setenv("POCL_DEVICES", "pthread pthread", 0); }
};
BOOST_TEST_GLOBAL_FIXTURE(TwoPoclDevices);

constexpr int kNy = 7, kNx = 8, kSamples = 256;

// test_pixel_sharding's cell: split mode (four buckets), 7 rows, so a cap of a quarter bucket makes
// passes of one row.
test::SmallCell cell_text(int electrons = 8, int knots_per_period = 16) {
  return {.mode = "split",
          .electrons = electrons,
          .screen = "half_width_x = 6e-5\nhalf_width_y = 4e-5\nnx = " + std::to_string(kNx) +
                    "\nny = " + std::to_string(kNy) + "\nsamples = " + std::to_string(kSamples) + "\n",
          .electron_batch = "",
          .devices = "",
          .trajectory_lines = "knots_per_period = " + std::to_string(knots_per_period) + "\npadding = 4.0\n"};
}

// One bucket of the cell's cube (3 components, every pixel and sample), bytes.
std::uint64_t bucket_bytes() { return 3ull * kSamples * kNx * kNy * sizeof(double); }

// EDM_MAX_DEVICE_ALLOCATION for the scope of one run (a quarter bucket: passes of one row).
struct AllocationCap {
  explicit AllocationCap(std::uint64_t bytes = bucket_bytes() / 4) {
    setenv("EDM_MAX_DEVICE_ALLOCATION", std::to_string(bytes).c_str(), 1);
  }
  ~AllocationCap() { unsetenv("EDM_MAX_DEVICE_ALLOCATION"); }
};

struct Quiet : RunObserver {};

RunSummary run_cell(const fs::path& out, std::vector<Override> overrides, RunOptions options = {},
                    const test::SmallCell& cell = cell_text()) {
  overrides.push_back({"run.output", "\"" + out.string() + "\"", Origin::CommandLine});
  const auto registry = PluginRegistry::discover();
  Campaign c = parse_campaign(test::small_cell(cell), "cell.toml", overrides,
                              registry.get("inverse_thomson").keys(), false);
  Quiet q;
  return run_campaign(c, registry, options, q);
}

const std::vector<std::string> kDatasets = {"/E/x", "/E/y", "/E/z", "/B/x", "/B/y", "/B/z",
                                            "/E_far/x", "/E_far/y", "/E_far/z", "/B_far/x",
                                            "/B_far/y", "/B_far/z"};

// Every field dataset of `a` equals `b`'s bit for bit (and is not all zeros).
void require_same_field(const fs::path& a, const fs::path& b, const std::string& what) {
  for (const auto& name : kDatasets) {
    const auto x = read_field_component(a / "field.h5", name);
    const auto y = read_field_component(b / "field.h5", name);
    BOOST_TEST_REQUIRE(x.size() == y.size());
    double norm = 0;
    for (double v : y) norm += v * v;
    BOOST_TEST(norm > 0, what << ", " << name);
    BOOST_TEST(std::memcmp(x.data(), y.data(), x.size() * sizeof(double)) == 0, what << ", " << name);
  }
}

std::string config_string(const fs::path& run, const char* key) {
  const auto m = toml::parse_file((run / "run.toml").string());
  return m["config"][key].value_or(std::string());
}

// The splines of every electron once: a SplineBatch holds kCoefPerInterval doubles per interval and
// one ElectronSpline per electron, and the run counts n_intervals + 1 knots per electron.
std::uint64_t spline_bytes_of(const RunSummary& s) {
  return (s.knots_total - s.electrons) * kCoefPerInterval * sizeof(double) + s.electrons * sizeof(ElectronSpline);
}

}  // namespace

BOOST_AUTO_TEST_CASE(kept_splines_give_the_single_pass_bit_for_bit) {
  const auto dir = test::temp_dir("pass_kept");
  const RunSummary one = run_cell(dir / "one", {{"accumulator.devices", "\"0\""}});
  BOOST_TEST(one.passes == 1);
  BOOST_TEST(config_string(dir / "one", "pass_splines").empty(), "one pass records no pass_splines");
  struct Case {
    const char* name;
    std::vector<Override> set;
  };
  int fp64 = 0;
  for (const auto& d : list_devices()) fp64 += d.fp64;
  std::vector<Case> cases = {
      {"one device, batches of 3", {{"accumulator.devices", "\"0\""}, {"accumulator.electron_batch", "3"}}},
      {"one device, batches of 3, no overlap",
       {{"accumulator.devices", "\"0\""}, {"accumulator.electron_batch", "3"}, {"accumulator.batch_overlap", "false"}}},
      {"one device, single batch", {{"accumulator.devices", "\"0\""}}}};
  if (fp64 >= 2)
    cases.push_back({"two devices by pixels", {{"accumulator.devices", "\"0,1\""}, {"accumulator.sharding", "\"pixels\""}}});
  for (const auto& c : cases) {
    const auto out = dir / ("p" + std::to_string(&c - cases.data()));
    RunSummary s;
    {
      const AllocationCap cap;
      s = run_cell(out, c.set);
    }
    BOOST_TEST(s.passes >= 4, c.name << ": " << s.passes << " passes");
    BOOST_TEST(s.pass_splines == "kept", c.name << ": " << s.pass_splines_reason);
    BOOST_TEST(config_string(out, "pass_splines") == "kept", c.name);
    BOOST_TEST(config_string(out, "pass_splines_reason").find("fit the host budget") != std::string::npos, c.name);
    // The kept splines' peak is every electron's splines once: none solved twice, none missing.
    BOOST_TEST(s.knots_total == one.knots_total, c.name);
    BOOST_TEST(s.pass_splines_bytes == spline_bytes_of(s), c.name);
    const auto m = toml::parse_file((out / "run.toml").string());
    BOOST_TEST(m["config"]["pass_splines_bytes"].value_or(std::int64_t(0)) == std::int64_t(s.pass_splines_bytes), c.name);
    require_same_field(out, dir / "one", c.name);
  }
}

BOOST_AUTO_TEST_CASE(splines_over_the_host_budget_are_solved_again_bit_for_bit) {
  const auto dir = test::temp_dir("pass_resolved");
  // Splines of tens of MiB, so that the resident memory's drift from run to run (a few MiB) stays
  // well inside the margins below: 32 electrons at 64 knots per period.
  const test::SmallCell cell = cell_text(32, 64);
  const auto run = [&](const char* name, const std::vector<Override>& set, RunOptions o = {}) {
    return run_cell(dir / name, set, o, cell);
  };
  run("one", {{"accumulator.devices", "\"0\""}});
  const std::vector<Override> set = {{"accumulator.devices", "\"0\""}, {"accumulator.electron_batch", "1"},
                                     {"accumulator.batch_overlap", "false"}};
  const AllocationCap cap;
  // What the plan counts beside the kept splines (resident memory, staging, a batch), from a dry
  // run under a large limit: the limit less the budget it leaves them.
  const std::uint64_t large = 1ull << 40;
  const RunSummary dry = run("dry", set, RunOptions{.dry_run = true, .max_host_memory = large});
  BOOST_TEST_REQUIRE(dry.passes >= 4);
  BOOST_TEST(dry.pass_splines == "kept");
  BOOST_TEST_REQUIRE(dry.pass_splines_bytes > 0u);
  const double needs = double(large) - dry.pass_splines_budget;
  BOOST_TEST_MESSAGE("the plan counts " << needs / 1048576 << " MiB beside the kept splines' "
                                        << dry.pass_splines_bytes / 1048576.0 << " MiB");
  // Half the kept splines' prediction above that: a batch fits, the kept splines do not.
  const auto limit = std::uint64_t(needs + 0.5 * double(dry.pass_splines_bytes));
  // The dry run at that limit predicts the re-solves: electron 0's solve, for every electron and pass after the first.
  const RunSummary dry_re = run("dry", set, RunOptions{.dry_run = true, .max_host_memory = limit});
  BOOST_TEST(dry_re.pass_splines == "re-solved", dry_re.pass_splines_reason);
  BOOST_TEST(dry_re.pass_resolve_estimate > 0);
  BOOST_TEST(dry.pass_resolve_estimate == 0);
  const RunSummary s = run("re", set, RunOptions{.max_host_memory = limit});
  BOOST_TEST(s.passes == dry.passes);
  BOOST_TEST(s.pass_splines == "re-solved", s.pass_splines_reason);
  BOOST_TEST(config_string(dir / "re", "pass_splines") == "re-solved");
  const std::string why = config_string(dir / "re", "pass_splines_reason");
  BOOST_TEST(why.find("do not fit") != std::string::npos, why);
  BOOST_TEST(why.find("--max-host-memory") != std::string::npos, why);
  require_same_field(dir / "re", dir / "one", "re-solved");
  // The same limit with room for the splines keeps them.
  const auto room = std::uint64_t(needs + 2.0 * double(dry.pass_splines_bytes));
  const RunSummary k = run("kept", set, RunOptions{.max_host_memory = room});
  BOOST_TEST(k.pass_splines == "kept", k.pass_splines_reason);
  require_same_field(dir / "kept", dir / "one", "kept under --max-host-memory");
}

BOOST_AUTO_TEST_CASE(the_dry_run_says_the_passes_splines_and_memories) {
  const auto dir = test::temp_dir("pass_dry");
  const auto campaign = test::write_file(dir, "cell.toml", test::small_cell(cell_text()));
  const AllocationCap cap;
  const auto kept = test::run_edm("run " + campaign.string() + " --dry-run --output " + (dir / "r").string());
  BOOST_TEST_REQUIRE(kept.exit_code == 0, kept.output);
  BOOST_TEST(kept.output.find("splines: kept on the host between passes") != std::string::npos, kept.output);
  BOOST_TEST(kept.output.find("GiB per device in each pass; host ≈") != std::string::npos, kept.output);
  BOOST_TEST(kept.output.find("passes:  ") != std::string::npos, kept.output);
  BOOST_TEST(!fs::exists(dir / "r"), "a dry run wrote the run folder");
}

namespace {
// The pass of the checkpoint in `run` (−1 while there is none or it cannot be read yet).
int checkpoint_pass(const fs::path& run) {
  try {
    if (!fs::exists(run / "checkpoint.h5")) return -1;
    return int(read_checkpoint_state(run / "checkpoint.h5").pass);
  } catch (const Error&) {
    return -1;
  }
}
}  // namespace

BOOST_AUTO_TEST_CASE(a_stop_during_a_later_pass_resumes_bit_for_bit) {
  const auto dir = test::temp_dir("pass_resume");
  auto cell = cell_text(16);
  cell.electron_batch = "1";
  cell.devices = "0";
  const auto campaign = test::write_file(dir, "cell.toml", test::small_cell(cell));
  const AllocationCap cap;  // inherited by the spawned edm
  const auto whole = test::run_edm("run " + campaign.string() + " --quiet --output " + (dir / "whole").string());
  BOOST_TEST_REQUIRE(whole.exit_code == 0, whole.output);
  BOOST_TEST_REQUIRE(toml::parse_file((dir / "whole" / "run.toml").string())["config"]["passes"].value_or(0) >= 4);

  const auto run = dir / "run";
  const pid_t pid = test::spawn_edm({"run", campaign.string(), "--quiet", "--output", run.string(), "--checkpoint-every", "1"});
  // Stopped once a checkpoint of the second pass (or a later one) is on disk.
  const int code = test::signal_when(pid, SIGTERM, [&] { return checkpoint_pass(run) >= 1; });
  BOOST_TEST_REQUIRE(code == 130, "the run was not stopped in a later pass (exit " << code << ")");
  const CheckpointState st = read_checkpoint_state(run / "checkpoint.h5");
  BOOST_TEST(st.pass >= 1u);
  BOOST_TEST(st.passes >= 4u);
  BOOST_TEST(st.pass_row1 - st.pass_row0 >= 1);
  BOOST_TEST_REQUIRE(fs::exists(run / "field.h5.partial"), "the rows of the passes before the checkpoint's are gone");
  BOOST_TEST(!fs::exists(run / "field.h5"));

  // Without field.h5.partial, or with other passes, the resume is refused before any work.
  fs::copy(run, dir / "nopartial", fs::copy_options::recursive);
  fs::remove(dir / "nopartial" / "field.h5.partial");
  const auto missing = test::run_edm("resume " + (dir / "nopartial").string() + " --quiet");
  BOOST_TEST(missing.exit_code == 4, missing.output);
  BOOST_TEST(missing.output.find("EDM-CKP-088") != std::string::npos, missing.output);
  fs::copy(run, dir / "otherpasses", fs::copy_options::recursive);
  {
    const AllocationCap half(bucket_bytes() / 2);  // passes of two rows
    const auto other = test::run_edm("resume " + (dir / "otherpasses").string() + " --quiet");
    BOOST_TEST(other.exit_code == 4, other.output);
    BOOST_TEST(other.output.find("EDM-CKP-087") != std::string::npos, other.output);
  }
  const AllocationCap again;  // the stopped run's passes

  const auto r = test::run_edm("resume " + run.string() + " --quiet");
  BOOST_TEST_REQUIRE(r.exit_code == 0, r.output);
  BOOST_TEST(!fs::exists(run / "checkpoint.h5"));
  require_same_field(run, dir / "whole", "resumed in pass " + std::to_string(st.pass + 1));
  // The γ trace is the run's, every electron once.
  for (const char* name : {"/gamma/mean", "/gamma/count", "/gamma/min", "/gamma/max"}) {
    const auto a = read_dataset_1d(run / "field.h5", name), b = read_dataset_1d(dir / "whole" / "field.h5", name);
    BOOST_TEST_REQUIRE(a.size() == b.size(), name);
    BOOST_TEST(std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0, name);
  }
  const auto m = toml::parse_file((run / "run.toml").string());
  BOOST_TEST(m["electrons"]["knots_total"].value_or(std::int64_t(0)) ==
             toml::parse_file((dir / "whole" / "run.toml").string())["electrons"]["knots_total"].value_or(std::int64_t(-1)));
}
