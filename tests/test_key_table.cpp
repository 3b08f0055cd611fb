// ctest-label: unit
// The key table walked key by key (core/src/config/keys.cpp): every key round-trips through a
// campaign file, its environment variable, --set, its `edm run` option and the manifest's
// [campaign] (to_toml, then parse: the same Campaign), with its origin recorded in
// Campaign::origins and in the manifest's [config.origin]; every key with a range or choices
// refuses a bad value with an error that names the key, from every source and through the library
// guard check_key_value; defaults obey their own rules; the enums' words are the table's choices.
#define BOOST_TEST_MODULE key_table
#include <boost/program_options.hpp>
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <cstdlib>
#include <sstream>

#include "campaign_support.hpp"
#include "edm/campaign.hpp"
#include "edm/error.hpp"
#include "edm/manifest.hpp"
#include "edm/run.hpp"
#include "edm/schema.hpp"
#include "options.hpp"
#include "test_support.hpp"

using edm::CoreKey;
using edm::KeyValue;
using edm::Origin;

namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

using edm::test::CleanEnvironment;

std::string print(const toml::table& t) {
  std::ostringstream os;
  os << t;
  return os.str();
}

// Values compare as their TOML text: exact for doubles (shortest round-trip form), and "1" ≠ "1.0".
std::string show(const KeyValue& v) { return edm::toml_text(v); }

// A value as typed on a command line or in a variable: strings raw, everything else as TOML.
std::string typed(const KeyValue& v) {
  if (const auto* s = std::get_if<std::string>(&v)) return *s;
  return edm::toml_text(v);
}

bool allowed(const CoreKey& k, double x) {
  try {
    edm::check_key_value(k.full_name(), x);
    return true;
  } catch (const edm::ConfigError&) {
    return false;
  }
}

// Values other than the default that the key accepts (the default itself where nothing else is
// allowed: accumulator.kernel has one choice).
std::vector<KeyValue> samples(const CoreKey& k) {
  const KeyValue& d = k.initial;
  if (k.spec.type == "bool") return {!std::get<bool>(d)};
  if (!k.spec.choices.empty()) {
    for (const auto& c : k.spec.choices)
      if (c != std::get<std::string>(d)) return {c};
    return {d};
  }
  if (k.spec.type == "string") return {std::string("probe_value")};  // also a valid scenario name
  if (k.spec.type == "float") {
    const double x = std::get<double>(d);
    for (double c : {x * 2, x + 1, x - 1, 0.5})
      if (c != x && allowed(k, c)) return {c};
    return {d};
  }
  const std::int64_t i = std::get<std::int64_t>(d);
  std::vector<KeyValue> out;
  for (std::int64_t c : {i + 1, i - 1, i + 2, std::int64_t{1}, std::int64_t{-1}})
    if (c != i && allowed(k, double(c))) {
      out.push_back(c);
      break;
    }
  if (k.spec.type == "int|string") out.push_back(std::string("auto"));
  return out;
}

// The table's rule read independently of core: numbers the rule must refuse and boundary numbers it
// must accept.
struct Probes {
  std::vector<double> bad, good;
};
Probes probes(const std::string& c) {
  // A composite rule: every part's bad numbers are bad; the good ones are those of the last part
  // (the narrowest, a physical range), which must satisfy every part.
  if (const auto semi = c.find(';'); semi != std::string::npos) {
    Probes first = probes(c.substr(0, semi)), rest = probes(c.substr(semi + 1));
    rest.bad.insert(rest.bad.end(), first.bad.begin(), first.bad.end());
    return rest;
  }
  Probes p;
  const auto dots = c.find("..");
  if (c == "!=0") {
    p = {{0}, {1, -1}};
  } else if (c == "+-1") {
    p = {{0, 2, -2}, {1, -1}};
  } else if (c.rfind(">=", 0) == 0) {
    const double x = std::stod(c.substr(2));
    p = {{x - 1}, {x, x + 1}};
  } else if (c.rfind(">", 0) == 0) {
    const double x = std::stod(c.substr(1));
    p = {{x, x - 1}, {x + 1}};
  } else if (dots != std::string::npos) {
    const double a = std::stod(c.substr(0, dots)), b = std::stod(c.substr(dots + 2));
    p = {{a - 1, b + 1}, {a, b}};
  } else {
    BOOST_TEST(c.empty(), "a constraint this test cannot read: " << c);
  }
  return p;
}

