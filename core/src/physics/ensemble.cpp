// Electron ensembles (SI, as the campaign describes them): the deterministic sunflower disk, the
// CSV list reader with file:line errors, and a Gaussian beam from a portable seeded RNG
// (splitmix64 + xoshiro256** + Box–Muller written here: std::normal_distribution differs between
// standard libraries). Also the straight-line placement of an electron at a given laser phase.
#include "edm/ensemble.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <numbers>
#include <sstream>
#include <string>
#include <utility>

#include "edm/error.hpp"
#include "edm/schema.hpp"

namespace edm {

std::vector<ElectronInit> sunflower_disk(std::uint64_t count, double radius) {
  // Vogel's spiral: r_k = R √((k + ½)/N), θ_k = k·golden angle; equal area per point, no RNG.
  std::vector<ElectronInit> out(count);
  const double golden = std::numbers::pi * (3.0 - std::sqrt(5.0));
  for (std::uint64_t k = 0; k < count; ++k) {
    const double r = radius * std::sqrt((double(k) + 0.5) / double(count));
    const double th = golden * double(k);
    out[k].x = r * std::cos(th);
    out[k].y = r * std::sin(th);
  }
  return out;
}

namespace {

// A double as text with its significant digits (std::to_string prints 1e300 with 300 digits).
std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return {};
  const auto e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

std::vector<std::string> split_commas(const std::string& line) {
  std::vector<std::string> cols;
  std::string cur;
  for (char c : line) {
    if (c == ',') {
      cols.push_back(trim(cur));
      cur.clear();
    } else {
      cur += c;
    }
  }
  cols.push_back(trim(cur));
  return cols;
}

bool parse_double(const std::string& s, double& v) {
  if (s.empty()) return false;
  errno = 0;
  char* end = nullptr;
  v = std::strtod(s.c_str(), &end);
  // ERANGE means overflow (±HUGE_VAL: refused) or underflow (glibc sets it for any subnormal
  // result, e.g. 1e-320): a tiny value is still the number written, so only overflow is refused.
  return end == s.c_str() + s.size() && !(errno == ERANGE && std::isinf(v));
}

}  // namespace

std::string electron_out_of_range(const ElectronInit& e) {
  const auto& b = kElectronBounds;
  if (!(e.weight >= 0 && e.weight <= b.weight))
    return "weight = " + num(e.weight) + " is out of range (a macro-particle weight is a number of electrons, 0 … 1e30)";
  const double u = std::sqrt(e.ux * e.ux + e.uy * e.uy + e.uz * e.uz);
  if (!(u <= b.u)) return "|u| = " + num(u) + " is out of range (u = γβ, dimensionless, at most 1e8)";
  const std::pair<const char*, double> r[3] = {{"x", e.x}, {"y", e.y}, {"z", e.z}};
  for (const auto& [name, v] : r)
    if (!(std::fabs(v) <= b.position))
      return std::string(name) + " = " + num(v) + " m is out of range (a position is at most 1e3 m from the origin)";
  if (!(std::fabs(e.t0) <= b.time)) return "t = " + num(e.t0) + " s is out of range (a time is at most 1 s from 0)";
  return {};
}

namespace {

constexpr const char* kCsvColumns[8] = {"t0", "x", "y", "z", "ux", "uy", "uz", "weight"};


// The order of a header's columns: order[k] is the kCsvColumns index of the file's column k. Names
// are matched exactly (after trimming), each once; the 7 of t0,x,y,z,ux,uy,uz are required, weight
// is optional. A header naming the columns in another order was read by position (t0 taken from
// the x column: found by a tester); one that names something else is refused (EDM-CFG-209), never
// guessed.
std::vector<int> header_order(const std::vector<std::string>& names, const std::string& where) {
  std::vector<int> order;
  bool seen[8] = {};
  for (const auto& n : names) {
    const auto* it = std::find(std::begin(kCsvColumns), std::end(kCsvColumns), n);
    if (it == std::end(kCsvColumns))
      throw ConfigError("EDM-CFG-209", where + "the header names a column '" + n +
                                           "': the columns are t0,x,y,z,ux,uy,uz and optionally weight, in any order");
    const int k = int(it - std::begin(kCsvColumns));
    if (seen[k]) throw ConfigError("EDM-CFG-209", where + "the header names column '" + n + "' twice");
    seen[k] = true;
    order.push_back(k);
  }
  for (int k = 0; k < 7; ++k)
    if (!seen[k])
      throw ConfigError("EDM-CFG-209", where + "the header lacks column '" + kCsvColumns[k] +
                                           "' (t0,x,y,z,ux,uy,uz are required, weight is optional)");
  return order;
}

// A row's fields in kCsvColumns order (7, or 8 with the weight), from the header's order.
std::vector<std::string> reorder(const std::vector<std::string>& cols, const std::vector<int>& order) {
  if (order.empty() || cols.size() != order.size()) return cols;  // by position, or the count check below
  std::vector<std::string> out(order.size() == 8 ? 8 : 7);
  for (std::size_t c = 0; c < cols.size(); ++c) out[std::size_t(order[c])] = cols[c];
  return out;
}

// One data row of the electron list: 7 columns, or 8 with the macro-particle weight (which every row
// of the file then has: `columns` is the first row's count). Errors name file:line and the column.
ElectronInit parse_electron_row(const std::vector<std::string>& cols, std::size_t columns, const std::string& where) {
  if (cols.size() != 7 && cols.size() != 8)
    throw ConfigError("EDM-CFG-202", where + "expected 7 columns (t0,x,y,z,ux,uy,uz) or 8 (…,weight), found " +
                                         std::to_string(cols.size()));
  if (cols.size() != columns)
    throw ConfigError("EDM-CFG-642", where + "found " + std::to_string(cols.size()) + " columns, the first row has " +
                                         std::to_string(columns) + ": the weight column is in every row or in none");
  double v[8] = {0, 0, 0, 0, 0, 0, 0, 1.0};
  for (std::size_t c = 0; c < cols.size(); ++c) {
    if (!parse_double(cols[c], v[c]))
      throw ConfigError("EDM-CFG-203", where + "column " + kCsvColumns[c] + " is not a number: '" + cols[c] + "'");
    if (!std::isfinite(v[c])) throw ConfigError("EDM-CFG-204", where + "column " + kCsvColumns[c] + " is not finite");
  }
  if (v[7] < 0)
    throw ConfigError("EDM-CFG-643", where + "column weight = " + cols[7] +
                                         " is negative (a macro-particle weight is a number of electrons, >= 0)");
  if (v[7] > kElectronBounds.weight)
    throw ConfigError("EDM-CFG-660", where + "column weight = " + cols[7] +
                                         " is out of range (a macro-particle weight is a number of electrons, "
                                         "at most 1e30)");
  const ElectronInit e{v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]};
  const double u2 = v[4] * v[4] + v[5] * v[5] + v[6] * v[6];
  if (u2 > kElectronBounds.u * kElectronBounds.u)
    throw ConfigError("EDM-CFG-205", where + "|u| = " + num(std::sqrt(u2)) +
                                         " is out of range (u = γβ, dimensionless, at most 1e8)");
  if (const auto bad = electron_out_of_range(e); !bad.empty()) throw ConfigError("EDM-CFG-662", where + bad);
  return e;
}

}  // namespace

