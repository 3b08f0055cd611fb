// ctest-label: e2e
// `mpirun -n 2 edm run …` against one process: ranks shard the ensemble, partial cubes are reduced
// to rank 0 slab by slab; agreement to tol::sharded, and the manifest records the ranks. Checkpoints
// under MPI: a SIGTERM to one rank stops every rank at one batch boundary with a checkpoint of each,
// and `mpirun -n 2 edm resume` gives the uninterrupted `mpirun -n 2` run's field bit for bit.
// Ranks given different campaigns (a key, the environment, a data file's content, the command's
// options) are refused on every rank before any work (EDM-RUN-070); `edm sweep` under mpirun is
// refused (EDM-SWP-040).
// Built only with EDM_WITH_MPI (tests/CMakeLists.txt).
#define BOOST_TEST_MODULE mpi
#include <boost/test/unit_test.hpp>

#include <signal.h>

#include <chrono>
#include <cstring>
#include <fstream>

#include <toml++/toml.h>

#include "edm/tracks.hpp"
#include "edm/writer.hpp"
#include "spawn.hpp"

namespace fs = std::filesystem;
using namespace edm;

namespace {
const char* kCell = R"(
[run]
scenario = "thomson"
mode = "split"
[laser]
profile = "plane_wave"
a0 = 0.8
duration = 8e-15
polarization = "circular_plus"
[electrons]
distribution = "sunflower"
count = 6
radius = 2e-6
[screen]
distance = 0.005
half_width = 3e-5
nx = 6
ny = 5
samples = 192
samples_per_period = 32
[accumulator]
electron_batch = 2
)";
}  // namespace

BOOST_AUTO_TEST_CASE(two_ranks_agree_with_one_process) {
  const auto dir = test::temp_dir("mpi");
  const auto campaign = dir / "cell.toml";
  std::ofstream(campaign) << kCell;
  const std::string edm = test::edm_binary().string();
  auto one = test::run_command(edm + " run " + campaign.string() + " --quiet --output " + (dir / "one").string());
  BOOST_REQUIRE_MESSAGE(one.exit_code == 0, one.output);
  // Open MPI refuses root without these (NOTES.md); CI runs as root on 2 cores.
  auto two = test::run_command(
      "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 " EDM_MPIEXEC " -n 2 --oversubscribe " + edm +
      " run " + campaign.string() + " --quiet --output " + (dir / "two").string());
  BOOST_REQUIRE_MESSAGE(two.exit_code == 0, two.output);
  for (const char* name : {"/E/x", "/E/y", "/E/z", "/B/x", "/B/y", "/B/z", "/E_far/x", "/E_far/y", "/B_far/z"}) {
    const double rel = test::relative_l2(read_field_component(dir / "two" / "field.h5", name),
                                         read_field_component(dir / "one" / "field.h5", name));
    BOOST_TEST_MESSAGE("mpirun -n 2 vs one process, " << name << ": relative L2 " << rel);
    BOOST_TEST(rel < test::tol::sharded);
  }
  // The γ trace folds exactly: same drains, same counts.
  BOOST_TEST((read_dataset_1d(dir / "two" / "field.h5", "/gamma/drain") ==
              read_dataset_1d(dir / "one" / "field.h5", "/gamma/drain")));
  BOOST_TEST((read_dataset_1d(dir / "two" / "field.h5", "/gamma/count") ==
              read_dataset_1d(dir / "one" / "field.h5", "/gamma/count")));
  auto m = toml::parse_file((dir / "two" / "run.toml").string());
  BOOST_TEST(m["provenance"]["ranks"].value_or(0) == 2);
  BOOST_TEST(m["timing"]["ranks"]["field"].as_array()->size() == 2u);
  BOOST_TEST(m["electrons"]["count"].value_or(int64_t(0)) == 6);
  BOOST_TEST(!fs::exists(dir / "two" / "field.h5.partial"));
}