KeyValue number(const CoreKey& k, double x) {
  if (k.spec.type == "float") return x;
  return static_cast<std::int64_t>(x);
}

std::string file_with(const CoreKey& k, const KeyValue& v) {
  return "[" + k.spec.section + "]\n" + k.spec.key + " = " + edm::toml_text(v) + "\n";
}

// The message of the ConfigError that `f` throws, with its id; "" if it throws none.
template <class F>
std::string error_of(F f, std::string* id = nullptr) {
  try {
    f();
  } catch (const edm::ConfigError& e) {
    if (id) *id = e.id();
    return e.what();
  }
  return "";
}

edm::Campaign parse(const std::string& text, const std::vector<edm::Override>& o = {}, bool env = false) {
  return edm::parse_campaign(text, "keys.toml", o, {}, env);
}

// The value reached the key's member, its origin is recorded, and no other key moved.
void expect_set(const edm::Campaign& c, const CoreKey& k, const KeyValue& v, Origin origin) {
  BOOST_TEST(show(k.get(c)) == show(v));
  BOOST_TEST(c.origins.at(k.full_name()) == origin);
  for (const auto& o : edm::core_keys())
    if (o.get && &o != &k) BOOST_TEST(show(o.get(c)) == show(o.initial), o.full_name() << " moved");
}

// The manifest's [config.origin] says where every key of the campaign came from.
toml::table expect_manifest_origins(const edm::Campaign& c) {
  toml::table m = edm::make_manifest(c, edm::RunSummary{}, edm::Normalization::from_wavelength(800e-9),
                                     edm::ManifestExtras{});
  for (const auto& k : edm::core_keys()) {
    if (!k.get) continue;
    const auto* o = m["config"]["origin"][k.full_name()].as_string();
    BOOST_REQUIRE_MESSAGE(o, k.full_name() << " missing from [config.origin]");
    BOOST_TEST(o->get() == origin_name(c.origins.at(k.full_name())));
  }
  return m;
}

// `edm run RUN/run.toml`: the manifest written to disk, its [campaign] read back as a campaign.
edm::Campaign replay(const toml::table& manifest) {
  static const std::filesystem::path dir = edm::test::temp_dir("key-table");
  const auto file = dir / "run.toml";
  edm::write_manifest(file, manifest);
  BOOST_REQUIRE(edm::is_manifest(file));
  return edm::parse_campaign(edm::campaign_text_from_manifest(file), "run.toml [campaign]", {}, {}, false);
}

// `edm run`'s options of the table, parsed as the app parses them.
std::vector<edm::Override> flag_overrides(const std::vector<std::string>& args) {
  namespace po = boost::program_options;
  po::options_description desc;
  edm::app::add_key_flags(desc);
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(desc).run(), vm);
  po::notify(vm);
  return edm::app::key_flag_overrides(vm);
}

std::vector<std::string> words(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w.substr(0, w.find(',')));
  return out;
}

}  // namespace

BOOST_AUTO_TEST_CASE(every_key_round_trips_through_every_source) {
  CleanEnvironment clean;
  std::size_t with_env = 0, with_flag = 0;
  for (const auto& k : edm::core_keys()) {
    if (!k.get) continue;  // an alias: its own case below
    for (const KeyValue& v : samples(k)) {
      BOOST_TEST_CONTEXT(k.full_name() << " = " << show(v)) {
        const edm::Campaign f = parse(file_with(k, v));
        expect_set(f, k, v, Origin::File);
        // Replay: the manifest's [campaign], parsed again, gives the same Campaign.
        const edm::Campaign r = replay(expect_manifest_origins(f));
        expect_set(r, k, v, Origin::File);
        BOOST_TEST(print(r.to_toml()) == print(f.to_toml()));

        const edm::Campaign s = parse("", {{k.full_name(), typed(v)}});
        expect_set(s, k, v, Origin::CommandLine);
        expect_set(replay(expect_manifest_origins(s)), k, v, Origin::File);

        if (!k.spec.environment.empty()) {
          ++with_env;
          ::setenv(k.spec.environment.c_str(), typed(v).c_str(), 1);
          const edm::Campaign e = parse("", {}, true);
          ::unsetenv(k.spec.environment.c_str());
          expect_set(e, k, v, Origin::Environment);
          expect_set(replay(expect_manifest_origins(e)), k, v, Origin::File);
          BOOST_TEST(show(k.get(parse("", {}, true))) == show(k.initial));  // and gone with the variable
        }
        for (const auto& flag : words(k.spec.flag)) {
          ++with_flag;
          const edm::Campaign o = parse("", flag_overrides({"--" + flag, typed(v)}));
          expect_set(o, k, v, Origin::CommandLine);
        }
      }
    }
  }
  // The bench's tunables and the older knobs all have their variables; edm run has its options.
  BOOST_TEST(with_env >= 14u);
  BOOST_TEST(with_flag >= 4u);
}

