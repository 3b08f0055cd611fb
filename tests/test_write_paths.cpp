// ctest-label: e2e
// Every file edm creates in a run folder or a sweep folder, planted against (issue 30, "No write
// through a link, anywhere"): a symbolic link under each staging name edm writes (run.toml.partial,
// checkpoint.h5.partial, field.h5.partial, spectrum.h5.partial, the sweep table's temporary name and
// its lock) leaves the file it points to as it was, and the run either succeeds without following it
// or stops with its id. A final rename that fails keeps the finished field as field.h5.partial; an
// interrupted --overwrite keeps the previous results until `edm resume` replaces them, bit for bit
// as an uninterrupted run (share/docs/outputs.md).
#define BOOST_TEST_MODULE write_paths
#include <boost/test/unit_test.hpp>

#include <signal.h>

#include <cstring>

#include <toml++/toml.h>

#include "edm/field_file.hpp"
#include "spawn.hpp"

namespace fs = std::filesystem;
using edm::test::edm_bin;
using edm::test::run_edm;
using edm::test::slurp;
using edm::test::spawn_edm;
using edm::test::write_file;

namespace {

const std::string kPrecious = "the user's data, outside every folder edm writes\n";

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// Enough batches (one electron each) that a run is still summing when its field.h5.partial appears.
std::string cell(double a0 = 0.3, int electrons = 24) {
  std::string t = edm::test::small_cell({.electrons = electrons, .electron_batch = "1"});
  if (a0 != 0.3) t.replace(t.find("a0 = 0.3"), 8, "a0 = " + std::to_string(a0));
  return t;
}

std::vector<fs::path> names_starting(const fs::path& dir, const std::string& prefix) {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename().string().rfind(prefix, 0) == 0) out.push_back(e.path());
  return out;
}

void expect_same_field(const fs::path& a, const fs::path& b) {
  for (const char* name : {"/E/x", "/E/y", "/E/z", "/B/x", "/B/y", "/B/z"}) {
    const auto x = edm::read_field_component(a, name);
    const auto y = edm::read_field_component(b, name);
    BOOST_TEST(x.size() == y.size());
    BOOST_TEST((x.size() == y.size() && std::memcmp(x.data(), y.data(), x.size() * sizeof(double)) == 0),
               name << ": " << a << " and " << b << " differ");
  }
}

// Stops `pid` once `ready` holds, runs `plant` while it is stopped, and lets it go on; false when the
// child exited first (the test then cannot say anything, and fails).
bool while_stopped(pid_t pid, const std::function<bool()>& ready, const std::function<void()>& plant) {
  if (edm::test::wait_until(pid, ready) != edm::test::Waited::Ready) return false;
  ::kill(pid, SIGSTOP);
  plant();
  ::kill(pid, SIGCONT);
  return true;
}

}  // namespace

// run.toml.partial and checkpoint.h5.partial planted as links while the run sums its batches: the
// manifest was written with an ofstream, which followed the link and replaced the user's file with
// the manifest. Both are now moved aside and the run's files made exclusively (O_EXCL|O_NOFOLLOW).
BOOST_AUTO_TEST_CASE(links_planted_at_staging_names_during_a_run_are_not_followed) {
  const auto dir = edm::test::temp_dir("wp_run_links");
  const auto precious = write_file(dir, "precious.txt", kPrecious);
  const auto campaign = write_file(dir, "cell.toml", cell());
  const auto run = dir / "run";
  const pid_t pid = spawn_edm({"run", campaign.string(), "--quiet", "--output", run.string(), "--checkpoint-every", "1"});
  const bool planted = while_stopped(
      pid, [&] { return fs::exists(run / "field.h5.partial"); },
      [&] {
        for (const char* name : {"run.toml.partial", "checkpoint.h5.partial"}) fs::create_symlink(precious, run / name);
      });
  const int code = edm::test::wait_exit(pid);
  BOOST_REQUIRE_MESSAGE(planted, "the run ended before the links could be planted");
  BOOST_TEST(code == 0);
  BOOST_TEST(slurp(precious) == kPrecious, "a staging name was written through its link");
  BOOST_TEST(fs::is_regular_file(fs::symlink_status(run / "run.toml")));
  BOOST_TEST(fs::is_regular_file(fs::symlink_status(run / "field.h5")));
  BOOST_TEST(names_starting(run, "run.toml.partial.").size() == 1u, "the planted link is kept aside");

  // field.h5.partial and spectrum.h5.partial as links before the commands that write them.
  const auto second = dir / "second";
  fs::create_directories(second);
  const auto mine = write_file(dir, "mine.txt", kPrecious);  // a file of its own: the cases fail apart
  fs::create_symlink(mine, second / "field.h5.partial");
  auto r = run_edm("run " + campaign.string() + " --quiet --output " + second.string());
  BOOST_TEST(r.exit_code == 0, r.output);
  fs::create_symlink(mine, second / "spectrum.h5.partial");
  r = run_edm("spectrum " + second.string() + " --quiet");
  BOOST_TEST(r.exit_code == 4, r.output);
  BOOST_TEST(contains(r.output, "[EDM-IO-161]"), r.output);
  BOOST_TEST(slurp(mine) == kPrecious, "field.h5.partial or spectrum.h5.partial was written through");
}

