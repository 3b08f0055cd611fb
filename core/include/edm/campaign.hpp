// The campaign: every setting of a run, resolved from defaults < campaign file < environment
// (EDM_*) < command line, validated, in SI as the user wrote it. Key names are public interface
// (DESIGN §6): add keys freely, rename none. The schema (schema.hpp) is the single list of keys.
#pragma once
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <toml++/toml.h>

#include "edm/schema.hpp"  // KeySpec must be complete where the `plugin_keys = {}` defaults are used

namespace edm {

struct RunSection {
  std::string scenario = "inverse_thomson";
  std::string output = "runs/quickstart";
  std::string mode = "total";  // total | split
  std::uint64_t seed = 1;
};

struct LaserSection {
  std::string profile = "gaussian";  // plane_wave | gaussian | laguerre_gauss
  double wavelength = 800e-9;        // m
  double a0 = 0.1;                   // used unless pulse_energy > 0
  double pulse_energy = 0.0;         // J; > 0 overrides a0 (gaussian, laguerre_gauss)
  std::string polarization = "linear";  // linear | circular_plus | circular_minus
  double duration = 26.7e-15;        // s, τ0 of exp(−(ξ/τ0)²)
  std::string envelope = "gaussian"; // gaussian | constant
  double waist = 20e-6;              // m
  int p = 0;                         // radial index (laguerre_gauss)
  int m = 0;                         // azimuthal index (laguerre_gauss)
  double phase = 0.0;                // rad
  double focus = 0.0;                // m
  // Propagation direction s = ±1 along z. Not a campaign key of its own: the scenario sets it
  // (thomson +1, inverse_thomson −1) unless [laser] direction is given.
  int direction = 0;                 // 0 = scenario's choice
};

struct ElectronsSection {
  std::string distribution = "sunflower";  // sunflower | gaussian | list
  std::uint64_t count = 16;
  double radius = 5e-6;        // m (sunflower)
  double gamma = 5.0;          // inverse_thomson: Lorentz factor of the beam
  std::string file;            // list: CSV (t0,x,y,z,ux,uy,uz), SI, u = γβ
  double sigma_x = 1e-6, sigma_y = 1e-6, sigma_z = 1e-6;  // m (gaussian)
  double energy_spread = 0.0;  // relative rms of γ (gaussian)
  double emittance_x = 0.0, emittance_y = 0.0;  // normalised, m·rad (gaussian)
};

struct TrajectorySection {
  std::string model = "lorentz";  // lorentz | landau_lifshitz | tracks
  int knots_per_period = 16;      // knots per proper-time carrier period
  std::string file;               // tracks: HDF5 file of external trajectories
  double padding = 6.0;           // envelope durations τ0 integrated before and after the peak
  double rtol = 1e-13;            // GSL odeiv2 relative tolerance
  double atol = 1e-15;            // GSL odeiv2 absolute tolerance (normalised units)
};

struct ScreenSection {
  double distance = 0.05;         // m, z of the screen plane (negative: a screen behind)
  double half_width_x = 2e-3;     // m (half_width sets both)
  double half_width_y = 2e-3;     // m
  int nx = 64;
  int ny = 64;
  int samples = 512;
  int samples_per_period = 512;   // dt = T / samples_per_period
  std::string window = "auto";    // auto | explicit
  double t_start = 0.0;           // s, absolute lab time of sample 0 (window = explicit)
  bool allow_clipping = false;    // clipped electrons are reported instead of refused
};

struct AccumulatorSection {
  std::string kernel = "newton";
  int newton_iters = 2;
  bool coef_reuse = true;
  int sample_chunks = 0;          // 0 = chosen from the device
  int work_group = 0;             // 0 = chosen from the device
  int electron_group = 0;         // electrons per launch, summed in registers; 0 = from the device
  int tile_width = 0;             // pixels per tile row of a work-group; 0 = from the device
  std::string pixel_order = "auto";  // auto | rings | tiles | rows (which pixels share a warp)
  std::int64_t electron_batch = 0;  // 0 = single pass; -1 = "auto" (from the host memory budget)
  bool batch_overlap = true;
  std::string devices = "auto";   // auto | all | "0,1" | a name substring
};

// Where an effective value came from (the manifest records it).
enum class Origin { Default, File, Environment, CommandLine };
const char* origin_name(Origin o);

struct Campaign {
  std::filesystem::path file;  // the campaign file ("" when built in code)
  RunSection run;
  LaserSection laser;
  ElectronsSection electrons;
  TrajectorySection trajectory;
  ScreenSection screen;
  AccumulatorSection accumulator;
  // The plugin's own section ([thomson], [inverse_thomson], …) as written, validated against the
  // plugin's key list by core before the plugin sees it; keys the file leaves out hold the plugin's
  // declared default (so the plugin and the manifest see every effective value).
  toml::table scenario_section;
  // "section.key" → origin, for every key of the schema.
  std::map<std::string, Origin> origins;

  // The effective campaign as TOML (every key, SI): what run.toml's [config]-like sections hold
  // and what `edm run` on that file would replay.
  toml::table to_toml() const;
};

// One `--set section.key=value` or environment override, applied after the file.
struct Override {
  std::string key;    // "screen.nx"
  std::string value;  // as typed; parsed with the key's type
  Origin origin = Origin::CommandLine;
};

// Reads and validates a campaign file. Errors (ConfigError) name file:line:col and the key; unknown
// keys get a did-you-mean. `plugin_keys` are the keys of the scenario plugin's own section.
// Environment knobs EDM_ELECTRON_BATCH, EDM_ELECTRON_BATCH_OVERLAP, EDM_COEF_REUSE,
// EDM_SAMPLE_CHUNKS, EDM_NEWTON_ITERS, EDM_DEVICE are read here unless `read_environment` is false.
Campaign load_campaign(const std::filesystem::path& file, const std::vector<Override>& overrides,
                       const std::vector<KeySpec>& plugin_keys = {}, bool read_environment = true);
// Same, from TOML text (tests; `name` stands in for the file name in messages).
Campaign parse_campaign(std::string_view toml_text, const std::string& name,
                        const std::vector<Override>& overrides,
                        const std::vector<KeySpec>& plugin_keys = {}, bool read_environment = true);
// Reads just [run] scenario (to find the plugin before full validation).
std::string peek_scenario(const std::filesystem::path& file, const std::vector<Override>& overrides);

}  // namespace edm
