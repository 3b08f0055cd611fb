// ctest-label: e2e
// Two stops and leftovers of issue 13: the dry run's probe solve honours a stop request, and the
// rank checkpoint files of an mpirun job killed before its first commit are moved aside by the next
// run into the folder, never written over or removed (share/docs/outputs.md, "One run per folder").
#define BOOST_TEST_MODULE stop_extras
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <fstream>
#include <sstream>

#include "edm/campaign.hpp"
#include "edm/error.hpp"
#include "edm/plugins.hpp"
#include "edm/run.hpp"
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
