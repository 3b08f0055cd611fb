// The key table: every core campaign key, declared once. A line names the section and the key (the
// Campaign member of the same name, whose type and initialiser are the key's type and default),
// then the unit, the range rule, the meaning and, where they exist, the environment variable and
// the `edm run` option. A choice's words come from its enum (Choices<E> in campaign.hpp).
// Adding a key: the member in campaign.hpp and one line here (share/docs/developing.md).
#include <algorithm>
#include <cmath>
#include <limits>

#include "config/values.hpp"
#include "edm/campaign.hpp"
#include "edm/error.hpp"

namespace edm {
namespace {

// The optional columns of a table line.
struct Extra {
  const char* env = "";   // EDM_* variable
  const char* flag = "";  // `edm run` option(s), space-separated; "output,o" has a short form
  bool or_auto = false;   // an integer that also takes "auto", held as −1
  bool optional = false;  // the default means "absent": to_toml leaves it out, schema shows none
  bool or_infinity = false;  // a float that also takes "infinity" (and TOML's inf), held as +inf
};

template <class M>
KeyValue to_value(const M& v, bool or_auto) {
  if constexpr (std::is_same_v<M, bool> || std::is_same_v<M, double> || std::is_same_v<M, std::string>) {
    return v;
  } else if constexpr (Choice<M>) {
    return std::string(name(v));
  } else {
    static_assert(std::is_integral_v<M>, "a key is a bool, double, string, integer or choice member");
    if (or_auto && v == M(-1)) return std::string("auto");
    return static_cast<std::int64_t>(v);
  }
}

template <class M>
void from_value(M& m, const KeyValue& v, const std::string& where) {
  if constexpr (std::is_same_v<M, bool> || std::is_same_v<M, double> || std::is_same_v<M, std::string>) {
    m = std::get<M>(v);
  } else if constexpr (Choice<M>) {
    m = parse_choice<M>(std::get<std::string>(v));  // the word was checked against the same names
  } else {
    const std::int64_t i = std::get<std::int64_t>(v);
    if (i < static_cast<std::int64_t>(std::numeric_limits<M>::min()) ||
        (i > 0 && static_cast<std::uint64_t>(i) > static_cast<std::uint64_t>(std::numeric_limits<M>::max())))
      throw ConfigError(config::kOutOfRange, where + ": value " + std::to_string(i) + " is out of range");
    m = static_cast<M>(i);
  }
}

template <class M>
std::string type_of(bool or_auto) {
  if constexpr (std::is_same_v<M, bool>) return "bool";
  if constexpr (std::is_same_v<M, double>) return "float";
  if constexpr (std::is_same_v<M, std::string> || Choice<M>) return "string";
  return or_auto ? "int|string" : "int";
}

template <class S, class M>
CoreKey key(const char* section, const char* name, S Campaign::*sec, M S::*mem, const char* unit,
            const char* rule, const char* meaning, Extra x = {}) {
  CoreKey k;
  k.spec.section = section;
  k.spec.key = name;
  k.spec.type = type_of<M>(x.or_auto);
  k.spec.unit = unit;
  k.spec.meaning = meaning;
  if constexpr (Choice<M>) k.spec.choices.assign(Choices<M>::names.begin(), Choices<M>::names.end());
  k.spec.constraint = rule;
  k.spec.environment = x.env;
  k.spec.flag = x.flag;
  k.spec.takes_infinity = x.or_infinity;
  k.optional = x.optional;
  const bool or_auto = x.or_auto;
  k.get = [sec, mem, or_auto](const Campaign& c) { return to_value((c.*sec).*mem, or_auto); };
  k.set = [sec, mem](Campaign& c, const KeyValue& v, const std::string& where) {
    from_value((c.*sec).*mem, v, where);
  };
  k.initial = k.get(Campaign{});
  k.spec.default_value = x.optional ? "" : toml_text(k.initial);
  return k;
}

// A second name that sets several keys of its section at once (type, unit, rule and default are
// those of the first target, filled in by build_table).
CoreKey alias(const char* section, const char* name, std::vector<std::string> targets, const char* meaning) {
  CoreKey k;
  k.spec.section = section;
  k.spec.key = name;
  k.spec.meaning = meaning;
  k.targets = std::move(targets);
  return k;
}

// The Campaign member named like the key: a misspelt key does not compile.
#define EDM_KEY(section, key_name, ...) \
  key(#section, #key_name, &Campaign::section, &decltype(Campaign::section)::key_name, __VA_ARGS__)

std::vector<CoreKey> run_keys() {
  return {
      EDM_KEY(run, scenario, "", "",
              "scenario plugin (`edm plugins` lists them); its own keys live in section [<scenario>]"),
      EDM_KEY(run, output, "", "", "run folder: field.h5, run.toml, plots", {.flag = "output,o"}),
      EDM_KEY(run, mode, "", "", "field buckets: total (E, B), split (adds E_far, B_far) or potential (the four-potential A^mu: phi/c and A)"),
      EDM_KEY(run, seed, "", ">=0", "seed of every random draw (gaussian ensembles)"),
  };
}

std::vector<CoreKey> laser_keys() {
  return {
      EDM_KEY(laser, profile, "", "", "laser field model"),
      // From hard X-rays (10 pm) to far infrared (1 mm): beyond them the knot and sample counts of a
      // pulse run away (a period per knot spacing) or a period spans more than the screen.
      EDM_KEY(laser, wavelength, "m", ">0;1e-11..1e-3", "carrier wavelength λ (ω = 2πc/λ)"),
      // Beyond 1e4 no laser exists and the motion is radiation-dominated (Lorentz alone is wrong).
      EDM_KEY(laser, a0, "", "0..1e4", "peak normalised amplitude eE0/(m c ω) (unless pulse_energy > 0)"),
      // Up to 1 MJ: ten times the largest laser pulses built.
      EDM_KEY(laser, pulse_energy, "J", "0..1e6",
              "pulse energy; > 0 sets a0 from it (gaussian, laguerre_gauss)"),
      EDM_KEY(laser, polarization, "", "", "polarisation of the carrier"),
      // An attosecond to a microsecond: the knots grow with the periods in the pulse.
      EDM_KEY(laser, duration, "s", ">0;1e-18..1e-6", "τ0 of the envelope exp(−(ξ/τ0)^(2·order))"),
      EDM_KEY(laser, envelope, "", "", "temporal envelope"),
      // 50: the top is within 1e-12 of 1 for |ξ| < 0.76 τ0 and the edge falls from 0.99 to 0.01
      // within 6 % of τ0; a higher order only sharpens edges the trajectory's knots must resolve.
      EDM_KEY(laser, order, "", "1..50",
              "order p of the supergaussian envelope exp(−(ξ/τ0)^(2p)) (1 = gaussian; envelope = supergaussian)"),
      EDM_KEY(laser, waist, "m", ">0;1e-9..10", "beam waist w0 (gaussian, laguerre_gauss)"),
      // Laguerre polynomials of order p cost p terms per field call; 100 is far past any experiment.
      EDM_KEY(laser, p, "", "0..100", "radial mode index (laguerre_gauss)"),
      EDM_KEY(laser, m, "", "-100..100", "azimuthal mode index, OAM (laguerre_gauss)"),
      EDM_KEY(laser, phase, "rad", "", "carrier phase φ0"),
      EDM_KEY(laser, focus, "m", "", "z of the focus"),
      EDM_KEY(laser, direction, "", "+-1",
              "propagation direction s = ±1 along z (absent: the scenario's choice)", {.optional = true}),
  };
}

std::vector<CoreKey> electrons_keys() {
  return {
      EDM_KEY(electrons, distribution, "", "", "ensemble shape"),
      // 1e9 electrons hold 256 GB of states alone before any solve (the plan also checks the host).
      EDM_KEY(electrons, count, "", "1..1e9", "number of electrons (sunflower, gaussian)"),
      EDM_KEY(electrons, radius, "m", "0..1", "disk radius (sunflower)"),
      // Up to 1e6 (0.5 TeV), past every accelerator; the Doppler factor 4γ² then shortens a period by 4e12.
      EDM_KEY(electrons, gamma, "", "1..1e6", "Lorentz factor of the beam (inverse_thomson)"),
      EDM_KEY(electrons, file, "", "",
              "CSV t0,x,y,z,ux,uy,uz[,weight] in SI, u = γβ (list); relative to the campaign file"),
      EDM_KEY(electrons, sigma_x, "m", ">=0", "rms size along x (gaussian)"),
      EDM_KEY(electrons, sigma_y, "m", ">=0", "rms size along y (gaussian)"),
      EDM_KEY(electrons, sigma_z, "m", ">=0", "rms size along z (gaussian)"),
      EDM_KEY(electrons, energy_spread, "", ">=0", "relative rms spread of γ (gaussian)"),
      EDM_KEY(electrons, emittance_x, "m·rad", ">=0", "normalised emittance in x (gaussian)"),
      EDM_KEY(electrons, emittance_y, "m·rad", ">=0", "normalised emittance in y (gaussian)"),
      EDM_KEY(electrons, form_factor_sigma_z, "m", ">=0",
              "rms length of the Gaussian form factor of the coherent sum (0 = none; share/docs/ensembles.md)"),
      EDM_KEY(electrons, form_factor_sigma_r, "m", ">=0",
              "rms transverse size of the Gaussian form factor of the coherent sum (0 = none)"),
      EDM_KEY(electrons, bunch_harmonic, "", "0..1000",
              "prebunching: the harmonic n_b phased across the disk (0 = none; inverse_thomson; share/docs/ensembles.md)"),
      EDM_KEY(electrons, bunch_ell, "", "-1000..1000", "prebunching: the OAM ℓ_b favoured at harmonic n_b"),
      EDM_KEY(electrons, bunch_chirp, "m", "-1..1",
              "prebunching: offset subtracted at the disk's edge, ∝ (ρ/R)² (0 = none)"),
  };
}

std::vector<CoreKey> trajectory_keys() {
  return {
      EDM_KEY(trajectory, model, "", "", "equations of motion, external tracks, or lpwa (closed form; share/docs/lpwa.md)"),
      // The solver needs two knots per period to resample a carrier period at all.
      EDM_KEY(trajectory, knots_per_period, "", "2..4096",
              "spline knots per proper-time carrier period; \"auto\": the fewest of 8, 16, … 2048 whose "
              "estimated relative field error meets trajectory.tolerance",
              {.or_auto = true}),
      // The lower bound is 2.5× the floor of a solved electron's field error, 4e-9 for the plane-wave
      // electron of test_knot_convergence whatever the knots (share/docs/design.md). The solver's
      // share of it is common to K and 2K, so the estimate of "auto" cannot see it (2.7e-10 at 256
      // knots per period, against 4.1e-9 measured): a tolerance near it would be met on paper only.
      EDM_KEY(trajectory, tolerance, "", ">0;1e-8..0.1",
              "knots_per_period = \"auto\": target relative L2 error of the field, at least 1e-8 (2.5x the "
              "splines' floor; unused with an integer)"),
      EDM_KEY(trajectory, file, "", "",
              "HDF5 file of external trajectories (tracks), or an openPMD series (openpmd: data.h5 or data_%T.h5)"),
      EDM_KEY(trajectory, species, "", "", "openpmd: the particle species to read (\"\" = the series' only one)"),
      // exp(−padding²) underflows a double past 27: more padding integrates nothing but free flight.
      EDM_KEY(trajectory, padding, "", ">0;1e-3..27", "envelope durations τ0 integrated before and after the peak"),
      EDM_KEY(trajectory, rtol, "", ">0", "GSL odeiv2 relative tolerance"),
      EDM_KEY(trajectory, atol, "", ">0", "GSL odeiv2 absolute tolerance (normalised units)"),
      EDM_KEY(trajectory, max_knots, "", "1..1e12",
              "largest predicted knots per electron (from the pulse, γ and the window) before any solve"),
      EDM_KEY(trajectory, max_total_knots, "", "1..1e15", "largest predicted knots of the whole ensemble"),
      // Four points per period missed γ's peak by 13 % at a0 = 50; 64 catch it within a percent.
      EDM_KEY(trajectory, gamma_trace_points, "", "4..4096",
              "γ(τ) trace samples per Doppler-shifted carrier period (field.h5 gamma trace)"),
  };
}

std::vector<CoreKey> screen_keys() {
  return {
      EDM_KEY(screen, type, "", "", "flat: pixels on the plane z = distance; angular: a grid of directions"),
      EDM_KEY(screen, distance, "m", "!=0",
              "z of the screen plane (negative: behind the interaction); angular: the sphere's radius, "
              "\"infinity\" for the far field",
              {.or_infinity = true}),
      alias("screen", "half_width", {"half_width_x", "half_width_y"},
            "sets half_width_x and half_width_y (a square screen)"),
      EDM_KEY(screen, half_width_x, "m", ">0", "half width of the screen along x"),
      EDM_KEY(screen, half_width_y, "m", ">0", "half width of the screen along y"),
      EDM_KEY(screen, nx, "", ">=1", "pixels along x"),
      EDM_KEY(screen, ny, "", ">=1", "pixels along y"),
      EDM_KEY(screen, samples, "", ">=1",
              "observer time samples per pixel; \"auto\" with window = burst: the burst's light plus lead and tail",
              {.or_auto = true}),
      EDM_KEY(screen, samples_per_period, "", ">=1", "samples per laser period: dt = T / samples_per_period"),
      EDM_KEY(screen, window, "", "", "time window: auto (centred on the interaction), explicit (t_start) or burst (on the burst's light, lead and tail)"),
      EDM_KEY(screen, t_start, "s", "", "absolute lab time of sample 0 (window = explicit)"),
      EDM_KEY(screen, allow_clipping, "", "", "report clipped electrons instead of refusing the run"),
      EDM_KEY(screen, strict, "", "", "refuse a window that misses the burst at some pixel (else a warning)"),
      EDM_KEY(screen, angles, "", "", "angular grid: xy (theta_x, theta_y) or polar (theta, phi) about the axis"),
      EDM_KEY(screen, axis, "", "", "angular screen's axis (theta = 0)"),
      EDM_KEY(screen, theta_x_min, "rad", "", "angles = xy: first theta_x (nx of them, to theta_x_max)"),
      EDM_KEY(screen, theta_x_max, "rad", "", "angles = xy: last theta_x"),
      EDM_KEY(screen, theta_y_min, "rad", "", "angles = xy: first theta_y (ny of them, to theta_y_max)"),
      EDM_KEY(screen, theta_y_max, "rad", "", "angles = xy: last theta_y"),
      EDM_KEY(screen, theta_min, "rad", "", "angles = polar: first polar angle from the axis (nx of them)"),
      EDM_KEY(screen, theta_max, "rad", "", "angles = polar: last polar angle"),
      EDM_KEY(screen, phi_min, "rad", "", "angles = polar: first azimuth about the axis (ny of them)"),
      EDM_KEY(screen, phi_max, "rad", "", "angles = polar: last azimuth"),
  };
}

std::vector<CoreKey> accumulator_keys() {
  return {
      EDM_KEY(accumulator, kernel, "", "",
              "field kernel (retarded-time solver): newton (bracketed Newton per sample), rk4 (RK4 march of "
              "dtau/dt_obs from each chunk's first root; flat screens), auto = the faster one measured for "
              "the device (share/docs/design.md)",
              {.env = "EDM_KERNEL"}),
      // 0..1024: the counts the rk4 kernel compiles (0 and "auto" alike: from the bound); a count
      // below the batch's bound is refused at accumulate (FieldAccumulator, EDM-ACC-081).
      EDM_KEY(accumulator, substeps, "", "0..1024",
              "kernel rk4: RK4 sub-steps per sample interval; 0 or \"auto\" = from the bound, per sample (each "
              "sub-step moves the retarded time by at most an eighth of a knot)",
              {.env = "EDM_RK4_SUBSTEPS", .or_auto = true}),
      // 1..64: the range the field accumulator compiles (its guard asks this line).
      EDM_KEY(accumulator, newton_iters, "", "1..64", "Newton iterations per sample",
              {.env = "EDM_NEWTON_ITERS"}),
      EDM_KEY(accumulator, coef_reuse, "", "", "reuse spline coefficients between samples",
              {.env = "EDM_COEF_REUSE"}),
      EDM_KEY(accumulator, sample_chunks, "", ">=0", "samples per work-item chunk, 0 = from the device",
              {.env = "EDM_SAMPLE_CHUNKS"}),
      EDM_KEY(accumulator, work_group, "", ">=0", "OpenCL work-group size, 0 = from the device"),
      // 0..64: the group sizes the field accumulator accepts.
      EDM_KEY(accumulator, electron_group, "", "0..64",
              "electrons per kernel launch, summed in registers (bit-identical for any value); 0 = from the "
              "device",
              {.env = "EDM_ELECTRON_GROUP"}),
      EDM_KEY(accumulator, tile_width, "", ">=0",
              "pixels per row of a work-group's pixel tile (pixel_order tiles; divides work_group); 0 = 4",
              {.env = "EDM_TILE_WIDTH"}),
      EDM_KEY(accumulator, pixel_order, "", "",
              "which pixels share a warp (speed only, results bit-identical): rings around the axis, tiles, "
              "rows; auto = rings, or tiles when the electrons spread about as wide as the screen (or "
              "tile_width > 0)",
              {.env = "EDM_PIXEL_ORDER"}),
      EDM_KEY(
          accumulator, max_registers, "", ">=-1",
          "register cap per work-item where the compiler has one (NVIDIA); 0 = from the device, -1 = none",
          {.env = "EDM_MAX_REGISTERS"}),
      EDM_KEY(
          accumulator, state_local, "", "-1..1",
          "the electron group's solver state in local memory instead of registers: 1 on, -1 off, 0 = from "
          "the device",
          {.env = "EDM_STATE_LOCAL"}),
      EDM_KEY(accumulator, fast_recip, "", "-1..1",
              "divisions and square roots from refined seeds (a few ulps): 1 on, -1 off (the built-ins), 0 = "
              "from the device",
              {.env = "EDM_FAST_RECIP"}),
      EDM_KEY(
          accumulator, nv_seed, "", "-1..1",
          "fast_recip seeds from NVIDIA's FP64 approximation instructions (NVIDIA only): 1 on, -1 off, 0 = "
          "from the device",
          {.env = "EDM_NV_SEED"}),
      EDM_KEY(accumulator, interleave, "", "-1..1",
              "the group's solves phase by phase (out-of-order CPUs; state in registers): 1 on, -1 off, 0 = "
              "from the device",
              {.env = "EDM_INTERLEAVE"}),
      EDM_KEY(accumulator, simd, "", "-1..16",
              "neighbouring pixels on the lanes of FP64 vectors (CPUs; flat screens): 1 on (the device's native "
              "width), 2, 4, 8 or 16 that many lanes, -1 off, 0 = from the device",
              {.env = "EDM_SIMD"}),
      EDM_KEY(accumulator, electron_batch, "", ">=0",
              "electrons per batch: 0 = single pass, \"auto\" = from the host memory budget",
              {.env = "EDM_ELECTRON_BATCH", .flag = "electron-batch", .or_auto = true}),
      EDM_KEY(accumulator, batch_overlap, "", "", "solve batch k+1 while batch k runs on the device",
              {.env = "EDM_ELECTRON_BATCH_OVERLAP"}),
      EDM_KEY(accumulator, tail_slabs, "", ">=-1",
              "the last batch launched in this many slabs of screen rows, each downloaded and written while "
              "the next computes (one device, one process; results bit-identical); 0 = from the device, "
              "-1 = off",
              {.env = "EDM_TAIL_SLABS"}),
      EDM_KEY(accumulator, devices, "", "",
              "device spec: auto | all | 0,1 | gpu | cpu | a device-name substring",
              {.env = "EDM_DEVICE", .flag = "device devices"}),
      EDM_KEY(accumulator, sharding, "", "",
              "several devices of one process: pixels (each device a tile of screen rows and every electron, "
              "no reduce; bit-identical to one device), electrons (each device a block of every batch, cubes "
              "reduced at the end), auto = the cheaper by the cost model (share/docs/design.md)",
              {.env = "EDM_SHARDING"}),
  };
}

std::vector<CoreKey> spectra_keys() {
  return {
      EDM_KEY(spectra, enabled, "", "", "compute direct far-field spectra d2W/domega dOmega into spectrum.h5"),
      EDM_KEY(spectra, omega_min, "laser omega or eV", ">0", "lowest frequency of the grid (unit: spectra.unit)"),
      EDM_KEY(spectra, omega_max, "laser omega or eV", ">0",
              "highest frequency of the grid, >= omega_min (unit: spectra.unit)"),
      EDM_KEY(spectra, unit, "", "", "unit of omega_min/omega_max: laser (multiples of the laser omega) or eV"),
      // A million frequencies is far past any spectrum's use (the GPU target grid has 2048); 1e9 was
      // allocated as asked and ended in bad_alloc reported as an internal error (found by a tester).
      EDM_KEY(spectra, count, "", "1..1e6", "frequencies on the grid"),
      EDM_KEY(spectra, scale, "", "", "grid spacing: linear or log (geometric)"),
      EDM_KEY(spectra, sum, "", "", "sums written: both, coherent (sum of w A) or incoherent (sum of w |A|^2)"),
      // 2..16: the node counts the spectra kernel accepts (its guard asks this line).
      EDM_KEY(spectra, nodes, "", "2..16", "Gauss-Legendre nodes per sub-piece of a spline interval"),
      // 6.3 ≈ 2π: beyond a turn per piece the Gauss–Legendre rule stops converging.
      EDM_KEY(spectra, phase, "rad", ">0;1e-6..6.3", "largest phase excursion of one quadrature sub-piece"),
      EDM_KEY(spectra, method, "", "",
              "how the amplitudes are computed: direct (quadrature over the spline pieces), fft (chirp-z "
              "transform of each electron's far-field series; angular screen at infinity, linear grid), dft "
              "(discrete Fourier sum of that series over the samples its light covers, a matrix product; angular "
              "screen at infinity, any grid) or auto (the cheapest by the cost model)"),
  };
}

// The table in the order `edm schema` prints it.
std::vector<CoreKey> table_lines() {
  std::vector<CoreKey> t;
  for (auto* section : {run_keys, laser_keys, electrons_keys, trajectory_keys, screen_keys, accumulator_keys,
                        spectra_keys})
    for (auto& k : section()) t.push_back(std::move(k));
  return t;
}

#undef EDM_KEY

std::vector<CoreKey> build_table() {
  std::vector<CoreKey> t = table_lines();
  for (auto& k : t) {
    if (k.targets.empty()) continue;
    // An alias takes its first target's type, unit, rule and default and sets every target.
    const auto first = std::find_if(t.begin(), t.end(), [&](const CoreKey& o) {
      return o.spec.section == k.spec.section && o.spec.key == k.targets.front();
    });
    k.spec.type = first->spec.type;
    k.spec.unit = first->spec.unit;
    k.spec.constraint = first->spec.constraint;
    k.spec.default_value = first->spec.default_value;
    k.initial = first->initial;
    std::vector<std::function<void(Campaign&, const KeyValue&, const std::string&)>> sets;
    for (const auto& name : k.targets)
      for (const auto& o : t)
        if (o.spec.section == k.spec.section && o.spec.key == name) sets.push_back(o.set);
    k.set = [sets](Campaign& c, const KeyValue& v, const std::string& where) {
      for (const auto& s : sets) s(c, v, where);
    };
  }
  return t;
}

}  // namespace

const std::vector<CoreKey>& core_keys() {
  static const std::vector<CoreKey> table = build_table();
  return table;
}

const CoreKey* core_key(std::string_view section, std::string_view key) {
  for (const auto& k : core_keys())
    if (k.spec.section == section && k.spec.key == key) return &k;
  return nullptr;
}

const CoreKey* core_key(std::string_view full_name) {
  const auto dot = full_name.find('.');
  if (dot == std::string_view::npos) return nullptr;
  return core_key(full_name.substr(0, dot), full_name.substr(dot + 1));
}

const std::vector<KeySpec>& core_schema() {
  static const std::vector<KeySpec> schema = [] {
    std::vector<KeySpec> out;
    for (const auto& k : core_keys()) out.push_back(k.spec);
    return out;
  }();
  return schema;
}

const KeySpec* find_core_key(const std::string& section, const std::string& key) {
  const auto& keys = core_keys();
  const CoreKey* k = core_key(section, key);
  return k ? &core_schema()[static_cast<std::size_t>(k - keys.data())] : nullptr;
}

const std::vector<std::string>& core_sections() {
  static const std::vector<std::string> sections = {"run",        "laser",  "electrons",
                                                    "trajectory", "screen", "accumulator", "spectra"};
  return sections;
}

namespace {

const CoreKey& guarded_key(std::string_view key) {
  const CoreKey* k = core_key(key);
  if (!k)
    throw ConfigError(config::kNotAKey, "'" + std::string(key) +
                                            "' is not a campaign key (a guard names a key the table lacks)");
  return *k;
}

}  // namespace

void check_key_value(std::string_view key, double value, const char* id) {
  const CoreKey& k = guarded_key(key);
  if (!std::isfinite(value) && !(k.spec.takes_infinity && value == std::numeric_limits<double>::infinity()))
    throw ConfigError(id ? id : config::kNotFinite, std::string(key) + " = " + config::format_double(value) +
                                                        ": a finite number is needed");
  const std::string problem = config::rule_problem(k.spec, value);
  if (!problem.empty())
    throw ConfigError(id ? id : config::kOutOfRange,
                      std::string(key) + " = " + config::format_double(value) + ": " + problem);
}

void check_key_choice(std::string_view key, std::size_t index, const char* id) {
  const CoreKey& k = guarded_key(key);
  if (index >= k.spec.choices.size())
    throw ConfigError(id ? id : config::kBadChoice, std::string(key) + " = " + std::to_string(index) +
                                                        " (as a number): not one of " +
                                                        config::join(k.spec.choices));
}

}  // namespace edm
