// ctest-label: e2e
// Checkpoint and resume: a run killed with SIGKILL after its first checkpoint, then `edm resume`d,
// gives a field.h5 bit-identical to an uninterrupted run on one device; SIGTERM writes a checkpoint
// and exits 130 without leaving a field.h5; an existing checkpoint is never overwritten by `edm run`;
// run.toml's [tuning] of a run resumed with other CLBlast parameters lists both.
#define BOOST_TEST_MODULE resume
#include <boost/test/unit_test.hpp>

#include <signal.h>

#include <chrono>

#include <toml++/toml.h>

#include "edm/checkpoint.hpp"
#include "edm/writer.hpp"
#include "spawn.hpp"
#include <cstring>

namespace fs = std::filesystem;
using namespace edm;
using test::spawn_edm;

namespace {
const std::string kCell = test::small_cell({.mode = "split"});

const std::vector<std::string> kDatasets = {"/E/x", "/E/y", "/E/z", "/B/x", "/B/y", "/B/z",
                                            "/E_far/x", "/E_far/z", "/B_far/y", "/gamma/mean", "/gamma/drain"};

// Waits (bounded) until the child has written its first checkpoint, then signals it; -1 when it
// finished before any checkpoint.
int signal_after_checkpoint(pid_t pid, const fs::path& run, int sig) {
  return test::signal_when(
      pid, sig, [&] { return fs::exists(run / "checkpoint.h5"); }, nullptr, std::chrono::milliseconds(5));
}

void expect_identical(const fs::path& a, const fs::path& b) {
  for (const auto& name : kDatasets) {
    const auto x = name.rfind("/gamma", 0) == 0 ? read_dataset_1d(a / "field.h5", name)
                                                 : read_field_component(a / "field.h5", name);
    const auto y = name.rfind("/gamma", 0) == 0 ? read_dataset_1d(b / "field.h5", name)
                                                 : read_field_component(b / "field.h5", name);
    BOOST_TEST(x.size() == y.size());
    BOOST_TEST(std::memcmp(x.data(), y.data(), x.size() * sizeof(double)) == 0, name << " differs after resume");
  }
}
// Writes the campaign into a fresh folder and runs it uninterrupted into <dir>/full (the reference).
fs::path campaign_with_reference(const std::string& tag, fs::path& dir) {
  dir = test::temp_dir(tag);
  const auto campaign = test::write_file(dir, "cell.toml", kCell);
  auto full = test::run_edm("run " + campaign.string() + " --quiet --output " + (dir / "full").string());
  BOOST_REQUIRE_MESSAGE(full.exit_code == 0, full.output);
  return campaign;
}
}  // namespace

BOOST_AUTO_TEST_CASE(killed_run_resumes_bit_identically) {
  fs::path dir;
  const auto campaign = campaign_with_reference("resume", dir);

  const auto part = dir / "part";
  pid_t pid = spawn_edm({"run", campaign.string(), "--quiet", "--output", part.string(), "--checkpoint-every", "1"});
  const int code = signal_after_checkpoint(pid, part, SIGKILL);
  BOOST_TEST_MESSAGE("killed with SIGKILL after the first checkpoint: status " << code);
  BOOST_REQUIRE_MESSAGE(code == 128 + SIGKILL, "the run ended before it could be killed (status " << code << ")");
  BOOST_REQUIRE(!fs::exists(part / "field.h5"));
  // `edm run` refuses to start over a checkpoint it would lose.
  auto again = test::run_edm("run " + campaign.string() + " --quiet --output " + part.string());
  BOOST_TEST(again.exit_code == 2);
  BOOST_TEST(again.output.find("resume") != std::string::npos);

  auto resumed = test::run_edm("resume " + part.string() + " --quiet");
  BOOST_REQUIRE_MESSAGE(resumed.exit_code == 0, resumed.output);
  BOOST_TEST(!fs::exists(part / "checkpoint.h5"));
  expect_identical(dir / "full", part);
}

