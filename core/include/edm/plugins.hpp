// Plugin discovery and loading: search EDM_PLUGIN_PATH, then the build tree's and the
// install's plugin folders, for files ending in ".edmplugin"; open with RTLD_NOW | RTLD_LOCAL, query
// the entry symbol, check size and ABI version, then register. One bad plugin never aborts the rest:
// its failure is collected for `edm plugins`.
#pragma once
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "edm/campaign.hpp"
#include "edm/kinematics.hpp"
#include "edm/plugin.h"
#include "edm/schema.hpp"

namespace edm {

struct PluginFailure {
  std::filesystem::path path;
  std::string reason;  // "wrong ABI version 7 (this edm speaks 2)", "not a plugin: no symbol edm_plugin_query", dlerror() …
};

class Plugin {
 public:
  const edm_plugin_v2& descriptor() const { return *desc_; }
  std::string name() const { return desc_->name; }
  std::vector<std::string> models() const;
  std::vector<KeySpec> keys() const;  // the plugin's section keys as KeySpecs (section = name)
  const std::filesystem::path& path() const { return path_; }

  Plugin(std::filesystem::path path, void* handle, const edm_plugin_v2* desc)
      : path_(std::move(path)), handle_(handle), desc_(desc) {}
  ~Plugin();
  Plugin(const Plugin&) = delete;
  Plugin& operator=(const Plugin&) = delete;

 private:
  std::filesystem::path path_;
  void* handle_;
  const edm_plugin_v2* desc_;
};

class PluginRegistry {
 public:
  // Searches the default path list (EDM_PLUGIN_PATH entries, then build and install folders).
  static PluginRegistry discover();
  // Searches exactly these folders/files (tests).
  static PluginRegistry from_paths(const std::vector<std::filesystem::path>& paths);
  // Only the plugin of `scenario` is opened in this process (edm run): a library whose descriptor
  // file (`<library>.scenario`, written by edm_add_plugin) names another scenario is not opened at
  // all; one whose descriptor names `scenario`, or that has none, is probed in a forked child first. Without a scenario (discover(),
  // from_paths(paths)), every candidate is probed in a child before it is opened here, so a plugin
  // that crashes (an aborting constructor, a wild pointer) is a load failure, never edm's crash.
  static PluginRegistry discover(const std::string& scenario);
  static PluginRegistry from_paths(const std::vector<std::filesystem::path>& paths, const std::string& scenario);

  const std::vector<std::unique_ptr<Plugin>>& plugins() const { return plugins_; }
  const std::vector<PluginFailure>& failures() const { return failures_; }
  // The load failures of libraries whose descriptor file names `scenario` (its broken copies).
  std::vector<PluginFailure> failures_of(const std::string& scenario) const;
  // Throws PluginError if absent: EDM-PLG-002 naming the library and its reason when a library whose
  // descriptor file names `scenario` failed to load, else EDM-PLG-001 listing the available scenarios
  // and any load failures.
  const Plugin& get(const std::string& scenario) const;
  static std::vector<std::filesystem::path> default_search_path();
  // Probes every library on the default search path now, in forked children, and remembers each
  // verdict for this process (by file identity: device, inode, size, modification time), so that a
  // later discover() forks no more for them. Called by edm's main before MPI_Init under mpirun: a
  // fork after MPI_Init is unsafe with some MPI transports (registered memory, progress threads).
  static void probe_search_path();

 private:
  std::vector<std::unique_ptr<Plugin>> plugins_;
  std::vector<PluginFailure> failures_;
  std::vector<std::string> elsewhere_;  // scenarios found but not opened (another scenario was asked)
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
  // Macro-particle weight of electron i (1 when the scenario gives none); PluginError EDM-TRJ-050
  // naming the electron unless it is finite and >= 0.
  bool has_weights() const { return s_.weight != nullptr; }
  double weight(std::uint64_t i) const;
  const edm_scenario_v1& raw() const { return s_; }

 private:
  edm_scenario_v1 s_{};
};

// The campaign as a plugin receives it (edm_campaign_v2 in plugin.h): the effective campaign as
// TOML text, and typed accessors over the same table, so only C types cross the boundary. Built
// from Campaign::to_toml, so every key the campaign writes is reachable without this class naming
// any of them. Pinned in memory (the C struct points back into it); valid while it lives.
class CampaignView {
 public:
  explicit CampaignView(const Campaign& campaign);
  CampaignView(const CampaignView&) = delete;
  CampaignView& operator=(const CampaignView&) = delete;
  const edm_campaign_v2* get() const { return &c_; }
  const toml::table& table() const { return table_; }

 private:
  toml::table table_;
  std::string scenario_, file_, text_;
  edm_campaign_v2 c_{};
};

// What the expected emission line needs from the ensemble as the scenario starts it (its initial
// states, before any field): means over every electron (kinematics.hpp).
EnsembleKinematics initial_kinematics(const Scenario& scenario);

}  // namespace edm
