// ctest-label: e2e
// Progress counts finished device work (electrons whose launches completed), with an ETA that is
// never 0 while kernels remain, in `edm run` and `edm resume`; `edm resume` keeps the run's
// --checkpoint-every (old checkpoints without it keep working); EDM-CKP-004 names the layout key
// that differs (share/docs/design.md, share/docs/outputs.md "Checkpoints under MPI").
#define BOOST_TEST_MODULE progress_resume
#include <boost/test/unit_test.hpp>

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <fstream>
#include <hdf5.h>
#include <thread>
#include <toml++/toml.h>

#include "progress_recorder.hpp"
#include "edm/campaign.hpp"
#include "edm/checkpoint.hpp"
#include "edm/device.hpp"
#include "edm/error.hpp"
#include "edm/plugins.hpp"
#include "edm/run.hpp"
#include "edm/sharded.hpp"
#include "spawn.hpp"
#include "test_support.hpp"

extern char** environ;
namespace fs = std::filesystem;
using namespace edm;

namespace {

// One launch per electron (electron_group = 1), and enough slots per launch that a single pass
// takes many progress intervals of 5 ms: 16 × 16 × 1024 on PoCL, 64 × 64 × 1024 with 64 Newton steps
// on a GPU (test::busy_launch).
// Function-local statics: the device is looked at inside a test, not during static initialisation
// (where a failure would end the binary without a report).
const test::BusyLaunch& busy() {
  static const test::BusyLaunch b = test::busy_launch(16, 64);
  return b;
}
const std::string& cell_text() {
  static const std::string t = test::small_cell({.electrons = 12,
                                                 .screen = "half_width = 5e-5\nnx = " + std::to_string(busy().nx) +
                                                           "\nny = " + std::to_string(busy().nx) + "\nsamples = 1024\n",
                                                 .electron_batch = "",
                                                 .trajectory_lines = "knots_per_period = 16\npadding = 4.0\n",
                                                 .accumulator_lines = busy().accumulator_lines});
  return t;
}

Override set(const std::string& key, const std::string& value) { return {key, value, Origin::CommandLine}; }

Campaign cell(const fs::path& out, std::vector<Override> overrides) {
  overrides.push_back(set("run.output", "\"" + out.string() + "\""));
  const auto registry = PluginRegistry::discover();
  return parse_campaign(cell_text(), "cell.toml", overrides, registry.get("inverse_thomson").keys(), false);
}

using Recorder = edm::test::ProgressRecorder;  // tests/support/progress_recorder.hpp

// Reports are monotone and consistent: done never falls and never passes total; the ETA is 0 only
// at the end, positive (or NaN before anything finished) before it.
void expect_consistent(const std::vector<RunProgress>& r) {
  BOOST_REQUIRE(!r.empty());
  for (std::size_t i = 0; i < r.size(); ++i) {
    BOOST_TEST(r[i].done <= r[i].total);
    BOOST_TEST(r[i].done >= r[i].resumed);
    if (i) BOOST_TEST(r[i].done >= r[i - 1].done);
    if (r[i].done < r[i].total) BOOST_TEST((std::isnan(r[i].eta) || r[i].eta > 0), "report " << i << " ETA " << r[i].eta);
    if (r[i].done == r[i].total) BOOST_TEST(r[i].eta == 0.0);
  }
}


}  // namespace

