// ctest-label: unit
// Campaign files and the schema: every malformed-campaign case gives a ConfigError that names
// file:line:col (or the option / environment variable) and the problem; precedence
// default < file < environment < command line with recorded origins; to_toml replays exactly; the
// schema's defaults equal the struct defaults; `--set` parsing.
#define BOOST_TEST_MODULE campaign
#include <boost/test/unit_test.hpp>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "campaign_support.hpp"
#include "edm/campaign.hpp"
#include "edm/error.hpp"
#include "edm/schema.hpp"
#include "options.hpp"
#include "test_support.hpp"

namespace fs = std::filesystem;
using edm::Origin;
using edm::Override;

namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

using edm::test::CleanEnvironment;

// The ConfigError message of parsing `text`, or "" if it parsed.
std::string error_of(const std::string& text, const std::vector<Override>& overrides = {}, std::string* id = nullptr) {
  try {
    edm::parse_campaign(text, "bad.toml", overrides, {}, false);
  } catch (const edm::ConfigError& e) {
    if (id) *id = e.id();
    return e.what();
  }
  return "";
}

void write_file(const fs::path& p, const std::string& text) {
  std::ofstream(p) << text;
}

std::string print(const toml::table& t) {
  std::ostringstream os;
  os << t;
  return os.str();
}

}  // namespace