BOOST_AUTO_TEST_CASE(sigterm_writes_a_checkpoint_and_exits_cleanly) {
  fs::path dir;
  const auto campaign = campaign_with_reference("sigterm", dir);
  const auto part = dir / "part";
  // Checkpoints only on the signal (-1: none scheduled), so the one we find is the SIGTERM's.
  pid_t pid = spawn_edm({"run", campaign.string(), "--quiet", "--output", part.string(), "--checkpoint-every", "-1"});
  // field.h5.partial appears just before the batch loop starts: stop the run in its first batches.
  const int code = test::signal_when(pid, SIGTERM, [&] { return fs::exists(part / "field.h5.partial"); });
  BOOST_TEST_MESSAGE("SIGTERM → exit " << code);
  if (code == 0 || code == -1) {  // -1: it had ended before the signal could be sent
    BOOST_TEST_MESSAGE("the run finished before SIGTERM arrived; nothing to resume");
    expect_identical(dir / "full", part);
    return;
  }
  BOOST_REQUIRE(code == 130);
  BOOST_TEST(fs::exists(part / "checkpoint.h5"));
  BOOST_TEST(!fs::exists(part / "field.h5"));
  BOOST_TEST(!fs::exists(part / "field.h5.partial"));
  auto resumed = test::run_edm("resume " + part.string() + " --quiet");
  BOOST_REQUIRE_MESSAGE(resumed.exit_code == 0, resumed.output);
  expect_identical(dir / "full", part);
}

// run.toml's [tuning] was computed when the run finished, so a run stopped under
// EDM_CLBLAST_TUNING=0 and resumed without it claimed the resume's parameter sets for every
// electron, those the first process summed with the table off included. The checkpoint carries
// the sets of the processes so far (dataset clblast_tuning), and [tuning] of a run summed with two
// says "mixed" and lists each process with the first electron it summed. A run resumed with the
// same sets records them as an uninterrupted run does.
BOOST_AUTO_TEST_CASE(a_resume_with_other_clblast_parameters_records_both) {
  ::unsetenv("EDM_CLBLAST_TUNING");
  fs::path dir;
  const auto campaign = campaign_with_reference("resume_tuning", dir);
  const toml::table whole = toml::parse_file((dir / "full" / "run.toml").string());
  const std::string mine = whole["tuning"]["clblast"].value_or(std::string());
  BOOST_TEST_MESSAGE("uninterrupted: [tuning] clblast = " << mine);
  BOOST_REQUIRE(!mine.empty());
  BOOST_TEST(!whole["tuning"]["processes"]);
  const std::string off = "0: off (EDM_CLBLAST_TUNING=0)";
  BOOST_REQUIRE(mine != off);

  // Killed after its first checkpoint with the table off, resumed with it on.
  const auto part = dir / "part";
  const pid_t pid = test::spawn_shell("EDM_CLBLAST_TUNING=0 exec " + test::edm_bin() + " run " + campaign.string() +
                                      " --quiet --output " + part.string() + " --checkpoint-every 1");
  const int code = signal_after_checkpoint(pid, part, SIGKILL);
  BOOST_REQUIRE_MESSAGE(code == 128 + SIGKILL, "the run ended before it could be killed (status " << code << ")");
  const CheckpointState st = read_checkpoint_state(checkpoint_path(part));
  BOOST_TEST(st.tuning.size() == 1u, "the checkpoint carries the first process's sets");
  if (!st.tuning.empty()) {
    BOOST_TEST(st.tuning[0].first_electron == 0u);
    BOOST_TEST(st.tuning[0].clblast == off);
  }
  const auto resumed = test::run_edm("resume " + part.string() + " --quiet");
  BOOST_REQUIRE_MESSAGE(resumed.exit_code == 0, resumed.output);
  expect_identical(dir / "full", part);
  const toml::table m = toml::parse_file((part / "run.toml").string());
  const std::string clblast = m["tuning"]["clblast"].value_or(std::string());
  BOOST_TEST(clblast.rfind("mixed", 0) == 0, "[tuning] clblast = " << clblast << " claims one tuning for two");
  const toml::array* processes = m["tuning"]["processes"].as_array();
  BOOST_REQUIRE_MESSAGE(processes && processes->size() == 2, "[tuning] lists the processes");
  const auto& first = *processes->get(0)->as_table();
  const auto& second = *processes->get(1)->as_table();
  BOOST_TEST(first["first_electron"].value_or(std::int64_t(-1)) == 0);
  BOOST_TEST(first["clblast"].value_or(std::string()) == off);
  BOOST_TEST(second["first_electron"].value_or(std::int64_t(-1)) == std::int64_t(st.next_electron));
  BOOST_TEST(second["clblast"].value_or(std::string()) == mine);

  // Stopped and resumed with the same sets: recorded as by the uninterrupted run.
  const auto same = dir / "same";
  const pid_t p2 = spawn_edm({"run", campaign.string(), "--quiet", "--output", same.string(), "--checkpoint-every", "1"});
  BOOST_REQUIRE(signal_after_checkpoint(p2, same, SIGKILL) == 128 + SIGKILL);
  BOOST_REQUIRE(test::run_edm("resume " + same.string() + " --quiet").exit_code == 0);
  const toml::table n = toml::parse_file((same / "run.toml").string());
  BOOST_TEST(n["tuning"]["clblast"].value_or(std::string()) == mine);
  BOOST_TEST(!n["tuning"]["processes"]);
}

