// ctest-label: e2e
// Two stops and leftovers of issue 13: the dry run's probe solve honours a stop request, and the
// rank checkpoint files of an mpirun job killed before its first commit are moved aside by the next
// run into the folder, never written over or removed (share/docs/outputs.md, "One run per folder").
// A stop during the first solve writes a checkpoint without the (all-zero) cube and spectra sums,
// from which `edm resume` gives the uninterrupted run's field.h5 and /direct bit for bit; such a
// checkpoint that says electrons were done is refused (share/docs/outputs.md, "Checkpoints").
#define BOOST_TEST_MODULE stop_extras
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <fstream>
#include <sstream>

#include <hdf5.h>

#include <cstring>

#include "edm/campaign.hpp"
#include "edm/checkpoint.hpp"
#include "edm/error.hpp"
#include "edm/plugins.hpp"
#include "edm/run.hpp"
#include "edm/writer.hpp"
#include "h5_read.hpp"
#include "spawn.hpp"
#include "test_support.hpp"

namespace fs = std::filesystem;
using namespace edm;

namespace {

const std::string kCell = test::small_cell({.electrons = 4,
                                                  .screen = "half_width = 5e-5\nnx = 4\nny = 4\nsamples = 128\n",
                                                  .electron_batch = "",
                                                  .trajectory_lines = "knots_per_period = 16\npadding = 4.0\n"});

struct Recorder : RunObserver {
  std::vector<std::string> warnings;
  void warning(const std::string& m) override { warnings.push_back(m); }
};

Campaign cell(const fs::path& out) {
  const auto registry = PluginRegistry::discover();
  return parse_campaign(kCell, "cell.toml", {{"run.output", "\"" + out.string() + "\"", Origin::CommandLine}},
                        registry.get("inverse_thomson").keys(), false);
}

// Sets the stop flag, as the app's SIGINT handler does, when the first batch's solve begins (the
// "trajectories" phase comes just before it): the stop lands inside the first solve.
struct StopAtFirstSolve : RunObserver {
  std::atomic<bool>* stop = nullptr;
  void phase(const std::string& name, const std::string&) override {
    if (name == "trajectories") stop->store(true);
  }
};

// A cube far larger than everything else a checkpoint holds: 16 × 16 pixels × 1024 samples × 6
// components of doubles, 12 MiB (share/docs/outputs.md, "Checkpoints").
constexpr std::uint64_t kBigCubeBytes = 16ull * 16 * 1024 * 6 * 8;
const std::string kBigCell =
    test::small_cell({.electrons = 4,
                      .screen = "half_width = 5e-5\nnx = 16\nny = 16\nsamples = 1024\n",
                      .electron_batch = "",
                      .trajectory_lines = "knots_per_period = 16\npadding = 4.0\n"});
// The small angular cell at infinity with its direct spectra (as tests/test_spectra_plumb.cpp).
std::string spectra_cell() {
  return test::small_far_cell({.electrons = 4, .electron_batch = "2"}) + test::small_far_spectra("direct");
}

Campaign parsed(const std::string& text, const fs::path& out) {
  const auto registry = PluginRegistry::discover();
  return parse_campaign(text, "cell.toml", {{"run.output", "\"" + out.string() + "\"", Origin::CommandLine}},
                        registry.get("inverse_thomson").keys(), false);
}

// Runs `text` into `full` uninterrupted, then into `part` stopped in its first solve; the id the
// stopped run ended with.
std::string stop_in_first_solve(const std::string& text, const fs::path& full, const fs::path& part) {
  const auto registry = PluginRegistry::discover();
  RunObserver quiet;
  run_campaign(parsed(text, full), registry, RunOptions{}, quiet);
  std::atomic<bool> stop{false};
  StopAtFirstSolve observer;
  observer.stop = &stop;
  RunOptions ro;
  ro.stop = &stop;
  try {
    run_campaign(parsed(text, part), registry, ro, observer);
  } catch (const Interrupted& e) {
    return e.id();
  }
  return "";
}

std::string resume_in_process(const std::string& text, const fs::path& part) {
  const auto registry = PluginRegistry::discover();
  RunObserver quiet;
  RunOptions again;
  again.resume = true;
  try {
    run_campaign(parsed(text, part), registry, again, quiet);
  } catch (const Error& e) {
    return e.id();
  }
  return "";
}

bool has_link(const fs::path& file, const char* name) {
  const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  BOOST_REQUIRE(f >= 0);
  const bool has = H5Lexists(f, name, H5P_DEFAULT) > 0;
  H5Fclose(f);
  return has;
}

void set_attr_u64(const fs::path& file, const char* name, std::uint64_t v) {
  const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  BOOST_REQUIRE(f >= 0);
  const hid_t a = H5Aopen(f, name, H5P_DEFAULT);
  BOOST_REQUIRE(a >= 0);
  BOOST_REQUIRE(H5Awrite(a, H5T_NATIVE_UINT64, &v) >= 0);
  H5Aclose(a);
  H5Fclose(f);
}

void expect_same_field(const fs::path& a, const fs::path& b) {
  for (const char* name : {"/E/x", "/E/y", "/E/z", "/B/x", "/B/y", "/B/z"}) {
    const auto x = read_field_component(a / "field.h5", name);
    const auto y = read_field_component(b / "field.h5", name);
    BOOST_TEST(x.size() == y.size());
    BOOST_TEST(std::memcmp(x.data(), y.data(), x.size() * sizeof(double)) == 0, name << " differs after resume");
  }
  for (const char* name : {"/gamma/mean", "/gamma/max", "/gamma/drain"})
    BOOST_TEST(test::h5_raw(a / "field.h5", name) == test::h5_raw(b / "field.h5", name), name << " differs after resume");
}

std::string read_all(const fs::path& p) {
  std::ifstream f(p);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

}  // namespace

BOOST_AUTO_TEST_CASE(the_dry_run_probe_honours_a_stop_request) {
  const auto registry = PluginRegistry::discover();
  std::atomic<bool> stop{true};
  RunOptions ro;
  ro.dry_run = true;
  ro.stop = &stop;
  Recorder rec;
  bool interrupted = false;
  try {
    run_campaign(cell(test::temp_dir("probe_stop") / "run"), registry, ro, rec);
  } catch (const Interrupted&) {
    interrupted = true;
  }
  BOOST_TEST(interrupted);
}

BOOST_AUTO_TEST_CASE(rank_files_of_a_job_killed_before_its_first_commit_are_moved_aside) {
  const fs::path out = test::temp_dir("rank_leftovers") / "run";
  fs::create_directories(out);
  for (const char* name : {"checkpoint.g1.r1.h5", "checkpoint.g1.r2.h5"}) {
    std::ofstream f(out / name);
    f << "not this run's: " << name;
  }
  const auto registry = PluginRegistry::discover();
  Recorder rec;
  run_campaign(cell(out), registry, RunOptions{}, rec);
  BOOST_TEST(fs::exists(out / "field.h5"));
  for (const std::string name : {"checkpoint.g1.r1.h5", "checkpoint.g1.r2.h5"}) {
    BOOST_TEST(!fs::exists(out / name));
    int kept = 0;
    for (const auto& e : fs::directory_iterator(out)) {
      const std::string n = e.path().filename().string();
      if (n.rfind(name + ".", 0) == 0) {
        ++kept;
        BOOST_TEST(read_all(e.path()) == "not this run's: " + name);
      }
    }
    BOOST_TEST(kept == 1, name << " kept " << kept << " times");
    bool warned = false;
    for (const auto& w : rec.warnings) warned = warned || w.find(name) != std::string::npos;
    BOOST_TEST(warned);
  }
}

BOOST_AUTO_TEST_CASE(a_stop_in_the_first_solve_checkpoints_no_cube_and_resumes_from_zero) {
  const fs::path dir = test::temp_dir("first_solve_stop");
  const fs::path full = dir / "full", part = dir / "part";
  BOOST_REQUIRE_EQUAL(stop_in_first_solve(kBigCell, full, part), "EDM-RUN-010");
  const fs::path file = checkpoint_path(part);
  const CheckpointState st = read_checkpoint_state(file);
  BOOST_TEST(st.next_electron == 0u);
  BOOST_TEST(!st.cube);
  BOOST_TEST(!has_link(file, "cube_d0_b0"), "the zero cube is not saved");
  BOOST_TEST(fs::file_size(file) < kBigCubeBytes / 100, "checkpoint of " << fs::file_size(file) << " bytes");
  BOOST_REQUIRE_EQUAL(resume_in_process(kBigCell, part), "");
  BOOST_TEST(!fs::exists(file));
  expect_same_field(full, part);
}

BOOST_AUTO_TEST_CASE(a_spectra_run_stopped_in_its_first_solve_resumes_to_the_same_direct_spectra) {
  const fs::path dir = test::temp_dir("first_solve_spectra");
  const fs::path full = dir / "full", part = dir / "part";
  const std::string text = spectra_cell();
  BOOST_REQUIRE_EQUAL(stop_in_first_solve(text, full, part), "EDM-RUN-010");
  BOOST_TEST(!has_link(checkpoint_path(part), "spectra"), "no spectra sums of no electron");
  BOOST_REQUIRE_EQUAL(resume_in_process(text, part), "");
  expect_same_field(full, part);
  for (const char* name : {"/direct/coherent_amplitude", "/direct/incoherent/d2W_domega_dOmega"})
    BOOST_TEST(test::h5_raw(full / "spectrum.h5", name) == test::h5_raw(part / "spectrum.h5", name), name);
}

// Stops the run as its second batch's solve begins: a checkpoint of the first batch, with its cube.
struct StopAtSecondSolve : RunObserver {
  std::atomic<bool>* stop = nullptr;
  int solves = 0;
  void phase(const std::string& name, const std::string&) override {
    if (name == "trajectories" && ++solves == 2) stop->store(true);
  }
};

// A checkpoint written before cube_saved (a cube, no such attribute) resumes as before.
BOOST_AUTO_TEST_CASE(a_checkpoint_from_before_cube_saved_resumes_with_its_cube) {
  const fs::path dir = test::temp_dir("cube_saved_absent");
  const std::string text = test::small_cell({.electrons = 4, .electron_batch = "2"});
  const auto registry = PluginRegistry::discover();
  RunObserver quiet;
  run_campaign(parsed(text, dir / "full"), registry, RunOptions{}, quiet);
  std::atomic<bool> stop{false};
  StopAtSecondSolve observer;
  observer.stop = &stop;
  RunOptions ro;
  ro.stop = &stop;
  BOOST_CHECK_THROW(run_campaign(parsed(text, dir / "part"), registry, ro, observer), Interrupted);
  const fs::path file = checkpoint_path(dir / "part");
  BOOST_REQUIRE_EQUAL(read_checkpoint_state(file).next_electron, 2u);
  BOOST_TEST(has_link(file, "cube_d0_b0"));
  {
    const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
    BOOST_REQUIRE(f >= 0);
    BOOST_REQUIRE(H5Adelete(f, "cube_saved") >= 0);
    H5Fclose(f);
  }
  BOOST_TEST(read_checkpoint_state(file).cube);
  BOOST_REQUIRE_EQUAL(resume_in_process(text, dir / "part"), "");
  expect_same_field(dir / "full", dir / "part");
}

// A checkpoint without a cube is one of no electron done: one that says otherwise is refused.
BOOST_AUTO_TEST_CASE(a_checkpoint_without_a_cube_that_claims_electrons_is_refused) {
  const fs::path dir = test::temp_dir("first_solve_odd");
  const std::string text = spectra_cell();
  BOOST_REQUIRE_EQUAL(stop_in_first_solve(text, dir / "full", dir / "part"), "EDM-RUN-010");
  const fs::path saved = dir / "saved.h5";
  fs::copy_file(checkpoint_path(dir / "part"), saved);
  set_attr_u64(checkpoint_path(dir / "part"), "next_electron", 2);
  BOOST_TEST(resume_in_process(text, dir / "part") == "EDM-CKP-070");
  fs::copy_file(saved, checkpoint_path(dir / "part"), fs::copy_options::overwrite_existing);
  set_attr_u64(checkpoint_path(dir / "part"), "cube_saved", 2);
  BOOST_TEST(resume_in_process(text, dir / "part") == "EDM-CKP-070");
}