namespace {
// Open MPI refuses root without these (NOTES.md); CI runs as root on 2 cores.
std::string mpirun2() {
  return "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 " EDM_MPIEXEC " -n 2 --oversubscribe ";
}
using test::slurp;
}  // namespace

// run.toml's [provenance] device and [tuning] clblast were rank 0's alone: ranks on other nodes may
// run other devices or parameters. Two ranks with different CLBlast settings (an MPMD launch, one
// environment each) are both named, each with its rank; ranks that agree keep the one value.
BOOST_AUTO_TEST_CASE(run_toml_names_every_ranks_tuning_where_they_differ) {
  const auto dir = test::temp_dir("mpi_tuning");
  const auto campaign = dir / "cell.toml";
  std::ofstream(campaign) << kCell;
  const std::string edm = test::edm_binary().string();
  const std::string args = " run " + campaign.string() + " --quiet --output " + (dir / "two").string();
  const std::string env = "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 ";
  auto r = test::run_command(env + EDM_MPIEXEC " --oversubscribe -n 1 -x EDM_CLBLAST_TUNING=1 " + edm + args +
                             " : -n 1 -x EDM_CLBLAST_TUNING=0 " + edm + args);
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  auto m = toml::parse_file((dir / "two" / "run.toml").string());
  const std::string clblast = m["tuning"]["clblast"].value_or(std::string());
  BOOST_TEST_INFO(clblast);
  BOOST_TEST(clblast.find("rank 0: ") == 0u);
  BOOST_TEST(clblast.find(" | rank 1: 0: off (EDM_CLBLAST_TUNING=0)") != std::string::npos);
  BOOST_TEST(m["provenance"]["device"].value_or(std::string()).find("rank ") == std::string::npos);  // the same device
  r = test::run_command(mpirun2() + edm + args + " --overwrite");
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  m = toml::parse_file((dir / "two" / "run.toml").string());
  BOOST_TEST(m["tuning"]["clblast"].value_or(std::string()).find("rank ") == std::string::npos);
}

