// Campaign files: parse with toml++, validate every key against the schema (core keys plus the
// scenario plugin's section), merge defaults < file < environment (EDM_*) < command line, record
// where each value came from, and write the effective campaign back as TOML (the manifest's replay).
// Every user mistake is a ConfigError "where: [section] key: problem" with a stable id.
#include "edm/campaign.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <limits>
#include <sstream>
#include <variant>

#include "edm/error.hpp"
#include "edm/schema.hpp"

namespace edm {

const char* origin_name(Origin o) {
  switch (o) {
    case Origin::Default: return "default";
    case Origin::File: return "file";
    case Origin::Environment: return "environment";
    case Origin::CommandLine: return "command line";
  }
  return "unknown";
}

namespace {

// Error ids (stable: users search for them; never reuse a number for another problem).
constexpr const char* kSyntax = "EDM-CFG-001";
constexpr const char* kNoFile = "EDM-CFG-002";
constexpr const char* kUnknownSection = "EDM-CFG-003";
constexpr const char* kUnknownKey = "EDM-CFG-004";
constexpr const char* kWrongType = "EDM-CFG-005";
constexpr const char* kOutOfRange = "EDM-CFG-006";
constexpr const char* kNotFinite = "EDM-CFG-007";
constexpr const char* kBadChoice = "EDM-CFG-008";
constexpr const char* kMissingData = "EDM-CFG-009";
constexpr const char* kBadOverride = "EDM-CFG-010";
constexpr const char* kBadScenario = "EDM-CFG-012";

// A value after type checking, in the key's own type ("int|string" keys become int: "auto" = -1).
using Value = std::variant<std::int64_t, double, bool, std::string>;

[[noreturn]] void fail(const char* id, const std::string& where, const std::string& section,
                       const std::string& key, const std::string& problem) {
  throw ConfigError(id, where + ": [" + section + "]" + (key.empty() ? "" : " " + key) + ": " + problem);
}

std::string at(const std::string& name, const toml::source_region& src) {
  return name + ":" + std::to_string(src.begin.line) + ":" + std::to_string(src.begin.column);
}

std::string join(const std::vector<std::string>& v, const char* sep = ", ") {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : sep) + s;
  return out;
}

std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates) {
  const std::string m = closest_match(word, candidates);
  return m.empty() ? std::string() : " (did you mean '" + m + "'?)";
}

std::string format_double(double v) {
  std::ostringstream os;
  os.precision(17);
  os << v;
  return os.str();
}

// What a TOML node is, for "expected X, got Y" messages.
std::string describe(const toml::node& n) {
  std::ostringstream os;
  if (n.is_string()) {
    os << "a string (\"" << *n.value<std::string>() << "\")";
  } else if (n.is_integer()) {
    os << "an integer (" << *n.value<std::int64_t>() << ")";
  } else if (n.is_floating_point()) {
    os << "a float (" << format_double(*n.value<double>()) << ")";
  } else if (n.is_boolean()) {
    os << "a boolean (" << (*n.value<bool>() ? "true" : "false") << ")";
  } else if (n.is_table()) {
    os << "a table";
  } else if (n.is_array()) {
    os << "an array";
  } else {
    os << "a " << n.type();
  }
  return os.str();
}

std::string expected(const std::string& type) {
  if (type == "int") return "an integer";
  if (type == "float") return "a number";
  if (type == "bool") return "true or false";
  if (type == "string") return "a string";
  if (type == "int|string") return "an integer or \"auto\"";
  return type;
}