// The sweep's table and cell state files are written under "<name>.tmp.<pid>", a name anyone can
// guess: a link there had the table written into the file it points to. The shell plants the link
// under its own pid and execs edm, which keeps it, for a second sweep of a finished folder. A dangling link at the folder's lock made edm
// create the file it points to; it is now refused (EDM-SWP-013, exit 4).
BOOST_AUTO_TEST_CASE(the_sweep_tables_staging_name_and_lock_are_not_followed) {
  const auto dir = edm::test::temp_dir("wp_sweep_links");
  const auto precious = write_file(dir, "precious.txt", kPrecious);
  const auto campaign = write_file(dir, "sweep.toml", cell(0.3, 2) + "[sweep]\nlaser.a0 = [0.2, 0.4]\n");
  const auto out = dir / "sw";
  // A second sweep of the finished folder writes its table again (every cell done).
  const auto first = run_edm("sweep " + campaign.string() + " --quiet -o " + out.string());
  BOOST_REQUIRE_MESSAGE(first.exit_code == 0, first.output);
  const std::string line = "ln -s " + precious.string() + " " + (out / "campaign.toml").string() + ".tmp.$$ && exec " +
                           edm_bin() + " sweep " + campaign.string() + " --quiet -o " + out.string();
  const int code = edm::test::wait_exit(edm::test::spawn_shell(line));
  BOOST_TEST(code == 0);
  BOOST_TEST(slurp(precious) == kPrecious, "the campaign table was written through the link");
  BOOST_TEST(fs::is_regular_file(fs::symlink_status(out / "campaign.toml")));

  const auto out2 = dir / "sw2";
  fs::create_directories(out2);
  const auto elsewhere = dir / "made_by_edm";
  fs::create_symlink(elsewhere, out2 / ".campaign.lock");
  const auto r = run_edm("sweep " + campaign.string() + " --quiet -o " + out2.string());
  BOOST_TEST(r.exit_code == 4, r.output);
  BOOST_TEST(contains(r.output, "[EDM-SWP-013]"), r.output);
  BOOST_TEST(contains(r.output, (out2 / ".campaign.lock").string()), r.output);
  BOOST_TEST(!fs::exists(fs::symlink_status(elsewhere)), "the lock created the file its link points to");

  // The same at a cell's claim, .cells/<label>.lock.
  const auto out3 = dir / "sw3";
  fs::create_directories(out3 / ".cells");
  const auto elsewhere3 = dir / "made_by_a_claim";
  fs::create_symlink(elsewhere3, out3 / ".cells" / "a0=0.2.lock");
  const auto c = run_edm("sweep " + campaign.string() + " --quiet -o " + out3.string());
  BOOST_TEST(c.exit_code != 0, c.output);
  BOOST_TEST(contains(c.output, "[EDM-SWP-013]"), c.output);
  BOOST_TEST(contains(c.output, (out3 / ".cells" / "a0=0.2.lock").string()), c.output);
  BOOST_TEST(!fs::exists(fs::symlink_status(elsewhere3)), "the cell's claim created the file its link points to");
}

