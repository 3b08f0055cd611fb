// The campaign schema: one KeySpec per core key (DESIGN §6), the single list that validation
// (campaign.cpp), `edm schema` and the did-you-mean read. Defaults here must equal the struct
// defaults in campaign.hpp; tests/test_campaign.cpp checks that they do.
#include "edm/schema.hpp"

#include <algorithm>
#include <cctype>

namespace edm {

namespace {

std::vector<KeySpec> build_schema() {
  // Columns: section, key, type, unit, default (TOML text), meaning, choices, constraint.
  const std::vector<std::string> none;
  return {
      // [run]
      {"run", "scenario", "string", "", "\"inverse_thomson\"",
       "scenario plugin (`edm plugins` lists them); its own keys live in section [<scenario>]", none, ""},
      {"run", "output", "string", "", "\"runs/quickstart\"", "run folder: field.h5, run.toml, plots", none, ""},
      {"run", "mode", "string", "", "\"total\"", "field buckets: total (E, B) or split (adds E_far, B_far)",
       {"total", "split"}, ""},
      {"run", "seed", "int", "", "1", "seed of every random draw (gaussian ensembles)", none, ">=0"},
      // [laser]
      {"laser", "profile", "string", "", "\"gaussian\"", "laser field model",
       {"plane_wave", "gaussian", "laguerre_gauss"}, ""},
      {"laser", "wavelength", "float", "m", "800e-9", "carrier wavelength λ (ω = 2πc/λ)", none, ">0"},
      {"laser", "a0", "float", "", "0.1", "peak normalised amplitude eE0/(m c ω) (unless pulse_energy > 0)",
       none, ">=0"},
      {"laser", "pulse_energy", "float", "J", "0.0",
       "pulse energy; > 0 sets a0 from it (gaussian, laguerre_gauss)", none, ">=0"},
      {"laser", "polarization", "string", "", "\"linear\"", "polarisation of the carrier",
       {"linear", "circular_plus", "circular_minus"}, ""},
      {"laser", "duration", "float", "s", "26.7e-15", "τ0 of the envelope exp(−(ξ/τ0)²)", none, ">0"},
      {"laser", "envelope", "string", "", "\"gaussian\"", "temporal envelope", {"gaussian", "constant"}, ""},
      {"laser", "waist", "float", "m", "20e-6", "beam waist w0 (gaussian, laguerre_gauss)", none, ">0"},
      {"laser", "p", "int", "", "0", "radial mode index (laguerre_gauss)", none, ">=0"},
      {"laser", "m", "int", "", "0", "azimuthal mode index, OAM (laguerre_gauss)", none, ""},
      {"laser", "phase", "float", "rad", "0.0", "carrier phase φ0", none, ""},
      {"laser", "focus", "float", "m", "0.0", "z of the focus", none, ""},
      // Optional: absent means the scenario's choice (thomson +1, inverse_thomson −1), so the
      // default is empty rather than a value a user could write.
      {"laser", "direction", "int", "", "", "propagation direction s = ±1 along z (absent: the scenario's choice)",
       none, "+-1"},
      // [electrons]
      {"electrons", "distribution", "string", "", "\"sunflower\"", "ensemble shape",
       {"sunflower", "gaussian", "list"}, ""},
      {"electrons", "count", "int", "", "16", "number of electrons (sunflower, gaussian)", none, ">=1"},
      {"electrons", "radius", "float", "m", "5e-6", "disk radius (sunflower)", none, ">=0"},
      {"electrons", "gamma", "float", "", "5.0", "Lorentz factor of the beam (inverse_thomson)", none, ">=1"},
      {"electrons", "file", "string", "", "\"\"",
       "CSV t0,x,y,z,ux,uy,uz in SI, u = γβ (list); relative to the campaign file", none, ""},
      {"electrons", "sigma_x", "float", "m", "1e-6", "rms size along x (gaussian)", none, ">=0"},
      {"electrons", "sigma_y", "float", "m", "1e-6", "rms size along y (gaussian)", none, ">=0"},
      {"electrons", "sigma_z", "float", "m", "1e-6", "rms size along z (gaussian)", none, ">=0"},
      {"electrons", "energy_spread", "float", "", "0.0", "relative rms spread of γ (gaussian)", none, ">=0"},
      {"electrons", "emittance_x", "float", "m·rad", "0.0", "normalised emittance in x (gaussian)", none, ">=0"},
      {"electrons", "emittance_y", "float", "m·rad", "0.0", "normalised emittance in y (gaussian)", none, ">=0"},
      // [trajectory]
      {"trajectory", "model", "string", "", "\"lorentz\"", "equations of motion or external tracks",
       {"lorentz", "landau_lifshitz", "tracks"}, ""},
      {"trajectory", "knots_per_period", "int", "", "16", "spline knots per proper-time carrier period", none,
       ">=1"},
      {"trajectory", "file", "string", "", "\"\"", "HDF5 file of external trajectories (tracks)", none, ""},
      {"trajectory", "padding", "float", "", "6.0",
       "envelope durations τ0 integrated before and after the peak", none, ">0"},
      {"trajectory", "rtol", "float", "", "1e-13", "GSL odeiv2 relative tolerance", none, ">0"},
      {"trajectory", "atol", "float", "", "1e-15", "GSL odeiv2 absolute tolerance (normalised units)", none, ">0"},
      // [screen]
      {"screen", "distance", "float", "m", "0.05", "z of the screen plane (negative: behind the interaction)",
       none, "!=0"},
      {"screen", "half_width", "float", "m", "2e-3", "sets half_width_x and half_width_y (a square screen)",
       none, ">0"},
      {"screen", "half_width_x", "float", "m", "2e-3", "half width of the screen along x", none, ">0"},
      {"screen", "half_width_y", "float", "m", "2e-3", "half width of the screen along y", none, ">0"},
      {"screen", "nx", "int", "", "64", "pixels along x", none, ">=1"},
      {"screen", "ny", "int", "", "64", "pixels along y", none, ">=1"},
      {"screen", "samples", "int", "", "512", "observer time samples per pixel", none, ">=1"},
      {"screen", "samples_per_period", "int", "", "512", "samples per laser period: dt = T / samples_per_period",
       none, ">=1"},
      {"screen", "window", "string", "", "\"auto\"", "time window: auto (corner-anchored) or explicit (t_start)",
       {"auto", "explicit"}, ""},
      {"screen", "t_start", "float", "s", "0.0", "absolute lab time of sample 0 (window = explicit)", none, ""},
      {"screen", "allow_clipping", "bool", "", "false", "report clipped electrons instead of refusing the run",
       none, ""},
      // [accumulator]
      {"accumulator", "kernel", "string", "", "\"newton\"", "field kernel (retarded-time solver)", none, ""},
      {"accumulator", "newton_iters", "int", "", "2", "Newton iterations per sample (env EDM_NEWTON_ITERS)", none,
       ">=1"},
      {"accumulator", "coef_reuse", "bool", "", "true", "reuse spline coefficients between samples (env EDM_COEF_REUSE)",
       none, ""},
      {"accumulator", "sample_chunks", "int", "", "0", "samples per work-item chunk, 0 = from the device (env EDM_SAMPLE_CHUNKS)",
       none, ">=0"},
      {"accumulator", "work_group", "int", "", "0", "OpenCL work-group size, 0 = from the device", none, ">=0"},
      {"accumulator", "electron_group", "int", "", "0",
       "electrons per kernel launch, summed in registers (bit-identical for any value); 0 = from the device",
       none, ">=0"},
      {"accumulator", "tile_width", "int", "", "0",
       "pixels per row of a work-group's pixel tile (pixel_order tiles; divides work_group); 0 = 4", none, ">=0"},
      {"accumulator", "pixel_order", "string", "", "\"auto\"",
       "which pixels share a warp (speed only, results bit-identical): rings around the axis, tiles, "
       "rows; auto = rings (tiles if tile_width > 0)",
       {"auto", "rings", "tiles", "rows"}, ""},
      {"accumulator", "electron_batch", "int|string", "", "0",
       "electrons per batch: 0 = single pass, \"auto\" = from host memory (env EDM_ELECTRON_BATCH)", none, ">=0"},
      {"accumulator", "batch_overlap", "bool", "", "true",
       "solve batch k+1 while batch k runs on the device (env EDM_ELECTRON_BATCH_OVERLAP)", none, ""},
      {"accumulator", "devices", "string", "", "\"auto\"",
       "\"auto\" | \"all\" | \"0,1\" | a device-name substring (env EDM_DEVICE)", none, ""},
  };
}

std::string lower(std::string s) {
  for (auto& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

std::size_t levenshtein(const std::string& a, const std::string& b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

}  // namespace

const std::vector<KeySpec>& core_schema() {
  static const std::vector<KeySpec> schema = build_schema();
  return schema;
}

const std::vector<std::string>& core_sections() {
  static const std::vector<std::string> sections = {"run",        "laser",  "electrons",
                                                    "trajectory", "screen", "accumulator"};
  return sections;
}

const KeySpec* find_core_key(const std::string& section, const std::string& key) {
  for (const auto& k : core_schema())
    if (k.section == section && k.key == key) return &k;
  return nullptr;
}

std::string closest_match(const std::string& word, const std::vector<std::string>& candidates) {
  // Case-insensitive edit distance; a suggestion must be within about a third of the word's length
  // (at least 1), so that "nxx" finds "nx" and "wavelenght" finds "wavelength" but "foo" finds
  // nothing among unrelated short keys.
  const std::string w = lower(word);
  std::string best;
  std::size_t best_d = static_cast<std::size_t>(-1);
  for (const auto& c : candidates) {
    const std::string lc = lower(c);
    const std::size_t d = levenshtein(w, lc);
    const std::size_t limit = std::max<std::size_t>(1, std::min(w.size(), lc.size()) / 3 + 1);
    if (d <= limit && d < std::max(w.size(), lc.size()) && d < best_d) {
      best = c;
      best_d = d;
    }
  }
  return best;
}

}  // namespace edm