BOOST_AUTO_TEST_CASE(two_ranks_stop_with_a_checkpoint_each_and_resume_bit_identically) {
  const auto dir = test::temp_dir("mpi_resume");
  const auto campaign = dir / "cell.toml";
  std::string cell = kCell;
  // 12 electrons, one per batch: 6 batches per rank, time enough to stop the run in the middle.
  cell.replace(cell.find("count = 6"), 9, "count = 12");
  cell.replace(cell.find("electron_batch = 2"), 18, "electron_batch = 1\ndevices = \"0\"");
  std::ofstream(campaign) << cell;
  const std::string edm = test::edm_binary().string();
  auto full = test::run_command(mpirun2() + edm + " run " + campaign.string() + " --quiet --output " +
                                (dir / "full").string());
  BOOST_REQUIRE_MESSAGE(full.exit_code == 0, full.output);

  const auto part = dir / "part";
  const std::string line = mpirun2() + edm + " run " + campaign.string() + " --quiet --checkpoint-every -1 --output " +
                           part.string() + " > " + (dir / "part.log").string() + " 2>&1";
  const pid_t sh = test::spawn_shell(line);
  // Rank 0 holds the folder's lock and names its pid there; the batch loop has begun once
  // field.h5.partial exists. SIGTERM to rank 0 alone: the ranks agree to stop at one boundary.
  long rank0 = 0;
  const auto waited = test::wait_until(sh, [&] {
    return fs::exists(part / "field.h5.partial") &&
           std::sscanf(slurp(part / ".edm.lock").c_str(), "pid %ld", &rank0) == 1;
  });
  if (waited == test::Waited::Exited)
    BOOST_FAIL("the run ended before it could be stopped: " << slurp(dir / "part.log"));
  BOOST_REQUIRE(rank0 > 0);
  kill(pid_t(rank0), SIGTERM);
  const int code = test::wait_exit(sh);
  BOOST_TEST_MESSAGE("mpirun -n 2 after SIGTERM to rank 0: exit " << code << "\n" << slurp(dir / "part.log"));
  BOOST_TEST(code != 0);
  BOOST_TEST(slurp(dir / "part.log").find("EDM-RUN-010") != std::string::npos);
  BOOST_REQUIRE(fs::exists(part / "checkpoint.h5"));
  BOOST_TEST(fs::exists(part / "checkpoint.g1.r1.h5"), "rank 1's file of the committed generation");
  BOOST_TEST(!fs::exists(part / "field.h5"));

  // A resume with another process count is refused, naming the count it was written with.
  auto one = test::run_command(edm + " resume " + part.string() + " --quiet");
  BOOST_TEST(one.exit_code == 2);
  BOOST_TEST(one.output.find("EDM-CKP-010") != std::string::npos);

  auto resumed = test::run_command(mpirun2() + edm + " resume " + part.string() + " --quiet");
  BOOST_REQUIRE_MESSAGE(resumed.exit_code == 0, resumed.output);
  for (const char* name : {"/E/x", "/E/y", "/E/z", "/B/x", "/B/y", "/B/z", "/E_far/x", "/E_far/y", "/B_far/z"}) {
    const auto a = read_field_component(dir / "full" / "field.h5", name);
    const auto b = read_field_component(part / "field.h5", name);
    BOOST_TEST(a.size() == b.size());
    BOOST_TEST(std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0, name << " differs after resume");
  }
  for (const char* name : {"/gamma/mean", "/gamma/count", "/gamma/drain"})
    BOOST_TEST((read_dataset_1d(dir / "full" / "field.h5", name) == read_dataset_1d(part / "field.h5", name)));
  BOOST_TEST(!fs::exists(part / "checkpoint.h5"));
  BOOST_TEST(!fs::exists(part / "checkpoint.g1.r1.h5"), "every rank's checkpoint is removed at the end");
  BOOST_TEST(!fs::exists(part / ".edm.lock"));
}

// ---- The ranks agree on the campaign before any work (EDM-RUN-070) ----------------------------------
// Ranks that ran different campaigns wrote one field.h5 with exit 0 (the reduce summed cubes of other
// physics; run.toml showed rank 0's keys), or aborted in MPI_Reduce with no edm id when the cubes had
// other sizes. Now rank 0 broadcasts its effective campaign (keys, data files by content) and every
// rank refuses a difference before any device time: exit 2 on every rank, naming the key, both values
// and the rank, with nothing written to the run folder.
namespace {

// An MPMD launch: rank 0 runs `edm ARGS0`, rank 1 `edm ARGS1`; env0/env1 are mpirun options of that
// rank's environment (`-x EDM_NEWTON_ITERS=3 `) or "". Ranks that disagree could wait for each other
// forever (a dry run on one rank left the other in its reduce): the launch is ended after 5 minutes
// (exit 124), a failure of the case rather than a hung suite.
test::CommandResult mpmd(const std::string& env0, const std::string& args0, const std::string& env1,
                         const std::string& args1) {
  const std::string edm = test::edm_binary().string();
  return test::run_command("OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout -k 10 300 " EDM_MPIEXEC
                           " --oversubscribe -n 1 " + env0 + edm + " " + args0 + " : -n 1 " + env1 + edm + " " + args1);
}

// Refused on both ranks with EDM-RUN-070, `difference` ("laser.a0 is 0.5 on rank 1 and 0.8 on rank 0")
// in the message, exit 2, and nothing of a run in `out`.
void check_refused(const test::CommandResult& r, const fs::path& out, const std::string& difference) {
  BOOST_TEST_INFO(r.output);
  BOOST_TEST(r.exit_code == 2);
  BOOST_TEST(r.output.find("EDM-RUN-070") != std::string::npos);
  BOOST_TEST(r.output.find(difference) != std::string::npos);
  BOOST_TEST(r.output.find("(this is rank 0)") != std::string::npos, "rank 0 reports the refusal");
  BOOST_TEST(r.output.find("(this is rank 1)") != std::string::npos, "rank 1 reports the refusal");
  for (const char* name : {"field.h5", "field.h5.partial", "run.toml", ".edm.lock", "checkpoint.h5"})
    BOOST_TEST(!fs::exists(out / name), name << " left in the run folder");
}

// The cell of these cases, written to dir/cell.toml with its output folder dir/out.
fs::path write_cell(const fs::path& dir, std::string cell = kCell) {
  cell.replace(cell.find("[run]\n"), 6, "[run]\noutput = \"" + (dir / "out").string() + "\"\n");
  return test::write_file(dir, "cell.toml", cell);
}

}  // namespace