// The last rename of the run (field.h5.partial → field.h5) failing (EXDEV, through an LD_PRELOAD
// fixture): the writer's destructor removed the finished cube. It is now kept under its staging
// name, said with its path (EDM-IO-163, exit 4), whole, and `edm resume` puts it in place with the
// run.toml kept beside it (test_adopt_kept_field), the field an uninterrupted run's.
BOOST_AUTO_TEST_CASE(a_failed_final_rename_keeps_the_finished_field) {
  const auto dir = edm::test::temp_dir("wp_rename");
  const auto campaign = write_file(dir, "cell.toml", cell(0.3, 8));
  const auto full = dir / "full";
  auto r = run_edm("run " + campaign.string() + " --quiet --output " + full.string());
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  const auto part = dir / "part";
  r = edm::test::run_command(std::string("LD_PRELOAD=") + EDM_FIXTURE_FAIL_RENAME + " EDM_TEST_FAIL_RENAME=/field.h5 " +
                             edm_bin() + " run " + campaign.string() + " --quiet --checkpoint-every 1 --output " +
                             part.string());
  BOOST_TEST(r.exit_code == 4, r.output);
  BOOST_TEST(contains(r.output, "[EDM-IO-163]"), r.output);
  BOOST_TEST(contains(r.output, "kept as " + (part / "field.h5.partial").string()), r.output);
  BOOST_TEST(!fs::exists(part / "field.h5"));
  BOOST_TEST(!fs::exists(part / "run.toml"));
  BOOST_REQUIRE_MESSAGE(fs::exists(part / "field.h5.partial"), "the finished field was removed");
  expect_same_field(full / "field.h5", part / "field.h5.partial");

  r = run_edm("resume " + part.string() + " --quiet");
  BOOST_TEST(r.exit_code == 0, r.output);
  expect_same_field(full / "field.h5", part / "field.h5");
  // The kept field and its run.toml.partial are put in place (test_adopt_kept_field), nothing moved aside.
  BOOST_TEST(names_starting(part, "field.h5.partial").empty(), "the kept field was not adopted");
}

// `edm run --overwrite` stopped by SIGINT: the previous results stay as they were (the new run
// renames over them only when it commits), and `edm resume` carries the checkpoint on: it was
// refused (EDM-RUN-001, "pass --overwrite", which resume does not take). The resumed field is the
// uninterrupted run's, bit for bit.
BOOST_AUTO_TEST_CASE(an_interrupted_overwrite_keeps_the_old_results_and_resumes) {
  const auto dir = edm::test::temp_dir("wp_overwrite");
  const auto campaign = write_file(dir, "cell.toml", cell(0.3, 8));
  const auto full = dir / "full";
  auto r = run_edm("run " + campaign.string() + " --quiet --output " + full.string());
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  const auto part = dir / "part";
  const auto older = write_file(dir, "older.toml", cell(0.2, 8));
  r = run_edm("run " + older.string() + " --quiet --output " + part.string());
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  const std::string old_field = slurp(part / "field.h5"), old_manifest = slurp(part / "run.toml");

  const pid_t pid = spawn_edm(
      {"run", campaign.string(), "--quiet", "--overwrite", "--checkpoint-every", "1", "--output", part.string()});
  const int code = edm::test::signal_when(pid, SIGINT, [&] { return fs::exists(part / "checkpoint.h5"); });
  BOOST_REQUIRE_MESSAGE(code != -1, "the run finished before the signal could be sent");
  BOOST_TEST(code == 130);
  BOOST_TEST(slurp(part / "field.h5") == old_field, "the previous field changed before the new one was complete");
  BOOST_TEST(slurp(part / "run.toml") == old_manifest);
  BOOST_TEST(!fs::exists(part / "field.h5.partial"));

  r = run_edm("resume " + part.string() + " --quiet");
  BOOST_TEST(r.exit_code == 0, r.output);
  expect_same_field(full / "field.h5", part / "field.h5");
  BOOST_TEST(!fs::exists(part / "checkpoint.h5"));
  const auto manifest = toml::parse_file((part / "run.toml").string());
  BOOST_TEST(manifest["campaign"]["laser"]["a0"].value_or(0.0) == 0.3, "run.toml is the resumed run's");
}

// checkpoint.h5 is renamed over at every checkpoint like field.h5 and run.toml at the end: a folder
// there let `--overwrite --checkpoint-every 1` start computing and fail at its first checkpoint
// (EDM-IO-001). It is refused before any work, naming it (EDM-RUN-071), and the folder is left as
// it was.
BOOST_AUTO_TEST_CASE(a_folder_at_checkpoint_h5_is_refused_before_any_work) {
  const auto dir = edm::test::temp_dir("wp_ckpt_folder");
  const auto campaign = write_file(dir, "cell.toml", cell(0.3, 8));
  const auto run = dir / "run";
  fs::create_directories(run / "checkpoint.h5");
  write_file(run / "checkpoint.h5", "notes.txt", kPrecious);
  const auto r = run_edm("run " + campaign.string() + " --quiet --overwrite --checkpoint-every 1 --output " + run.string());
  BOOST_TEST(r.exit_code == 4, r.output);
  BOOST_TEST(contains(r.output, "[EDM-RUN-071]"), r.output);
  BOOST_TEST(contains(r.output, (run / "checkpoint.h5").string() + " is a folder"), r.output);
  BOOST_TEST(slurp(run / "checkpoint.h5" / "notes.txt") == kPrecious);
  BOOST_TEST(!fs::exists(run / "field.h5"));
  BOOST_TEST(!fs::exists(run / "field.h5.partial"));
}
