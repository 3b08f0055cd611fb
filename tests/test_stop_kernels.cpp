// ctest-label: e2e
// A stop during a batch's kernels (issue 13, item 2; share/docs/errors.md, "Stops"): the launches go
// onto the device through a bounded queue, so a stop request waits only for the launches already
// enqueued; the cube then holds exactly the electrons before the first launch left, and the
// checkpoint describes that same electron (γ trace, coverage records, knots). `edm resume` from it
// gives field.h5 bit for bit as an uninterrupted run, in a single pass and in the last batch of a
// batched run. Where the cube holds no prefix (a batch launched slab by slab), nothing is saved.
#define BOOST_TEST_MODULE stop_kernels
#include <boost/test/unit_test.hpp>

#include <signal.h>

#include <atomic>
#include <cstring>
#include <regex>

#include "edm/campaign.hpp"
#include "edm/checkpoint.hpp"
#include "edm/device.hpp"
#include "edm/error.hpp"
#include "edm/plugins.hpp"
#include "edm/run.hpp"
#include "edm/sharded.hpp"
#include "edm/writer.hpp"
#include "spawn.hpp"
#include "test_support.hpp"

namespace fs = std::filesystem;
using namespace edm;

namespace {

// One launch per electron (electron_group = 1) over many slots per launch, so that the kernels of
// these electrons take many times what the bounded queue holds (a quarter of a second): a stop
// request finds launches still pending. Sized for device 0 (test::busy_launch): on PoCL 32
// electrons of 48 × 48 × `samples` slots (16 × 16 pixels sufficed while the CPU kernel was scalar;
// on the vector lanes a launch of those took a few milliseconds); on a GPU, whose kernels of those
// end in milliseconds, 512 electrons of 64 × 64 pixels with 64 Newton steps (about a second).
struct Sizing {
  test::BusyLaunch launch;
  int electrons, batch;
};
const Sizing& sizing() {
  static const Sizing s = [] {
    const test::BusyLaunch b = test::busy_launch(48, 64);
    return Sizing{b, b.gpu ? 512 : 32, b.gpu ? 256 : 16};
  }();
  return s;
}
std::uint64_t electrons() { return std::uint64_t(sizing().electrons); }
std::string cell_text(const std::string& batch, int samples = 1024) {
  const std::string n = std::to_string(sizing().launch.nx);
  return test::small_cell({.electrons = sizing().electrons,
                           .screen = "half_width = 5e-5\nnx = " + n + "\nny = " + n + "\nsamples = " + std::to_string(samples) + "\n",
                           .electron_batch = batch,
                           .trajectory_lines = "knots_per_period = 16\npadding = 4.0\n",
                           .accumulator_lines = sizing().launch.accumulator_lines});
}
// The electron batch of the batched cases: two batches.
std::string two_batches() { return std::to_string(sizing().batch); }

Campaign parsed_cell(const std::string& batch, const fs::path& out = {}) {
  const auto registry = PluginRegistry::discover();
  std::vector<Override> o;
  if (!out.empty()) o.push_back({"run.output", "\"" + out.string() + "\"", Origin::CommandLine});
  return parse_campaign(cell_text(batch), "cell.toml", o, registry.get("inverse_thomson").keys(), false);
}

// Sets the stop flag, as the app's SIGINT/SIGTERM handler does, once `stop_at` electrons are
// finished on the device (the progress counts finished launches).
struct StopWhenDone : RunObserver {
  std::atomic<bool>* stop = nullptr;
  std::uint64_t stop_at = 0;
  void progress(const RunProgress& p) override {
    if (stop && p.done >= stop_at) stop->store(true);
  }
};

// Runs the cell uninterrupted into `full`, then again into `part` stopped once `stop_at`
// electrons are finished; returns the stopped run's checkpoint.
CheckpointState stopped_run(const std::string& batch, const fs::path& full, const fs::path& part,
                            std::uint64_t stop_at) {
  const auto registry = PluginRegistry::discover();
  RunObserver quiet;
  run_campaign(parsed_cell(batch, full), registry, RunOptions{}, quiet);
  std::atomic<bool> stop{false};
  StopWhenDone observer;
  observer.stop = &stop;
  observer.stop_at = stop_at;
  RunOptions ro;
  ro.stop = &stop;
  ro.progress_interval = 0.005;
  std::string id;
  try {
    run_campaign(parsed_cell(batch, part), registry, ro, observer);
  } catch (const Interrupted& e) {
    id = e.id();
  }
  BOOST_REQUIRE_MESSAGE(id == "EDM-RUN-010", "stopped with a checkpoint (" << id << ")");
  return read_checkpoint_state(checkpoint_path(part));
}

void resume_in_process(const std::string& batch, const fs::path& part) {
  const auto registry = PluginRegistry::discover();
  RunObserver quiet;
  RunOptions again;
  again.resume = true;
  const RunSummary s = run_campaign(parsed_cell(batch, part), registry, again, quiet);
  BOOST_TEST(s.electrons == electrons());
}

// The raw cube of device 0 (device layout), for bit-for-bit comparisons.
std::vector<double> raw_cube(ShardedFieldAccumulator& acc) {
  FieldAccumulator& a = acc.device_accumulator(0);
  std::vector<double> out(a.raw_doubles_per_bucket() * std::size_t(bucket_count(a.mode())));
  a.download_raw([&](int b, std::uint64_t off, const double* d, std::size_t n) {
    std::memcpy(&out[std::size_t(b) * a.raw_doubles_per_bucket() + off], d, n * sizeof(double));
  });
  return out;
}

void run_ok(const std::string& command) {
  const auto r = test::run_command(command);
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, command << ": " << r.output);
}

