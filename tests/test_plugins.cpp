// ctest-label: unit
// The plugin runtime: discovery and two-phase loading against fixture plugins (tests/fixtures),
// failure reasons for each kind of bad file, duplicate names, unknown scenarios, creating a
// scenario from a validated campaign, and the `edm plugins` / `edm schema` commands. The C boundary
// (ABI 2): the campaign accessors' answers, the SDK's rebuild of the campaign from the C view, a
// plain-C plugin that reads only the accessors, and the refusal of a plugin built for ABI 1.
#define BOOST_TEST_MODULE plugins
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "campaign_support.hpp"
#include "edm/error.hpp"
#include "edm/plugin_sdk.hpp"
#include "edm/plugins.hpp"
#include "test_support.hpp"

namespace fs = std::filesystem;
using edm::PluginRegistry;

namespace {

const fs::path kFixtures = EDM_FIXTURE_PLUGIN_DIR;
const fs::path kAbiFixtures = EDM_FIXTURE_ABI_DIR;  // fixture_c (plain C, ABI 2) and fixture_abi1

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
  BOOST_TEST(abi->reason == "wrong ABI version 7 (this edm speaks 2)");
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
  BOOST_TEST(contains(r.output, "fixture_wrong_abi.edmplugin: wrong ABI version 7 (this edm speaks 2)"), r.output);
  BOOST_TEST(contains(r.output, "fixture_no_symbol.edmplugin: not a plugin: no symbol edm_plugin_query"));
  BOOST_TEST(contains(r.output, "x.edmplugin: cannot load"));