// Range and choice rules shared by file, environment and command-line values.
void check_value(const KeySpec& spec, Value& v, const std::string& where) {
  if (spec.type == "int|string" && std::holds_alternative<std::string>(v)) {
    // The only string an int|string key takes is "auto", stored as −1 (campaign.hpp).
    const auto& s = std::get<std::string>(v);
    if (s != "auto")
      fail(kBadChoice, where, spec.section, spec.key,
           "'" + s + "' is not allowed: use an integer or \"auto\"" + did_you_mean(s, {"auto"}));
    v = std::int64_t{-1};
    return;
  }
  if (auto* s = std::get_if<std::string>(&v)) {
    if (!spec.choices.empty() &&
        std::find(spec.choices.begin(), spec.choices.end(), *s) == spec.choices.end())
      fail(kBadChoice, where, spec.section, spec.key,
           "'" + *s + "' is not one of " + join(spec.choices) + did_you_mean(*s, spec.choices));
    return;
  }
  double x = 0;
  std::string shown;
  if (auto* i = std::get_if<std::int64_t>(&v)) {
    x = static_cast<double>(*i);
    shown = std::to_string(*i);
  } else if (auto* d = std::get_if<double>(&v)) {
    x = *d;
    shown = format_double(*d);
    if (!std::isfinite(*d))
      fail(kNotFinite, where, spec.section, spec.key, "got " + shown + "; a finite number is needed");
  } else {
    return;  // bool
  }
  const std::string& c = spec.constraint;
  const bool ok = c.empty() || (c == ">0" && x > 0) || (c == ">=0" && x >= 0) || (c == ">=1" && x >= 1) ||
                  (c == "!=0" && x != 0) || (c == "+-1" && (x == 1 || x == -1));
  if (!ok) {
    const std::string rule = c == "!=0"  ? "must not be 0"
                             : c == "+-1" ? "must be +1 or -1"
                             : c == ">0"  ? "must be > 0"
                             : c == ">=0" ? "must be >= 0"
                                          : "must be >= 1";
    fail(kOutOfRange, where, spec.section, spec.key, rule + ", got " + shown);
  }
}

// TOML node → Value of the key's type (a float key takes an integer: `distance = 1`).
Value from_node(const KeySpec& spec, const toml::node& n, const std::string& where) {
  const std::string& t = spec.type;
  if ((t == "int" || t == "int|string") && n.is_integer()) return *n.value<std::int64_t>();
  if (t == "float" && (n.is_floating_point() || n.is_integer())) return *n.value<double>();
  if (t == "bool" && n.is_boolean()) return *n.value<bool>();
  if ((t == "string" || t == "int|string") && n.is_string()) return *n.value<std::string>();
  fail(kWrongType, where, spec.section, spec.key, "expected " + expected(t) + ", got " + describe(n));
}

