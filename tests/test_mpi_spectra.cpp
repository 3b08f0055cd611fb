// ctest-label: e2e
// The direct spectra under `mpirun -n 2` (share/docs/outputs.md "Devices, ranks and checkpoints"):
// each rank sums its block of the ensemble, rank 0 folds the ranks in rank order, and spectrum.h5
// /direct agrees with one process to tol::sharded; a SIGTERM to rank 0 stops both ranks with a
// checkpoint each (their spectra inside), and `mpirun -n 2 edm resume` gives the uninterrupted
// `mpirun -n 2` run's /direct bit for bit. Built only with EDM_WITH_MPI (tests/CMakeLists.txt).
#define BOOST_TEST_MODULE mpi_spectra
#include <boost/test/unit_test.hpp>

#include <hdf5.h>
#include <signal.h>

#include <cstdio>
#include <cstring>
#include <utility>

#include "edm/checkpoint.hpp"
#include "spawn.hpp"
#include "h5_read.hpp"

namespace fs = std::filesystem;
using namespace edm;

namespace {

// Open MPI refuses root without these (NOTES.md); CI runs as root on 2 cores.
std::string mpirun2() {
  return "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 " EDM_MPIEXEC " -n 2 --oversubscribe ";
}

// The small inverse-Thomson cell on an angular screen at infinity (3 × 3 directions), 6 frequencies
// of direct spectra, one electron a batch, one device a rank.
std::string spectra_cell(int electrons) {
  return test::small_far_cell({.electrons = electrons}) + test::small_far_spectra();
}

const char* const kDirect[] = {"/direct/coherent_amplitude", "/direct/coherent/d2W_domega_dOmega",
                               "/direct/incoherent/d2W_domega_dOmega", "/direct/incoherent/photons_per_0.1pct_bw"};

}  // namespace

BOOST_AUTO_TEST_CASE(two_ranks_agree_with_one_process) {
  const auto dir = test::temp_dir("mpi_spectra");
  const auto campaign = test::write_file(dir, "cell.toml", spectra_cell(6));
  auto one = test::run_edm("run " + campaign.string() + " --quiet --output " + (dir / "one").string());
  BOOST_REQUIRE_MESSAGE(one.exit_code == 0, one.output);
  auto two = test::run_command(mpirun2() + test::edm_bin() + " run " + campaign.string() + " --quiet --output " +
                               (dir / "two").string());
  BOOST_REQUIRE_MESSAGE(two.exit_code == 0, two.output);
  for (const char* name : kDirect) {
    const double rel =
        test::relative_l2(test::h5_raw_doubles(dir / "two" / "spectrum.h5", name), test::h5_raw_doubles(dir / "one" / "spectrum.h5", name));
    BOOST_TEST_MESSAGE("mpirun -n 2 vs one process, " << name << ": relative L2 " << rel);
    BOOST_TEST(rel < test::tol::sharded);
  }
  BOOST_TEST(!fs::exists(dir / "two" / "spectrum.h5.partial"));
}

BOOST_AUTO_TEST_CASE(two_ranks_stop_and_resume_to_the_same_direct_spectra) {
  const auto dir = test::temp_dir("mpi_spectra_resume");
  // 12 electrons, one a batch: 6 batches a rank, time enough to stop the run in the middle.
  const auto campaign = test::write_file(dir, "cell.toml", spectra_cell(12));
  auto full = test::run_command(mpirun2() + test::edm_bin() + " run " + campaign.string() + " --quiet --output " +
                                (dir / "full").string());
  BOOST_REQUIRE_MESSAGE(full.exit_code == 0, full.output);

  const auto part = dir / "part";
  const pid_t sh = test::spawn_shell(mpirun2() + test::edm_bin() + " run " + campaign.string() +
                                     " --quiet --checkpoint-every -1 --output " + part.string() + " > " +
                                     (dir / "part.log").string() + " 2>&1");
  // Rank 0 names its pid in the folder's lock; the batch loop has begun once field.h5.partial exists.
  long rank0 = 0;
  const auto waited = test::wait_until(sh, [&] {
    return fs::exists(part / "field.h5.partial") &&
           std::sscanf(test::slurp(part / ".edm.lock").c_str(), "pid %ld", &rank0) == 1;
  });
  if (waited == test::Waited::Exited)
    BOOST_FAIL("the run ended before it could be stopped: " << test::slurp(dir / "part.log"));
  BOOST_REQUIRE(rank0 > 0);
  kill(pid_t(rank0), SIGTERM);
  const int code = test::wait_exit(sh);
  BOOST_TEST_MESSAGE("mpirun -n 2 after SIGTERM to rank 0: exit " << code << "\n" << test::slurp(dir / "part.log"));
  BOOST_REQUIRE(fs::exists(part / "checkpoint.h5"));
  BOOST_REQUIRE(fs::exists(part / "checkpoint.g1.r1.h5"));
  // Each rank's file holds its rank's spectra, unless that rank had done none of its electrons
  // (rank 0 from electron 0, rank 1 from 6): then neither cube nor sums (share/docs/outputs.md,
  // "Checkpoints under MPI").
  for (const auto& [f, first] : {std::pair{part / "checkpoint.h5", 0u}, std::pair{part / "checkpoint.g1.r1.h5", 6u}}) {
    const CheckpointState st = read_checkpoint_state(f);
    const bool done_some = st.next_electron > first;
    BOOST_TEST(st.cube == done_some, f.string() << ": next_electron " << st.next_electron);
    const hid_t h = H5Fopen(f.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    BOOST_TEST((H5Lexists(h, "spectra", H5P_DEFAULT) > 0) == done_some,
               f.string() << (done_some ? " lacks its rank's spectra" : " holds spectra of no electron"));
    H5Fclose(h);
  }
  BOOST_TEST(!fs::exists(part / "spectrum.h5"));

  auto resumed = test::run_command(mpirun2() + test::edm_bin() + " resume " + part.string() + " --quiet");
  BOOST_REQUIRE_MESSAGE(resumed.exit_code == 0, resumed.output);
  for (const char* name : kDirect)
    BOOST_TEST((test::h5_raw(dir / "full" / "spectrum.h5", name) == test::h5_raw(part / "spectrum.h5", name)), name << " differs");
  BOOST_TEST(!fs::exists(part / "checkpoint.h5"));
}