  const auto j = edm::test::run_command(with_plugin_path(edm::test::edm_binary().string() + " plugins --json"));
  BOOST_TEST(j.exit_code == 0, j.output);
  BOOST_TEST(contains(j.output, "{\"name\": \"fixture_good\", \"version\": \"1.2.3\""), j.output);
  BOOST_TEST(contains(j.output, "\"reason\": \"wrong ABI version 7 (this edm speaks 2)\""), j.output);
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

// The accessors of the C campaign view, key by key: values of each type, the plugin's own section
// with its defaults, every return code, and the string protocol (needed size, too short, exact fit).
BOOST_AUTO_TEST_CASE(campaign_view_accessors) {
  const auto reg = PluginRegistry::from_paths({kFixtures});
  const auto keys = reg.get("fixture_good").keys();
  const auto c = edm::parse_campaign(
      "[run]\nscenario = \"fixture_good\"\n[laser]\nwavelength = 1.03e-6\n[screen]\nnx = 7\n"
      "allow_clipping = true\n[accumulator]\nelectron_batch = \"auto\"\n[fixture_good]\ncount = 3\n",
      "view.toml", {}, keys, false);
  const edm::CampaignView view(c);
  const edm_campaign_v2& v = *view.get();
  BOOST_TEST(v.struct_size == sizeof(edm_campaign_v2));
  BOOST_TEST(std::string(v.scenario) == "fixture_good");
  BOOST_TEST(std::string(v.campaign_file).empty());  // parsed from text: no file
  double d = 0;
  std::int64_t i = 0;
  int b = -1;
  BOOST_TEST(v.get_double(v.ctx, "laser.wavelength", &d) == EDM_KEY_OK);
  BOOST_TEST(d == 1.03e-6);
  BOOST_TEST(v.get_double(v.ctx, "laser.a0", &d) == EDM_KEY_OK);
  BOOST_TEST(d == 0.1);  // the default, present like every core key
  BOOST_TEST(v.get_int(v.ctx, "screen.nx", &i) == EDM_KEY_OK);
  BOOST_TEST(i == 7);
  BOOST_TEST(v.get_double(v.ctx, "screen.nx", &d) == EDM_KEY_OK);  // an integer read as a double
  BOOST_TEST(d == 7.0);
  BOOST_TEST(v.get_bool(v.ctx, "screen.allow_clipping", &b) == EDM_KEY_OK);
  BOOST_TEST(b == 1);
  BOOST_TEST(v.get_int(v.ctx, "fixture_good.count", &i) == EDM_KEY_OK);
  BOOST_TEST(i == 3);
  BOOST_TEST(v.get_double(v.ctx, "fixture_good.spacing", &d) == EDM_KEY_OK);
  BOOST_TEST(d == 1.0);  // the plugin's declared default, filled in by the host
  // Failures leave the output alone.
  d = -7;
  BOOST_TEST(v.get_double(v.ctx, "laser.wavelenght", &d) == EDM_KEY_UNKNOWN);
  BOOST_TEST(v.get_double(v.ctx, "lasers.wavelength", &d) == EDM_KEY_UNKNOWN);
  BOOST_TEST(v.get_double(v.ctx, "laser", &d) == EDM_KEY_UNKNOWN);
  BOOST_TEST(v.get_double(v.ctx, "laser.", &d) == EDM_KEY_UNKNOWN);
  BOOST_TEST(v.get_int(v.ctx, "laser.direction", &i) == EDM_KEY_UNKNOWN);  // left to the scenario
  BOOST_TEST(v.get_double(v.ctx, "run.scenario", &d) == EDM_KEY_WRONG_TYPE);
  BOOST_TEST(v.get_int(v.ctx, "laser.a0", &i) == EDM_KEY_WRONG_TYPE);
  BOOST_TEST(v.get_bool(v.ctx, "screen.nx", &b) == EDM_KEY_WRONG_TYPE);
  BOOST_TEST(v.get_int(v.ctx, "accumulator.electron_batch", &i) == EDM_KEY_WRONG_TYPE);  // "auto"
  BOOST_TEST(d == -7.0);
  BOOST_TEST(v.get_double(v.ctx, nullptr, &d) == EDM_KEY_BAD_ARGUMENT);
  BOOST_TEST(v.get_double(v.ctx, "laser.a0", nullptr) == EDM_KEY_BAD_ARGUMENT);

  char buf[32] = "untouched";
  std::size_t needed = 0;
  BOOST_TEST(v.get_string(v.ctx, "run.scenario", buf, 12, &needed) == EDM_KEY_BUFFER_TOO_SHORT);
  BOOST_TEST(needed == 13u);  // "fixture_good" and its NUL
  BOOST_TEST(buf[0] == '\0');
  BOOST_TEST(v.get_string(v.ctx, "run.scenario", nullptr, 0, &needed) == EDM_KEY_BUFFER_TOO_SHORT);
  BOOST_TEST(needed == 13u);
  BOOST_TEST(v.get_string(v.ctx, "run.scenario", buf, 13, &needed) == EDM_KEY_OK);
  BOOST_TEST(std::string(buf) == "fixture_good");
  BOOST_TEST(v.get_string(v.ctx, "accumulator.electron_batch", buf, sizeof buf, nullptr) == EDM_KEY_OK);
  BOOST_TEST(std::string(buf) == "auto");
  BOOST_TEST(v.get_string(v.ctx, "screen.nx", buf, sizeof buf, &needed) == EDM_KEY_WRONG_TYPE);
  BOOST_TEST(v.get_string(v.ctx, "screen.nope", buf, sizeof buf, &needed) == EDM_KEY_UNKNOWN);
}

// The SDK rebuilds the plugin's edm::Campaign from the C view alone, and it is the host's campaign:
// every key (the effective TOML of both is the same text), the plugin's section, the file name.
BOOST_AUTO_TEST_CASE(sdk_rebuilds_the_campaign_from_the_c_view) {
  const auto reg = PluginRegistry::from_paths({kFixtures});
  const auto keys = reg.get("fixture_good").keys();
  const fs::path dir = edm::test::temp_dir("plugin-view");
  {
    std::ofstream(dir / "beam.csv") << "0,0,0,0,0,0,1\n1e-15,1e-6,0,0,0.1,0,2\n";
    std::ofstream(dir / "c.toml") << R"(
[run]
scenario = "fixture_good"
mode = "split"
seed = 7
[laser]
profile = "laguerre_gauss"
wavelength = 1.03e-6
a0 = 0.3
p = 1
m = -2
phase = 0.1
direction = -1
[electrons]
distribution = "list"
file = "beam.csv"
[trajectory]
model = "landau_lifshitz"
knots_per_period = 24
[screen]
distance = -1e9
half_width = 0.0123
window = "explicit"
t_start = 1.234567890123e-9
[accumulator]
electron_batch = "auto"
devices = "0,1"
[fixture_good]
field = 0.25
)";
  }
  const auto c = edm::load_campaign(dir / "c.toml", {{"screen.ny", "5"}}, keys, false);
  const edm::CampaignView view(c);
  const edm::Campaign rebuilt = edm::sdk::campaign_from_c(view.get());
  auto print = [](const edm::Campaign& x) {
    std::ostringstream os;
    os << x.to_toml();
    return os.str();
  };
  BOOST_TEST(print(rebuilt) == print(c));
  BOOST_TEST(rebuilt.file == c.file);
  BOOST_TEST(rebuilt.screen.ny == 5);
  BOOST_TEST(rebuilt.laser.direction == -1);
  BOOST_TEST(rebuilt.screen.t_start == 1.234567890123e-9);
  BOOST_TEST(fs::equivalent(rebuilt.electrons.file, dir / "beam.csv"));
  BOOST_TEST(rebuilt.scenario_section["field"].value_or(0.0) == 0.25);
  BOOST_TEST(rebuilt.scenario_section["count"].value_or<std::int64_t>(0) == 2);  // the plugin's default
  // A view of another layout is refused by the SDK, not misread.
  edm_campaign_v2 old = *view.get();
  old.struct_size = 8;
  BOOST_CHECK_EXCEPTION(edm::sdk::campaign_from_c(&old), edm::PluginError,
                        [](const edm::PluginError& e) { return e.id() == "EDM-PLG-040"; });
}