std::vector<ElectronInit> read_electron_csv(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw ConfigError("EDM-CFG-201", path + ": cannot open the electron list (electrons.file)");
  std::vector<ElectronInit> out;
  std::string raw;
  std::size_t lineno = 0, columns = 0;
  bool first_content = true;
  std::vector<int> order;  // the header's column order; empty: by position (no header)
  while (std::getline(in, raw)) {
    ++lineno;
    std::string line = raw;
    if (auto h = line.find('#'); h != std::string::npos) line.erase(h);
    line = trim(line);
    if (line.empty()) continue;
    const auto cols = split_commas(line);
    // The first non-comment line may be a header: accepted only if no field of it is a number.
    if (first_content) {
      first_content = false;
      bool any_number = false;
      for (auto& c : cols) {
        double d;
        any_number |= parse_double(c, d);
      }
      if (!any_number) {
        order = header_order(cols, path + ":" + std::to_string(lineno) + ": ");
        columns = cols.size();
        continue;
      }
    }
    if (columns == 0) columns = cols.size();
    const std::string where = path + ":" + std::to_string(lineno) + ": ";
    out.push_back(parse_electron_row(reorder(cols, order), columns, where));
  }
  if (out.empty()) throw ConfigError("EDM-CFG-206", path + ": the electron list holds no electrons");
  return out;
}

