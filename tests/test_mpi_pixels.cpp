// ctest-label: e2e
// The pieces of pixel sharding over MPI ranks that stand on their own (issue 32; share/docs/design.md
// "MPI ranks"). field.h5 written by several processes in turn, each its own rows, through FieldWriter's
// hand-over (close_for_others, Join, release, reopen): the file equals the one a single writer makes,
// dataset by dataset (memcmp), and reads through FieldFile; misuse of the hand-over is refused. A run
// folder that one rank cannot see (rank 1 in a mount namespace of its own, a tmpfs over the folder)
// is refused on every rank before any work, naming the rank and its host (EDM-MPI-002). Ranks that
// shard pixels (a tile of rows and every electron each): mpirun -n 2 and -n 3 (uneven tiles) give the
// one-process field.h5 bit for bit; a stopped pixel-sharded run, and one whose rank 1 was killed
// (SIGKILL), resumes bit-identically; with more ranks
// than rows, or with the direct spectra, the ranks shard the electrons instead, and run.toml says why.
// Built only with EDM_WITH_MPI (tests/CMakeLists.txt).
#define BOOST_TEST_MODULE mpi_pixels
#include <boost/test/unit_test.hpp>

#include <signal.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>

#include <toml++/toml.h>

#include "edm/error.hpp"
#include "edm/field_file.hpp"
#include "edm/run_files.hpp"
#include "edm/writer.hpp"
#include "spawn.hpp"

namespace fs = std::filesystem;
using namespace edm;

namespace {

const Normalization kUnits = Normalization::from_wavelength(800e-9);

Screen small_screen() {
  Screen s;
  s.nx = 4;
  s.ny = 5;
  s.samples = 8;
  s.half_x = 3.0;
  s.half_y = 2.0;
  s.z = -5000.0;
  s.dt = 0.25;
  s.t0_rel = -1.0;
  return s;
}

// Every field.h5 attribute that would differ between two writers is fixed, so the files can agree.
FieldFileInfo fixed_info() {
  FieldFileInfo info{"run-handover", "test", "thomson", 3, Mode::Split};
  info.author = "tester";
  info.date = "2026-12-05 12:00:00 +0000";
  info.machine = "host";
  return info;
}

// A value per slot that no two slots share (so a row written at another offset shows).
double value(int b, int c, int iy, int ix, int k) {
  return std::sin(1.0 + 0.37 * b + 1.3 * c + 2.1 * iy + 0.71 * ix + 0.013 * k) * std::exp(0.1 * iy - 0.05 * k);
}

// Rows [y0, y1) of every component, in slabs of one row, as the accumulator streams them.
void write_rows(FieldWriter& w, const Screen& s, int y0, int y1) {
  std::vector<double> row(std::size_t(s.nx) * std::size_t(s.samples));
  for (int b = 0; b < bucket_count(Mode::Split); ++b)
    for (int c = 0; c < 3; ++c)
      for (int iy = y0; iy < y1; ++iy) {
        for (int ix = 0; ix < s.nx; ++ix)
          for (int k = 0; k < s.samples; ++k) row[std::size_t(ix) * s.samples + k] = value(b, c, iy, ix, k);
        w.write_slab(b, c, iy, iy + 1, row.data());
      }
}

GammaTrace small_trace() {
  GammaTrace g;
  g.dtau = 0.5;
  for (int j = 0; j < 16; ++j) {
    const double gm = 3.0 - 0.01 * j;
    g.sum.push_back(GammaTrace::to_fixed(gm));
    g.min.push_back(gm - 0.001);
    g.max.push_back(gm + 0.001);
    g.count.push_back(1);
  }
  g.drain.push_back({0, 0.01});
  return g;
}

void finish(FieldWriter& w) {
  w.write_gamma_trace(small_trace(), kUnits);
  w.set_attribute("window_clipped_electrons", 0.0);
  w.commit();
}

}  // namespace