BOOST_AUTO_TEST_CASE(ranks_with_another_a0_are_refused_before_any_work) {
  const auto dir = test::temp_dir("mpi_agree_a0");
  const std::string run = "run " + write_cell(dir).string() + " --quiet";
  check_refused(mpmd("", run, "", run + " --set laser.a0=0.5"), dir / "out",
                "laser.a0 is 0.5 on rank 1 and 0.8 on rank 0");
  // One ulp apart: the values are compared as doubles, not as a rounded print.
  check_refused(mpmd("", run + " --set laser.a0=0.8000000000000002", "", run), dir / "out",
                "laser.a0 is 0.8 on rank 1 and 0.8000000000000002 on rank 0");
}

BOOST_AUTO_TEST_CASE(ranks_with_another_screen_are_refused_before_any_work) {
  // Cubes of other sizes made MPI_Reduce abort (MPI_ERR_TRUNCATE) with no edm id, a lock and a
  // field.h5.partial left behind.
  const auto dir = test::temp_dir("mpi_agree_nx");
  const std::string run = "run " + write_cell(dir).string() + " --quiet";
  check_refused(mpmd("", run + " --set screen.nx=7", "", run), dir / "out", "screen.nx is 6 on rank 1 and 7 on rank 0");
}

BOOST_AUTO_TEST_CASE(ranks_with_another_environment_are_refused_before_any_work) {
  // EDM_NEWTON_ITERS is accumulator.newton_iters' variable: the environment applied is compared.
  const auto dir = test::temp_dir("mpi_agree_env");
  const std::string run = "run " + write_cell(dir).string() + " --quiet";
  check_refused(mpmd("", run, "-x EDM_NEWTON_ITERS=3 ", run), dir / "out",
                "accumulator.newton_iters is 3 on rank 1 and 2 on rank 0");
}

// The options that decide which collectives a rank reaches are compared too: a dry run on one rank
// returned before the batch loop while the other waited in its reduce.
BOOST_AUTO_TEST_CASE(ranks_with_another_command_line_are_refused_before_any_work) {
  const auto dir = test::temp_dir("mpi_agree_dry");
  const std::string run = "run " + write_cell(dir).string() + " --quiet";
  check_refused(mpmd("", run + " --dry-run", "", run), dir / "out",
                "the option --dry-run is not given on rank 1 and given on rank 0");
}