// A resumed run's run.toml said that every key came from the file and named no campaign file, as the
// campaign was parsed again from the checkpoint's copy (found by a hostile tester). The checkpoint
// keeps the provenance (dataset campaign_provenance), and the resumed run's [config.origin] and
// [provenance] campaign_file are an uninterrupted run's.
BOOST_AUTO_TEST_CASE(a_resumed_run_keeps_where_its_keys_came_from) {
  const fs::path dir = test::temp_dir("resume_origin");
  const auto campaign = test::write_file(dir, "cell.toml", kCell);
  const std::vector<std::string> set = {"--set", "laser.a0=0.2"};
  std::vector<std::string> full = {"run", campaign.string(), "--quiet", "--output", (dir / "full").string()};
  full.insert(full.end(), set.begin(), set.end());
  BOOST_REQUIRE(test::wait_exit(spawn_edm(full)) == 0);
  const auto part = dir / "part";
  std::vector<std::string> args = {"run", campaign.string(), "--quiet", "--output", part.string(), "--checkpoint-every", "1"};
  args.insert(args.end(), set.begin(), set.end());
  const int code = signal_after_checkpoint(spawn_edm(args), part, SIGKILL);
  BOOST_REQUIRE_MESSAGE(code == 128 + SIGKILL, "the run ended before it could be killed (status " << code << ")");
  auto resumed = test::run_edm("resume " + part.string() + " --quiet");
  BOOST_REQUIRE_MESSAGE(resumed.exit_code == 0, resumed.output);
  const toml::table a = toml::parse_file((dir / "full" / "run.toml").string());
  const toml::table b = toml::parse_file((part / "run.toml").string());
  BOOST_TEST(b["config"]["origin"]["laser.a0"].value_or(std::string()) == "command line");
  BOOST_TEST(b["provenance"]["campaign_file"].value_or(std::string()) == campaign.string());
  const toml::table* oa = a["config"]["origin"].as_table();
  const toml::table* ob = b["config"]["origin"].as_table();
  BOOST_REQUIRE(oa != nullptr);
  BOOST_REQUIRE(ob != nullptr);
  for (const auto& [key, v] : *oa) {
    if (key.str() == "run.output") continue;  // the folder: given again to resume
    BOOST_TEST((*ob)[key].value_or(std::string("absent")) == v.value_or(std::string()), key.str());
  }
}