BOOST_AUTO_TEST_CASE(an_alias_sets_its_targets) {
  CleanEnvironment clean;
  std::size_t aliases = 0;
  for (const auto& k : edm::core_keys()) {
    if (k.targets.empty()) continue;
    ++aliases;
    BOOST_TEST(!k.get);
    const KeyValue v = samples(*edm::core_key(k.spec.section, k.targets.front())).front();
    for (const auto& c : {parse(file_with(k, v)), parse("", {{k.full_name(), typed(v)}})}) {
      BOOST_TEST(c.origins.count(k.full_name()) == 0u);
      for (const auto& t : k.targets) {
        const CoreKey& target = *edm::core_key(k.spec.section, t);
        BOOST_TEST(show(target.get(c)) == show(v), target.full_name());
        BOOST_TEST(c.origins.at(target.full_name()) != Origin::Default);
      }
    }
  }
  BOOST_TEST(aliases == 1u);  // screen.half_width
}

BOOST_AUTO_TEST_CASE(bad_values_are_refused_naming_the_key) {
  CleanEnvironment clean;
  std::size_t ruled = 0;
  for (const auto& k : edm::core_keys()) {
    const std::string named = "[" + k.spec.section + "] " + k.spec.key;
    std::vector<std::pair<KeyValue, std::string>> bad;  // value, id
    if (!k.spec.choices.empty()) bad.push_back({std::string("not_a_choice"), "EDM-CFG-008"});
    if (k.spec.type == "int|string") bad.push_back({std::string("many"), "EDM-CFG-008"});
    if (k.spec.type == "float") bad.push_back({std::nan(""), "EDM-CFG-007"});
    const Probes p = probes(k.spec.constraint);
    if (!k.spec.constraint.empty()) {
      ++ruled;
      BOOST_TEST(!p.bad.empty(), k.full_name());
    }
    for (double x : p.bad) bad.push_back({number(k, x), "EDM-CFG-006"});
    for (double x : p.good)
      BOOST_TEST(error_of([&] { parse(file_with(k, number(k, x))); }) == "", k.full_name() << " = " << x);
    for (const auto& [v, want] : bad) {
      BOOST_TEST_CONTEXT(k.full_name() << " = " << show(v)) {
        std::string id;
        std::string m = error_of([&] { parse(file_with(k, v)); }, &id);
        BOOST_TEST(contains(m, named), m);
        BOOST_TEST(id == want);
        m = error_of([&] { parse("", {{k.full_name(), typed(v)}}); }, &id);
        BOOST_TEST(contains(m, "--set " + k.full_name() + "=" + typed(v) + ": " + named), m);
        BOOST_TEST(id == want);
        if (!k.spec.environment.empty()) {
          ::setenv(k.spec.environment.c_str(), typed(v).c_str(), 1);
          m = error_of([&] { parse("", {}, true); }, &id);
          ::unsetenv(k.spec.environment.c_str());
          BOOST_TEST(contains(m, "environment " + k.spec.environment + "=" + typed(v) + ": " + named), m);
          BOOST_TEST(id == want);
        }
        // The library guard asks the same rule and names the key its own way.
        if (const auto* d = std::get_if<double>(&v)) {
          m = error_of([&] { edm::check_key_value(k.full_name(), *d); }, &id);
          BOOST_TEST(contains(m, k.full_name()), m);
          BOOST_TEST(id == want);
        } else if (const auto* i = std::get_if<std::int64_t>(&v)) {
          m = error_of([&] { edm::check_key_value(k.full_name(), double(*i)); }, &id);
          BOOST_TEST(contains(m, k.full_name()), m);
          BOOST_TEST(id == want);
        }
      }
    }
  }
  BOOST_TEST(ruled >= 40u);
  // A guard with its own id keeps it; a guard naming no key of the table is a bug, said as such.
  std::string id;
  error_of([] { edm::check_key_value("accumulator.newton_iters", 65, "EDM-ACC-005"); }, &id);
  BOOST_TEST(id == "EDM-ACC-005");
  error_of([] { edm::check_key_value("accumulator.newton_itres", 2); }, &id);
  BOOST_TEST(id == "EDM-CFG-014");
  error_of([] { edm::check_key_value("screen.window", static_cast<edm::ScreenWindow>(5)); }, &id);
  BOOST_TEST(id == "EDM-CFG-008");
}

