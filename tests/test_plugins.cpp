// ctest-label: unit
// The plugin runtime: discovery and two-phase loading against fixture plugins (tests/fixtures),
// failure reasons for each kind of bad file, duplicate names, unknown scenarios, creating a
// scenario from a validated campaign, and the `edm plugins` / `edm schema` commands.
#define BOOST_TEST_MODULE plugins
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "edm/error.hpp"
#include "edm/plugins.hpp"
#include "test_support.hpp"

namespace edm {
// Boost.Test prints values of failed checks.
inline std::ostream& operator<<(std::ostream& os, Origin o) { return os << origin_name(o); }
}  // namespace edm

namespace fs = std::filesystem;
using edm::PluginRegistry;

namespace {

const fs::path kFixtures = EDM_FIXTURE_PLUGIN_DIR;

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

const edm::PluginFailure* failure_for(const PluginRegistry& reg, const std::string& file_name) {
  for (const auto& f : reg.failures())
    if (f.path.filename() == file_name) return &f;
  return nullptr;
}

std::string with_plugin_path(const std::string& cmd) {
  return "EDM_PLUGIN_PATH='" + kFixtures.string() + "' " + cmd;
}

}  // namespace

BOOST_AUTO_TEST_CASE(loads_the_good_plugin_and_reports_each_bad_one) {
  const auto reg = PluginRegistry::from_paths({kFixtures});
  BOOST_REQUIRE_EQUAL(reg.plugins().size(), 1u);
  const auto& p = *reg.plugins().front();
  BOOST_TEST(p.name() == "fixture_good");
  BOOST_TEST(p.path().filename() == "fixture_good.edmplugin");  // found one folder deep
  BOOST_TEST(std::string(p.descriptor().version) == "1.2.3");
  BOOST_TEST(p.models() == std::vector<std::string>{"lorentz"});
  const auto keys = p.keys();
  BOOST_REQUIRE_EQUAL(keys.size(), 3u);
  BOOST_TEST(keys[0].section == "fixture_good");
  BOOST_TEST(keys[0].key == "count");
  BOOST_TEST(keys[2].type == "float");

  BOOST_TEST(reg.failures().size() == 5u);
  const auto* keys_bad = failure_for(reg, "fixture_bad_keys.edmplugin");
  BOOST_REQUIRE(keys_bad);
  BOOST_TEST(keys_bad->reason == "descriptor of 'fixture_bad_keys': key 'gain' has type 'double' (int, float, string or bool)");
  const auto* abi = failure_for(reg, "fixture_wrong_abi.edmplugin");
  BOOST_REQUIRE(abi);
  BOOST_TEST(abi->reason == "wrong ABI version 7 (this edm speaks 1)");
  const auto* nosym = failure_for(reg, "fixture_no_symbol.edmplugin");
  BOOST_REQUIRE(nosym);
  BOOST_TEST(nosym->reason == "not a plugin: no symbol edm_plugin_query");
  const auto* text = failure_for(reg, "x.edmplugin");
  BOOST_REQUIRE(text);
  BOOST_TEST(contains(text->reason, "cannot load"));
  BOOST_TEST(contains(text->reason, "x.edmplugin"));  // dlerror() names the file
  const auto* dup = failure_for(reg, "fixture_duplicate.edmplugin");
  BOOST_REQUIRE(dup);
  BOOST_TEST(contains(dup->reason, "duplicate scenario 'fixture_good'"));
  BOOST_TEST(contains(dup->reason, p.path().string()));           // the one that won
  BOOST_TEST(contains(dup->reason, "zz_duplicate/fixture_duplicate.edmplugin"));  // the one ignored
}

BOOST_AUTO_TEST_CASE(a_file_reached_twice_is_loaded_once) {
  // The same folder through two entries (EDM_PLUGIN_PATH = build folder) must not be a duplicate.
  const auto reg = PluginRegistry::from_paths({kFixtures, kFixtures / "good", kFixtures / "good" / "fixture_good.edmplugin"});
  BOOST_TEST(reg.plugins().size() == 1u);
  BOOST_TEST(reg.failures().size() == 5u);
}

BOOST_AUTO_TEST_CASE(files_deeper_than_one_folder_are_not_searched) {
  const auto reg = PluginRegistry::from_paths({kFixtures.parent_path()});
  for (const auto& p : reg.plugins()) BOOST_TEST(p->name() != "fixture_good");
}