BOOST_AUTO_TEST_CASE(malformed_campaigns) {
  CleanEnvironment clean;
  struct Case {
    const char* what;
    std::string text;
    std::string id;
    std::vector<std::string> expected;  // all must appear in the message
  };
  const std::vector<Case> cases = {
      {"syntax error", "[screen]\nnx = = 3\n", "EDM-CFG-001", {"bad.toml:2:", "syntax error"}},
      {"unterminated string", "[run]\noutput = \"runs/x\n", "EDM-CFG-001", {"bad.toml:2:", "syntax error"}},
      {"unknown key", "[screen]\nnx = 8\nnxx = 3\n", "EDM-CFG-004",
       {"bad.toml:3:1: [screen] nxx: unknown key (did you mean 'nx'?)"}},
      {"misspelt long key", "[laser]\nwavelenght = 1e-6\n", "EDM-CFG-004",
       {"bad.toml:2:1: [laser] wavelenght: unknown key (did you mean 'wavelength'?)"}},
      {"unknown key, nothing close", "[screen]\ncolour = 3\n", "EDM-CFG-004", {"bad.toml:2:1: [screen] colour: unknown key"}},
      {"unknown section", "[screan]\nnx = 3\n", "EDM-CFG-003",
       {"bad.toml:1:", "[screan]: unknown section (did you mean 'screen'?)"}},
      {"top-level key", "nx = 3\n", "EDM-CFG-003", {"bad.toml:1:1:", "nx", "outside any section"}},
      {"section not a table", "screen = 5\n", "EDM-CFG-005", {"bad.toml:1:1:", "must be a table"}},
      {"string for an int", "[screen]\nnx = \"64\"\n", "EDM-CFG-005",
       {"bad.toml:2:6: [screen] nx: expected an integer, got a string (\"64\")"}},
      {"float for an int", "[screen]\nny = 64.0\n", "EDM-CFG-005", {"bad.toml:2:6: [screen] ny: expected an integer, got a float"}},
      {"string for a float", "[laser]\na0 = \"big\"\n", "EDM-CFG-005", {"bad.toml:2:6: [laser] a0: expected a number"}},
      {"string for a bool", "[accumulator]\ncoef_reuse = \"yes\"\n", "EDM-CFG-005",
       {"bad.toml:2:14: [accumulator] coef_reuse: expected true or false"}},
      {"negative count", "[electrons]\ncount = -4\n", "EDM-CFG-006", {"bad.toml:2:9: [electrons] count: must be >= 1, got -4"}},
      {"zero count", "[electrons]\ncount = 0\n", "EDM-CFG-006", {"[electrons] count: must be >= 1, got 0"}},
      {"nx = 0", "[screen]\nnx = 0\n", "EDM-CFG-006", {"bad.toml:2:6: [screen] nx: must be >= 1, got 0"}},
      {"ny negative", "[screen]\nny = -64\n", "EDM-CFG-006", {"bad.toml:2:6: [screen] ny: must be >= 1"}},
      {"samples = 0", "[screen]\nsamples = 0\n", "EDM-CFG-006", {"[screen] samples: must be >= 1"}},
      {"samples_per_period = 0", "[screen]\nsamples_per_period = 0\n", "EDM-CFG-006",
       {"[screen] samples_per_period: must be >= 1"}},
      {"knots_per_period = 0", "[trajectory]\nknots_per_period = 0\n", "EDM-CFG-006",
       {"bad.toml:2:20: [trajectory] knots_per_period: must be >= 2"}},
      {"newton_iters = 0", "[accumulator]\nnewton_iters = 0\n", "EDM-CFG-006", {"[accumulator] newton_iters: must be >= 1"}},
      {"sample_chunks < 0", "[accumulator]\nsample_chunks = -1\n", "EDM-CFG-006",
       {"[accumulator] sample_chunks: must be >= 0, got -1"}},
      {"int too large", "[screen]\nnx = 10000000000\n", "EDM-CFG-006", {"bad.toml:2:6: [screen] nx", "out of range"}},
      {"negative wavelength", "[laser]\nwavelength = -8e-7\n", "EDM-CFG-006", {"bad.toml:2:14: [laser] wavelength: must be > 0"}},
      {"zero duration", "[laser]\nduration = 0.0\n", "EDM-CFG-006", {"[laser] duration: must be > 0"}},
      {"zero waist", "[laser]\nwaist = 0\n", "EDM-CFG-006", {"[laser] waist: must be > 0"}},
      {"screen at distance 0", "[screen]\ndistance = 0.0\n", "EDM-CFG-006", {"bad.toml:2:12: [screen] distance: must not be 0"}},
      {"direction 2", "[laser]\ndirection = 2\n", "EDM-CFG-006", {"[laser] direction: must be +1 or -1, got 2"}},
      {"NaN", "[laser]\nwavelength = nan\n", "EDM-CFG-007", {"bad.toml:2:14: [laser] wavelength:", "nan", "finite"}},
      {"Inf", "[screen]\ndistance = -inf\n", "EDM-CFG-007", {"bad.toml:2:12: [screen] distance:", "inf", "finite"}},
      {"unknown choice", "[electrons]\ndistribution = \"sunflwer\"\n", "EDM-CFG-008",
       {"bad.toml:2:16: [electrons] distribution: 'sunflwer' is not one of sunflower, gaussian, list (did you mean "
        "'sunflower'?)"}},
      {"unknown mode", "[run]\nmode = \"splitt\"\n", "EDM-CFG-008", {"[run] mode: 'splitt' is not one of total, split", "'split'?"}},
      {"electron_batch word", "[accumulator]\nelectron_batch = \"many\"\n", "EDM-CFG-008",
       {"bad.toml:2:18: [accumulator] electron_batch:", "\"auto\""}},
      {"missing CSV", "[electrons]\ndistribution = \"list\"\nfile = \"no_such_electrons.csv\"\n", "EDM-CFG-009",
       {"bad.toml:3:8: [electrons] file:", "'no_such_electrons.csv' not found"}},
      {"list without file", "[electrons]\ndistribution = \"list\"\n", "EDM-CFG-009",
       {"bad.toml:2:16: [electrons] file:", "needs"}},
      {"tracks without file", "[trajectory]\nmodel = \"tracks\"\n", "EDM-CFG-009", {"[trajectory] file:", "track file"}},
      {"empty scenario", "[run]\nscenario = \"\"\n", "EDM-CFG-012", {"bad.toml:2:12: [run] scenario: must name a scenario"}},
      {"another scenario's section", "[run]\nscenario = \"thomson\"\n[inverse_thomson]\nx = 1\n", "EDM-CFG-003",
       {"bad.toml:3:", "[inverse_thomson]: unknown section", "[thomson]"}},
      {"plugin key without plugin keys", "[run]\nscenario = \"thomson\"\n[thomson]\nfoo = 1\n", "EDM-CFG-004",
       {"bad.toml:4:1: [thomson] foo: unknown key of scenario 'thomson'"}},
  };
  for (const auto& c : cases) {
    BOOST_TEST_CONTEXT(c.what) {
      std::string id;
      const std::string m = error_of(c.text, {}, &id);
      BOOST_TEST(!m.empty(), "should have been refused");
      BOOST_TEST(id == c.id, m);
      for (const auto& e : c.expected) BOOST_TEST(contains(m, e), "'" << e << "' not in: " << m);
    }
  }
}

