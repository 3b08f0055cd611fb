// ctest-label: e2e
// A screen in passes under mpirun -n 2 with the ranks sharding pixels (issue 32 c): each rank's tile
// of rows runs in passes of one row (EDM_MAX_DEVICE_ALLOCATION), a SIGTERM to rank 0 during a later
// pass stops both ranks with a checkpoint of that pass each, and `mpirun -n 2 edm resume` gives the
// one-process field bit for bit (pixel sharding and passes are both bit-identical to the single pass).
// Built only with EDM_WITH_MPI (tests/CMakeLists.txt).
#define BOOST_TEST_MODULE mpi_passes
#include <boost/test/unit_test.hpp>

#include <signal.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "edm/checkpoint.hpp"
#include "edm/error.hpp"
#include "edm/field_file.hpp"
#include "spawn.hpp"

namespace fs = std::filesystem;
using namespace edm;

namespace {

// test_mpi_pixels' split Thomson cell, 12 electrons in batches of one.
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
count = 12
radius = 2e-6
[screen]
distance = 0.005
half_width = 3e-5
nx = 6
ny = 5
samples = 192
samples_per_period = 32
window = "burst"
[accumulator]
electron_batch = 1
devices = "0"
sharding = "pixels"
)";

std::string mpirun(int n) {
  return "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout -k 10 300 " EDM_MPIEXEC " --oversubscribe -n " +
         std::to_string(n) + " ";
}

int checkpoint_pass(const fs::path& run) {
  try {
    if (!fs::exists(run / "checkpoint.h5")) return -1;
    return int(read_checkpoint_state(run / "checkpoint.h5").pass);
  } catch (const Error&) {
    return -1;
  }
}

}  // namespace

BOOST_AUTO_TEST_CASE(ranks_stopped_in_a_later_pass_resume_bit_for_bit) {
  const auto dir = test::temp_dir("mpi_passes");
  const auto campaign = test::write_file(dir, "cell.toml", kCell);
  const std::string edm = test::edm_binary().string();
  const auto one = test::run_command(edm + " run " + campaign.string() + " --quiet --output " + (dir / "one").string());
  BOOST_REQUIRE_MESSAGE(one.exit_code == 0, one.output);

  // One row of the cube's bucket (3 components × 6 pixels × 192 samples): passes of one row.
  setenv("EDM_MAX_DEVICE_ALLOCATION", std::to_string(3 * 6 * 192 * 8).c_str(), 1);
  const auto part = dir / "part";
  const pid_t sh = test::spawn_shell(mpirun(2) + edm + " run " + campaign.string() + " --quiet --checkpoint-every 1 --output " +
                                     part.string() + " > " + (dir / "part.log").string() + " 2>&1");
  long rank0 = 0;
  const auto waited = test::wait_until(sh, [&] {
    return checkpoint_pass(part) >= 1 && std::sscanf(test::slurp(part / ".edm.lock").c_str(), "pid %ld", &rank0) == 1;
  });
  if (waited == test::Waited::Exited) BOOST_FAIL("the run ended before it could be stopped: " << test::slurp(dir / "part.log"));
  kill(pid_t(rank0), SIGTERM);
  const int code = test::wait_exit(sh);
  BOOST_TEST_INFO(test::slurp(dir / "part.log"));
  BOOST_TEST(code != 0);
  const CheckpointState st = read_checkpoint_state(part / "checkpoint.h5");
  BOOST_TEST(st.pass >= 1u);
  BOOST_TEST(read_checkpoint_commit(part / "checkpoint.h5").ranks == 2u);
  BOOST_TEST(fs::exists(part / ("checkpoint.g" + std::to_string(read_checkpoint_commit(part / "checkpoint.h5").generation) + ".r1.h5")), "rank 1's file");
  BOOST_REQUIRE(fs::exists(part / "field.h5.partial"));
  BOOST_TEST(!fs::exists(part / "field.h5"));

  const auto resumed = test::run_command(mpirun(2) + edm + " resume " + part.string() + " --quiet");
  unsetenv("EDM_MAX_DEVICE_ALLOCATION");
  BOOST_REQUIRE_MESSAGE(resumed.exit_code == 0, resumed.output);
  const char* datasets[] = {"/E/x", "/E/y", "/E/z", "/B/x", "/B/y", "/B/z",
                            "/E_far/x", "/E_far/y", "/E_far/z", "/B_far/x", "/B_far/y", "/B_far/z"};
  for (const char* name : datasets) {
    const auto x = read_field_component(dir / "one" / "field.h5", name), y = read_field_component(part / "field.h5", name);
    BOOST_REQUIRE(x.size() == y.size());
    BOOST_TEST(std::memcmp(x.data(), y.data(), x.size() * sizeof(double)) == 0, name << " differs from one process");
  }
  for (const char* name : {"/gamma/mean", "/gamma/count", "/gamma/min", "/gamma/drain", "/gamma/drain_electron"})
    BOOST_TEST((read_dataset_1d(dir / "one" / "field.h5", name) == read_dataset_1d(part / "field.h5", name)), name);
  BOOST_TEST(!fs::exists(part / "checkpoint.h5"));
}