// The electron list by content: two folders, each with its campaign and its electrons.csv (the same
// name in each). Other contents are refused naming electrons.file; the same contents at two paths
// (node-local copies) run, and give the one-process field.
BOOST_AUTO_TEST_CASE(ranks_with_another_electron_list_are_refused_before_any_work) {
  const auto dir = test::temp_dir("mpi_agree_csv");
  std::string cell = kCell;
  const std::string sunflower = "distribution = \"sunflower\"\ncount = 6\nradius = 2e-6";
  cell.replace(cell.find(sunflower), sunflower.size(), "distribution = \"list\"\nfile = \"electrons.csv\"");
  const std::string csv = "t0,x,y,z,ux,uy,uz\n0,0,0,0,0,0,0\n0,1e-6,0,0,0,0,0\n0,0,-1e-6,0,0,0,0\n";
  std::string other = csv;
  other.replace(other.find("1e-6"), 4, "2e-6");
  fs::create_directories(dir / "a");
  fs::create_directories(dir / "b");
  test::write_file(dir / "a", "electrons.csv", csv);
  const std::string a = "run " + write_cell(dir / "a", cell).string() + " --quiet";
  const std::string b = "run " + write_cell(dir / "b", cell).string() + " --quiet";
  const std::string out = " --output " + (dir / "out").string();
  test::write_file(dir / "b", "electrons.csv", other);
  auto r = mpmd("", a + out, "", b + out);
  check_refused(r, dir / "out", "electrons.file is '" + (dir / "b" / "electrons.csv").string() + "' (fnv1a ");
  BOOST_TEST(r.output.find("on rank 1 and '" + (dir / "a" / "electrons.csv").string() + "' (fnv1a ") != std::string::npos);

  test::write_file(dir / "b", "electrons.csv", csv);
  r = mpmd("", a + out, "", b + out);
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  const auto one = test::run_command(test::edm_binary().string() + " " + a + " --output " + (dir / "one").string());
  BOOST_REQUIRE_MESSAGE(one.exit_code == 0, one.output);
  for (const char* name : {"/E/x", "/E/y", "/B/z", "/E_far/x"}) {
    const double rel = test::relative_l2(read_field_component(dir / "out" / "field.h5", name),
                                         read_field_component(dir / "one" / "field.h5", name));
    BOOST_TEST(rel < test::tol::sharded, name << ": relative L2 " << rel);
  }
}

// A tracks file (trajectory.model = "tracks") likewise: one sample of one track differs between the two
// ranks' copies of tracks.h5; the refusal comes before either is read.
BOOST_AUTO_TEST_CASE(ranks_with_another_tracks_file_are_refused_before_any_work) {
  const auto dir = test::temp_dir("mpi_agree_tracks");
  std::string cell = kCell;
  cell += "[trajectory]\nmodel = \"tracks\"\nfile = \"tracks.h5\"\n";
  TrackData track;
  track.t = {0, 1e-15, 2e-15, 3e-15};
  track.x = track.y = track.z = track.ux = track.uy = track.uz = {0, 0, 0, 0};
  for (const char* rank : {"a", "b"}) {
    fs::create_directories(dir / rank);
    write_tracks((dir / rank / "tracks.h5").string(), {track});
    track.x[2] = 1e-12;  // rank b's copy
  }
  const std::string out = " --output " + (dir / "out").string();
  check_refused(mpmd("", "run " + write_cell(dir / "a", cell).string() + " --quiet" + out, "",
                     "run " + write_cell(dir / "b", cell).string() + " --quiet" + out),
                dir / "out", "trajectory.file is '" + (dir / "b" / "tracks.h5").string() + "' (fnv1a ");
}

// A sweep runs one process per cell (--parallel-devices, --slurm): under mpirun every rank ran the same
// cells into one folder together, recorded one cell done with a wrong field, and aborted.
BOOST_AUTO_TEST_CASE(a_sweep_under_mpirun_is_refused_on_every_rank) {
  const auto dir = test::temp_dir("mpi_sweep");
  std::string cell = kCell;
  cell += "[sweep]\n\"laser.a0\" = [0.5, 0.8]\n";
  const fs::path file = write_cell(dir, cell);
  const auto r = test::run_command(mpirun2() + test::edm_binary().string() + " sweep " + file.string() + " --quiet");
  BOOST_TEST_INFO(r.output);
  BOOST_TEST(r.exit_code == 2);
  BOOST_TEST(r.output.find("EDM-SWP-040") != std::string::npos);
  BOOST_TEST(r.output.find("MPI world size 2") != std::string::npos);
  BOOST_TEST(r.output.find("--parallel-devices") != std::string::npos);
  BOOST_TEST(!fs::exists(dir / "out" / "campaign.toml"), "no campaign table is written");
}