BOOST_AUTO_TEST_CASE(rows_written_by_writers_in_turn_give_the_single_writers_file) {
  const auto dir = test::temp_dir("mpi_pixels_handover");
  const Screen s = small_screen();
  fs::create_directories(dir / "one");
  fs::create_directories(dir / "turns");
  {
    FieldWriter w(dir / "one" / "field.h5", s, kUnits, fixed_info());
    write_rows(w, s, 0, s.ny);
    finish(w);
  }
  {
    // Three "ranks" of uneven tiles: rows [0, 2), [2, 4), [4, 5). Each writer holds the file alone.
    const fs::path final_path = dir / "turns" / "field.h5";
    FieldWriter owner(final_path, s, kUnits, fixed_info());
    write_rows(owner, s, 0, 2);
    owner.close_for_others();
    for (const auto& [y0, y1] : {std::pair{2, 4}, std::pair{4, 5}}) {
      FieldWriter joined(FieldWriter::Join{}, final_path, s, kUnits, Mode::Split);
      write_rows(joined, s, y0, y1);
      joined.release();
    }
    BOOST_TEST(fs::exists(RunFolder::staging(final_path)), "a joined writer leaves the owner's file in place");
    owner.reopen();
    finish(owner);
  }
  const FieldFile a = FieldFile::open(dir / "one" / "field.h5");
  const FieldFile b = FieldFile::open(dir / "turns" / "field.h5");
  BOOST_TEST(b.geometry().ny == std::size_t(s.ny));
  for (int bucket = 0; bucket < 4; ++bucket)
    for (int c = 0; c < 3; ++c) {
      const std::string name = FieldFile::component_name(bucket, c);
      const auto x = a.component(name), y = b.component(name);
      BOOST_REQUIRE(x.size() == y.size());
      BOOST_TEST(std::memcmp(x.data(), y.data(), x.size() * sizeof(double)) == 0, name << " differs");
    }
  for (const char* name : {"/gamma/mean", "/gamma/count", "/gamma/drain", "/axes/t", "/axes/x", "/axes/y"})
    BOOST_TEST((a.dataset_1d(name) == b.dataset_1d(name)), name << " differs");
  BOOST_TEST(!fs::exists(RunFolder::staging(dir / "turns" / "field.h5")));
}

BOOST_AUTO_TEST_CASE(the_hand_over_is_refused_out_of_order) {
  const auto dir = test::temp_dir("mpi_pixels_misuse");
  const Screen s = small_screen();
  const fs::path final_path = dir / "field.h5";
  // Joining a file no owner created: an I/O error naming it.
  try {
    FieldWriter joined(FieldWriter::Join{}, final_path, s, kUnits, Mode::Split);
    BOOST_FAIL("joined a missing file");
  } catch (const IoError& e) {
    BOOST_TEST(std::string(e.what()).find("field.h5.partial") != std::string::npos, e.what());
  }
  {
    FieldWriter owner(final_path, s, kUnits, fixed_info());
    owner.close_for_others();
    std::vector<double> row(std::size_t(s.nx) * s.samples, 1.0);
    try {
      owner.write_slab(0, 0, 0, 1, row.data());
      BOOST_FAIL("wrote a slab while the file was handed on");
    } catch (const IoError& e) {
      BOOST_TEST(e.id() == "EDM-MPI-010");
    }
    // Another screen's rows: the datasets' shape is not this screen's.
    Screen other = s;
    other.ny = 6;
    try {
      FieldWriter joined(FieldWriter::Join{}, final_path, other, kUnits, Mode::Split);
      BOOST_FAIL("joined a file of another screen");
    } catch (const IoError& e) {
      BOOST_TEST(std::string(e.what()).find("shaped") != std::string::npos, e.what());
    }
    {
      FieldWriter joined(FieldWriter::Join{}, final_path, s, kUnits, Mode::Split);
      try {
        joined.commit();
        BOOST_FAIL("a joined writer committed");
      } catch (const IoError& e) {
        BOOST_TEST(e.id() == "EDM-MPI-010");
      }
    }
    BOOST_TEST(fs::exists(RunFolder::staging(final_path)));
  }  // the owner never committed: its staging file goes
  BOOST_TEST(!fs::exists(RunFolder::staging(final_path)));
  BOOST_TEST(!fs::exists(final_path));
}

namespace {
const char* kCell = R"(
[run]
scenario = "thomson"
mode = "total"
[laser]
profile = "plane_wave"
a0 = 0.8
duration = 8e-15
polarization = "circular_plus"
[electrons]
distribution = "sunflower"
count = 4
radius = 2e-6
[screen]
distance = 0.005
half_width = 3e-5
nx = 4
ny = 3
samples = 128
samples_per_period = 32
)";
}  // namespace