BOOST_AUTO_TEST_CASE(the_rules_the_consumers_need_are_the_tables) {
  // The solver needs two knots per period, the accumulator compiles 1..64 Newton steps and groups
  // of up to 64 electrons: a campaign is refused at parse time, not when the device starts.
  CleanEnvironment clean;
  BOOST_TEST(contains(error_of([] { parse("[trajectory]\nknots_per_period = 1\n"); }), "must be >= 2"));
  BOOST_TEST(contains(error_of([] { parse("[accumulator]\nnewton_iters = 65\n"); }), "<= 64"));
  BOOST_TEST(contains(error_of([] { parse("[accumulator]\nelectron_group = 65\n"); }), "<= 64"));
  std::string id;
  const std::string m = error_of([] { parse("[accumulator]\nkernel = \"bisection\"\n"); }, &id);
  BOOST_TEST(contains(m, "[accumulator] kernel: 'bisection' is not one of newton"), m);
  BOOST_TEST(id == "EDM-CFG-008");
}

BOOST_AUTO_TEST_CASE(defaults_obey_their_rules_and_read_back) {
  const edm::Campaign d;
  const toml::table defaults = d.to_toml();
  for (const auto& k : edm::core_keys()) {
    BOOST_TEST_CONTEXT(k.full_name()) {
      BOOST_TEST(!k.spec.meaning.empty());
      if (k.get) BOOST_TEST(show(k.get(d)) == show(k.initial));
      if (k.optional) {
        BOOST_TEST(k.spec.default_value.empty());
        BOOST_TEST(!defaults[k.spec.section][k.spec.key]);  // absent unless set
        continue;
      }
      BOOST_TEST(show(k.initial) == k.spec.default_value);
      const toml::table t = toml::parse("v = " + k.spec.default_value);  // the schema's text is TOML
      BOOST_TEST(error_of([&] { parse(file_with(k, k.initial)); }) == "");
      if (!k.get) continue;
      const toml::node* written = defaults[k.spec.section][k.spec.key].node();
      BOOST_REQUIRE_MESSAGE(written, k.full_name() << " missing from to_toml");
      BOOST_TEST(print(toml::table{{"v", *t.get("v")}}) == print(toml::table{{"v", *written}}));
    }
  }
  // The library's own option structs start where a default campaign starts.
  const edm::KernelOptions ko, kc = edm::kernel_options(edm::AccumulatorSection{});
  BOOST_TEST(ko.newton_iters == kc.newton_iters);
  BOOST_TEST(ko.coef_reuse == kc.coef_reuse);
  BOOST_TEST(ko.sample_chunks == kc.sample_chunks);
  BOOST_TEST(ko.work_group == kc.work_group);
  BOOST_TEST(ko.electron_group == kc.electron_group);
  BOOST_TEST(ko.tile_width == kc.tile_width);
  BOOST_TEST((ko.pixel_order == kc.pixel_order));
  BOOST_TEST(ko.max_registers == kc.max_registers);
  BOOST_TEST(ko.state_local == kc.state_local);
  BOOST_TEST(ko.fast_recip == kc.fast_recip);
  BOOST_TEST(ko.nv_seed == kc.nv_seed);
  BOOST_TEST(ko.interleave == kc.interleave);
  const edm::SolveOptions so;
  BOOST_TEST(so.knots_per_period == d.trajectory.knots_per_period);
  BOOST_TEST(so.rtol == d.trajectory.rtol);
  BOOST_TEST(so.atol == d.trajectory.atol);
}

