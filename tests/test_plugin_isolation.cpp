// ctest-label: e2e
// Plugins cannot take edm down (issue 13, item 5): with a plugin whose constructor aborts and one
// whose query returns a wild pointer on EDM_PLUGIN_PATH, `edm run` of another scenario completes
// (only its own plugin is opened, found by its descriptor file), `edm plugins` reports both as load
// failures (each probed in a forked child) and exits 0, and a run asking for a scenario no plugin
// has lists them among the failures with exit 5. An installed edm looks in its own folders first.
// A crashing library with a `.scenario` file beside it is probed too: a run of the scenario it names
// is EDM-PLG-002 (exit 5) naming it, never edm's crash, and a run served by a good copy further on
// warns about it.
#define BOOST_TEST_MODULE plugin_isolation
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iterator>
#include <string>

#include "edm/plugins.hpp"
#include "test_support.hpp"

namespace fs = std::filesystem;
namespace test = edm::test;

namespace {

const fs::path kCrash = EDM_FIXTURE_CRASH_DIR;

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// The crashing fixtures ahead of the real plugins on the search path.
test::CommandResult run_edm(const std::string& args) {
  const std::string path = kCrash.string() + ":" + (test::build_dir() / "plugins").string();
  return test::run_command("EDM_PLUGIN_PATH=" + path + " timeout 120 " + test::edm_binary().string() + " " + args);
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_crashing_plugin_does_not_stop_a_run_of_another_scenario) {
  BOOST_TEST_REQUIRE(fs::exists(kCrash / "fixture_abort_ctor.edmplugin"));
  BOOST_TEST_REQUIRE(fs::exists(kCrash / "fixture_wild_query.edmplugin"));
  const auto dir = test::temp_dir("isolation");
  const auto r = run_edm("run " + (test::source_dir() / "share/campaigns/quickstart.toml").string() +
                         " --quiet --output " + (dir / "run").string() +
                         " --set screen.nx=4 --set screen.ny=4 --set screen.samples=32 --set electrons.count=2");
  BOOST_TEST(r.exit_code == 0, "exit " << r.exit_code << ": " << r.output);
  BOOST_TEST(fs::exists(dir / "run" / "field.h5"));
}

BOOST_AUTO_TEST_CASE(edm_plugins_reports_crashes_as_load_failures) {
  const auto r = run_edm("plugins");
  BOOST_TEST(r.exit_code == 0, "exit " << r.exit_code << ": " << r.output);
  BOOST_TEST(contains(r.output, "inverse_thomson"), r.output);
  BOOST_TEST(contains(r.output, "fixture_abort_ctor.edmplugin: crashed while loading or querying it (SIGABRT)"),
             r.output);
  BOOST_TEST(contains(r.output, "fixture_wild_query.edmplugin: crashed while loading or querying it (SIGSEGV)"),
             r.output);
}

BOOST_AUTO_TEST_CASE(an_unknown_scenario_lists_the_crashed_plugins) {
  const auto dir = test::temp_dir("isolation_unknown");
  const auto r = run_edm("run " + (test::source_dir() / "share/campaigns/quickstart.toml").string() +
                         " --quiet --output " + (dir / "run").string() + " --set run.scenario=no_such_scenario");
  BOOST_TEST(r.exit_code == 5, "exit " << r.exit_code << ": " << r.output);
  BOOST_TEST(contains(r.output, "[EDM-PLG-001]"), r.output);
  BOOST_TEST(contains(r.output, "available: "), r.output);
  BOOST_TEST(contains(r.output, "thomson"), r.output);  // known from the descriptor files
  BOOST_TEST(contains(r.output, "crashed while loading or querying it (SIGABRT)"), r.output);
  BOOST_TEST(contains(r.output, "crashed while loading or querying it (SIGSEGV)"), r.output);
}

namespace {

// The two crashing fixtures copied into a folder of their own, each with a descriptor file naming
// the scenario given (as edm_add_plugin writes it): edm trusted such a file and opened the library
// in its own process, so a run of that scenario died of SIGSEGV / SIGABRT without a message.
fs::path crash_with_descriptors(const std::string& tag, const std::string& wild_query_names,
                                const std::string& abort_ctor_names) {
  const fs::path dir = test::temp_dir(tag) / "plgx";
  fs::create_directories(dir);
  const std::pair<std::string, std::string> libs[] = {{"fixture_wild_query", wild_query_names},
                                                      {"fixture_abort_ctor", abort_ctor_names}};
  for (const auto& [lib, scenario] : libs) {
    fs::copy_file(kCrash / (lib + ".edmplugin"), dir / (lib + ".edmplugin"));
    std::ofstream(dir / (lib + ".edmplugin.scenario")) << scenario << "\n";
  }
  return dir;
}

test::CommandResult run_quickstart(const fs::path& plugin_path, const fs::path& out, const std::string& sets) {
  return test::run_command("EDM_PLUGIN_PATH=" + plugin_path.string() + " timeout 120 " +
                           test::edm_binary().string() + " run " +
                           (test::source_dir() / "share/campaigns/quickstart.toml").string() + " --quiet --output " +
                           out.string() + " " + sets);
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_crashing_plugin_named_by_its_scenario_file_is_a_load_failure) {
  const fs::path dir = crash_with_descriptors("isolation_descriptor", "evil", "evil2");
  const std::string path = dir.string() + ":" + (test::build_dir() / "plugins").string();
  const struct {
    std::string scenario, library, signal;
  } cases[] = {{"evil", "fixture_wild_query.edmplugin", "SIGSEGV"}, {"evil2", "fixture_abort_ctor.edmplugin", "SIGABRT"}};
  for (const auto& c : cases) {
    const auto r = run_quickstart(path, dir.parent_path() / ("run_" + c.scenario), "--set run.scenario=" + c.scenario);
    BOOST_TEST(r.exit_code == 5, c.scenario << ": exit " << r.exit_code << ": " << r.output);
    BOOST_TEST(contains(r.output, "[EDM-PLG-002]"), r.output);
    BOOST_TEST(contains(r.output, (dir / c.library).string()), r.output);
    BOOST_TEST(contains(r.output, "crashed while loading or querying it (" + c.signal + ")"), r.output);
  }
}

BOOST_AUTO_TEST_CASE(a_crashing_copy_of_a_scenario_ahead_of_a_good_one_is_skipped_with_a_warning) {
  const fs::path dir = crash_with_descriptors("isolation_shadow", "inverse_thomson", "thomson");
  const fs::path out = dir.parent_path() / "run";
  const auto r = run_quickstart(dir.string() + ":" + (test::build_dir() / "plugins").string(), out,
                                "--set screen.nx=4 --set screen.ny=4 --set screen.samples=32 --set electrons.count=2");
  BOOST_TEST(r.exit_code == 0, "exit " << r.exit_code << ": " << r.output);
  BOOST_TEST(fs::exists(out / "field.h5"));
  BOOST_TEST(contains(r.output, "warning: skipped " + (dir / "fixture_wild_query.edmplugin").string()), r.output);
  BOOST_TEST(contains(r.output, "(SIGSEGV)"), r.output);
}

// A second good copy of the scenario after the first (a build and an install folder on the path)
// printed "warning: skipped … duplicate scenario" on every run: the first copy wins in silence.
BOOST_AUTO_TEST_CASE(a_second_good_copy_of_a_scenario_is_passed_over_in_silence) {
  const fs::path dir = test::temp_dir("isolation_twice");
  fs::copy(test::build_dir() / "plugins", dir / "copy", fs::copy_options::recursive);
  const fs::path out = dir / "run";
  const auto r = run_quickstart((test::build_dir() / "plugins").string() + ":" + (dir / "copy").string(), out,
                                "--set screen.nx=4 --set screen.ny=4 --set screen.samples=32 --set electrons.count=2");
  BOOST_TEST(r.exit_code == 0, "exit " << r.exit_code << ": " << r.output);
  BOOST_TEST(fs::exists(out / "field.h5"));
  BOOST_TEST(!contains(r.output, "skipped"), r.output);
}

// Under mpirun every rank forked its plugin probes after MPI_Init, which some MPI transports do not
// survive. main now probes the search path before MPI_Init (probe_search_path) and the commands'
// discover() reuses each verdict: no second open of a library it has judged, unless the library
// changed since (another size or modification time).
BOOST_AUTO_TEST_CASE(probed_libraries_are_not_probed_again_until_they_change) {
  const fs::path dir = test::temp_dir("isolation_probe_once");
  const fs::path lib = dir / "plugins" / "load_log.edmplugin";
  fs::create_directories(lib.parent_path());
  fs::copy_file(fs::path(EDM_FIXTURE_LOG_DIR) / "fixture_load_log.edmplugin", lib);
  const fs::path log = dir / "opens.log";
  setenv("EDM_FIXTURE_LOAD_LOG", log.c_str(), 1);
  setenv("EDM_PLUGIN_PATH", lib.parent_path().c_str(), 1);
  const auto opens = [&] {
    std::ifstream in(log);
    return std::count(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>(), '\n');
  };
  const auto failure_of_lib = [&](const edm::PluginRegistry& reg) {
    return std::any_of(reg.failures().begin(), reg.failures().end(),
                       [&](const auto& f) { return contains(f.path.string(), "load_log"); });
  };
  edm::PluginRegistry::probe_search_path();
  BOOST_TEST(opens() == 1);  // one probe, in a child
  BOOST_TEST(failure_of_lib(edm::PluginRegistry::discover()));
  BOOST_TEST(failure_of_lib(edm::PluginRegistry::discover("inverse_thomson")));
  BOOST_TEST(opens() == 1, "discover() probed a library already judged");
  fs::last_write_time(lib, fs::last_write_time(lib) + std::chrono::seconds(5));  // a rebuilt library
  BOOST_TEST(failure_of_lib(edm::PluginRegistry::discover()));
  BOOST_TEST(opens() == 2);
  unsetenv("EDM_FIXTURE_LOAD_LOG");
  unsetenv("EDM_PLUGIN_PATH");
}

BOOST_AUTO_TEST_CASE(the_executables_own_folders_come_before_the_compiled_in_ones) {
  ::unsetenv("EDM_PLUGIN_PATH");
  const auto path = edm::PluginRegistry::default_search_path();
  // This test runs from build/tests: its own install-layout folder is build/lib/edm/plugins.
  const fs::path own = (test::build_dir() / "lib" / "edm" / "plugins").lexically_normal();
  const auto at = std::find(path.begin(), path.end(), own);
  BOOST_TEST_REQUIRE((at != path.end()));
  // Every entry outside the build tree (the compiled-in install folder) comes after it.
  const std::string build = test::build_dir().lexically_normal().string();
  for (auto it = path.begin(); it != path.end(); ++it)
    if (it->string().rfind(build, 0) != 0) BOOST_TEST((it > at), it->string() << " is searched before " << own);
}