// Rank 1 runs in a mount namespace of its own where a tmpfs covers the run folder: it does not see
// what rank 0 writes there, as a rank on another node with a node-local folder would not. Before the
// check each rank wrote its checkpoints into a folder of its own; now both stop before any work.
BOOST_AUTO_TEST_CASE(a_run_folder_one_rank_cannot_see_is_refused_before_any_work) {
  const auto dir = test::temp_dir("mpi_pixels_shared");
  const auto campaign = test::write_file(dir, "cell.toml", kCell);
  const fs::path out = dir / "out";
  fs::create_directories(out);
  const std::string edm = test::edm_binary().string();
  const std::string args = " run " + campaign.string() + " --quiet --output " + out.string();
  const auto r = test::run_command(
      "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout -k 10 300 " EDM_MPIEXEC
      " --oversubscribe -n 1 " + edm + args + " : -n 1 unshare -m sh -c 'mount -t tmpfs tmpfs " + out.string() +
      " && exec " + edm + args + "'");
  BOOST_TEST_INFO(r.output);
  BOOST_TEST(r.exit_code == 4);
  BOOST_TEST(r.output.find("EDM-MPI-002") != std::string::npos);
  BOOST_TEST(r.output.find("rank 1 on host ") != std::string::npos);
  BOOST_TEST(r.output.find("this is rank 0)") != std::string::npos, "rank 0 reports the refusal");
  BOOST_TEST(r.output.find("this is rank 1)") != std::string::npos, "rank 1 reports the refusal");
  for (const char* name : {"field.h5", "field.h5.partial", "run.toml", ".edm.lock", "checkpoint.h5", ".edm.ranks"})
    BOOST_TEST(!fs::exists(out / name), name << " left in the run folder");

  // The same folder seen by both ranks runs, and leaves no token behind.
  const auto ok = test::run_command("OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout -k 10 300 " EDM_MPIEXEC
                                    " --oversubscribe -n 2 " + edm + args);
  BOOST_REQUIRE_MESSAGE(ok.exit_code == 0, ok.output);
  BOOST_TEST(fs::exists(out / "field.h5"));
  BOOST_TEST(!fs::exists(out / ".edm.ranks"));
}

// ---- Pixel sharding over ranks: a tile of rows and every electron per rank ------------------------
namespace {

const char* kSplitCell = R"(
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
window = "burst"
[accumulator]
electron_batch = 2
devices = "0"
)";

// The cell as the ranks shard it by default (accumulator.sharding auto: pixels, unless there are more
// ranks than rows or [spectra] is enabled).
std::string cell_with(const std::string& more = "") { return kSplitCell + more; }

std::string mpirun(int n) {
  return "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout -k 10 300 " EDM_MPIEXEC " --oversubscribe -n " +
         std::to_string(n) + " ";
}

const char* kDatasets[] = {"/E/x", "/E/y", "/E/z", "/B/x", "/B/y", "/B/z",
                           "/E_far/x", "/E_far/y", "/E_far/z", "/B_far/x", "/B_far/y", "/B_far/z"};

// Every field dataset of `b` is `a`'s bit for bit, and the γ trace is the same.
void check_same_field(const fs::path& a, const fs::path& b) {
  for (const char* name : kDatasets) {
    const auto x = read_field_component(a, name), y = read_field_component(b, name);
    BOOST_REQUIRE(x.size() == y.size());
    BOOST_TEST(std::memcmp(x.data(), y.data(), x.size() * sizeof(double)) == 0, name << " differs from one process");
  }
  for (const char* name : {"/gamma/mean", "/gamma/count", "/gamma/min", "/gamma/drain", "/gamma/drain_electron"})
    BOOST_TEST((read_dataset_1d(a, name) == read_dataset_1d(b, name)), name << " differs");
}

}  // namespace