BOOST_AUTO_TEST_CASE(the_tunables_map_onto_kernel_options) {
  // Every [accumulator] tunable reaches KernelOptions (edm bench and edm run read them the same way).
  CleanEnvironment clean;
  const edm::Campaign c = parse(
      "[accumulator]\nnewton_iters = 3\ncoef_reuse = false\nsample_chunks = 5\nwork_group = 64\n"
      "electron_group = 4\ntile_width = 8\npixel_order = \"tiles\"\nmax_registers = -1\nstate_local = 1\n"
      "fast_recip = -1\nnv_seed = -1\ninterleave = 1\n");
  const edm::KernelOptions k = edm::kernel_options(c.accumulator);
  BOOST_TEST(k.newton_iters == 3);
  BOOST_TEST(!k.coef_reuse);
  BOOST_TEST(k.sample_chunks == 5);
  BOOST_TEST(k.work_group == 64);
  BOOST_TEST(k.electron_group == 4);
  BOOST_TEST(k.tile_width == 8);
  BOOST_TEST((k.pixel_order == edm::PixelOrder::Tiles));
  BOOST_TEST(k.max_registers == -1);
  BOOST_TEST(k.state_local == 1);
  BOOST_TEST(k.fast_recip == -1);
  BOOST_TEST(k.nv_seed == -1);
  BOOST_TEST(k.interleave == 1);
}

namespace {

std::size_t enum_keys_checked = 0;

template <class E>
void expect_words(const char* key) {
  BOOST_TEST_CONTEXT(key) {
    ++enum_keys_checked;
    const CoreKey* k = edm::core_key(key);
    BOOST_REQUIRE(k);
    const auto& names = edm::Choices<E>::names;
    BOOST_TEST(k->spec.choices == std::vector<std::string>(names.begin(), names.end()),
               boost::test_tools::per_element());
    for (std::size_t i = 0; i < names.size(); ++i) {
      BOOST_TEST(std::string(edm::name(static_cast<E>(i))) == names[i]);
      BOOST_TEST(static_cast<std::size_t>(edm::parse_choice<E>(names[i])) == i);
    }
    BOOST_TEST(std::string(edm::name(static_cast<E>(names.size()))) == "?");
    BOOST_CHECK_THROW(edm::parse_choice<E>("no_such_word"), edm::ConfigError);
  }
}

}  // namespace

BOOST_AUTO_TEST_CASE(enum_words_are_the_table_choices) {
  expect_words<edm::Mode>("run.mode");
  expect_words<edm::LaserProfile>("laser.profile");
  expect_words<edm::Polarization>("laser.polarization");
  expect_words<edm::Envelope>("laser.envelope");
  expect_words<edm::Distribution>("electrons.distribution");
  expect_words<edm::TrajectoryModel>("trajectory.model");
  expect_words<edm::ScreenWindow>("screen.window");
  expect_words<edm::ScreenType>("screen.type");
  expect_words<edm::AngleGrid>("screen.angles");
  expect_words<edm::ScreenAxis>("screen.axis");
  expect_words<edm::FieldKernel>("accumulator.kernel");
  expect_words<edm::PixelOrder>("accumulator.pixel_order");
  expect_words<edm::Sharding>("accumulator.sharding");
  expect_words<edm::SpectraUnit>("spectra.unit");
  expect_words<edm::SpectraScale>("spectra.scale");
  expect_words<edm::SpectraSum>("spectra.sum");
  expect_words<edm::SpectraMethod>("spectra.method");
  std::size_t with_choices = 0;
  for (const auto& k : edm::core_keys()) with_choices += !k.spec.choices.empty();
  BOOST_TEST(with_choices == enum_keys_checked);  // no choice key left out above
  // The accumulator's own names of the pixel orders (messages, the manifest) are the same words.
  for (auto o :
       {edm::PixelOrder::Auto, edm::PixelOrder::Rings, edm::PixelOrder::Tiles, edm::PixelOrder::Rows})
    BOOST_TEST(std::string(edm::pixel_order_name(o)) == edm::name(o));
}