// ---- portable RNG -------------------------------------------------------------------------------

static std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

PortableRng::PortableRng(std::uint64_t seed, std::uint64_t stream) {
  // Each (seed, stream) pair gets its own xoshiro state from splitmix64, so electron i's numbers
  // do not depend on how many electrons were drawn before it (ranks can generate slices).
  std::uint64_t sm = seed ^ (0xD1B54A32D192ED03ull * (stream + 1));
  for (auto& w : s_) w = splitmix64(sm);
}

std::uint64_t PortableRng::next() {
  auto rotl = [](std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); };
  const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const std::uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

double PortableRng::uniform() {  // in (0, 1]: 53 random bits, never 0 (log in Box–Muller)
  return (double(next() >> 11) + 1.0) * 0x1.0p-53;
}

double PortableRng::normal() {
  if (has_spare_) {
    has_spare_ = false;
    return spare_;
  }
  const double r = std::sqrt(-2.0 * std::log(uniform()));
  const double th = 2.0 * std::numbers::pi * uniform();
  spare_ = r * std::sin(th);
  has_spare_ = true;
  return r * std::cos(th);
}

std::vector<ElectronInit> gaussian_beam(const ElectronsSection& s, double gamma, std::uint64_t seed) {
  // A section built in code has not been through the key table: the guards ask the table.
  check_key_value("electrons.gamma", gamma, "EDM-CFG-207");
  for (const auto& [key, v] : {std::pair{"electrons.sigma_x", s.sigma_x}, {"electrons.sigma_y", s.sigma_y},
                               {"electrons.sigma_z", s.sigma_z}, {"electrons.energy_spread", s.energy_spread},
                               {"electrons.emittance_x", s.emittance_x}, {"electrons.emittance_y", s.emittance_y}})
    check_key_value(key, v, "EDM-CFG-208");
  // Uncorrelated beam at its waist: σ_ux = ε_n/σ_x (normalised emittance ε_n = σ_x σ_ux).
  const double sux = s.sigma_x > 0 ? s.emittance_x / s.sigma_x : 0.0;
  const double suy = s.sigma_y > 0 ? s.emittance_y / s.sigma_y : 0.0;
  std::vector<ElectronInit> out(s.count);
  for (std::uint64_t i = 0; i < s.count; ++i) {
    PortableRng rng(seed, i);
    ElectronInit& e = out[i];
    e.x = s.sigma_x * rng.normal();
    e.y = s.sigma_y * rng.normal();
    e.z = s.sigma_z * rng.normal();
    e.ux = sux * rng.normal();
    e.uy = suy * rng.normal();
    const double g = gamma * (1.0 + s.energy_spread * rng.normal());
    // A draw below the rest energy (only with a large spread near γ = 1) leaves the electron with
    // its transverse momentum and no longitudinal one.
    e.uz = std::sqrt(std::max(0.0, g * g - 1.0 - e.ux * e.ux - e.uy * e.uy));
  }
  return out;
}

void place_at_phase(const ElectronInit& e, const Normalization& units, int s, double xi_start, double y[8]) {
  const double t0 = e.t0 / units.time();
  const double x0 = e.x / units.length(), y0 = e.y / units.length(), z0 = e.z / units.length();
  const double g = std::sqrt(1.0 + e.ux * e.ux + e.uy * e.uy + e.uz * e.uz);
  // Straight unperturbed line x(t) = x0 + v (t − t0); ξ(t) = t − s z(t) grows at rate
  // 1 − s v_z = h/γ > 0, so the time at which ξ = xi_start is unique.
  const double h = g - s * e.uz;
  const double dt = (xi_start - (t0 - s * z0)) * g / h;
  y[0] = t0 + dt;
  y[1] = x0 + e.ux / g * dt;
  y[2] = y0 + e.uy / g * dt;
  y[3] = z0 + e.uz / g * dt;
  y[4] = g;
  y[5] = e.ux;
  y[6] = e.uy;
  y[7] = e.uz;
}

}  // namespace edm

