// run.toml read back (edm/run_manifest.hpp): one parse, the format check, typed accessors. Every
// key a reader takes is read here, and a missing or mistyped one is named with its file.
#include "edm/run_manifest.hpp"

#include <cmath>
#include <sstream>

#include "edm/campaign.hpp"
#include "edm/directions.hpp"
#include "edm/error.hpp"

namespace edm {

namespace fs = std::filesystem;

namespace {

[[noreturn]] void refuse_format(const fs::path& file, const toml::table& t) {
  const std::string version = t["provenance"]["edm_version"].value_or(std::string("?"));
  const auto format = t["provenance"]["format"].value<std::int64_t>();
  const std::string theirs = format ? "format " + std::to_string(*format) : "no format: an edm before format 1";
  throw IoError("EDM-IO-160", file.string() + ": written by edm " + version + " (" + theirs +
                                    "); this edm reads format " + std::to_string(kRunFormat) +
                                    ": rerun it, or replay it with edm run " + file.string());
}

}  // namespace

RunManifest RunManifest::read(const RunFolder& folder) {
  RunManifest m;
  m.file_ = folder.manifest();
  // Without an error code: a path the system cannot use (a name too long) is its filesystem_error,
  // which edm reports as EDM-IO-094 with the system's reason, not "no such run folder".
  if (!fs::is_directory(folder.root()))
    throw ConfigError("EDM-INFO-001", folder.root().string() + ": no such run folder");
  if (!folder.has_manifest())
    throw ConfigError("EDM-INFO-001", folder.root().string() + ": not a run folder (no run.toml in it)");
  RunFolder::refuse_special(m.file_);
  try {
    m.t_ = toml::parse_file(m.file_.string());
  } catch (const toml::parse_error& e) {
    const auto& b = e.source().begin;
    throw ConfigError("EDM-INFO-002", m.file_.string() + ":" + std::to_string(b.line) + ":" +
                                          std::to_string(b.column) + ": not TOML: " + std::string(e.description()));
  }
  // No run id: no manifest at all (an empty file, another tool's TOML); the run-id checks that keep
  // runs apart would have nothing to compare. Then the format: a manifest of another edm.
  if (m.run_id().empty())
    throw ConfigError("EDM-INFO-003", m.file_.string() + ": not a run manifest: its [provenance] run_id is empty "
                                                         "(edm run writes one into every run.toml; this file is "
                                                         "empty, damaged or not edm's)");
  if (!m.t_["provenance"]["format"].is_integer() || m.format() != kRunFormat) refuse_format(m.file_, m.t_);
  return m;
}

const toml::node& RunManifest::need(const std::string& key) const {
  const toml::node* n = t_.at_path(key).node();
  if (!n) {
    const auto dot = key.rfind('.');
    const std::string shown = dot == std::string::npos ? key : "[" + key.substr(0, dot) + "] " + key.substr(dot + 1);
    throw ConfigError("EDM-INFO-003", file_.string() + ": not a run manifest of this edm: it has no " + shown +
                                          " (edm run writes it; this file is damaged or not edm's)");
  }
  return *n;
}

template <class T>
T RunManifest::need_as(const std::string& key, const char* type) const {
  const toml::node& n = need(key);
  std::optional<T> v;
  if constexpr (std::is_same_v<T, double>)
    v = n.is_number() ? n.value<double>() : std::nullopt;
  else
    v = n.value_exact<T>();
  if (!v) throw ConfigError("EDM-INFO-005", file_.string() + ": " + key + " is not " + type);
  return *v;
}

namespace {
// An out-of-range value of a key the manifest holds: EDM-INFO-005 naming the file, key and rule.
[[noreturn]] void refuse_value(const fs::path& file, const std::string& key, const std::string& rule) {
  throw ConfigError("EDM-INFO-005", file.string() + ": " + key + " must be " + rule +
                                        " (edm run writes it so; this file is damaged or not edm's)");
}
}  // namespace

int RunManifest::format() const { return int(need_as<std::int64_t>("provenance.format", "an integer")); }
std::string RunManifest::run_id() const {
  return need_as<std::string>("provenance.run_id", "a string");
}
std::string RunManifest::edm_version() const { return t_["provenance"]["edm_version"].value_or(std::string()); }
std::string RunManifest::scenario() const { return need_as<std::string>("config.scenario", "a string"); }

std::string RunManifest::campaign_text() const {
  const toml::table* c = need("campaign").as_table();
  if (!c) refuse_value(file_, "campaign", "a table");
  std::ostringstream os;
  os << *c;
  return os.str();
}

double RunManifest::laser_omega() const {
  const double w = need_as<double>("laser.omega", "a number");
  if (!(w > 0) || !std::isfinite(w)) refuse_value(file_, "laser.omega", "a frequency > 0 (rad/s)");
  return w;
}

double RunManifest::a0() const {
  const double a = need_as<double>("laser.a0", "a number");
  if (!(a >= 0) || !std::isfinite(a)) refuse_value(file_, "laser.a0", "≥ 0");
  return a;
}

std::optional<EnsembleKinematics> RunManifest::kinematics() const {
  if (!t_.contains("kinematics")) return std::nullopt;  // the run recorded no initial ensemble
  EnsembleKinematics e;
  const std::int64_t n = need_as<std::int64_t>("kinematics.electrons", "an integer");
  if (n < 1) refuse_value(file_, "kinematics.electrons", "≥ 1");
  e.electrons = std::uint64_t(n);
  e.laser_direction = int(need_as<std::int64_t>("kinematics.laser_direction", "an integer"));
  if (e.laser_direction != 1 && e.laser_direction != -1) refuse_value(file_, "kinematics.laser_direction", "±1");
  e.light_front_h = need_as<double>("kinematics.light_front_h", "a number");
  if (!(e.light_front_h > 0)) refuse_value(file_, "kinematics.light_front_h", "> 0");
  e.gamma_mean = need_as<double>("kinematics.gamma_mean", "a number");
  if (!(e.gamma_mean >= 1)) refuse_value(file_, "kinematics.gamma_mean", "≥ 1");
  e.u_perp2_mean = need_as<double>("kinematics.u_perp2_mean", "a number");
  if (!(e.u_perp2_mean >= 0)) refuse_value(file_, "kinematics.u_perp2_mean", "≥ 0");
  return e;
}

std::string RunManifest::screen_type() const {
  std::string type = need_as<std::string>("screen.type", "a string");
  if (type != "flat" && type != "angular") refuse_value(file_, "screen.type", "flat or angular");
  return type;
}

int RunManifest::screen_side() const {
  if (screen_type() == "angular") {
    // An angular screen's distance is a radius (or "infinity"); its axis picks the side, and only
    // an axis along ±z has one (share/docs/campaign.md, the angular screen).
    const std::string axis = need_as<std::string>("campaign.screen.axis", "a string");
    return axis == "z" ? 1 : axis == "-z" ? -1 : 0;
  }
  const double z = need_as<double>("screen.distance", "a number");
  return z > 0 ? 1 : z < 0 ? -1 : 0;
}

std::array<double, 3> RunManifest::screen_axis() const {
  if (screen_type() == "angular") {
    const std::string axis = need_as<std::string>("campaign.screen.axis", "a string");
    try {
      return axis_frame(parse_choice<ScreenAxis>(axis)).a;
    } catch (const ConfigError&) {
      refuse_value(file_, "campaign.screen.axis", "a screen axis (z, -z, x, -x, y, -y)");
    }
  }
  return {0, 0, screen_side() < 0 ? -1.0 : 1.0};
}

int RunManifest::knots_per_period() const {
  return int(need_as<std::int64_t>("config.knots_per_period", "an integer"));
}

RunManifest::Window RunManifest::window() const {
  if (!need("window").is_table()) refuse_value(file_, "window", "a table");
  const auto w = t_["window"];
  Window v;
  v.covered = need_as<bool>("window.covered", "true or false");
  v.strict = w["strict"].value_or(false);
  v.emission_needed = w["emission_needed"].value_or(false);
  v.clipped_electrons = w["clipped_electrons"].value_or(std::int64_t(0));
  v.burst_missed_electrons = w["burst_missed_electrons"].value_or(std::int64_t(0));
  v.burst_cut_electrons = w["burst_cut_electrons"].value_or(std::int64_t(0));
  v.emission_cut_electrons = w["emission_cut_electrons"].value_or(std::int64_t(0));
  v.emission_in_window = w["emission_in_window"].value<bool>();
  v.roots_converged = w["roots_converged"].value<bool>();
  v.burst_in_window = w["burst_in_window"].value<bool>();
  v.root_samples_per_period = w["root_samples_per_period"].value<double>();
  return v;
}

std::vector<std::string> RunManifest::warnings() const {
  std::vector<std::string> out;
  const toml::array* a = need("warnings.messages").as_array();
  if (!a) refuse_value(file_, "warnings.messages", "an array of strings");
  for (auto&& w : *a)
    if (auto s = w.value<std::string>()) out.push_back(*s);
  return out;
}

std::optional<double> RunManifest::timing_total() const { return t_["timing"]["total"].value<double>(); }

std::optional<std::string> RunManifest::field_run_id() const {
  if (!t_.contains("field_file")) return std::nullopt;
  return need_as<std::string>("field_file.run_id", "a string");
}

std::optional<std::int64_t> RunManifest::field_bytes() const {
  if (!t_.contains("field_file")) return std::nullopt;
  return need_as<std::int64_t>("field_file.bytes", "an integer");
}

std::vector<InputFile> RunManifest::inputs() const { return inputs_of(t_, file_); }

std::vector<InputFile> RunManifest::inputs_of(const toml::table& t, const fs::path& file) {
  std::vector<InputFile> out;
  if (!t.contains("inputs")) return out;
  const toml::array* a = t["inputs"]["files"].as_array();
  if (!a) refuse_value(file, "inputs.files", "an array of tables");
  for (std::size_t i = 0; i < a->size(); ++i) {
    const toml::table* e = a->get(i)->as_table();
    const std::string at = "inputs.files[" + std::to_string(i) + "]";
    if (!e) refuse_value(file, at, "a table");
    const auto key = (*e)["key"].value<std::string>(), path = (*e)["path"].value<std::string>(),
               digest = (*e)["digest"].value<std::string>();
    const auto bytes = (*e)["bytes"].value<std::int64_t>();
    if (!key || !path || !digest || !bytes || *bytes < 0)
      refuse_value(file, at, "a table of key, path and digest (strings) and bytes (an integer >= 0)");
    out.push_back({*key, *path, std::uint64_t(*bytes), *digest});
  }
  return out;
}

}  // namespace edm