// The largest "electrons K/N" progress count in the log `edm run` writes to stderr (0: none yet).
std::uint64_t done_in_log(const fs::path& log) {
  const std::string text = test::slurp(log);
  static const std::regex line(R"(\[batch\] electrons (\d+)/)");
  std::uint64_t done = 0;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), line); it != std::sregex_iterator(); ++it)
    done = std::max<std::uint64_t>(done, std::stoull((*it)[1].str()));
  return done;
}

// Starts `edm run` with its progress in RUN.log, sends SIGTERM once it reports more than
// `after` electrons finished on the device, and returns the exit code (-1: it finished first).
int stop_once_done(const fs::path& campaign, const fs::path& run, std::uint64_t after,
                   const std::string& extra = "") {
  const fs::path log = run.string() + ".log";
  const pid_t pid = test::spawn_shell("exec " + test::edm_bin() + " run " + campaign.string() + " --output " + run.string() +
                                      " " + extra + " 2> " + log.string());
  double seconds = 0;
  const int code = test::signal_when(pid, SIGTERM, [&] { return done_in_log(log) > after; }, &seconds);
  BOOST_TEST_MESSAGE("SIGTERM after " << done_in_log(log) << " electrons → exit " << code << " after " << seconds
                                      << " s");
  return code;
}

void expect_clean_stop(const fs::path& run) {
  BOOST_TEST(fs::exists(run / "checkpoint.h5"), "a checkpoint to resume from");
  BOOST_TEST(!fs::exists(run / "field.h5"));
  BOOST_TEST(!fs::exists(run / "field.h5.partial"));
  BOOST_TEST(!fs::exists(run / "checkpoint.h5.partial"));
  BOOST_TEST(!fs::exists(run / "run.toml"));
}

// The checkpoint describes the electrons in its cube and no others: a coverage record for each of
// [0, next), the γ trace's first grid point (every electron reaches it) counting next electrons, one
// drain per electron.
void expect_state_of_prefix(const CheckpointState& st) {
  BOOST_TEST(st.coverage.size() == st.next_electron);
  for (const auto& r : st.coverage) BOOST_TEST(r.electron < st.next_electron);
  BOOST_REQUIRE(!st.gamma.count.empty());
  BOOST_TEST(st.gamma.count[0] == st.next_electron);
  BOOST_TEST(st.gamma.drain.size() == st.next_electron);
}

void expect_identical(const fs::path& a, const fs::path& b) {
  for (const char* name : {"/E/x", "/E/y", "/E/z", "/B/x", "/B/y", "/B/z"}) {
    const auto x = read_field_component(a / "field.h5", name);
    const auto y = read_field_component(b / "field.h5", name);
    BOOST_TEST(x.size() == y.size());
    BOOST_TEST(std::memcmp(x.data(), y.data(), x.size() * sizeof(double)) == 0, name << " differs after resume");
  }
  for (const char* name : {"/gamma/mean", "/gamma/min", "/gamma/max", "/gamma/count", "/gamma/drain", "/gamma/drain_electron"}) {
    const auto x = read_dataset_1d(a / "field.h5", name);
    const auto y = read_dataset_1d(b / "field.h5", name);
    BOOST_TEST(x.size() == y.size());
    BOOST_TEST(std::memcmp(x.data(), y.data(), x.size() * sizeof(double)) == 0, name << " differs after resume");
  }
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_stop_halts_the_launches_at_a_launch_boundary) {
  const auto registry = PluginRegistry::discover();
  const Campaign c = parsed_cell("");
  PreparedCell prepared(c, registry);
  const SplineBatch b = prepared.solve(0, electrons());
  KernelOptions o;
  o.electron_group = 1;
  if (sizing().launch.newton_iters) o.newton_iters = sizing().launch.newton_iters;
  std::atomic<bool> stop{false};
  ShardedFieldAccumulator acc(select_devices("0"), prepared.screen(), prepared.mode(), o);
  acc.set_stop(&stop);
  acc.accumulate(b);  // enqueues what the bounded queue allows, the rest waits
  stop = true;
  acc.drain();  // the launches enqueued finish; none of those pending is enqueued
  BOOST_REQUIRE(acc.stopped());
  const auto k = acc.stopped_at();
  BOOST_REQUIRE(k.has_value());
  BOOST_TEST(*k >= 1u, "the launches enqueued by accumulate() ran");
  BOOST_TEST(*k < electrons());
  BOOST_TEST(acc.electrons_completed() == *k);

  // The cube holds exactly electrons [0, k): bit for bit the cube of those electrons alone.
  ShardedFieldAccumulator prefix(select_devices("0"), prepared.screen(), prepared.mode(), o);
  prefix.accumulate(slice_batch(b, 0, std::size_t(*k)));
  prefix.drain();
  BOOST_TEST(!prefix.stopped());
  BOOST_TEST((raw_cube(acc) == raw_cube(prefix)));
}