// Phased-array prebunching (edm/ensemble.hpp, share/docs/ensembles.md "Prebunching").
namespace edm {
namespace {

bool prebunching_requested(const ElectronsSection& s) {
  return s.bunch_harmonic != 0 || s.bunch_ell != 0 || s.bunch_chirp != 0;
}

std::string prebunch_keys(const ElectronsSection& s) {
  char buf[200];
  std::snprintf(buf, sizeof buf, "electrons.bunch_harmonic = %d, bunch_ell = %d, bunch_chirp = %g m", s.bunch_harmonic,
                s.bunch_ell, s.bunch_chirp);
  return buf;
}

// The early-arrival budget: light from an electron moved by Δz reaches the axis 2Δz/((1+β)c) early,
// and the window, placed for the whole burst, must still hold every electron's light with room for
// the burst itself: the spread of the advances may take at most half of it.
void check_arrival_budget(const Campaign& c, const std::vector<double>& dz, double beta) {
  if (c.screen.samples <= 0 || dz.empty()) return;  // "auto": the window is sized to the light
  const auto [lo, hi] = std::minmax_element(dz.begin(), dz.end());
  const double spread = 2.0 * (*hi - *lo) / (1.0 + beta) / si::c;
  const double window = double(c.screen.samples - 1) * c.laser.wavelength / si::c / c.screen.samples_per_period;
  if (spread <= 0.5 * window) return;
  char msg[600];
  std::snprintf(msg, sizeof msg,
                "%s: the offsets spread the electrons' arrivals over %.3g s, more than half the observer "
                "window (%.3g s: screen.samples × the sample step), the early-arrival budget; lower "
                "|bunch_ell| or bunch_chirp, or raise screen.samples (or set it to \"auto\")",
                prebunch_keys(c.electrons).c_str(), spread, window);
  throw ConfigError("EDM-CFG-733", msg);
}

}  // namespace

void refuse_prebunching(const ElectronsSection& s, const char* scenario) {
  if (prebunching_requested(s))
    throw ConfigError("EDM-CFG-730", prebunch_keys(s) + ": prebunching phases an electron beam for inverse Thomson; "
                                                        "the " + scenario + " scenario has none (set them to 0)");
}

void prebunch(std::vector<ElectronInit>& ens, const Campaign& c, double beta, double lambda) {
  const ElectronsSection& s = c.electrons;
  if (!prebunching_requested(s)) return;
  if (s.bunch_harmonic < 1)
    throw ConfigError("EDM-CFG-732", prebunch_keys(s) + ": bunch_ell and bunch_chirp phase the harmonic n_b, "
                                                        "set electrons.bunch_harmonic >= 1");
  // ρ²/(2Z) equalises the paths to the axis point at distance Z; at infinity (or behind) it is 0.
  const double Z = c.screen.distance;
  const double inv_2z = std::isfinite(Z) && Z > 0 ? 0.5 / Z : 0.0;
  const double R2 = s.radius * s.radius;
  const double step = double(s.bunch_ell) * lambda / double(s.bunch_harmonic);
  std::vector<double> dz(ens.size());
  for (std::size_t i = 0; i < ens.size(); ++i) {
    const double r2 = ens[i].x * ens[i].x + ens[i].y * ens[i].y;
    double th = std::atan2(ens[i].y, ens[i].x);
    if (th < 0) th += 2.0 * std::numbers::pi;
    const double chirp = R2 > 0 ? s.bunch_chirp * r2 / R2 : 0.0;
    dz[i] = 0.5 * (1.0 + beta) * (r2 * inv_2z + step * th / (2.0 * std::numbers::pi)) - chirp;
  }
  check_arrival_budget(c, dz, beta);
  for (std::size_t i = 0; i < ens.size(); ++i) ens[i].z += dz[i];
}

}  // namespace edm