BOOST_AUTO_TEST_CASE(bad_overrides_name_the_option_or_variable) {
  CleanEnvironment clean;
  std::string m = error_of("", {{"screen.nx", "abc"}});
  BOOST_TEST(contains(m, "--set screen.nx=abc: [screen] nx: expected an integer, got 'abc'"), m);
  m = error_of("", {{"screen.nxx", "3"}});
  BOOST_TEST(contains(m, "--set screen.nxx=3: [screen] nxx: unknown key (did you mean 'nx'?)"), m);
  m = error_of("", {{"screen.nx", "0"}});
  BOOST_TEST(contains(m, "--set screen.nx=0: [screen] nx: must be >= 1"), m);
  m = error_of("", {{"screen", "3"}});
  BOOST_TEST(contains(m, "expected section.key=value"), m);
  m = error_of("", {{"scren.nx", "3"}});
  BOOST_TEST(contains(m, "[scren] nx: unknown section (did you mean 'screen'?)"), m);
  m = error_of("", {{"laser.wavelength", "nan"}});
  BOOST_TEST(contains(m, "--set laser.wavelength=nan: [laser] wavelength:"), m);
  BOOST_TEST(contains(m, "finite"), m);

  ::setenv("EDM_NEWTON_ITERS", "abc", 1);
  try {
    edm::parse_campaign("", "bad.toml", {}, {}, true);
    BOOST_FAIL("a bad environment value must throw");
  } catch (const edm::ConfigError& e) {
    BOOST_TEST(contains(e.what(), "environment EDM_NEWTON_ITERS=abc: [accumulator] newton_iters: expected an integer"),
               e.what());
  }
  ::setenv("EDM_NEWTON_ITERS", "0", 1);
  try {
    edm::parse_campaign("", "bad.toml", {}, {}, true);
    BOOST_FAIL("newton_iters = 0 from the environment must throw");
  } catch (const edm::ConfigError& e) {
    BOOST_TEST(contains(e.what(), "EDM_NEWTON_ITERS=0"), e.what());
  }
  ::unsetenv("EDM_NEWTON_ITERS");
  // Ignored entirely when the caller says so.
  ::setenv("EDM_SAMPLE_CHUNKS", "x", 1);
  BOOST_CHECK_NO_THROW(edm::parse_campaign("", "ok.toml", {}, {}, false));
  ::unsetenv("EDM_SAMPLE_CHUNKS");
}