BOOST_AUTO_TEST_CASE(unknown_scenario_lists_what_is_available) {
  const auto reg = PluginRegistry::from_paths({kFixtures});
  try {
    reg.get("fixture_godo");
    BOOST_FAIL("get() of an unknown scenario must throw");
  } catch (const edm::PluginError& e) {
    const std::string m = e.what();
    BOOST_TEST(e.id() == "EDM-PLG-001");
    BOOST_TEST(contains(m, "unknown scenario 'fixture_godo'"));
    BOOST_TEST(contains(m, "did you mean 'fixture_good'?"));
    BOOST_TEST(contains(m, "available: fixture_good"));
    BOOST_TEST(contains(m, "wrong ABI version 7"));  // failures are listed too
    BOOST_TEST(e.exit_code() == 5);
  }
  BOOST_TEST(reg.get("fixture_good").name() == "fixture_good");
}

BOOST_AUTO_TEST_CASE(discover_reads_edm_plugin_path_first) {
  // Empty entries are skipped; "dir/" and "dir" are one entry.
  ::setenv("EDM_PLUGIN_PATH", ("/nonexistent/a::" + kFixtures.string() + "/:" + kFixtures.string()).c_str(), 1);
  const auto path = PluginRegistry::default_search_path();
  BOOST_REQUIRE_GE(path.size(), 2u);
  BOOST_TEST(path[0] == fs::path("/nonexistent/a"));
  BOOST_TEST(path[1] == kFixtures);
  BOOST_TEST(std::count(path.begin(), path.end(), kFixtures) == 1);
  const auto reg = PluginRegistry::discover();
  BOOST_TEST(reg.get("fixture_good").path().parent_path().filename() == "good");
  ::unsetenv("EDM_PLUGIN_PATH");
}

BOOST_AUTO_TEST_CASE(scenario_from_a_validated_campaign) {
  const auto reg = PluginRegistry::from_paths({kFixtures});
  const auto& plugin = reg.get("fixture_good");
  const std::string text = R"(
[run]
scenario = "fixture_good"
[fixture_good]
count = 3
field = 0.5
)";
  const auto c = edm::parse_campaign(text, "fixture.toml", {}, plugin.keys(), false);
  // The plugin's default fills the key the file did not write.
  BOOST_TEST(c.scenario_section["spacing"].value_or(-1.0) == 1.0);
  BOOST_TEST(c.origins.at("fixture_good.count") == edm::Origin::File);
  BOOST_TEST(c.origins.at("fixture_good.spacing") == edm::Origin::Default);

  edm::Scenario s(plugin, c);
  BOOST_TEST(s.electron_count() == 3u);
  BOOST_TEST(s.laser_direction() == 1);
  double y[8], dy[8];
  s.initial_state(2, y);
  BOOST_TEST(y[1] == 2.0);  // spacing 1 × index 2
  BOOST_TEST(y[4] == 1.0);  // at rest: γ = 1
  // A moving state: the force keeps u·u = 1 (γ dγ − u_x du_x = 0).
  const double u[8] = {0, 0, 0, 0, std::sqrt(1.25), 0.5, 0, 0};
  s.rhs(0.0, u, dy);
  BOOST_TEST(dy[5] == -0.5 * std::sqrt(1.25));
  BOOST_TEST(u[4] * dy[4] - u[5] * dy[5] == 0.0, boost::test_tools::tolerance(1e-15));
  BOOST_CHECK_THROW(s.initial_state(3, y), edm::PhysicsError);

  // Overrides reach plugin keys through --set fixture_good.key=…, typed by the plugin's spec.
  const auto c2 = edm::parse_campaign(text, "fixture.toml", {{"fixture_good.count", "5"}}, plugin.keys(), false);
  BOOST_TEST(edm::Scenario(plugin, c2).electron_count() == 5u);
  BOOST_TEST(c2.origins.at("fixture_good.count") == edm::Origin::CommandLine);
}

