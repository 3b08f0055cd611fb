// Campaign files: parse with toml++, validate every key against the key table (core keys, keys.cpp)
// and the scenario plugin's declared keys, merge defaults < file < environment (EDM_*) < command
// line, record where each value came from, and write the effective campaign back as TOML (the
// manifest's replay). Every user mistake is a ConfigError "where: [section] key: problem" with a
// stable id (config/values.hpp).
#include "edm/campaign.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "config/values.hpp"
#include "edm/error.hpp"
#include "edm/schema.hpp"

namespace edm {

const char* origin_name(Origin o) {
  switch (o) {
    case Origin::Default:
      return "default";
    case Origin::File:
      return "file";
    case Origin::Environment:
      return "environment";
    case Origin::CommandLine:
      return "command line";
  }
  return "unknown";
}

std::string value_origin(const Campaign& campaign, const std::string& key) {
  const auto it = campaign.origins.find(key);
  if (it == campaign.origins.end()) return "";
  const auto dot = key.find('.');
  const CoreKey* k = dot == std::string::npos ? nullptr : core_key(key.substr(0, dot), key.substr(dot + 1));
  switch (it->second) {
    case Origin::Environment:
      return k && !k->spec.environment.empty() ? "from the environment variable " + k->spec.environment
                                               : "from the environment";
    case Origin::CommandLine: {
      // The key's first flag ("device devices" → --device; "newton-iters,N" → --newton-iters).
      const std::string flag = k ? k->spec.flag.substr(0, k->spec.flag.find_first_of(" ,")) : "";
      return "from the command line: " + (flag.empty() ? "" : "--" + flag + " or ") + "--set";
    }
    case Origin::File:
      return campaign.file.empty() ? "from the campaign" : "from " + campaign.file.string();
    case Origin::Default:
      return "";
  }
  return "";
}

namespace {

using namespace config;

std::string at(const std::string& name, const toml::source_region& src) {
  return name + ":" + std::to_string(src.begin.line) + ":" + std::to_string(src.begin.column);
}

std::vector<std::string> keys_of(const std::string& section, const std::vector<KeySpec>& specs) {
  std::vector<std::string> out;
  for (const auto& k : specs)
    if (k.section == section) out.push_back(k.key);
  return out;
}

bool is_core_section(const std::string& section) {
  const auto& cs = core_sections();
  return std::find(cs.begin(), cs.end(), section) != cs.end();
}

toml::table parse_toml(std::string_view text, const std::string& name) {
  try {
    return toml::parse(text, name);
  } catch (const toml::parse_error& e) {
    throw ConfigError(kSyntax, at(name, e.source()) + ": syntax error: " + std::string(e.description()));
  }
}

int rank(Origin o) {
  // Overrides are applied lowest precedence first so that the last writer is the strongest.
  switch (o) {
    case Origin::Default:
      return 0;
    case Origin::File:
      return 1;
    case Origin::Environment:
      return 2;
    case Origin::CommandLine:
      return 3;
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

const CoreKey& known_core_key(const std::string& section, const std::string& key, const std::string& where) {
  const CoreKey* k = core_key(section, key);
  if (!k)
    fail(kUnknownKey, where, section, key,
         "unknown key" + did_you_mean(key, keys_of(section, core_schema())));
  return *k;
}

// State of one parse: the campaign being built and where each key's value came from.
class Builder {
 public:
  Builder(std::string name, const std::vector<KeySpec>& plugin_keys)
      : name_(std::move(name)), plugin_keys_(plugin_keys) {
    for (const auto& k : core_keys())
      if (k.targets.empty()) c_.origins[k.full_name()] = Origin::Default;
  }

  Campaign& campaign() { return c_; }

  // One core key from any source. An alias (half_width) records its targets.
  void set_core(const CoreKey& k, KeyValue v, Origin origin, const std::string& where) {
    check_value(k.spec, v, where);
    const std::vector<std::string> targets =
        k.targets.empty() ? std::vector<std::string>{k.spec.key} : k.targets;
    k.set(c_, v, where + ": [" + k.spec.section + "] " + k.spec.key);
    for (const auto& key : targets) {
      const std::string full = k.spec.section + "." + key;
      c_.origins[full] = origin;
      where_[full] = where;
    }
  }

  void core_section(const std::string& section, const toml::node& node, const std::string& where) {
    const toml::table* t = node.as_table();
    if (!t) fail(kWrongType, where, section, "", "a section must be a table, got " + describe(node));
    // Aliases first: a half_width_x written beside half_width is the more specific and wins.
    std::vector<std::pair<const toml::key*, const toml::node*>> items;
    for (auto&& [k, v] : *t) items.emplace_back(&k, &v);
    std::stable_partition(items.begin(), items.end(), [&](auto& kv) {
      const CoreKey* ck = core_key(section, kv.first->str());
      return ck && !ck->targets.empty();
    });
    for (auto [k, v] : items) {
      const CoreKey& ck = known_core_key(section, std::string(k->str()), at(name_, k->source()));
      const std::string w = at(name_, v->source());
      set_core(ck, from_node(ck.spec, *v, w), Origin::File, w);
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

  void set_plugin(const KeySpec& spec, KeyValue v, Origin origin, const std::string& where) {
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
                                             "' with default '" + spec.default_value +
                                             "', which is not TOML");
      }
      const std::string w = "default of scenario key";
      KeyValue v = from_node(spec, *t.get("v"), w);
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

// An override with where it came from (a variable read here is named as the user set it).
struct Pending {
  Override o;
  std::string where;
};

// The environment knobs of the table, then `overrides`, in precedence order (stable: among equals
// the last one wins).
std::vector<Pending> ordered_overrides(const std::vector<Override>& overrides, bool read_environment) {
  std::vector<Pending> ordered;
  if (read_environment) {
    for (const auto& k : core_keys()) {
      if (k.spec.environment.empty()) continue;
      const char* v = std::getenv(k.spec.environment.c_str());
      if (v && *v)
        ordered.push_back(
            {Override{k.full_name(), v, Origin::Environment}, "environment " + k.spec.environment + "=" + v});
    }
  }
  for (const auto& o : overrides) ordered.push_back({o, override_where(o)});
  std::stable_sort(ordered.begin(), ordered.end(),
                   [](const Pending& a, const Pending& o) { return rank(a.o.origin) < rank(o.o.origin); });
  return ordered;
}

// The scenario names the plugin's section and a TOML table of the manifest.
void check_scenario_name(const Builder& b, const std::string& scenario) {
  if (scenario.empty())
    fail(kBadScenario, b.where("run.scenario"), "run", "scenario", "must name a scenario plugin");
  if (is_core_section(scenario))
    fail(kBadScenario, b.where("run.scenario"), "run", "scenario",
         "'" + scenario + "' is a core section, not a scenario");
  // toml++ 3.3 writes a key that is not bare as a 'literal' key even when it holds a quote, so a
  // name like a'b produced a run.toml that does not parse (found by fuzz/fuzz_campaign). Plugin
  // names are identifiers: require that here.
  if (!std::all_of(scenario.begin(), scenario.end(), [](char ch) {
        return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '-';
      }))
    fail(kBadScenario, b.where("run.scenario"), "run", "scenario",
         "'" + scenario + "' is not a scenario name (letters, digits, '_' and '-' only)");
}

// An empty run.output names no folder: the run lock then failed on mkdir("") with an I/O error
// that named neither the key nor the campaign (EDM-RUN-041); `-o ""` leaves the key as it is
// (apps/options.cpp), so the empty value can only come from the file, --set or the environment.
void check_output_name(const Builder& b, const std::string& output) {
  if (output.empty())
    fail("EDM-CFG-680", b.where("run.output"), "run", "output",
         "run.output is empty: it must name the run folder (e.g. output = \"runs/cell\", or -o DIR)");
}

std::vector<std::string> section_candidates(const std::string& scenario) {
  std::vector<std::string> candidates = core_sections();
  candidates.push_back(scenario);
  return candidates;
}

using Tables = std::vector<std::pair<const toml::key*, const toml::node*>>;

// The plugin's section from the file (`others`: every table that is not a core section) and from
// the overrides; then the plugin's defaults. Any other table is a mistake.
void read_scenario_section(Campaign& c, const std::string& name, const Tables& others,
                           const std::vector<const Pending*>& overrides,
                           const std::vector<KeySpec>& plugin_keys) {
  const std::string& scenario = c.run.scenario;
  std::vector<KeySpec> pkeys = plugin_keys;
  for (auto& k : pkeys) k.section = scenario;  // the plugin's section is named after the scenario
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
    const auto candidates = section_candidates(scenario);
    throw ConfigError(kUnknownSection, at(name, k->source()) + ": [" + section + "]: unknown section" +
                                           did_you_mean(section, candidates) + "; sections are " +
                                           join(candidates) + " (the scenario's own section is [" + scenario +
                                           "])");
  }
  for (const Pending* p : overrides) {
    const auto [section, key] = split_key(p->o);
    if (section != scenario)
      fail(kUnknownSection, p->where, section, key,
           "unknown section" + did_you_mean(section, section_candidates(scenario)));
    const KeySpec* spec = scen.plugin_key(key);
    if (!spec)
      fail(kUnknownKey, p->where, section, key,
           "unknown key of scenario '" + section + "'" + did_you_mean(key, keys_of(section, pkeys)));
    scen.set_plugin(*spec, from_text(*spec, p->o.value, p->where), p->o.origin, p->where);
  }
  scen.plugin_defaults();
  c.scenario_section = std::move(scen.campaign().scenario_section);
  for (const auto& [k, o] : scen.campaign().origins)
    if (k.rfind(scenario + ".", 0) == 0) c.origins[k] = o;
}

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
  // An openPMD file-based series names its files by a pattern (data_%T.h5): its reader lists them.
  const bool series_pattern = file.find("%T") != std::string::npos;
  // A folder was reported "not found": say what is there (an openPMD series is named by a file or a pattern).
  const bool folder = std::filesystem::is_directory(p, ec);
  if (!series_pattern && !std::filesystem::is_regular_file(p, ec))
    fail(kMissingData, b.where(full), section, "file",
         std::string(what) + " '" + file +
             (folder ? "' is a folder, not a file (an openPMD file-based series is named by its pattern, e.g. " +
                           (std::filesystem::path(file) / "data%T.h5").string() + ")"
                     : "' not found") +
             (p.string() != file ? " (looked for " + p.string() + ")" : ""));
  // Absolute from here on: the plugin, the manifest and a replay must not resolve it again
  // against another folder (a relative campaign path made share/campaigns/share/campaigns/…).
  file = std::filesystem::absolute(p, ec).lexically_normal().string();
}

std::string read_file(const std::filesystem::path& file) {
  check_campaign_file(file);
  std::ifstream in(file, std::ios::binary);
  if (!in) throw ConfigError(kNoFile, file.string() + ": cannot open the campaign file");
  std::stringstream ss;
  ss << in.rdbuf();
  if (!in.good() && !in.eof()) throw IoError("EDM-IO-092", file.string() + ": reading the campaign file failed");
  std::string text = ss.str();
  // An empty file (or one of blanks and comments only) would run the defaults as if it were a
  // campaign: refuse it. The parsed table's emptiness is checked too (parse_campaign's callers).
  if (text.find_first_not_of(" \t\r\n") == std::string::npos)
    throw ConfigError("EDM-CFG-051", file.string() + ": the campaign file is empty");
  return text;
}

// A file that holds no section and no key (comments only) is refused like an empty one.
void refuse_keyless(const std::string& text, const std::filesystem::path& file) {
  if (parse_toml(text, file.string()).empty())
    throw ConfigError("EDM-CFG-051", file.string() + ": the campaign file holds no keys (only comments)");
}

}  // namespace

Campaign parse_campaign(std::string_view toml_text, const std::string& name,
                        const std::vector<Override>& overrides, const std::vector<KeySpec>& plugin_keys,
                        bool read_environment, bool skip_sweep) {
  const toml::table root = parse_toml(toml_text, name);
  Builder b(name, plugin_keys);
  Campaign& c = b.campaign();

  // 1. The file's core sections; other tables wait until the scenario name is final.
  Tables others;
  for (auto&& [k, v] : root) {
    const std::string section(k.str());
    if (is_core_section(section))
      b.core_section(section, v, at(name, k.source()));
    else if (section == "sweep") {
      // One command runs one cell: a campaign of cells goes to `edm sweep` (share/docs/sweeps.md).
      if (!skip_sweep)
        throw ConfigError("EDM-SWP-012", at(name, k.source()) +
                                             ": [sweep]: this campaign is a sweep of cells; run it with "
                                             "`edm sweep " + name + "` (`edm sweep --dry-run` lists the cells)");
    } else
      others.emplace_back(&k, &v);
  }

  // 2. Environment, then overrides; those of the scenario's section wait for the scenario.
  const std::vector<Pending> ordered = ordered_overrides(overrides, read_environment);
  std::vector<const Pending*> scenario_overrides;
  for (const Pending& p : ordered) {
    const auto [section, key] = split_key(p.o);
    if (!is_core_section(section)) {
      scenario_overrides.push_back(&p);
      continue;
    }
    const CoreKey& k = known_core_key(section, key, p.where);
    b.set_core(k, from_text(k.spec, p.o.value, p.where), p.o.origin, p.where);
  }

  // 3. The scenario is now final: its section is the plugin's.
  check_scenario_name(b, c.run.scenario);
  check_output_name(b, c.run.output);
  read_scenario_section(c, name, others, scenario_overrides, plugin_keys);

  // 4. Cross-key checks: data files named by the campaign must exist now, not hours into a run.
  const std::filesystem::path base = std::filesystem::path(name).parent_path();
  if (c.electrons.distribution == Distribution::List)
    check_data_file(c, b, base, "electrons", c.electrons.file, "electrons.distribution",
                    "electron list (CSV t0,x,y,z,ux,uy,uz)");
  if (c.trajectory.model == TrajectoryModel::Tracks)
    check_data_file(c, b, base, "trajectory", c.trajectory.file, "trajectory.model", "track file (HDF5)");
  if (c.trajectory.model == TrajectoryModel::OpenPMD)
    check_data_file(c, b, base, "trajectory", c.trajectory.file, "trajectory.model", "openPMD particle series (HDF5)");
  return std::move(c);
}

void check_campaign_file(const std::filesystem::path& file) {
  std::error_code ec;
  const auto st = std::filesystem::status(file, ec);
  if (ec && ec != std::errc::no_such_file_or_directory)  // a name too long, a parent not a folder, …
    throw IoError("EDM-IO-090", file.string() + ": cannot read the campaign file: " + ec.message());
  if (st.type() == std::filesystem::file_type::not_found)
    throw ConfigError(kNoFile, file.string() + ": no such campaign file");
  if (st.type() == std::filesystem::file_type::directory)
    throw ConfigError("EDM-CFG-050", file.string() + ": is a directory, not a campaign file");
  // Never opened: a FIFO would block the open until a writer comes, a device would stream forever.
  if (st.type() != std::filesystem::file_type::regular)
    throw IoError("EDM-IO-091", file.string() + ": is not a regular file (a FIFO, socket or device); "
                                                "give a campaign file (.toml) or a run.toml");
}

Campaign load_campaign(const std::filesystem::path& file, const std::vector<Override>& overrides,
                       const std::vector<KeySpec>& plugin_keys, bool read_environment, bool skip_sweep) {
  const std::string text = read_file(file);
  refuse_keyless(text, file);
  Campaign c = parse_campaign(text, file.string(), overrides, plugin_keys, read_environment, skip_sweep);
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
  const toml::table root = parse_toml(read_file(file), file.string());
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
  // Every key of the table (SI, as the user writes them) plus the scenario's section: `edm run` on
  // this table replays the campaign. An alias is not written (its targets are); an optional key
  // only when it is set.
  toml::table out;
  for (const auto& s : core_sections()) out.insert(s, toml::table{});
  for (const auto& k : core_keys()) {
    if (!k.get) continue;
    const KeyValue v = k.get(*this);
    if (k.optional && v == k.initial) continue;
    toml::table& t = *out[k.spec.section].as_table();
    std::visit([&](auto&& x) { t.insert(k.spec.key, x); }, v);
  }
  if (!run.scenario.empty()) out.insert(run.scenario, scenario_section);
  return out;
}

}  // namespace edm