BOOST_AUTO_TEST_CASE(precedence_default_file_environment_command_line) {
  CleanEnvironment clean;
  const std::string text = "[accumulator]\nnewton_iters = 5\nelectron_batch = 100\n[screen]\nnx = 32\n";
  auto c = edm::parse_campaign(text, "p.toml", {}, {}, true);
  BOOST_TEST(c.accumulator.newton_iters == 5);
  BOOST_TEST(c.origins.at("accumulator.newton_iters") == Origin::File);
  BOOST_TEST(c.screen.ny == 64);
  BOOST_TEST(c.origins.at("screen.ny") == Origin::Default);

  ::setenv("EDM_NEWTON_ITERS", "3", 1);
  ::setenv("EDM_ELECTRON_BATCH", "auto", 1);
  ::setenv("EDM_DEVICE", "1", 1);
  ::setenv("EDM_COEF_REUSE", "0", 1);
  ::setenv("EDM_ELECTRON_BATCH_OVERLAP", "off", 1);
  ::setenv("EDM_SAMPLE_CHUNKS", "4", 1);
  c = edm::parse_campaign(text, "p.toml", {}, {}, true);
  BOOST_TEST(c.accumulator.newton_iters == 3);
  BOOST_TEST(c.origins.at("accumulator.newton_iters") == Origin::Environment);
  BOOST_TEST(c.accumulator.electron_batch == -1);  // "auto"
  BOOST_TEST(c.accumulator.devices == "1");
  BOOST_TEST(c.origins.at("accumulator.devices") == Origin::Environment);
  BOOST_TEST(!c.accumulator.coef_reuse);
  BOOST_TEST(!c.accumulator.batch_overlap);
  BOOST_TEST(c.accumulator.sample_chunks == 4);

  // The command line beats the environment, whatever order the overrides arrive in.
  c = edm::parse_campaign(text, "p.toml",
                          {{"accumulator.newton_iters", "7"}, {"accumulator.newton_iters", "9", Origin::Environment},
                           {"screen.nx", "128"}, {"accumulator.electron_batch", "16"}},
                          {}, true);
  BOOST_TEST(c.accumulator.newton_iters == 7);
  BOOST_TEST(c.origins.at("accumulator.newton_iters") == Origin::CommandLine);
  BOOST_TEST(c.screen.nx == 128);
  BOOST_TEST(c.origins.at("screen.nx") == Origin::CommandLine);
  BOOST_TEST(c.accumulator.electron_batch == 16);
  BOOST_TEST(c.origins.at("accumulator.electron_batch") == Origin::CommandLine);
  BOOST_TEST(c.accumulator.devices == "1");  // untouched by the command line: environment still wins over file
  for (const char* v : {"EDM_NEWTON_ITERS", "EDM_ELECTRON_BATCH", "EDM_DEVICE", "EDM_COEF_REUSE",
                        "EDM_ELECTRON_BATCH_OVERLAP", "EDM_SAMPLE_CHUNKS"})
    ::unsetenv(v);

  // Every schema key has an origin (half_width is an alias recorded as its two targets).
  for (const auto& k : edm::core_schema()) {
    if (k.key == "half_width") continue;
    BOOST_TEST(c.origins.count(k.section + "." + k.key) == 1u, k.section + "." + k.key);
  }
}

BOOST_AUTO_TEST_CASE(half_width_sets_both_and_the_specific_key_wins) {
  CleanEnvironment clean;
  auto c = edm::parse_campaign("[screen]\nhalf_width_y = 3e-3\nhalf_width = 1e-3\n", "h.toml", {}, {}, false);
  BOOST_TEST(c.screen.half_width_x == 1e-3);
  BOOST_TEST(c.screen.half_width_y == 3e-3);
  c = edm::parse_campaign("", "h.toml", {{"screen.half_width", "5e-3"}}, {}, false);
  BOOST_TEST(c.screen.half_width_x == 5e-3);
  BOOST_TEST(c.screen.half_width_y == 5e-3);
  BOOST_TEST(c.origins.at("screen.half_width_y") == Origin::CommandLine);
}

BOOST_AUTO_TEST_CASE(csv_is_found_relative_to_the_campaign) {
  CleanEnvironment clean;
  const fs::path dir = edm::test::temp_dir("campaign-csv");
  write_file(dir / "beam.csv", "t0,x,y,z,ux,uy,uz\n0,0,0,0,0,0,1\n");
  write_file(dir / "c.toml", "[electrons]\ndistribution = \"list\"\nfile = \"beam.csv\"\n");
  const auto c = edm::load_campaign(dir / "c.toml", {}, {}, false);
  BOOST_TEST(fs::equivalent(c.electrons.file, dir / "beam.csv"));
  BOOST_TEST(c.file == dir / "c.toml");
  // The same relative name from another folder's campaign is missing, and the message says where it looked.
  const fs::path other = edm::test::temp_dir("campaign-csv-other");
  write_file(other / "c.toml", "[electrons]\ndistribution = \"list\"\nfile = \"beam.csv\"\n");
  try {
    edm::load_campaign(other / "c.toml", {}, {}, false);
    BOOST_FAIL("missing CSV must throw");
  } catch (const edm::ConfigError& e) {
    BOOST_TEST(contains(e.what(), (other / "c.toml").string() + ":3:8: [electrons] file:"), e.what());
    BOOST_TEST(contains(e.what(), (other / "beam.csv").string()), e.what());
  }
  BOOST_CHECK_THROW(edm::load_campaign(other / "absent.toml", {}, {}, false), edm::ConfigError);
}