BOOST_AUTO_TEST_CASE(electrons_completed_counts_finished_launches) {
  const auto registry = PluginRegistry::discover();
  const Campaign c = cell(test::temp_dir("completed"), {});
  PreparedCell prepared(c, registry);
  const SplineBatch b = prepared.solve(0, 6);
  KernelOptions o;
  o.electron_group = 1;
  if (busy().newton_iters) o.newton_iters = busy().newton_iters;
  ShardedFieldAccumulator acc(select_devices("0"), prepared.screen(), prepared.mode(), o);
  BOOST_TEST(acc.electrons_completed() == 0u);
  acc.accumulate(b);
  std::uint64_t last = 0;
  for (int i = 0; i < 1000 && last < 6; ++i) {  // bounded: the launches finish within seconds
    const std::uint64_t now = acc.electrons_completed();
    BOOST_TEST(now >= last);
    BOOST_TEST(now <= 6u);
    last = now;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  acc.drain();
  BOOST_TEST(acc.electrons_completed() == 6u);
}

BOOST_AUTO_TEST_CASE(a_single_pass_reports_its_kernels_as_they_finish) {
  Recorder rec;
  RunOptions ro;
  ro.progress_interval = 0.005;
  const auto registry = PluginRegistry::discover();
  const RunSummary s = run_campaign(cell(test::temp_dir("single_pass") / "run", {}), registry, ro, rec);
  BOOST_TEST(s.batches == 1u);
  expect_consistent(rec.reports);
  // Reports while the kernels run (before: one report, after the device had finished everything).
  std::size_t partial = 0;
  for (const auto& p : rec.reports) partial += p.done > 0 && p.done < p.total;
  BOOST_TEST(partial > 0u, rec.reports.size() << " reports");
  BOOST_TEST(rec.reports.back().done == 12u);
  BOOST_TEST(rec.reports.back().total == 12u);
}

BOOST_AUTO_TEST_CASE(a_resumed_run_reports_progress_and_keeps_its_checkpoint_cadence) {
  const fs::path out = test::temp_dir("resumed") / "run";
  const auto registry = PluginRegistry::discover();
  std::atomic<bool> stop{false};
  Recorder first;
  first.stop = &stop;
  first.stop_at = 5;
  RunOptions ro;
  ro.stop = &stop;
  ro.checkpoint_every = 3;
  ro.progress_interval = 0.005;
  std::string id;
  try {
    run_campaign(cell(out, {set("accumulator.electron_batch", "1")}), registry, ro, first);
  } catch (const Interrupted& e) {
    id = e.id();
  }
  BOOST_REQUIRE(id == "EDM-RUN-010");
  const CheckpointState st = read_checkpoint_state(checkpoint_path(out));
  BOOST_TEST(st.checkpoint_every == 3);  // what the run was asked for, saved for edm resume
  BOOST_REQUIRE(st.next_electron >= 5u);
  BOOST_REQUIRE(st.next_electron < 12u);

  Recorder second;
  RunOptions again;
  again.resume = true;
  again.progress_interval = 0.005;
  run_campaign(cell(out, {set("accumulator.electron_batch", "1")}), registry, again, second);
  expect_consistent(second.reports);
  for (const auto& p : second.reports) BOOST_TEST(p.resumed == st.next_electron);
  BOOST_TEST(second.reports.back().done == 12u);
}

BOOST_AUTO_TEST_CASE(edm_resume_keeps_checkpoint_every_and_shows_progress) {
  const fs::path dir = test::temp_dir("resume_cli");
  const fs::path campaign = dir / "cell.toml", run = dir / "run";
  {
    std::ofstream f(campaign);
    f << cell_text();
  }
  // A run checkpointing every batch, stopped by SIGTERM after its first checkpoint.
  const pid_t pid = test::spawn_edm({"run", campaign.string(), "--set", "run.output=\"" + run.string() + "\"", "--set",
                               "accumulator.electron_batch=1", "--checkpoint-every", "1", "--quiet"});
  const test::Waited waited =
      test::wait_until(pid, [&] { return fs::exists(run / "checkpoint.h5"); }, std::chrono::milliseconds(5));
  BOOST_REQUIRE(waited != test::Waited::Exited);
  kill(pid, SIGTERM);
  const int status = test::wait_status(pid);
  BOOST_REQUIRE(WIFEXITED(status));
  BOOST_REQUIRE(WEXITSTATUS(status) == 130);
  BOOST_TEST(read_checkpoint_state(run / "checkpoint.h5").checkpoint_every == 1);

  // edm resume without --checkpoint-every: progress lines (not a terminal: one per report), and the
  // cadence of the run it continues (automatic would have chosen none for a run this short).
  const auto r = test::run_command(test::edm_binary().string() + " resume " + run.string() + " 2>&1");
  BOOST_REQUIRE(r.exit_code == 0);
  BOOST_TEST(r.output.find("[batch] electrons") != std::string::npos, r.output);
  BOOST_TEST(r.output.find("resumed)") != std::string::npos, r.output);
  const auto m = toml::parse_file((run / "run.toml").string());
  BOOST_TEST(m["config"]["checkpoint_every"].value_or(-7) == 1);
}

BOOST_AUTO_TEST_CASE(a_checkpoint_without_the_new_fields_still_resumes) {
  const fs::path out = test::temp_dir("old_checkpoint") / "run";
  const auto registry = PluginRegistry::discover();
  std::atomic<bool> stop{false};
  Recorder first;
  first.stop = &stop;
  first.stop_at = 3;
  RunOptions ro;
  ro.stop = &stop;
  try {
    run_campaign(cell(out, {set("accumulator.electron_batch", "1")}), registry, ro, first);
  } catch (const Interrupted&) {
  }
  BOOST_REQUIRE(fs::exists(checkpoint_path(out)));
  {  // As written before checkpoint_every, coverage_burst and layout_keys existed.
    const hid_t f = H5Fopen(checkpoint_path(out).c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
    BOOST_REQUIRE(f >= 0);
    BOOST_TEST(H5Adelete(f, "checkpoint_every") >= 0);
    BOOST_TEST(H5Ldelete(f, "coverage_burst", H5P_DEFAULT) >= 0);
    BOOST_TEST(H5Ldelete(f, "layout_keys", H5P_DEFAULT) >= 0);
    H5Fclose(f);
  }
  const CheckpointState st = read_checkpoint_state(checkpoint_path(out));
  BOOST_TEST(st.checkpoint_every == 0);  // automatic, as edm resume always did
  for (const auto& r : st.coverage) BOOST_TEST(std::isnan(r.burst_first));
  Recorder second;
  RunOptions again;
  again.resume = true;
  const RunSummary s = run_campaign(cell(out, {set("accumulator.electron_batch", "1")}), registry, again, second);
  BOOST_TEST(s.resumed_from == st.next_electron);
  BOOST_TEST(fs::exists(out / "field.h5"));
}

BOOST_AUTO_TEST_CASE(a_layout_mismatch_names_the_key_that_differs) {
  const auto registry = PluginRegistry::discover();
  struct Case {
    Override changed;
    std::string key;
  };
  const std::string nx = "screen.nx = " + std::to_string(busy().nx) + " in the checkpoint, 12 in this run";
  for (const Case& c : {Case{set("screen.nx", "12"), nx},
                        Case{set("accumulator.pixel_order", "\"rows\""), "accumulator.pixel_order = rings"}}) {
    const fs::path out = test::temp_dir("layout_key") / "run";
    std::atomic<bool> stop{true};  // stops at the first batch boundary: a checkpoint of no electrons
    Recorder quiet;
    RunOptions ro;
    ro.stop = &stop;
    const std::vector<Override> base = {set("accumulator.electron_batch", "1"),
                                        set("accumulator.pixel_order", "\"rings\"")};
    try {
      run_campaign(cell(out, base), registry, ro, quiet);
    } catch (const Interrupted&) {
    }
    BOOST_REQUIRE(fs::exists(checkpoint_path(out)));
    auto changed = base;
    changed.push_back(c.changed);
    RunOptions again;
    again.resume = true;
    std::string id, what;
    try {
      run_campaign(cell(out, changed), registry, again, quiet);
    } catch (const IoError& e) {
      id = e.id();
      what = e.what();
    }
    BOOST_TEST(id == "EDM-CKP-004");
    BOOST_TEST(what.find(c.key) != std::string::npos, what);
  }
}