// mpirun -n 2 (tiles of 3 and 2 rows) and -n 3 (2, 2 and 1: uneven) against one process: every slot
// sees every electron in the one-process order, so the cubes are equal bit for bit (the electron
// sharding before agreed to 1e-12 only), and run.toml [ranks] records the tiles and each rank's RSS.
BOOST_AUTO_TEST_CASE(pixel_sharded_ranks_give_the_one_process_field_bit_for_bit) {
  const auto dir = test::temp_dir("mpi_pixels_bits");
  const auto campaign = test::write_file(dir, "cell.toml", cell_with());
  const std::string edm = test::edm_binary().string();
  const auto one = test::run_command(edm + " run " + campaign.string() + " --quiet --output " + (dir / "one").string());
  BOOST_REQUIRE_MESSAGE(one.exit_code == 0, one.output);
  const std::vector<std::vector<std::string>> tiles = {{"0:3", "3:5"}, {"0:2", "2:4", "4:5"}};
  for (int n : {2, 3}) {
    const fs::path out = dir / ("n" + std::to_string(n));
    const auto r = test::run_command(mpirun(n) + edm + " run " + campaign.string() + " --quiet --output " + out.string());
    BOOST_REQUIRE_MESSAGE(r.exit_code == 0, r.output);
    check_same_field(dir / "one" / "field.h5", out / "field.h5");
    const auto m = toml::parse_file((out / "run.toml").string());
    BOOST_TEST(m["ranks"]["sharding"].value_or(std::string()) == "pixels");
    const auto* rows = m["ranks"]["rows"].as_array();
    BOOST_REQUIRE(rows);
    std::vector<std::string> got;
    for (const auto& v : *rows) got.push_back(v.value_or(std::string()));
    BOOST_TEST(got == tiles[std::size_t(n - 2)], boost::test_tools::per_element());
    BOOST_TEST(m["ranks"]["host_peak_rss"].as_array()->size() == std::size_t(n));
    BOOST_TEST(m["electrons"]["count"].value_or(int64_t(0)) == 6);
    BOOST_TEST(!fs::exists(out / "field.h5.partial"));
  }
}

// SIGTERM to rank 0 of a pixel-sharded mpirun -n 2: both ranks stop at one batch boundary with a
// checkpoint each (rank 1's holds its tile), and `mpirun -n 2 edm resume` gives the one-process field
// bit for bit.
BOOST_AUTO_TEST_CASE(pixel_sharded_ranks_stop_and_resume_bit_identically) {
  const auto dir = test::temp_dir("mpi_pixels_resume");
  std::string cell = cell_with();
  cell.replace(cell.find("count = 6"), 9, "count = 12");
  cell.replace(cell.find("electron_batch = 2"), 18, "electron_batch = 1");
  const auto campaign = test::write_file(dir, "cell.toml", cell);
  const std::string edm = test::edm_binary().string();
  const auto one = test::run_command(edm + " run " + campaign.string() + " --quiet --output " + (dir / "one").string());
  BOOST_REQUIRE_MESSAGE(one.exit_code == 0, one.output);

  const auto part = dir / "part";
  const pid_t sh = test::spawn_shell(mpirun(2) + edm + " run " + campaign.string() +
                                     " --quiet --checkpoint-every -1 --output " + part.string() + " > " +
                                     (dir / "part.log").string() + " 2>&1");
  long rank0 = 0;
  const auto waited = test::wait_until(sh, [&] {
    return fs::exists(part / "field.h5.partial") &&
           std::sscanf(test::slurp(part / ".edm.lock").c_str(), "pid %ld", &rank0) == 1;
  });
  if (waited == test::Waited::Exited) BOOST_FAIL("the run ended before it could be stopped: " << test::slurp(dir / "part.log"));
  kill(pid_t(rank0), SIGTERM);
  const int code = test::wait_exit(sh);
  BOOST_TEST_INFO(test::slurp(dir / "part.log"));
  BOOST_TEST(code != 0);
  BOOST_REQUIRE(fs::exists(part / "checkpoint.h5"));
  BOOST_TEST(fs::exists(part / "checkpoint.g1.r1.h5"), "rank 1's file of the committed generation");
  BOOST_TEST(!fs::exists(part / "field.h5"));

  const auto resumed = test::run_command(mpirun(2) + edm + " resume " + part.string() + " --quiet");
  BOOST_REQUIRE_MESSAGE(resumed.exit_code == 0, resumed.output);
  check_same_field(dir / "one" / "field.h5", part / "field.h5");
  BOOST_TEST(!fs::exists(part / "checkpoint.h5"));
  BOOST_TEST(!fs::exists(part / "checkpoint.g1.r1.h5"));
}