BOOST_AUTO_TEST_CASE(plugin_section_is_validated_by_core) {
  const auto reg = PluginRegistry::from_paths({kFixtures});
  const auto keys = reg.get("fixture_good").keys();
  const std::string bad_key = "[run]\nscenario = \"fixture_good\"\n[fixture_good]\ncuont = 3\n";
  try {
    edm::parse_campaign(bad_key, "p.toml", {}, keys, false);
    BOOST_FAIL("unknown plugin key must throw");
  } catch (const edm::ConfigError& e) {
    const std::string m = e.what();
    BOOST_TEST(contains(m, "p.toml:4:1: [fixture_good] cuont"), m);
    BOOST_TEST(contains(m, "did you mean 'count'?"), m);
  }
  const std::string bad_type = "[run]\nscenario = \"fixture_good\"\n[fixture_good]\nfield = \"strong\"\n";
  try {
    edm::parse_campaign(bad_type, "p.toml", {}, keys, false);
    BOOST_FAIL("wrong type must throw");
  } catch (const edm::ConfigError& e) {
    BOOST_TEST(contains(e.what(), "p.toml:4:9: [fixture_good] field: expected a number"), e.what());
  }
}

BOOST_AUTO_TEST_CASE(a_plugin_refusing_the_campaign_is_a_plugin_error) {
  const auto reg = PluginRegistry::from_paths({kFixtures});
  const auto& plugin = reg.get("fixture_good");
  const auto c = edm::parse_campaign("[run]\nscenario = \"fixture_good\"\n[fixture_good]\ncount = 0\n", "p.toml", {},
                                     plugin.keys(), false);
  try {
    edm::Scenario s(plugin, c);
    BOOST_FAIL("count = 0 must be refused by the plugin");
  } catch (const edm::PluginError& e) {
    BOOST_TEST(contains(e.what(), "refused the campaign: count must be >= 1, got 0"), e.what());
  }
}

BOOST_AUTO_TEST_CASE(edm_plugins_lists_plugins_and_failures) {
  const auto r = edm::test::run_command(with_plugin_path(edm::test::edm_binary().string() + " plugins"));
  BOOST_TEST(r.exit_code == 0, r.output);
  BOOST_TEST(contains(r.output, "fixture_good  1.2.3"), r.output);
  BOOST_TEST(contains(r.output, "electrons in a static field"));
  BOOST_TEST(contains(r.output, "models:      lorentz"));
  BOOST_TEST(contains(r.output, "fixture_wrong_abi.edmplugin: wrong ABI version 7 (this edm speaks 1)"), r.output);
  BOOST_TEST(contains(r.output, "fixture_no_symbol.edmplugin: not a plugin: no symbol edm_plugin_query"));
  BOOST_TEST(contains(r.output, "x.edmplugin: cannot load"));

  const auto j = edm::test::run_command(with_plugin_path(edm::test::edm_binary().string() + " plugins --json"));
  BOOST_TEST(j.exit_code == 0, j.output);
  BOOST_TEST(contains(j.output, "{\"name\": \"fixture_good\", \"version\": \"1.2.3\""), j.output);
  BOOST_TEST(contains(j.output, "\"reason\": \"wrong ABI version 7 (this edm speaks 1)\""), j.output);
}

BOOST_AUTO_TEST_CASE(edm_schema_prints_core_and_plugin_keys) {
  const auto bin = edm::test::edm_binary().string();
  const auto r = edm::test::run_command(bin + " schema");
  BOOST_TEST(r.exit_code == 0, r.output);
  BOOST_TEST(contains(r.output, "[screen]"));
  BOOST_TEST(contains(r.output, "screen.nx"));
  BOOST_TEST(contains(r.output, "accumulator.electron_batch"));
  BOOST_TEST(contains(r.output, "{sunflower | gaussian | list}"));

  const auto p = edm::test::run_command(with_plugin_path(bin + " schema fixture_good"));
  BOOST_TEST(p.exit_code == 0, p.output);
  BOOST_TEST(contains(p.output, "[fixture_good]"), p.output);
  BOOST_TEST(contains(p.output, "fixture_good.spacing"), p.output);

  const auto u = edm::test::run_command(with_plugin_path(bin + " schema no_such_scenario"));
  BOOST_TEST(u.exit_code == 5, u.output);
  BOOST_TEST(contains(u.output, "EDM-PLG-001"), u.output);
  BOOST_TEST(contains(u.output, "available: fixture_good"), u.output);
}
