// Plugin discovery and loading (STYLE 13–14): search EDM_PLUGIN_PATH, then the build tree's and the
// install's plugin folders, for files ending in ".edmplugin"; open with RTLD_NOW | RTLD_LOCAL, query
// the entry symbol, check size and ABI version, then register. One bad plugin never aborts the rest:
// its failure is collected for `edm plugins`.
#pragma once
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "edm/campaign.hpp"
#include "edm/plugin.h"
#include "edm/schema.hpp"

namespace edm {

struct PluginFailure {
  std::filesystem::path path;
  std::string reason;  // "wrong ABI version 7 (this edm speaks 1)", "not a plugin: no symbol edm_plugin_query", dlerror() …
};

class Plugin {
 public:
  const edm_plugin_v1& descriptor() const { return *desc_; }
  std::string name() const { return desc_->name; }
  std::vector<std::string> models() const;
  std::vector<KeySpec> keys() const;  // the plugin's section keys as KeySpecs (section = name)
  const std::filesystem::path& path() const { return path_; }

  Plugin(std::filesystem::path path, void* handle, const edm_plugin_v1* desc)
      : path_(std::move(path)), handle_(handle), desc_(desc) {}
  ~Plugin();
  Plugin(const Plugin&) = delete;
  Plugin& operator=(const Plugin&) = delete;

 private:
  std::filesystem::path path_;
  void* handle_;
  const edm_plugin_v1* desc_;
};

class PluginRegistry {
 public:
  // Searches the default path list (EDM_PLUGIN_PATH entries, then build and install folders).
  static PluginRegistry discover();
  // Searches exactly these folders/files (tests).
  static PluginRegistry from_paths(const std::vector<std::filesystem::path>& paths);

  const std::vector<std::unique_ptr<Plugin>>& plugins() const { return plugins_; }
  const std::vector<PluginFailure>& failures() const { return failures_; }
  // Throws PluginError (listing the available scenarios and any load failures) if absent.
  const Plugin& get(const std::string& scenario) const;
  static std::vector<std::filesystem::path> default_search_path();

 private:
  std::vector<std::unique_ptr<Plugin>> plugins_;
  std::vector<PluginFailure> failures_;
};

// A created scenario (RAII over edm_scenario_v1) with C++ error translation.
class Scenario {
 public:
  Scenario(const Plugin& plugin, const Campaign& campaign);
  // Takes ownership of an already created scenario table (tests build one by hand).
  explicit Scenario(const edm_scenario_v1& created);
  ~Scenario();
  Scenario(const Scenario&) = delete;
  Scenario& operator=(const Scenario&) = delete;

  std::uint64_t electron_count() const;
  void initial_state(std::uint64_t i, double y[8]) const;  // throws PhysicsError/ConfigError
  bool has_rhs() const { return s_.rhs != nullptr; }
  void rhs(double tau, const double y[8], double dy[8]) const;
  void laser_field(const double x4[4], double E[3], double B[3]) const;
  bool has_tracks() const { return s_.track != nullptr; }
  edm_track track(std::uint64_t i) const;
  int laser_direction() const { return s_.laser_direction; }
  double xi_end() const { return s_.xi_end; }
  double tau_max() const { return s_.tau_max; }
  const edm_scenario_v1& raw() const { return s_; }

 private:
  edm_scenario_v1 s_{};
};

// The opaque handle plugins receive, and back.
inline const edm_campaign* to_handle(const Campaign& c) {
  return reinterpret_cast<const edm_campaign*>(&c);
}
inline const Campaign& from_handle(const edm_campaign* h) {
  return *reinterpret_cast<const Campaign*>(h);
}

}  // namespace edm