// A stop request while the ranks write their rows in turn (here: rank 0 frozen with SIGSTOP as soon
// as the download begins, its SIGTERM delivered on SIGCONT, so the request lands in its turn, before
// rank 1 may start) is a stop on every rank: exit 130 with EDM-RUN-043, not a failed write
// (EDM-MPI-003, exit 4, which it was), and no field.h5.
BOOST_AUTO_TEST_CASE(a_stop_during_the_rank_ordered_write_is_a_stop_on_every_rank) {
  const auto dir = test::temp_dir("mpi_pixels_stop_write");
  std::string cell = cell_with();
  // One electron and a 26 MB tile per rank: the batch loop is short, each rank's write takes a while.
  cell.replace(cell.find("count = 6"), 9, "count = 1");
  cell.replace(cell.find("nx = 6"), 6, "nx = 64");
  cell.replace(cell.find("ny = 5"), 6, "ny = 8");
  cell.replace(cell.find("samples = 192"), 13, "samples = 8192");
  const auto campaign = test::write_file(dir, "cell.toml", cell);
  const auto out = dir / "out";
  const auto log = dir / "run.log";
  const pid_t sh = test::spawn_shell(mpirun(2) + test::edm_binary().string() + " run " + campaign.string() +
                                     " --output " + out.string() + " > " + log.string() + " 2>&1");
  long rank0 = 0;
  const auto waited = test::wait_until(sh, [&] {
    return test::slurp(log).find("[download]") != std::string::npos &&
           std::sscanf(test::slurp(out / ".edm.lock").c_str(), "pid %ld", &rank0) == 1;
  });
  if (waited == test::Waited::Exited) BOOST_FAIL("the run ended before it could be stopped: " << test::slurp(log));
  BOOST_REQUIRE(waited == test::Waited::Ready);
  kill(pid_t(rank0), SIGSTOP);
  kill(pid_t(rank0), SIGTERM);
  kill(pid_t(rank0), SIGCONT);
  const int code = test::wait_exit(sh);
  const std::string text = test::slurp(log);
  BOOST_TEST_INFO(text);
  BOOST_TEST(code == 130);
  BOOST_TEST(text.find("EDM-RUN-043") != std::string::npos);
  BOOST_TEST(text.find("EDM-MPI-003") == std::string::npos);
  BOOST_TEST(!fs::exists(out / "field.h5"));
}

// More ranks than rows: auto shards the electrons (a tile per rank would leave a rank without a row)
// and says why in run.toml; the field agrees with one process to tol::sharded.
BOOST_AUTO_TEST_CASE(more_ranks_than_pixel_rows_shard_the_electrons) {
  const auto dir = test::temp_dir("mpi_pixels_rows");
  std::string cell = cell_with();
  cell.replace(cell.find("ny = 5"), 6, "ny = 2");
  const auto campaign = test::write_file(dir, "cell.toml", cell);
  const std::string edm = test::edm_binary().string();
  const auto one = test::run_command(edm + " run " + campaign.string() + " --quiet --output " + (dir / "one").string());
  BOOST_REQUIRE_MESSAGE(one.exit_code == 0, one.output);
  const auto a = test::run_command(mpirun(3) + edm + " run " + campaign.string() + " --quiet --output " + (dir / "auto").string());
  BOOST_REQUIRE_MESSAGE(a.exit_code == 0, a.output);
  const auto m = toml::parse_file((dir / "auto" / "run.toml").string());
  BOOST_TEST(m["ranks"]["sharding"].value_or(std::string()) == "electrons");
  BOOST_TEST(m["ranks"]["sharding_reason"].value_or(std::string()).find("more ranks than screen rows (2)") != std::string::npos);
  BOOST_TEST(!m["ranks"]["rows"]);
  for (const char* name : kDatasets)
    BOOST_TEST(test::relative_l2(read_field_component(dir / "auto" / "field.h5", name),
                                 read_field_component(dir / "one" / "field.h5", name)) < test::tol::sharded);
}