BOOST_AUTO_TEST_CASE(to_toml_replays_the_campaign) {
  CleanEnvironment clean;
  const fs::path dir = edm::test::temp_dir("campaign-replay");
  write_file(dir / "beam.csv", "0,0,0,0,0,0,1\n");
  write_file(dir / "c.toml", R"(
[run]
scenario = "my_scenario"
output = "runs/replay"
mode = "split"
seed = 42
[laser]
profile = "laguerre_gauss"
wavelength = 1.03e-6
a0 = 0.3
duration = 26.7e-15
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
nx = 3
samples_per_period = 777
window = "explicit"
t_start = 1.234567890123e-9
allow_clipping = true
[accumulator]
electron_batch = "auto"
coef_reuse = false
devices = "0,1"
[my_scenario]
gamma_spread = 0.25
label = "run one"
)");
  const std::vector<edm::KeySpec> pkeys = {{"my_scenario", "gamma_spread", "float", "", "0.0", "spread"},
                                           {"my_scenario", "label", "string", "", "\"\"", "a label"},
                                           {"my_scenario", "repeat", "int", "", "3", "repeats"}};
  const auto a = edm::load_campaign(dir / "c.toml", {{"screen.ny", "5"}}, pkeys, false);
  const std::string first = print(a.to_toml());
  const auto b = edm::parse_campaign(first, "replay.toml", {}, pkeys, false);
  BOOST_TEST(print(b.to_toml()) == first);
  // Spot checks that the replay carries the values, not just the same text twice.
  BOOST_TEST(b.run.scenario == "my_scenario");
  BOOST_TEST((b.run.mode == edm::Mode::Split));
  BOOST_TEST(b.run.seed == 42u);
  BOOST_TEST(b.laser.wavelength == 1.03e-6);
  BOOST_TEST(b.laser.duration == 26.7e-15);
  BOOST_TEST(b.laser.phase == 0.1);
  BOOST_TEST(b.laser.m == -2);
  BOOST_TEST(b.laser.direction == -1);
  BOOST_TEST((b.electrons.distribution == edm::Distribution::List));
  BOOST_TEST(fs::equivalent(b.electrons.file, dir / "beam.csv"));
  BOOST_TEST(b.trajectory.knots_per_period == 24);
  BOOST_TEST(b.screen.distance == -1e9);
  BOOST_TEST(b.screen.half_width_x == 0.0123);
  BOOST_TEST(b.screen.half_width_y == 0.0123);
  BOOST_TEST(b.screen.ny == 5);
  BOOST_TEST(b.screen.t_start == 1.234567890123e-9);
  BOOST_TEST(b.screen.allow_clipping);
  BOOST_TEST(b.accumulator.electron_batch == -1);
  BOOST_TEST(!b.accumulator.coef_reuse);
  BOOST_TEST(b.accumulator.devices == "0,1");
  BOOST_TEST(b.scenario_section["gamma_spread"].value_or(0.0) == 0.25);
  BOOST_TEST(b.scenario_section["label"].value_or(std::string()) == "run one");
  BOOST_TEST(b.scenario_section["repeat"].value_or<std::int64_t>(0) == 3);  // the plugin's default
  BOOST_TEST(a.origins.at("my_scenario.repeat") == Origin::Default);
  BOOST_TEST(a.origins.at("my_scenario.label") == Origin::File);
  BOOST_TEST(a.origins.at("screen.ny") == Origin::CommandLine);
}

