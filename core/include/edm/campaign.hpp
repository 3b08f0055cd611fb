// The campaign: every setting of a run, resolved from defaults < campaign file < environment
// (EDM_*) < command line, validated, in SI as the user wrote it. Key names are public interface:
// add keys freely, rename none. Each key is declared once, in the key table
// (core/src/config/keys.cpp, walked through schema.hpp): its member here holds the type and the
// default, its table line the rest (unit, range or choices, meaning, environment name, CLI flag).
// Choices are typed enums from parse time on; name() gives the word a campaign file uses.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <toml++/toml.h>

#include "edm/schema.hpp"          // KeySpec must be complete where the `plugin_keys = {}` defaults are used

namespace edm {

// The choices of the enumerated keys. The enum's order is the order of its names in Choices<E>.
enum class Mode { Total, Split, Potential };                      // run.mode: E, B [+ E_far, B_far] | A^μ
enum class LaserProfile { PlaneWave, Gaussian, LaguerreGauss };   // laser.profile
enum class Polarization { Linear, CircularPlus, CircularMinus };  // laser.polarization
enum class Envelope { Gaussian, Constant, SuperGaussian };        // laser.envelope
enum class Distribution { Sunflower, Gaussian, List };            // electrons.distribution
enum class TrajectoryModel { Lorentz, LandauLifshitz, Tracks, OpenPMD, Lpwa };  // trajectory.model
enum class ScreenWindow { Auto, Explicit, Burst };                // screen.window
enum class ScreenType { Flat, Angular };                          // screen.type (directions.hpp)
enum class AngleGrid { XY, Polar };                               // screen.angles: (θx, θy) or (θ, φ)
enum class ScreenAxis { PlusZ, MinusZ, PlusX, MinusX, PlusY, MinusY };  // screen.axis
enum class FieldKernel { Newton, Rk4, Auto };                     // accumulator.kernel (kernel_options.hpp)
// How device positions map to pixels (the cube's device layout [comp][k][position] and which pixels
// share a warp). Only speed depends on it: every slot gets the same additions in the same order.
//   Rings: bands half a pixel pitch wide around the screen centre, each band by angle — a warp's
//          32 pixels form an arc at one distance from the axis, so their retarded times (which
//          depend on that distance) sit within a few knots of each other for every electron of a
//          beam near the axis, and the warp's interval loads touch a few cache lines instead of
//          ~18 (benchmark cell; BENCHMARKS.md).
//   Tiles: tile_width × (work_group / tile_width) blocks, row-major within a block.
//   Rows:  plain row order (identity).
enum class PixelOrder { Auto = 0, Rings = 1, Tiles = 2, Rows = 3 };  // accumulator.pixel_order
// accumulator.sharding: how several devices of one process share the work. Electrons: each device
// a block of every batch, a full cube each, reduced at the end. Pixels: each device a tile of screen
// rows and every electron, no reduce (bit-identical to one device). Auto: the cost model's pick.
enum class Sharding { Auto = 0, Pixels = 1, Electrons = 2 };
enum class SpectraScale { Linear, Log };                         // spectra.scale: ω grid spacing
enum class SpectraSum { Both, Coherent, Incoherent };            // spectra.sum: which sums are kept
enum class SpectraUnit { Laser, EV };                            // spectra.unit of omega_min/omega_max
enum class SpectraMethod { Auto, Direct, Fft, Dft };             // spectra.method: how the amplitudes are computed

// The words of each enum, as campaign files, messages and the manifest write them (index = value).
template <class E>
struct Choices;
template <>
struct Choices<Mode> {
  static constexpr std::array names{"total", "split", "potential"};
};
template <>
struct Choices<LaserProfile> {
  static constexpr std::array names{"plane_wave", "gaussian", "laguerre_gauss"};
};
template <>
struct Choices<Polarization> {
  static constexpr std::array names{"linear", "circular_plus", "circular_minus"};
};
template <>
struct Choices<Envelope> {
  static constexpr std::array names{"gaussian", "constant", "supergaussian"};
};
template <>
struct Choices<Distribution> {
  static constexpr std::array names{"sunflower", "gaussian", "list"};
};
template <>
struct Choices<TrajectoryModel> {
  static constexpr std::array names{"lorentz", "landau_lifshitz", "tracks", "openpmd", "lpwa"};
};
template <>
struct Choices<ScreenWindow> {
  static constexpr std::array names{"auto", "explicit", "burst"};
};
template <>
struct Choices<ScreenType> {
  static constexpr std::array names{"flat", "angular"};
};
template <>
struct Choices<AngleGrid> {
  static constexpr std::array names{"xy", "polar"};
};
template <>
struct Choices<ScreenAxis> {
  static constexpr std::array names{"z", "-z", "x", "-x", "y", "-y"};
};
template <>
struct Choices<FieldKernel> {
  static constexpr std::array names{"newton", "rk4", "auto"};
};
template <>
struct Choices<PixelOrder> {  // the same words as pixel_order_name (test_key_table checks)
  static constexpr std::array names{"auto", "rings", "tiles", "rows"};
};
template <>
struct Choices<Sharding> {
  static constexpr std::array names{"auto", "pixels", "electrons"};
};
template <>
struct Choices<SpectraScale> {
  static constexpr std::array names{"linear", "log"};
};
template <>
struct Choices<SpectraSum> {
  static constexpr std::array names{"both", "coherent", "incoherent"};
};
template <>
struct Choices<SpectraUnit> {
  static constexpr std::array names{"laser", "eV"};
};
template <>
struct Choices<SpectraMethod> {
  static constexpr std::array names{"auto", "direct", "fft", "dft"};
};

template <class E>
concept Choice = std::is_enum_v<E> && requires { Choices<E>::names; };

// The word of a choice ("split"); "?" for a value outside the enum (a cast).
template <Choice E>
constexpr const char* name(E e) {
  const auto i = static_cast<std::size_t>(e);
  return i < Choices<E>::names.size() ? Choices<E>::names[i] : "?";
}

namespace detail {
// Index of `word` among `names`; ConfigError EDM-CFG-008 listing them (with a did-you-mean) if absent.
std::size_t choice_index(const char* const* names, std::size_t n, std::string_view word);
}  // namespace detail

// The enum value of a word ("split" → Mode::Split); ConfigError EDM-CFG-008 if it is none of them.
template <Choice E>
E parse_choice(std::string_view word) {
  return static_cast<E>(detail::choice_index(Choices<E>::names.data(), Choices<E>::names.size(), word));
}

// A choice that did not come through a campaign (a section built in code) checked against its key's
// choices in the table: ConfigError `id` (default EDM-CFG-008) naming the key.
template <Choice E>
void check_key_value(std::string_view key, E value, const char* id = nullptr) {
  check_key_choice(key, static_cast<std::size_t>(value), id);
}

struct RunSection {
  std::string scenario = "inverse_thomson";
  std::string output = "runs/quickstart";
  Mode mode = Mode::Total;
  std::uint64_t seed = 1;
};

struct LaserSection {
  LaserProfile profile = LaserProfile::Gaussian;
  double wavelength = 800e-9;        // m
  double a0 = 0.1;                   // used unless pulse_energy > 0
  double pulse_energy = 0.0;         // J; > 0 overrides a0 (gaussian, laguerre_gauss)
  Polarization polarization = Polarization::Linear;
  double duration = 26.7e-15;        // s, τ0 of exp(−(ξ/τ0)²)
  Envelope envelope = Envelope::Gaussian;
  int order = 1;                     // p of the supergaussian exp(−(ξ/τ0)^(2p)); 1 = gaussian
  double waist = 20e-6;              // m
  int p = 0;                         // radial index (laguerre_gauss)
  int m = 0;                         // azimuthal index (laguerre_gauss)
  double phase = 0.0;                // rad
  double focus = 0.0;                // m
  // Propagation direction s = ±1 along z, an optional key: the scenario chooses (thomson +1,
  // inverse_thomson −1) unless [laser] direction is given.
  int direction = 0;                 // 0 = absent: the scenario's choice
};

struct ElectronsSection {
  Distribution distribution = Distribution::Sunflower;
  std::uint64_t count = 16;
  double radius = 5e-6;        // m (sunflower)
  double gamma = 5.0;          // inverse_thomson: Lorentz factor of the beam
  std::string file;            // list: CSV (t0,x,y,z,ux,uy,uz), SI, u = γβ
  double sigma_x = 1e-6, sigma_y = 1e-6, sigma_z = 1e-6;  // m (gaussian)
  double energy_spread = 0.0;  // relative rms of γ (gaussian)
  double emittance_x = 0.0, emittance_y = 0.0;  // normalised, m·rad (gaussian)
  // The Gaussian form factor of the coherent sum (edm/form_factor.hpp): rms length and transverse
  // size of the bunch each macro-particle stands for, m; 0 = none in that direction.
  double form_factor_sigma_z = 0.0, form_factor_sigma_r = 0.0;
  // Phased-array prebunching (inverse_thomson; share/docs/ensembles.md "Prebunching"): the harmonic
  // n_b whose light is phased (0 = none), its OAM ℓ_b, and the chirp offset at the disk's edge, m.
  int bunch_harmonic = 0;
  int bunch_ell = 0;
  double bunch_chirp = 0.0;
};

struct TrajectorySection {
  TrajectoryModel model = TrajectoryModel::Lorentz;
  int knots_per_period = 16;      // knots per proper-time carrier period; −1 = "auto" (chosen to meet tolerance)
  // "auto": the relative field error the chosen knots_per_period must meet, estimated on pilot
  // electrons at K against 2K (run/prepare.cpp, share/docs/campaign.md); unused with an integer.
  double tolerance = 1e-6;   // above every documented floor (a track's: 7e-8)
  std::string file;               // tracks / openpmd: HDF5 file of external trajectories
  std::string species;            // openpmd: the particle species ("" = the series' only one)
  double padding = 6.0;           // envelope durations τ0 integrated before and after the peak
  double rtol = 1e-13;            // GSL odeiv2 relative tolerance
  double atol = 1e-15;            // GSL odeiv2 absolute tolerance (normalised units)
  std::int64_t max_knots = 100000000;             // predicted knots per electron refused above this
  std::int64_t max_total_knots = 1000000000000;   // predicted knots of the whole ensemble refused above this
  int gamma_trace_points = 64;    // γ(τ) trace samples per Doppler-shifted carrier period
};

struct ScreenSection {
  ScreenType type = ScreenType::Flat;  // flat: pixels on the plane z = distance; angular: directions
  double distance = 0.05;         // m, z of the screen plane (negative: a screen behind); angular:
                                  // the sphere's radius R, +inf ("infinity") for the far field
  double half_width_x = 2e-3;     // m (half_width sets both)
  double half_width_y = 2e-3;     // m
  int nx = 64;
  int ny = 64;
  int samples = 512;              // −1 = "auto" (window = burst: sized to the burst's light)
  int samples_per_period = 512;   // dt = T / samples_per_period
  ScreenWindow window = ScreenWindow::Auto;
  double t_start = 0.0;           // s, absolute lab time of sample 0 (window = explicit)
  bool allow_clipping = false;    // clipped electrons are reported instead of refused
  bool strict = false;            // a window that misses the burst is refused instead of warned about
  // The angular screen's grid (type = angular; directions.hpp): nx × ny directions about `axis`.
  AngleGrid angles = AngleGrid::XY;
  ScreenAxis axis = ScreenAxis::PlusZ;
  double theta_x_min = -0.01, theta_x_max = 0.01;  // rad, angles = xy (nx of them)
  double theta_y_min = -0.01, theta_y_max = 0.01;  // rad, angles = xy (ny of them)
  double theta_min = 0.0, theta_max = 0.01;        // rad, polar angle from the axis (nx of them)
  double phi_min = 0.0, phi_max = 6.283185307179586;  // rad, azimuth about the axis (ny of them)
};

// The kernel tunables (everything from sample_chunks to interleave) change speed only; 0 lets the
// device choose (kernel_options.hpp says what each does).
struct AccumulatorSection {
  FieldKernel kernel = FieldKernel::Newton;
  int substeps = 0;               // rk4 sub-steps per sample interval; 0 or "auto" (-1) = from the bound
  int newton_iters = 2;
  bool coef_reuse = true;
  int sample_chunks = 0;          // 0 = chosen from the device
  int work_group = 0;             // 0 = chosen from the device
  int electron_group = 0;         // electrons per launch, summed in registers; 0 = from the device
  int tile_width = 0;             // pixels per tile row of a work-group; 0 = from the device
  PixelOrder pixel_order = PixelOrder::Auto;  // which pixels share a warp
  int max_registers = 0;          // register cap (NVIDIA): 0 = from the device, -1 = none
  int state_local = 0;            // solver state in local memory: 0 = from the device, 1 on, -1 off
  int fast_recip = 0;             // divisions from refined seeds: 0 = from the device, 1 on, -1 off
  int nv_seed = 0;                // seeds from NVIDIA's FP64 approximations: 0 = device, 1 on, -1 off
  int interleave = 0;             // the group's solves phase by phase: 0 = from the device, 1 on, -1 off
  int simd = 0;                   // pixels on FP64 vector lanes (CPUs): 0 = from the device, 1 on, -1 off
  std::int64_t electron_batch = 0;  // 0 = single pass; -1 = "auto" (from the host memory budget)
  bool batch_overlap = true;
  int tail_slabs = 0;             // the last batch in slabs of rows written while the next computes:
                                  // 0 = from the device, -1 = off (one device, one process only)
  std::string devices = "auto";   // auto | all | "0,1" | a name substring
  Sharding sharding = Sharding::Auto;  // several devices: by pixels, by electrons, or the cost model's pick
};

// Direct far-field spectra d²W/dωdΩ on (ω grid, the screen's directions), written to spectrum.h5
// by the run (share/docs/outputs.md "Direct spectra"). ω_k: linear or logarithmic from omega_min
// to omega_max (both included; count = 1 gives omega_min), in units of the laser ω or in eV (ħω).
struct SpectraSection {
  bool enabled = false;
  double omega_min = 0.5;
  double omega_max = 4.0;
  SpectraUnit unit = SpectraUnit::Laser;
  int count = 512;
  SpectraScale scale = SpectraScale::Linear;
  SpectraSum sum = SpectraSum::Both;
  int nodes = 8;          // Gauss–Legendre nodes per sub-piece of a spline interval
  double phase = 2.0;     // rad: largest phase excursion of one sub-piece
  SpectraMethod method = SpectraMethod::Auto;  // direct quadrature, fft or dft of the far-field series, or auto
};

// Where an effective value came from (the manifest records it).
enum class Origin { Default, File, Environment, CommandLine };
const char* origin_name(Origin o);

struct Campaign;
// Where the effective value of core key `key` ("accumulator.devices") came from, for messages
// about a value that is checked after the campaign was read (a device spec): "from the environment
// variable EDM_DEVICE", "from the command line: --device or --set", "from FILE", or "" for the
// default. The environment was not named, so EDM_DEVICE=7 read as if the user had typed it.
std::string value_origin(const Campaign& campaign, const std::string& key);

struct Campaign {
  std::filesystem::path file;  // the campaign file ("" when built in code)
  RunSection run;
  LaserSection laser;
  ElectronsSection electrons;
  TrajectorySection trajectory;
  ScreenSection screen;
  AccumulatorSection accumulator;
  SpectraSection spectra;
  // The plugin's own section ([thomson], [inverse_thomson], …) as written, validated against the
  // plugin's key list by core before the plugin sees it; keys the file leaves out hold the plugin's
  // declared default (so the plugin and the manifest see every effective value).
  toml::table scenario_section;
  // "section.key" → origin, for every key of the table (an alias is recorded as its targets).
  std::map<std::string, Origin> origins;

