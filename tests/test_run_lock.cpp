// ctest-label: e2e
// One writer per run folder (issue 13, item 1): a second `edm run` into a folder that a run is
// writing is refused at once naming the holder, and the first run's results stay whole and
// consistent; a lock left by a dead process is taken over; a kept field.h5.partial is moved aside,
// never deleted; `edm info` refuses a field.h5 and a run.toml from different runs.
#define BOOST_TEST_MODULE run_lock
#include <boost/test/unit_test.hpp>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>

#include <toml++/toml.h>

#include "edm/run_folder.hpp"
#include "edm/error.hpp"
#include "edm/run_lock.hpp"
#include "spawn.hpp"

namespace fs = std::filesystem;
using edm::test::edm_bin;
using edm::test::slurp;
using edm::test::spawn_edm;
using edm::test::wait_exit;

namespace {
fs::path write_campaign(const fs::path& dir) {
  return edm::test::write_file(dir, "cell.toml", edm::test::small_cell());
}
}  // namespace

BOOST_AUTO_TEST_CASE(second_run_into_a_busy_folder_is_refused_naming_the_holder) {
  const auto dir = edm::test::temp_dir("lock_busy");
  const auto campaign = write_campaign(dir);
  const auto run = dir / "run";
  // --checkpoint-every 1 makes run A slow enough (a checkpoint per batch) to be caught in the act.
  const pid_t a = spawn_edm({"run", campaign.string(), "--quiet", "--output", run.string(), "--checkpoint-every", "1"});
  const auto waited = edm::test::wait_until(
      a, [&] { return slurp(run / ".edm.lock").find("pid " + std::to_string(a)) != std::string::npos; },
      std::chrono::milliseconds(2), std::chrono::seconds(60));
  if (waited == edm::test::Waited::Exited)
    BOOST_FAIL("run A finished before it could be caught holding the lock");
  const bool busy = waited == edm::test::Waited::Ready;
  BOOST_REQUIRE_MESSAGE(busy, "run A never recorded itself in " << (run / ".edm.lock"));
  // A is held still while B and the resume try the folder: otherwise A could finish, release its
  // lock and leave its results between the two (on a loaded CI machine the resume then met a free
  // lock and a finished folder, EDM-RUN-001: issue 30). Stopped, it holds its lock for certain.
  BOOST_REQUIRE(::kill(a, SIGSTOP) == 0);
  // Run B, with --overwrite even: refused at once, naming A.
  const auto t0 = std::chrono::steady_clock::now();
  const auto b = edm::test::run_command(edm_bin() + " run " + campaign.string() + " --quiet --overwrite --output " +
                                        run.string());
  const double b_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  BOOST_TEST_MESSAGE("run B: exit " << b.exit_code << " after " << b_seconds << " s: " << b.output);
  BOOST_TEST(b.exit_code == 2);
  BOOST_TEST(b.output.find("EDM-RUN-040") != std::string::npos);
  BOOST_TEST(b.output.find("pid " + std::to_string(a)) != std::string::npos, "the holder is named");
  // And so is a resume into the same folder.
  const auto r = edm::test::run_command(edm_bin() + " resume " + run.string() + " --quiet");
  BOOST_TEST_MESSAGE("resume while A runs: exit " << r.exit_code << ": " << r.output);
  BOOST_TEST(r.exit_code == 2);
  if (r.output.find("EDM-CKP-005") == std::string::npos)  // A had written a checkpoint to resume
    BOOST_TEST(r.output.find("EDM-RUN-040") != std::string::npos, r.output);
  BOOST_REQUIRE(::kill(a, SIGCONT) == 0);
  BOOST_TEST(wait_exit(a) == 0);

  // A's results: whole, one run's field and manifest, recognised by edm info.
  const edm::RunFolderInfo info = edm::inspect_run_folder(run);
  BOOST_REQUIRE(info.field.has_value());
  BOOST_TEST(info.field->run_id == info.manifest.run_id());
  BOOST_TEST(info.manifest.field_bytes().value_or(0) == std::int64_t(fs::file_size(run / "field.h5")));
  BOOST_TEST(!fs::exists(run / ".edm.lock"), "the lock is released at the end");
  BOOST_TEST(!fs::exists(run / "checkpoint.h5"));
  BOOST_TEST(edm::test::run_command(edm_bin() + " info " + run.string()).exit_code == 0);
}