// The direct spectra sum every electron: ranks that each took every electron would count each one
// once per rank, so with [spectra] auto shards the electrons, and says why.
BOOST_AUTO_TEST_CASE(ranks_with_direct_spectra_shard_the_electrons) {
  const auto dir = test::temp_dir("mpi_pixels_spectra");
  const auto campaign =
      test::write_file(dir, "cell.toml", test::small_far_cell({.electrons = 4}) + test::small_far_spectra());
  const auto r = test::run_command(mpirun(2) + test::edm_binary().string() + " run " + campaign.string() +
                                   " --quiet --output " + (dir / "out").string());
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  const auto m = toml::parse_file((dir / "out" / "run.toml").string());
  BOOST_TEST(m["ranks"]["sharding"].value_or(std::string()) == "electrons");
  BOOST_TEST(m["ranks"]["sharding_reason"].value_or(std::string()).find("[spectra] enabled") != std::string::npos);
}

namespace {
// The pid of the process that runs `edm` with `marker` on its command line, other than `not_this`
// (0 when none): rank 1 of the job below, found through /proc.
long edm_process_with(const std::string& marker, long not_this) {
  for (const auto& e : fs::directory_iterator("/proc")) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos || std::stol(name) == not_this) continue;
    std::string cmd = test::slurp(e.path() / "cmdline");
    std::replace(cmd.begin(), cmd.end(), '\0', ' ');
    if (cmd.rfind(test::edm_binary().string() + " ", 0) == 0 && cmd.find(marker) != std::string::npos)
      return std::stol(name);
  }
  return 0;
}
}  // namespace

// A rank that dies mid-run (SIGKILL to rank 1, no handler runs): mpirun ends the job; the checkpoint
// generation both ranks committed stands, and `mpirun -n 2 edm resume` takes over the stale lock,
// sets the dead run's field.h5.partial aside and gives the one-process field bit for bit.
BOOST_AUTO_TEST_CASE(a_rank_that_dies_mid_run_leaves_a_run_that_resumes_bit_identically) {
  const auto dir = test::temp_dir("mpi_pixels_killed");
  std::string cell = cell_with();
  cell.replace(cell.find("count = 6"), 9, "count = 24");
  cell.replace(cell.find("electron_batch = 2"), 18, "electron_batch = 1");
  const auto campaign = test::write_file(dir, "cell.toml", cell);
  const std::string edm = test::edm_binary().string();
  const auto one = test::run_command(edm + " run " + campaign.string() + " --quiet --output " + (dir / "one").string());
  BOOST_REQUIRE_MESSAGE(one.exit_code == 0, one.output);

  const auto part = dir / "part";
  const pid_t sh = test::spawn_shell(mpirun(2) + edm + " run " + campaign.string() +
                                     " --quiet --checkpoint-every 1 --output " + part.string() + " > " +
                                     (dir / "part.log").string() + " 2>&1");
  long rank0 = 0, rank1 = 0;
  const auto waited = test::wait_until(sh, [&] {
    if (!fs::exists(part / "checkpoint.h5") || std::sscanf(test::slurp(part / ".edm.lock").c_str(), "pid %ld", &rank0) != 1)
      return false;
    rank1 = edm_process_with(part.string(), rank0);
    return rank1 > 0;
  });
  if (waited == test::Waited::Exited) BOOST_FAIL("the run ended before a rank could be killed: " << test::slurp(dir / "part.log"));
  kill(pid_t(rank1), SIGKILL);
  const int code = test::wait_exit(sh);
  BOOST_TEST_INFO(test::slurp(dir / "part.log"));
  BOOST_TEST(code != 0);
  BOOST_TEST(!fs::exists(part / "field.h5"));
  BOOST_REQUIRE(fs::exists(part / "checkpoint.h5"));

  const auto resumed = test::run_command(mpirun(2) + edm + " resume " + part.string() + " --quiet");
  BOOST_REQUIRE_MESSAGE(resumed.exit_code == 0, resumed.output);
  check_same_field(dir / "one" / "field.h5", part / "field.h5");
  BOOST_TEST(!fs::exists(part / "checkpoint.h5"));
}