std::string lower(std::string s) {
  for (auto& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

// Text (--set value, environment variable) → Value of the key's type.
Value from_text(const KeySpec& spec, std::string text, const std::string& where) {
  const std::string& t = spec.type;
  auto bad = [&]() -> Value {
    fail(kWrongType, where, spec.section, spec.key, "expected " + expected(t) + ", got '" + text + "'");
  };
  if (text.size() >= 2 && text.front() == '"' && text.back() == '"') {
    // A quoted value is a string whatever the key's type: `--set run.mode="split"`.
    std::string s = text.substr(1, text.size() - 2);
    if (t == "string" || t == "int|string") return s;
    return bad();
  }
  if (t == "string") return text;
  if (t == "int" || t == "int|string") {
    std::string digits = (!text.empty() && text[0] == '+') ? text.substr(1) : text;
    std::int64_t i = 0;
    auto r = std::from_chars(digits.data(), digits.data() + digits.size(), i);
    if (!digits.empty() && r.ec == std::errc() && r.ptr == digits.data() + digits.size()) return i;
    if (t == "int|string" && !text.empty() && !std::isdigit(static_cast<unsigned char>(text[0])) &&
        text[0] != '-' && text[0] != '+')
      return text;
    return bad();
  }
  if (t == "float") {
    if (text.empty()) return bad();
    char* end = nullptr;
    const double d = std::strtod(text.c_str(), &end);
    if (end != text.c_str() + text.size()) return bad();
    return d;
  }
  if (t == "bool") {
    const std::string l = lower(text);
    if (l == "true" || l == "1" || l == "yes" || l == "on") return true;
    if (l == "false" || l == "0" || l == "no" || l == "off") return false;
    return bad();
  }
  return bad();
}

// Assignment of a checked Value to the struct member of a core key.
using Setter = std::function<void(Campaign&, const Value&, const std::string& where)>;

template <class S, class M>
Setter member(S Campaign::*sec, M S::*mem) {
  return [sec, mem](Campaign& c, const Value& v, const std::string& where) {
    if constexpr (std::is_same_v<M, std::string>) {
      (c.*sec).*mem = std::get<std::string>(v);
    } else if constexpr (std::is_same_v<M, bool>) {
      (c.*sec).*mem = std::get<bool>(v);
    } else if constexpr (std::is_same_v<M, double>) {
      (c.*sec).*mem = std::get<double>(v);
    } else {
      const std::int64_t i = std::get<std::int64_t>(v);
      if (i < static_cast<std::int64_t>(std::numeric_limits<M>::min()) ||
          (i > 0 && static_cast<std::uint64_t>(i) > static_cast<std::uint64_t>(std::numeric_limits<M>::max())))
        throw ConfigError(kOutOfRange, where + ": value " + std::to_string(i) + " is out of range");
      (c.*sec).*mem = static_cast<M>(i);
    }
  };
}

const std::map<std::string, Setter>& setters() {
  using C = Campaign;
  static const std::map<std::string, Setter> table = [] {
    std::map<std::string, Setter> t;
    t["run.scenario"] = member(&C::run, &RunSection::scenario);
    t["run.output"] = member(&C::run, &RunSection::output);
    t["run.mode"] = member(&C::run, &RunSection::mode);
    t["run.seed"] = member(&C::run, &RunSection::seed);
    t["laser.profile"] = member(&C::laser, &LaserSection::profile);
    t["laser.wavelength"] = member(&C::laser, &LaserSection::wavelength);
    t["laser.a0"] = member(&C::laser, &LaserSection::a0);
    t["laser.pulse_energy"] = member(&C::laser, &LaserSection::pulse_energy);
    t["laser.polarization"] = member(&C::laser, &LaserSection::polarization);
    t["laser.duration"] = member(&C::laser, &LaserSection::duration);
    t["laser.envelope"] = member(&C::laser, &LaserSection::envelope);
    t["laser.waist"] = member(&C::laser, &LaserSection::waist);
    t["laser.p"] = member(&C::laser, &LaserSection::p);
    t["laser.m"] = member(&C::laser, &LaserSection::m);
    t["laser.phase"] = member(&C::laser, &LaserSection::phase);
    t["laser.focus"] = member(&C::laser, &LaserSection::focus);
    t["laser.direction"] = member(&C::laser, &LaserSection::direction);
    t["electrons.distribution"] = member(&C::electrons, &ElectronsSection::distribution);
    t["electrons.count"] = member(&C::electrons, &ElectronsSection::count);
    t["electrons.radius"] = member(&C::electrons, &ElectronsSection::radius);
    t["electrons.gamma"] = member(&C::electrons, &ElectronsSection::gamma);
    t["electrons.file"] = member(&C::electrons, &ElectronsSection::file);
    t["electrons.sigma_x"] = member(&C::electrons, &ElectronsSection::sigma_x);
    t["electrons.sigma_y"] = member(&C::electrons, &ElectronsSection::sigma_y);
    t["electrons.sigma_z"] = member(&C::electrons, &ElectronsSection::sigma_z);
    t["electrons.energy_spread"] = member(&C::electrons, &ElectronsSection::energy_spread);
    t["electrons.emittance_x"] = member(&C::electrons, &ElectronsSection::emittance_x);
    t["electrons.emittance_y"] = member(&C::electrons, &ElectronsSection::emittance_y);
    t["trajectory.model"] = member(&C::trajectory, &TrajectorySection::model);
    t["trajectory.knots_per_period"] = member(&C::trajectory, &TrajectorySection::knots_per_period);
    t["trajectory.file"] = member(&C::trajectory, &TrajectorySection::file);
    t["trajectory.padding"] = member(&C::trajectory, &TrajectorySection::padding);
    t["trajectory.rtol"] = member(&C::trajectory, &TrajectorySection::rtol);
    t["trajectory.atol"] = member(&C::trajectory, &TrajectorySection::atol);
    t["screen.distance"] = member(&C::screen, &ScreenSection::distance);
    t["screen.half_width_x"] = member(&C::screen, &ScreenSection::half_width_x);
    t["screen.half_width_y"] = member(&C::screen, &ScreenSection::half_width_y);
    t["screen.nx"] = member(&C::screen, &ScreenSection::nx);
    t["screen.ny"] = member(&C::screen, &ScreenSection::ny);
    t["screen.samples"] = member(&C::screen, &ScreenSection::samples);
    t["screen.samples_per_period"] = member(&C::screen, &ScreenSection::samples_per_period);
    t["screen.window"] = member(&C::screen, &ScreenSection::window);
    t["screen.t_start"] = member(&C::screen, &ScreenSection::t_start);
    t["screen.allow_clipping"] = member(&C::screen, &ScreenSection::allow_clipping);
    t["accumulator.kernel"] = member(&C::accumulator, &AccumulatorSection::kernel);
    t["accumulator.newton_iters"] = member(&C::accumulator, &AccumulatorSection::newton_iters);
    t["accumulator.coef_reuse"] = member(&C::accumulator, &AccumulatorSection::coef_reuse);
    t["accumulator.sample_chunks"] = member(&C::accumulator, &AccumulatorSection::sample_chunks);
    t["accumulator.work_group"] = member(&C::accumulator, &AccumulatorSection::work_group);
    t["accumulator.electron_group"] = member(&C::accumulator, &AccumulatorSection::electron_group);
    t["accumulator.tile_width"] = member(&C::accumulator, &AccumulatorSection::tile_width);
    t["accumulator.pixel_order"] = member(&C::accumulator, &AccumulatorSection::pixel_order);
    t["accumulator.electron_batch"] = member(&C::accumulator, &AccumulatorSection::electron_batch);
    t["accumulator.batch_overlap"] = member(&C::accumulator, &AccumulatorSection::batch_overlap);
    t["accumulator.devices"] = member(&C::accumulator, &AccumulatorSection::devices);
    return t;
  }();
  return table;
}

std::vector<std::string> keys_of(const std::string& section, const std::vector<KeySpec>& specs) {
  std::vector<std::string> out;
  for (const auto& k : specs)
    if (k.section == section) out.push_back(k.key);
  return out;
}

toml::table parse_toml(std::string_view text, const std::string& name) {
  try {
    return toml::parse(text, name);
  } catch (const toml::parse_error& e) {
    throw ConfigError(kSyntax, at(name, e.source()) + ": syntax error: " + std::string(e.description()));
  }
}

// The environment knobs (DESIGN §4, §6) and the key each one sets.
const std::vector<std::pair<const char*, const char*>>& environment_knobs() {
  static const std::vector<std::pair<const char*, const char*>> knobs = {
      {"EDM_ELECTRON_BATCH", "accumulator.electron_batch"},
      {"EDM_ELECTRON_BATCH_OVERLAP", "accumulator.batch_overlap"},
      {"EDM_COEF_REUSE", "accumulator.coef_reuse"},
      {"EDM_SAMPLE_CHUNKS", "accumulator.sample_chunks"},
      {"EDM_NEWTON_ITERS", "accumulator.newton_iters"},
      {"EDM_DEVICE", "accumulator.devices"},
  };
  return knobs;
}

int rank(Origin o) {
  // Overrides are applied lowest precedence first so that the last writer is the strongest.
  switch (o) {
    case Origin::Default: return 0;
    case Origin::File: return 1;
    case Origin::Environment: return 2;
    case Origin::CommandLine: return 3;
  }
  return 3;
}

std::string override_where(const Override& o) {
  if (o.origin == Origin::Environment) return "override " + o.key + "=" + o.value + " (environment)";
  return "--set " + o.key + "=" + o.value;
}

// Splits "section.key"; the error names the option as the user wrote it.
std::pair<std::string, std::string> split_key(const Override& o) {
  const auto dot = o.key.find('.');
  if (dot == std::string::npos || dot == 0 || dot + 1 == o.key.size() ||
      o.key.find('.', dot + 1) != std::string::npos)
    throw ConfigError(kBadOverride, override_where(o) + ": expected section.key=value (e.g. screen.nx=128)");
  return {o.key.substr(0, dot), o.key.substr(dot + 1)};
}

// State of one parse: the campaign being built and where each key's value came from.
class Builder {
 public:
  Builder(std::string name, const std::vector<KeySpec>& plugin_keys) : name_(std::move(name)), plugin_keys_(plugin_keys) {
    for (const auto& k : core_schema())
      if (k.key != "half_width") c_.origins[k.section + "." + k.key] = Origin::Default;
  }

  Campaign& campaign() { return c_; }

  // One core key from any source. `half_width` sets both half widths.
  void set_core(const KeySpec& spec, Value v, Origin origin, const std::string& where) {
    check_value(spec, v, where);
    const std::vector<std::string> targets =
        spec.key == "half_width" ? std::vector<std::string>{"half_width_x", "half_width_y"}
                                 : std::vector<std::string>{spec.key};
    for (const auto& key : targets) {
      const std::string full = spec.section + "." + key;
      setters().at(full)(c_, v, where + ": [" + spec.section + "] " + key);
      c_.origins[full] = origin;
      where_[full] = where;
    }
  }

  void core_section(const std::string& section, const toml::node& node, const std::string& where) {
    const toml::table* t = node.as_table();
    if (!t) fail(kWrongType, where, section, "", "a section must be a table, got " + describe(node));
    // half_width first: a half_width_x written beside it is the more specific and wins.
    std::vector<std::pair<const toml::key*, const toml::node*>> items;
    for (auto&& [k, v] : *t) items.emplace_back(&k, &v);
    std::stable_partition(items.begin(), items.end(), [](auto& kv) { return kv.first->str() == "half_width"; });
    for (auto [k, v] : items) {
      const std::string key(k->str());
      const KeySpec* spec = find_core_key(section, key);
      if (!spec)
        fail(kUnknownKey, at(name_, k->source()), section, key,
             "unknown key" + did_you_mean(key, keys_of(section, core_schema())));
      const std::string w = at(name_, v->source());
      set_core(*spec, from_node(*spec, *v, w), Origin::File, w);
    }
  }

  void scenario_section(const std::string& section, const toml::node& node, const std::string& where) {
    const toml::table* t = node.as_table();
    if (!t) fail(kWrongType, where, section, "", "a section must be a table, got " + describe(node));
    for (auto&& [k, v] : *t) {
      const std::string key(k.str());
      const KeySpec* spec = plugin_key(key);
      if (!spec) {
        const auto names = keys_of(section, plugin_keys_);
        fail(kUnknownKey, at(name_, k.source()), section, key,
             "unknown key of scenario '" + section + "'" + did_you_mean(key, names) +
                 (names.empty() ? "; this scenario has no keys" : "; its keys: " + join(names)));
      }
      const std::string w = at(name_, v.source());
      set_plugin(*spec, from_node(*spec, v, w), Origin::File, w);
    }
  }

  void set_plugin(const KeySpec& spec, Value v, Origin origin, const std::string& where) {
    check_value(spec, v, where);
    std::visit([&](auto&& x) { c_.scenario_section.insert_or_assign(spec.key, x); }, v);
    c_.origins[spec.section + "." + spec.key] = origin;
    where_[spec.section + "." + spec.key] = where;
  }

  // Keys of the plugin section that the file did not write get the plugin's default, so that the
  // plugin and the manifest see every effective value.
  void plugin_defaults() {
    for (const auto& spec : plugin_keys_) {
      if (c_.scenario_section.contains(spec.key) || spec.default_value.empty()) continue;
      toml::table t;
      try {
        t = toml::parse("v = " + spec.default_value);
      } catch (const toml::parse_error&) {
        throw PluginError("EDM-PLG-030", "scenario '" + spec.section + "' declares key '" + spec.key +
                                             "' with default '" + spec.default_value + "', which is not TOML");
      }
      const std::string w = "default of scenario key";
      Value v = from_node(spec, *t.get("v"), w);
      set_plugin(spec, v, Origin::Default, w);
    }
  }

  const KeySpec* plugin_key(const std::string& key) const {
    for (const auto& k : plugin_keys_)
      if (k.key == key) return &k;
    return nullptr;
  }

  std::string where(const std::string& full) const {
    auto it = where_.find(full);
    return it == where_.end() ? name_ + " (default)" : it->second;
  }

 private:
  std::string name_;
  std::vector<KeySpec> plugin_keys_;
  Campaign c_;
  std::map<std::string, std::string> where_;
};

// A data file named by the campaign must exist. A path written in the file is relative to the
// campaign's folder (so a campaign and its CSV travel together); one typed on the command line or in
// the environment is relative to the current folder, as the shell user expects.
void check_data_file(Campaign& c, Builder& b, const std::filesystem::path& base, const std::string& section,
                     std::string& file, const std::string& needed_by, const char* what) {
  const std::string full = section + ".file";
  if (file.empty())
    fail(kMissingData, b.where(needed_by), section, "file",
         "'" + needed_by + "' needs the " + what + ": set [" + section + "] file = \"…\"");
  std::filesystem::path p(file);
  if (p.is_relative() && c.origins[full] == Origin::File && !base.empty()) p = (base / p).lexically_normal();
  std::error_code ec;
  if (!std::filesystem::is_regular_file(p, ec))
    fail(kMissingData, b.where(full), section, "file",
         std::string(what) + " '" + file + "' not found" + (p.string() != file ? " (looked for " + p.string() + ")" : ""));
  // Absolute from here on: the plugin, the manifest and a replay must not resolve it again
  // against another folder (a relative campaign path made share/campaigns/share/campaigns/…).
  file = std::filesystem::absolute(p, ec).lexically_normal().string();
}

}  // namespace

Campaign parse_campaign(std::string_view toml_text, const std::string& name, const std::vector<Override>& overrides,
                        const std::vector<KeySpec>& plugin_keys, bool read_environment) {
  const toml::table root = parse_toml(toml_text, name);
  Builder b(name, plugin_keys);
  Campaign& c = b.campaign();

  // 1. The file's core sections; other tables wait until the scenario name is final.
  std::vector<std::pair<const toml::key*, const toml::node*>> others;
  for (auto&& [k, v] : root) {
    const std::string section(k.str());
    const auto& cs = core_sections();
    if (std::find(cs.begin(), cs.end(), section) != cs.end())
      b.core_section(section, v, at(name, k.source()));
    else
      others.emplace_back(&k, &v);
  }

  // 2. Environment, then overrides in precedence order (stable: among equals the last one wins).
  struct Pending {
    Override o;
    std::string where;  // a variable read here is named as the user set it
  };
  std::vector<Pending> ordered;
  if (read_environment) {
    for (const auto& [var, key] : environment_knobs()) {
      const char* v = std::getenv(var);
      if (v && *v)
        ordered.push_back({Override{key, v, Origin::Environment}, "environment " + std::string(var) + "=" + v});
    }
  }
  for (const auto& o : overrides) ordered.push_back({o, override_where(o)});
  std::stable_sort(ordered.begin(), ordered.end(),
                   [](const Pending& a, const Pending& o) { return rank(a.o.origin) < rank(o.o.origin); });
  std::vector<std::pair<const Pending*, std::string>> scenario_overrides;
  for (const Pending& p : ordered) {
    const Override& o = p.o;
    const std::string& where = p.where;
    const auto [section, key] = split_key(o);
    const auto& cs = core_sections();
    if (std::find(cs.begin(), cs.end(), section) == cs.end()) {
      scenario_overrides.emplace_back(&p, section);
      continue;
    }
    const KeySpec* spec = find_core_key(section, key);
    if (!spec) fail(kUnknownKey, where, section, key, "unknown key" + did_you_mean(key, keys_of(section, core_schema())));
    b.set_core(*spec, from_text(*spec, o.value, where), o.origin, where);
  }

  // 3. The scenario is now final: its section is the plugin's; any other table is a mistake.
  const std::string& scenario = c.run.scenario;
  const auto& cs = core_sections();
  if (scenario.empty()) fail(kBadScenario, b.where("run.scenario"), "run", "scenario", "must name a scenario plugin");
  if (std::find(cs.begin(), cs.end(), scenario) != cs.end())
    fail(kBadScenario, b.where("run.scenario"), "run", "scenario", "'" + scenario + "' is a core section, not a scenario");
  // The scenario names a TOML table in the manifest (to_toml). toml++ 3.3 writes a key that is not
  // bare as a 'literal' key even when it holds a quote, so a name like a'b produced a run.toml that
  // does not parse (found by fuzz/fuzz_campaign). Plugin names are identifiers: require that here.
  if (!std::all_of(scenario.begin(), scenario.end(), [](char ch) {
        return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '-';
      }))
    fail(kBadScenario, b.where("run.scenario"), "run", "scenario",
         "'" + scenario + "' is not a scenario name (letters, digits, '_' and '-' only)");
  std::vector<KeySpec> pkeys = plugin_keys;
  for (auto& k : pkeys) k.section = scenario;  // the plugin's section is named after the scenario
  // A second builder holds the scenario section, validated against the plugin's keys.
  Builder scen(name, pkeys);
  for (auto [k, v] : others) {
    const std::string section(k->str());
    if (!v->is_table())
      throw ConfigError(kUnknownSection, at(name, k->source()) + ": key '" + section +
                                             "' is outside any section: put it under [run], [screen], … "
                                             "(`edm schema` lists where each key belongs)");
    if (section == scenario) {
      scen.scenario_section(section, *v, at(name, k->source()));
      continue;
    }
    std::vector<std::string> candidates = cs;
    candidates.push_back(scenario);
    throw ConfigError(kUnknownSection, at(name, k->source()) + ": [" + section + "]: unknown section" +
                                           did_you_mean(section, candidates) + "; sections are " + join(candidates) +
                                           " (the scenario's own section is [" + scenario + "])");
  }
  for (auto& [p, section] : scenario_overrides) {
    const Override* o = &p->o;
    const std::string& where = p->where;
    const auto key = split_key(*o).second;
    if (section != scenario) {
      std::vector<std::string> candidates = cs;
      candidates.push_back(scenario);
      fail(kUnknownSection, where, section, key, "unknown section" + did_you_mean(section, candidates));
    }
    const KeySpec* spec = scen.plugin_key(key);
    if (!spec)
      fail(kUnknownKey, where, section, key,
           "unknown key of scenario '" + section + "'" + did_you_mean(key, keys_of(section, pkeys)));
    scen.set_plugin(*spec, from_text(*spec, o->value, where), o->origin, where);
  }
  scen.plugin_defaults();
  c.scenario_section = std::move(scen.campaign().scenario_section);
  for (const auto& [k, o] : scen.campaign().origins)
    if (k.rfind(scenario + ".", 0) == 0) c.origins[k] = o;

  // 4. Cross-key checks: data files named by the campaign must exist now, not hours into a run.
  const std::filesystem::path base = std::filesystem::path(name).parent_path();
  if (c.electrons.distribution == "list")
    check_data_file(c, b, base, "electrons", c.electrons.file, "electrons.distribution", "electron list (CSV t0,x,y,z,ux,uy,uz)");
  if (c.trajectory.model == "tracks")
    check_data_file(c, b, base, "trajectory", c.trajectory.file, "trajectory.model", "track file (HDF5)");
  return std::move(c);
}

Campaign load_campaign(const std::filesystem::path& file, const std::vector<Override>& overrides,
                       const std::vector<KeySpec>& plugin_keys, bool read_environment) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw ConfigError(kNoFile, file.string() + ": cannot open the campaign file");
  std::stringstream ss;
  ss << in.rdbuf();
  Campaign c = parse_campaign(ss.str(), file.string(), overrides, plugin_keys, read_environment);
  c.file = file;
  return c;
}