// A lock nests within the thread that holds it (edm plot and the spectrum writer it calls), and
// only there: another thread of the same process is refused as another process is.
BOOST_AUTO_TEST_CASE(a_lock_nests_in_its_thread_and_refuses_another_thread) {
  const auto dir = edm::test::temp_dir("lock_threads") / "run";
  auto outer = edm::RunFolderLock::acquire(dir);
  BOOST_TEST(outer.held());
  {
    auto inner = edm::RunFolderLock::acquire(dir);
    BOOST_TEST(inner.held());
  }
  std::string id;
  std::thread other([&] {
    try {
      auto lock = edm::RunFolderLock::acquire(dir);
      id = "acquired";
    } catch (const edm::ConfigError& e) {
      id = e.id();
    }
  });
  other.join();
  BOOST_TEST(id == "EDM-RUN-040");
}

BOOST_AUTO_TEST_CASE(a_stale_lock_of_a_dead_process_is_taken_over) {
  const auto dir = edm::test::temp_dir("lock_stale");
  const auto campaign = write_campaign(dir);
  const auto run = dir / "run";
  fs::create_directories(run);
  // A pid that surely ran and is gone: a child that has exited and been reaped.
  const pid_t dead = fork();
  if (dead == 0) _exit(0);
  waitpid(dead, nullptr, 0);
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  std::ofstream(run / ".edm.lock") << "pid " << dead << " on host " << host << " since 20260101T000000Z\n";
  const auto r = edm::test::run_command(edm_bin() + " run " + campaign.string() + " --output " + run.string());
  BOOST_TEST_MESSAGE(r.output);
  BOOST_REQUIRE(r.exit_code == 0);
  BOOST_TEST(r.output.find("took over the lock") != std::string::npos, "the stale lock is reported");
  BOOST_TEST(r.output.find("pid " + std::to_string(dead)) != std::string::npos);
  BOOST_TEST(fs::exists(run / "field.h5"));
  BOOST_TEST(!fs::exists(run / ".edm.lock"));
}

BOOST_AUTO_TEST_CASE(a_kept_partial_field_is_moved_aside_not_deleted) {
  const auto dir = edm::test::temp_dir("lock_partial");
  const auto campaign = write_campaign(dir);
  const auto run = dir / "run";
  fs::create_directories(run);
  // What edm leaves after a failed manifest write ("the complete field was kept as ...").
  const std::string kept = "a complete field the user was told to keep";
  std::ofstream(run / "field.h5.partial") << kept;
  const auto r = edm::test::run_command(edm_bin() + " run " + campaign.string() + " --output " + run.string());
  BOOST_TEST_MESSAGE(r.output);
  BOOST_REQUIRE(r.exit_code == 0);
  int found = 0;
  for (const auto& e : fs::directory_iterator(run)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("field.h5.partial.", 0) == 0) {
      ++found;
      BOOST_TEST(slurp(e.path()) == kept, name << " holds the kept file unchanged");
    }
  }
  BOOST_TEST(found == 1, "the kept partial is moved aside with a timestamp");
  BOOST_TEST(!fs::exists(run / "field.h5.partial"));
  BOOST_TEST(r.output.find("moved aside") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(info_refuses_a_field_of_another_run) {
  const auto dir = edm::test::temp_dir("lock_mismatch");
  const auto campaign = write_campaign(dir);
  for (const char* name : {"a", "b"}) {
    const auto r = edm::test::run_command(edm_bin() + " run " + campaign.string() + " --quiet --output " +
                                          (dir / name).string());
    BOOST_REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  }
  BOOST_REQUIRE(edm::test::run_command(edm_bin() + " info " + (dir / "a").string()).exit_code == 0);
  fs::copy_file(dir / "b" / "field.h5", dir / "a" / "field.h5", fs::copy_options::overwrite_existing);
  const auto info = edm::test::run_command(edm_bin() + " info " + (dir / "a").string());
  BOOST_TEST_MESSAGE(info.output);
  BOOST_TEST(info.exit_code == 4);
  BOOST_TEST(info.output.find("EDM-INFO-010") != std::string::npos);
  // The size is checked too: the same run's field.h5, cut short, is not its field.
  fs::copy_file(dir / "b" / "field.h5", dir / "c.h5");
  fs::resize_file(dir / "b" / "field.h5", fs::file_size(dir / "b" / "field.h5") + 16);
  const auto grown = edm::test::run_command(edm_bin() + " info " + (dir / "b").string());
  BOOST_TEST(grown.exit_code == 4);
  BOOST_TEST(grown.output.find("bytes") != std::string::npos);
}