// A rank's tile that does not fit its device runs in passes of its own rows (plan_passes over the
// rank's tile): with one bucket capped at two rows (EDM_MAX_DEVICE_ALLOCATION), rank 0's three rows
// take two passes and rank 1's two rows one, and the field is still the one-process field bit for
// bit. Before the tiles and the ranks were joined, the passes were planned over the whole screen and
// each rank would have computed rows outside its tile.
BOOST_AUTO_TEST_CASE(a_ranks_tile_larger_than_its_device_runs_in_passes_of_its_rows) {
  const auto dir = test::temp_dir("mpi_pixels_passes");
  const auto campaign = test::write_file(dir, "cell.toml", cell_with());
  const std::string edm = test::edm_binary().string();
  const auto one = test::run_command(edm + " run " + campaign.string() + " --quiet --output " + (dir / "one").string());
  BOOST_REQUIRE_MESSAGE(one.exit_code == 0, one.output);
  const std::uint64_t row_bucket = 3ull * 6 * 192 * sizeof(double);  // one row of one bucket, bytes
  const auto r = test::run_command("EDM_MAX_DEVICE_ALLOCATION=" + std::to_string(2 * row_bucket + row_bucket / 2) +
                                   " " + mpirun(2) + edm + " run " + campaign.string() + " --quiet --output " +
                                   (dir / "two").string());
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  check_same_field(dir / "one" / "field.h5", dir / "two" / "field.h5");
  const auto m = toml::parse_file((dir / "two" / "run.toml").string());
  BOOST_TEST(m["ranks"]["sharding"].value_or(std::string()) == "pixels");
  BOOST_TEST(m["config"]["passes"].value_or(int64_t(0)) == 2, "rank 0's passes over its 3 rows");
}

// accumulator.sharding is the ranks' too: "pixels" with more ranks than rows is refused before any
// work (EDM-MPI-001), and so is "pixels" for a potential run (EDM-MPI-006), whose ranks shard the
// electrons under "auto".
BOOST_AUTO_TEST_CASE(accumulator_sharding_pixels_is_checked_for_the_ranks) {
  const auto dir = test::temp_dir("mpi_pixels_key");
  const std::string edm = test::edm_binary().string();
  std::string rows2 = cell_with("sharding = \"pixels\"\n");
  rows2.replace(rows2.find("ny = 5"), 6, "ny = 2");
  const auto few = test::write_file(dir, "few.toml", rows2);
  const auto a = test::run_command(mpirun(3) + edm + " run " + few.string() + " --quiet --output " + (dir / "few").string());
  BOOST_TEST(a.exit_code == 2, a.output);
  BOOST_TEST(a.output.find("EDM-MPI-001") != std::string::npos, a.output);
  BOOST_TEST(!fs::exists(dir / "few" / "field.h5"));

  std::string pot = cell_with();
  pot.replace(pot.find("mode = \"split\""), 14, "mode = \"potential\"");
  const auto auto_pot = test::write_file(dir, "pot.toml", pot);
  const auto b = test::run_command(mpirun(2) + edm + " run " + auto_pot.string() + " --quiet --output " + (dir / "pot").string());
  BOOST_REQUIRE_MESSAGE(b.exit_code == 0, b.output);
  const auto m = toml::parse_file((dir / "pot" / "run.toml").string());
  BOOST_TEST(m["ranks"]["sharding"].value_or(std::string()) == "electrons");
  // The reduced potential is the one-process potential, to the reduce's rounding.
  const auto one = test::run_command(edm + " run " + auto_pot.string() + " --quiet --output " + (dir / "pot1").string());
  BOOST_REQUIRE_MESSAGE(one.exit_code == 0, one.output);
  const auto fa = edm::FieldFile::open(dir / "pot" / "field.h5"), fb = edm::FieldFile::open(dir / "pot1" / "field.h5");
  for (int comp = 0; comp < 4; ++comp) {
    std::vector<double> a, b;
    fa.read_potential_rows(comp, 0, fa.geometry().ny, a);
    fb.read_potential_rows(comp, 0, fb.geometry().ny, b);
    BOOST_TEST(test::relative_l2(a, b) < test::tol::sharded, edm::FieldFile::potential_name(comp));
  }
  const auto pixels_pot = test::write_file(dir, "pot_pixels.toml", pot + "sharding = \"pixels\"\n");
  const auto c = test::run_command(mpirun(2) + edm + " run " + pixels_pot.string() + " --quiet --output " +
                                   (dir / "pot_pixels").string());
  BOOST_TEST(c.exit_code == 2, c.output);
  BOOST_TEST(c.output.find("EDM-MPI-006") != std::string::npos, c.output);
  BOOST_TEST(!fs::exists(dir / "pot_pixels" / "field.h5"));
}