  // The effective campaign as TOML (every key of the table, SI): run.toml's [campaign], and what
  // `edm run` on that file would replay.
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
// Every key with an environment name in the table (EDM_NEWTON_ITERS, EDM_DEVICE, …; `edm schema`
// lists them) is read from the environment unless `read_environment` is false.
// A [sweep] table (a campaign of cells, share/docs/sweeps.md) is ConfigError EDM-SWP-012 pointing at
// `edm sweep`, unless `skip_sweep` (the cells of `edm sweep` read their base file with it).
Campaign load_campaign(const std::filesystem::path& file, const std::vector<Override>& overrides,
                       const std::vector<KeySpec>& plugin_keys = {}, bool read_environment = true,
                       bool skip_sweep = false);
// Same, from TOML text (tests; `name` stands in for the file name in messages).
Campaign parse_campaign(std::string_view toml_text, const std::string& name,
                        const std::vector<Override>& overrides,
                        const std::vector<KeySpec>& plugin_keys = {}, bool read_environment = true,
                        bool skip_sweep = false);
// Refuses what cannot be a campaign file before anything opens it: a missing file (ConfigError
// EDM-CFG-002), a directory (EDM-CFG-050), a FIFO, socket or device (IoError EDM-IO-091, never
// opened: a FIFO would block), a path the system cannot look up (a name too long, a parent that is
// a file: IoError EDM-IO-090). load_campaign and peek_scenario call it; an empty file is EDM-CFG-051.
void check_campaign_file(const std::filesystem::path& file);
// Reads just [run] scenario (to find the plugin before full validation).
std::string peek_scenario(const std::filesystem::path& file, const std::vector<Override>& overrides);

}  // namespace edm