BOOST_AUTO_TEST_CASE(a_stop_in_a_batch_launched_in_slabs_names_no_prefix) {
  const auto registry = PluginRegistry::discover();
  const Campaign c = parsed_cell("");
  PreparedCell prepared(c, registry);
  const SplineBatch b = prepared.solve(0, 4);
  KernelOptions o;
  o.electron_group = 1;
  if (sizing().launch.newton_iters) o.newton_iters = sizing().launch.newton_iters;
  std::atomic<bool> stop{false};
  ShardedFieldAccumulator acc(select_devices("0"), prepared.screen(), prepared.mode(), o);
  acc.set_stop(&stop);
  acc.accumulate_in_slabs(b, 6);  // slab 0 of every electron first, then slab 1, …
  stop = true;
  acc.drain();
  BOOST_REQUIRE(acc.stopped());
  BOOST_TEST(!acc.stopped_at().has_value(), "slabs of different electrons: no prefix of the batch");
  // finish() cannot download such a cube: the stop ends it (edm run reports EDM-RUN-043).
  std::string id;
  try {
    acc.finish([](int, int, int, int, const double*) {});
  } catch (const Interrupted& e) {
    id = e.id();
  }
  BOOST_TEST(id == "EDM-RUN-051");
}

BOOST_AUTO_TEST_CASE(a_stop_during_a_single_pass_kernels_checkpoints_a_launch_boundary) {
  const auto dir = test::temp_dir("stop_single_lib");
  const auto st = stopped_run("0", dir / "full", dir / "part", 3);
  BOOST_TEST_MESSAGE("single pass: checkpoint at electron " << st.next_electron << " of " << electrons());
  BOOST_TEST(st.next_electron >= 3u);
  BOOST_TEST(st.next_electron < electrons(), "stopped before the kernels ended");
  BOOST_TEST(st.batches_done == 0u, "the only batch is not done");
  expect_state_of_prefix(st);
  resume_in_process("0", dir / "part");
  expect_identical(dir / "full", dir / "part");
}

BOOST_AUTO_TEST_CASE(a_stop_during_the_last_batch_kernels_checkpoints_a_launch_boundary) {
  const auto dir = test::temp_dir("stop_last_lib");
  // Two batches: stopped once two electrons of the last one are finished.
  const std::uint64_t second = std::uint64_t(sizing().batch);
  const auto st = stopped_run(two_batches(), dir / "full", dir / "part", second + 2);
  BOOST_TEST_MESSAGE("last batch: checkpoint at electron " << st.next_electron << " of " << electrons());
  BOOST_TEST(st.next_electron >= second + 2, "inside the last batch");
  BOOST_TEST(st.next_electron < electrons(), "stopped before the kernels ended");
  BOOST_TEST(st.batches_done == 1u, "the last batch is not done");
  expect_state_of_prefix(st);
  resume_in_process(two_batches(), dir / "part");
  expect_identical(dir / "full", dir / "part");
}

BOOST_AUTO_TEST_CASE(sigterm_during_a_single_pass_kernels_exits_130_and_resumes_bit_identically) {
  const auto dir = test::temp_dir("stop_single");
  // Twice the samples: the kernels outlast `edm run`'s first progress report (after 0.5 s) several
  // times over, also on an idle machine.
  const auto campaign = test::write_file(dir, "cell.toml", cell_text("0", 2048));
  run_ok(test::edm_bin() + " run " + campaign.string() + " --quiet --output " + (dir / "full").string());
  const auto part = dir / "part";
  const int code = stop_once_done(campaign, part, 0);
  BOOST_REQUIRE_MESSAGE(code != -1, "the run finished before the signal could be sent");
  BOOST_REQUIRE(code == 130);
  expect_clean_stop(part);
  const auto st = read_checkpoint_state(part / "checkpoint.h5");
  BOOST_TEST_MESSAGE("checkpoint at electron " << st.next_electron << " of " << electrons());
  // Observed during the kernels: some launches finished, not all.
  BOOST_TEST(st.next_electron > 0u);
  BOOST_TEST(st.next_electron < electrons());
  expect_state_of_prefix(st);
  run_ok(test::edm_bin() + " resume " + part.string() + " --quiet");
  BOOST_TEST(!fs::exists(part / "checkpoint.h5"));
  expect_identical(dir / "full", part);
}