std::string peek_scenario(const std::filesystem::path& file, const std::vector<Override>& overrides) {
  // The strongest run.scenario override decides; otherwise the file; otherwise the default.
  const Override* best = nullptr;
  for (const auto& o : overrides)
    if (o.key == "run.scenario" && (!best || rank(o.origin) >= rank(best->origin))) best = &o;
  if (best && rank(best->origin) >= rank(Origin::Environment)) {
    std::string v = best->value;
    if (v.size() >= 2 && v.front() == '"' && v.back() == '"') v = v.substr(1, v.size() - 2);
    return v;
  }
  std::ifstream in(file, std::ios::binary);
  if (!in) throw ConfigError(kNoFile, file.string() + ": cannot open the campaign file");
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  const toml::table root = parse_toml(text, file.string());
  if (const toml::node* run = root.get("run")) {
    if (const toml::table* t = run->as_table()) {
      if (const toml::node* s = t->get("scenario")) {
        if (!s->is_string())
          fail(kWrongType, at(file.string(), s->source()), "run", "scenario",
               "expected a string, got " + describe(*s));
        return *s->value<std::string>();
      }
    }
  }
  return RunSection{}.scenario;
}

toml::table Campaign::to_toml() const {
  // Every core key (SI, as the user writes them) plus the scenario's section: `edm run` on this
  // table replays the campaign. half_width is an alias, so only the two half widths are written.
  auto i64 = [](auto v) { return static_cast<std::int64_t>(v); };
  toml::table out;
  out.insert("run", toml::table{{"scenario", run.scenario}, {"output", run.output}, {"mode", run.mode},
                                {"seed", i64(run.seed)}});
  toml::table l{{"profile", laser.profile},   {"wavelength", laser.wavelength}, {"a0", laser.a0},
                {"pulse_energy", laser.pulse_energy}, {"polarization", laser.polarization},
                {"duration", laser.duration}, {"envelope", laser.envelope},   {"waist", laser.waist},
                {"p", i64(laser.p)},          {"m", i64(laser.m)},            {"phase", laser.phase},
                {"focus", laser.focus}};
  if (laser.direction != 0) l.insert("direction", i64(laser.direction));  // 0 = absent = scenario's choice
  out.insert("laser", std::move(l));
  out.insert("electrons",
             toml::table{{"distribution", electrons.distribution}, {"count", i64(electrons.count)},
                         {"radius", electrons.radius}, {"gamma", electrons.gamma}, {"file", electrons.file},
                         {"sigma_x", electrons.sigma_x}, {"sigma_y", electrons.sigma_y}, {"sigma_z", electrons.sigma_z},
                         {"energy_spread", electrons.energy_spread}, {"emittance_x", electrons.emittance_x},
                         {"emittance_y", electrons.emittance_y}});
  out.insert("trajectory", toml::table{{"model", trajectory.model}, {"knots_per_period", i64(trajectory.knots_per_period)},
                                       {"file", trajectory.file}, {"padding", trajectory.padding},
                                       {"rtol", trajectory.rtol}, {"atol", trajectory.atol}});
  out.insert("screen", toml::table{{"distance", screen.distance}, {"half_width_x", screen.half_width_x},
                                   {"half_width_y", screen.half_width_y}, {"nx", i64(screen.nx)},
                                   {"ny", i64(screen.ny)}, {"samples", i64(screen.samples)},
                                   {"samples_per_period", i64(screen.samples_per_period)},
                                   {"window", screen.window}, {"t_start", screen.t_start},
                                   {"allow_clipping", screen.allow_clipping}});
  toml::table a{{"kernel", accumulator.kernel},
                {"newton_iters", i64(accumulator.newton_iters)},
                {"coef_reuse", accumulator.coef_reuse},
                {"sample_chunks", i64(accumulator.sample_chunks)},
                {"work_group", i64(accumulator.work_group)},
                {"electron_group", i64(accumulator.electron_group)},
                {"tile_width", i64(accumulator.tile_width)},
                {"pixel_order", accumulator.pixel_order},
                {"batch_overlap", accumulator.batch_overlap},
                {"devices", accumulator.devices}};
  if (accumulator.electron_batch < 0)
    a.insert("electron_batch", "auto");
  else
    a.insert("electron_batch", i64(accumulator.electron_batch));
  out.insert("accumulator", std::move(a));
  if (!run.scenario.empty()) out.insert(run.scenario, scenario_section);
  return out;
}

}  // namespace edm