BOOST_AUTO_TEST_CASE(schema_defaults_equal_struct_defaults) {
  CleanEnvironment clean;
  // to_toml of a default campaign is the struct defaults; every schema default must parse to the
  // same value, and every key to_toml writes must be in the schema.
  const toml::table defaults = edm::Campaign{}.to_toml();
  for (const auto& k : edm::core_schema()) {
    BOOST_TEST_CONTEXT(k.section + "." + k.key) {
      BOOST_TEST(!k.meaning.empty());
      BOOST_TEST((k.type == "int" || k.type == "float" || k.type == "string" || k.type == "bool" || k.type == "int|string"));
      if (k.default_value.empty()) {
        BOOST_TEST(k.key == "direction");  // the only optional key
        continue;
      }
      const toml::table parsed = toml::parse("v = " + k.default_value);
      const std::string key = k.key == "half_width" ? "half_width_x" : k.key;
      const toml::node* want = defaults[k.section][key].node();
      BOOST_REQUIRE(want);
      if (k.type == "float")
        BOOST_TEST(parsed["v"].value<double>().value() == want->value<double>().value());
      else
        BOOST_TEST(print(toml::table{{"v", *parsed.get("v")}}) == print(toml::table{{"v", *want}}));
      if (!k.choices.empty())
        BOOST_TEST((std::find(k.choices.begin(), k.choices.end(), *parsed["v"].value<std::string>()) != k.choices.end()));
    }
  }
  for (const auto& [section, tbl] : defaults) {
    if (section.str() == edm::RunSection{}.scenario) continue;
    for (const auto& [key, v] : *tbl.as_table())
      BOOST_TEST(edm::find_core_key(std::string(section.str()), std::string(key.str())) != nullptr,
                 section.str() << "." << key.str() << " missing from the schema");
  }
}

BOOST_AUTO_TEST_CASE(design_quickstart_example_parses) {
  // The contract's quickstart example, verbatim: key names are a public contract, so the
  // contract's own example must validate and give the values it shows.
  CleanEnvironment clean;
  const std::string text = R"EXAMPLE(
[run]
scenario = "inverse_thomson"   # plugin: thomson | inverse_thomson | …
output = "runs/quickstart"     # run folder: field.h5, run.toml, plots
mode = "total"                 # total (E, B) | split (adds E_far, B_far)
seed = 1

[laser]
profile = "gaussian"           # plane_wave | gaussian | laguerre_gauss
wavelength = 800e-9            # m
a0 = 0.1                       # or pulse_energy (J)
polarization = "linear"        # linear | circular_plus | circular_minus
duration = 26.7e-15            # s: τ0 of the envelope exp(−(ξ/τ0)²)
envelope = "gaussian"          # gaussian | constant
waist = 20e-6                  # m (gaussian, laguerre_gauss)
p = 0                          # radial index (laguerre_gauss)
m = 0                          # azimuthal index (laguerre_gauss)
phase = 0.0                    # rad: carrier phase φ0
focus = 0.0                    # m: z of the focus

[electrons]
distribution = "sunflower"     # sunflower | gaussian | list
count = 16
radius = 5e-6                  # m (sunflower)
gamma = 5.0                    # inverse_thomson
# list: file = "electrons.csv" (t0,x,y,z,ux,uy,uz); gaussian: sigma_x/y/z (m), energy_spread,
# emittance_x/y (normalised, m·rad)

[trajectory]
model = "lorentz"              # lorentz | landau_lifshitz | tracks (file = "tracks.h5")
knots_per_period = 16

[screen]
distance = 0.05                # m: z of the screen plane
half_width = 2e-3              # m (half_width_x / half_width_y for a rectangle)
nx = 64
ny = 64
samples = 512
samples_per_period = 512       # observer samples per laser period: dt = T / samples_per_period
window = "auto"                # auto (corner-anchored) | explicit (with t_start, s)

[accumulator]
kernel = "newton"
newton_iters = 2
coef_reuse = true
sample_chunks = 0              # 0 = chosen from the device
electron_batch = 0             # 0 = single pass; "auto" = from the host memory budget
batch_overlap = true
devices = "auto"               # "auto" | "all" | "0,1" | a name substring
)EXAMPLE";
  const auto c = edm::parse_campaign(text, "quickstart.toml", {}, {}, false);
  BOOST_TEST(c.run.scenario == "inverse_thomson");
  BOOST_TEST(c.run.output == "runs/quickstart");
  BOOST_TEST(c.laser.wavelength == 800e-9);
  BOOST_TEST(c.laser.duration == 26.7e-15);
  BOOST_TEST(c.screen.half_width_x == 2e-3);
  BOOST_TEST(c.screen.half_width_y == 2e-3);
  BOOST_TEST(c.screen.samples_per_period == 512);
  BOOST_TEST(c.accumulator.electron_batch == 0);
  BOOST_TEST(c.accumulator.devices == "auto");
  BOOST_TEST(c.origins.at("screen.nx") == Origin::File);
  BOOST_TEST(c.origins.at("trajectory.rtol") == Origin::Default);
}

