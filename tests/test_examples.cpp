// ctest-label: e2e
// Every example campaign in share/campaigns runs through the edm binary (on a reduced screen and
// ensemble, so the suite stays small on 2 CPU cores) and leaves field.h5 and run.toml — the
// examples are what a new user tries first, and a relative CSV path once broke one of them.
#define BOOST_TEST_MODULE examples
#include <boost/test/unit_test.hpp>

#include <toml++/toml.h>

#include "test_support.hpp"

namespace fs = std::filesystem;

BOOST_AUTO_TEST_CASE(every_example_campaign_runs) {
  const fs::path dir = edm::test::source_dir() / "share" / "campaigns";
  const auto out = edm::test::temp_dir("examples");
  int n = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() != ".toml") continue;
    ++n;
    const fs::path run = out / entry.path().stem();
    const auto r = edm::test::run_command(edm::test::edm_binary().string() + " run " + entry.path().string() +
                                          " --quiet --output " + run.string() +
                                          " --set screen.nx=5 --set screen.ny=5 --set electrons.count=2"
                                          " --set screen.samples=256");
    BOOST_TEST_MESSAGE(entry.path().filename().string() << " → exit " << r.exit_code);
    BOOST_TEST(r.exit_code == 0, entry.path().filename().string() << ": " << r.output);
    BOOST_TEST(fs::exists(run / "field.h5"), entry.path().filename().string());
    BOOST_TEST(fs::exists(run / "run.toml"), entry.path().filename().string());
  }
  BOOST_TEST(n >= 4);
}

// Every example keeps the promises its comments make about the window: run on a 5 × 5 screen with
// the campaign's own time axis (samples, sampling, extent) and at most 16 electrons, it warns about
// nothing, and run.toml says the trajectories cover the window, the burst's light is inside it at
// every pixel, corners too, and the retarded-time roots converge. thomson_lg.toml promised "every
// pixel's pulse inside the window, corners too" while its run recorded 128 cut electrons.
BOOST_AUTO_TEST_CASE(every_example_keeps_its_window_promises) {
  const fs::path dir = edm::test::source_dir() / "share" / "campaigns";
  const auto out = edm::test::temp_dir("examples_window");
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() != ".toml") continue;
    const std::string name = entry.path().filename().string();
    const toml::table c = toml::parse_file(entry.path().string());
    std::string sets = " --set screen.nx=5 --set screen.ny=5";
    if (const auto n = c["electrons"]["count"].value<int64_t>(); n && *n > 16) sets += " --set electrons.count=16";
    const fs::path run = out / entry.path().stem();
    const auto r = edm::test::run_command(edm::test::edm_binary().string() + " run " + entry.path().string() +
                                          " --quiet --output " + run.string() + sets + " 2>&1");
    BOOST_TEST(r.exit_code == 0, name << ": " << r.output);
    BOOST_TEST(r.output.find("warning:") == std::string::npos, name << ": " << r.output);
    if (r.exit_code != 0) continue;
    const toml::table m = toml::parse_file((run / "run.toml").string());
    BOOST_TEST(m["window"]["covered"].value_or(false), name);
    BOOST_TEST(m["window"]["burst_in_window"].value_or(false), name << ": the burst's light is cut or missed");
    BOOST_TEST(m["window"]["roots_converged"].value_or(true), name);
    // The spectra a run computes from its samples need the whole emission span's light.
    if (c["spectra"]["enabled"].value_or(false) && c["spectra"]["method"].value_or(std::string("auto")) != "direct")
      BOOST_TEST(m["window"]["emission_in_window"].value_or(false), name << ": the emission's light is cut");
  }
}
