// Header-only helper for plugin authors: write a C++ class, get the C table (plugin.h).
//
//   class MyScenario : public edm::ScenarioBase { ... };
//   EDM_DEFINE_PLUGIN(MyScenario, "my_scenario", "1.0", "what it does", models, keys, n_keys)
//
// The class is constructed from a `const edm::Campaign&` that this header rebuilds inside the
// plugin from the C data the host passes (edm_campaign_v2: the effective campaign as TOML text), so
// no C++ object crosses the boundary. Exceptions thrown by the class are caught here and turned
// into error strings, so none crosses it either. See share/plugin_template for a complete
// out-of-tree example.
#pragma once
#include <cstddef>
#include <cstdio>
#include <exception>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>

#include "edm/campaign.hpp"
#include "edm/error.hpp"
#include "edm/plugin.h"

namespace edm {

class ScenarioBase {
 public:
  virtual ~ScenarioBase() = default;
  virtual std::uint64_t electron_count() const = 0;
  virtual void initial_state(std::uint64_t i, double y[8]) const = 0;  // may throw
  // Equations of motion; return false if the model has none (tracks).
  virtual bool has_rhs() const { return true; }
  virtual void rhs(double tau, const double y[8], double dy[8]) const = 0;
  virtual void laser_field(const double x4[4], double E[3], double B[3]) const = 0;
  virtual bool has_tracks() const { return false; }
  virtual edm_track track(std::uint64_t) const { return {}; }
  virtual int laser_direction() const = 0;
  virtual double xi_end() const = 0;
  virtual double tau_max() const { return 1e9; }
  // Macro-particle weights (edm_scenario_v1::weight): has_weights() false = every weight is 1.
  virtual bool has_weights() const { return false; }
  virtual double weight(std::uint64_t) const { return 1.0; }
};

namespace sdk {

inline void write_err(char* err, size_t len, const char* what) {
  if (err && len) std::snprintf(err, len, "%s", what);
}

// An edm::Error crosses the C boundary as "[EDM-CFG-203:2] message" (id and exit code): the host
// (Scenario) reads them back and rethrows the same family, so a bad electron list stays a campaign error (exit 2) and a
// corrupt tracks file an I/O error (exit 4) instead of becoming "plugin refused" (exit 5).
inline void write_err(char* err, size_t len, const std::exception& ex) {
  if (const auto* e = dynamic_cast<const Error*>(&ex)) {
    if (err && len) std::snprintf(err, len, "[%s:%d] %s", e->id().c_str(), e->exit_code(), e->what());
  } else {
    write_err(err, len, ex.what());
  }
}

// The plugin's C++ view of the campaign, from C data only: the effective TOML text parsed by
// libedm's own campaign reader (linked into the plugin), without the environment (the host has
// merged it already) and with the scenario's section taken as the host validated it. Parsing the
// whole text rather than copying fields one by one keeps every key, including keys added later.
inline Campaign campaign_from_c(const edm_campaign_v2* in) {
  if (!in || in->struct_size < sizeof(edm_campaign_v2) || !in->toml || !in->scenario)
    throw PluginError("EDM-PLG-040", "the host passed no campaign, or one of an older layout (" +
                                         std::to_string(in ? in->struct_size : 0u) + " bytes, this plugin needs " +
                                         std::to_string(sizeof(edm_campaign_v2)) + ")");
  toml::table root;
  try {
    root = toml::parse(std::string_view(in->toml), std::string_view("effective campaign from edm"));
  } catch (const toml::parse_error& e) {
    throw PluginError("EDM-PLG-041", "the campaign text from edm does not parse: " + std::string(e.description()));
  }
  // The scenario's section was checked by the host against this plugin's own key list (defaults
  // filled in); the core reader knows only core sections, so it reads the rest.
  toml::table section;
  if (const toml::table* t = root.get_as<toml::table>(in->scenario)) section = *t;
  root.erase(in->scenario);
  std::ostringstream core;
  core << root;
  Campaign c = parse_campaign(core.str(), "effective campaign from edm", {}, {}, /*read_environment=*/false);
  c.scenario_section = std::move(section);
  c.file = in->campaign_file ? in->campaign_file : "";
  return c;
}

template <class T>
int create(const edm_campaign_v2* campaign, edm_scenario_v1* out, char* err, size_t err_len) {
  try {
    auto* s = new T(campaign_from_c(campaign));
    out->self = s;
    out->destroy = [](void* self) { delete static_cast<T*>(self); };
    out->electron_count = [](const void* self) {
      return static_cast<const T*>(self)->electron_count();
    };
    out->initial_state = [](const void* self, uint64_t i, double y[8], char* e, size_t el) {
      try {
        static_cast<const T*>(self)->initial_state(i, y);
        return 0;
      } catch (const std::exception& ex) {
        write_err(e, el, ex);
        return 1;
      }
    };
    out->rhs = nullptr;
    if (s->has_rhs())
      out->rhs = [](const void* self, double tau, const double y[8], double dy[8]) {
        try {
          static_cast<const T*>(self)->rhs(tau, y, dy);
          return 0;
        } catch (...) {
          return 1;
        }
      };
    out->laser_field = [](const void* self, const double x4[4], double E[3], double B[3]) {
      static_cast<const T*>(self)->laser_field(x4, E, B);
    };
    out->track = nullptr;
    if (s->has_tracks())
      out->track = [](const void* self, uint64_t i, edm_track* t, char* e, size_t el) {
        try {
          *t = static_cast<const T*>(self)->track(i);
          return 0;
        } catch (const std::exception& ex) {
          write_err(e, el, ex);
          return 1;
        }
      };
    // weight was appended to the table: written only into a host table that has it (scenario_size).
    if (s->has_weights() && campaign->scenario_size >= offsetof(edm_scenario_v1, weight) + sizeof(out->weight))
      out->weight = [](const void* self, uint64_t i) {
        try {
          return static_cast<const T*>(self)->weight(i);
        } catch (...) {
          return 0.0 / 0.0;  // NaN: the host refuses it naming the electron (no exception crosses)
        }
      };
    out->laser_direction = s->laser_direction();
    out->xi_end = s->xi_end();
    out->tau_max = s->tau_max();
    return 0;
  } catch (const std::exception& ex) {
    write_err(err, err_len, ex);
    return 1;
  }
}

}  // namespace sdk
}  // namespace edm

// Defines the entry symbol. MODELS: a NULL-terminated const char* array; KEYS: an edm_key_spec
// array (or nullptr) and its length.
#define EDM_DEFINE_PLUGIN(CLASS, NAME, VERSION, DESCRIPTION, MODELS, KEYS, N_KEYS)             \
  extern "C" __attribute__((visibility("default"))) const edm_plugin_v2* edm_plugin_query(void) { \
    static const edm_plugin_v2 desc = {sizeof(edm_plugin_v2), EDM_PLUGIN_ABI_VERSION, NAME,       \
                                       VERSION, DESCRIPTION, MODELS, KEYS, N_KEYS,              \
                                       &edm::sdk::create<CLASS>};                               \
    return &desc;                                                                               \
  }