BOOST_AUTO_TEST_CASE(closest_match_suggests_only_near_words) {
  const std::vector<std::string> keys = {"nx", "ny", "samples", "samples_per_period", "wavelength", "distance"};
  BOOST_TEST(edm::closest_match("nxx", keys) == "nx");
  BOOST_TEST(edm::closest_match("NX", keys) == "nx");
  BOOST_TEST(edm::closest_match("wavelenght", keys) == "wavelength");
  BOOST_TEST(edm::closest_match("samples_per_perod", keys) == "samples_per_period");
  BOOST_TEST(edm::closest_match("distnace", keys) == "distance");
  BOOST_TEST(edm::closest_match("colour", keys) == "");
  BOOST_TEST(edm::closest_match("ab", keys) == "");
  BOOST_TEST(edm::closest_match("x", {}) == "");
}

BOOST_AUTO_TEST_CASE(peek_scenario_reads_run_scenario) {
  const fs::path dir = edm::test::temp_dir("campaign-peek");
  write_file(dir / "a.toml", "[run]\nscenario = \"thomson\"\n[thomson]\nanything = 1\n");
  write_file(dir / "b.toml", "[screen]\nnx = 3\n");
  write_file(dir / "c.toml", "[run]\nscenario = 3\n");
  BOOST_TEST(edm::peek_scenario(dir / "a.toml", {}) == "thomson");
  BOOST_TEST(edm::peek_scenario(dir / "a.toml", {{"run.scenario", "inverse_thomson"}}) == "inverse_thomson");
  BOOST_TEST(edm::peek_scenario(dir / "b.toml", {}) == edm::RunSection{}.scenario);
  BOOST_CHECK_THROW(edm::peek_scenario(dir / "c.toml", {}), edm::ConfigError);
  BOOST_CHECK_THROW(edm::peek_scenario(dir / "missing.toml", {}), edm::ConfigError);
}

BOOST_AUTO_TEST_CASE(set_options_shape) {
  const auto o = edm::app::parse_set_options({"screen.nx=128", "run.output=a=b", "thomson.key="});
  BOOST_REQUIRE_EQUAL(o.size(), 3u);
  BOOST_TEST(o[0].key == "screen.nx");
  BOOST_TEST(o[0].value == "128");
  BOOST_TEST(o[0].origin == Origin::CommandLine);
  BOOST_TEST(o[1].value == "a=b");
  BOOST_TEST(o[2].value == "");
  for (const std::string bad : {"nx=3", "screen.nx", ".nx=3", "screen.=3", "screen.n x=3", "a.b.c=1"}) {
    try {
      edm::app::parse_set_options({"screen.ny=2", bad});
      BOOST_ERROR("'" << bad << "' should be refused");
    } catch (const edm::ConfigError& e) {
      BOOST_TEST(contains(e.what(), "--set '" + bad + "'"), e.what());
      BOOST_TEST(e.id() == "EDM-CFG-010");
    }
  }
}