// A plain-C plugin (no libedm, no C++) reads everything it needs through the accessors; its create
// checks the accessor protocol step by step and would refuse the campaign naming a wrong answer.
BOOST_AUTO_TEST_CASE(a_plain_c_plugin_reads_the_campaign_through_the_accessors) {
  const auto reg = PluginRegistry::from_paths({kAbiFixtures});
  const auto& plugin = reg.get("fixture_c");
  const auto c = edm::parse_campaign("[run]\nscenario = \"fixture_c\"\n[laser]\na0 = 0.25\n[fixture_c]\ncount = 3\n"
                                     "spacing = 0.5\n",
                                     "c.toml", {}, plugin.keys(), false);
  edm::Scenario s(plugin, c);
  BOOST_TEST(s.electron_count() == 3u);
  double y[8], E[3], B[3];
  s.initial_state(2, y);
  BOOST_TEST(y[1] == 1.0);  // spacing 0.5 × index 2
  BOOST_TEST(y[4] == 1.0);
  const double x4[4] = {0, 0, 0, 0};
  s.laser_field(x4, E, B);
  BOOST_TEST(E[0] == 0.25);  // laser.a0 through get_double
  BOOST_CHECK_THROW(s.initial_state(3, y), edm::PhysicsError);

  const auto zero = edm::parse_campaign("[run]\nscenario = \"fixture_c\"\n[fixture_c]\ncount = 0\n", "c.toml", {},
                                        plugin.keys(), false);
  try {
    edm::Scenario refused(plugin, zero);
    BOOST_FAIL("count = 0 must be refused by the plugin");
  } catch (const edm::PluginError& e) {
    BOOST_TEST(contains(e.what(), "refused the campaign: count must be >= 1, got 0"), e.what());
  }
}

// A plugin built for ABI 1 (create took the host's C++ edm::Campaign) is refused from its version
// field, before anything of it runs, with the usual reason, by the loader and by `edm plugins`.
BOOST_AUTO_TEST_CASE(an_abi1_plugin_is_refused) {
  const auto reg = PluginRegistry::from_paths({kAbiFixtures});
  BOOST_TEST(reg.plugins().size() == 1u);  // fixture_c
  BOOST_REQUIRE_EQUAL(reg.failures().size(), 1u);
  const auto* abi1 = failure_for(reg, "fixture_abi1_plugin.edmplugin");
  BOOST_REQUIRE(abi1);
  BOOST_TEST(abi1->reason == "wrong ABI version 1 (this edm speaks 2)");
  BOOST_CHECK_THROW(reg.get("fixture_abi1"), edm::PluginError);

  const auto r = edm::test::run_command("EDM_PLUGIN_PATH='" + kAbiFixtures.string() + "' " +
                                        edm::test::edm_binary().string() + " plugins");
  BOOST_TEST(r.exit_code == 0, r.output);
  BOOST_TEST(contains(r.output, "fixture_c  2.0"), r.output);
  BOOST_TEST(contains(r.output, "fixture_abi1_plugin.edmplugin: wrong ABI version 1 (this edm speaks 2)"), r.output);
  BOOST_TEST(contains(r.output, "loads plugins of ABI version 2"), r.output);
  const auto j = edm::test::run_command("EDM_PLUGIN_PATH='" + kAbiFixtures.string() + "' " +
                                        edm::test::edm_binary().string() + " plugins --json");
  BOOST_TEST(contains(j.output, "\"abi_version\": 2"), j.output);
  BOOST_TEST(contains(j.output, "\"reason\": \"wrong ABI version 1 (this edm speaks 2)\""), j.output);
}
