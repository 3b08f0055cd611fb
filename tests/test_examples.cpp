// ctest-label: e2e
// Every example campaign in share/campaigns runs through the edm binary (on a reduced screen and
// ensemble, so the suite stays small on 2 CPU cores) and leaves field.h5 and run.toml — the
// examples are what a new user tries first, and a relative CSV path once broke one of them.
#define BOOST_TEST_MODULE examples
#include <boost/test/unit_test.hpp>

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
