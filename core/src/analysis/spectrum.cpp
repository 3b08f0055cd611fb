// `edm spectrum` in the library: reads field.h5 a slab of rows at a time, FFTs every pixel's time
// series with GSL's mixed-radix real FFT (any N: 1666 = 2·7²·17), and accumulates the far-field
// spectrum, fluence, harmonic maps and screen integrals (conventions in spectrum.hpp). An angular
// screen's field.h5 is analysed per direction (share/docs/outputs.md, "edm spectrum of an angular
// run"): R·E at infinity needs no R², the grid's own solid angles, the fluence along n̂. Writes its
// part of spectrum.h5 through a SpectrumWriter (edm/spectrum_file.hpp).
#include "edm/spectrum.hpp"

#include <toml++/toml.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numbers>

#include "analysis/real_fft.hpp"
#include "analysis/slab_rows.hpp"
#include "edm/coverage.hpp"
#include "edm/directions.hpp"
#include "edm/error.hpp"
#include "edm/field_file.hpp"
#include "edm/photon_yield.hpp"
#include "edm/run_folder.hpp"
#include "edm/run_manifest.hpp"
#include "edm/units.hpp"
#include "io/h5.hpp"

namespace edm {
namespace {

constexpr double kPi = std::numbers::pi;
const double kMu0 = 1.0 / (si::eps0 * si::c * si::c);

std::string format_g(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

// In place (real_fft.hpp's half-complex layout), then adds |X_k|² into power[k], k = 0 … ⌊N/2⌋.
void add_power(analysis::RealFft& fft, std::size_t n, double* data, double* power) {
  if (!fft.transform(data)) throw Error("EDM-SPEC-031", "GSL real FFT failed (length " + std::to_string(n) + ")");
  power[0] += data[0] * data[0];
  const std::size_t half = n / 2;
  for (std::size_t k = 1; k < (n + 1) / 2; ++k)
    power[k] += data[2 * k - 1] * data[2 * k - 1] + data[2 * k] * data[2 * k];
  if (n % 2 == 0 && n > 1) power[half] += data[n - 1] * data[n - 1];
}

}  // namespace

Window parse_window(const std::string& name) {
  if (name == "hann") return Window::Hann;
  if (name == "blackman-harris") return Window::BlackmanHarris;
  if (name == "none") return Window::None;
  throw ConfigError("EDM-SPEC-001", "unknown window '" + name + "' (hann | blackman-harris | none)");
}

const char* window_name(Window w) {
  switch (w) {
    case Window::Hann:
      return "hann";
    case Window::BlackmanHarris:
      return "blackman-harris";
    case Window::None:
      return "none";
  }
  return "?";
}

namespace {
// w at the phase x = 2π u of the window, u ∈ [0, 1] its fractional position.
double window_at_phase(Window w, double x) {
  if (w == Window::None) return 1.0;
  if (w == Window::Hann) return 0.5 - 0.5 * std::cos(x);
  return 0.35875 - 0.48829 * std::cos(x) + 0.14128 * std::cos(2 * x) - 0.01168 * std::cos(3 * x);
}
}  // namespace

namespace {
// atan2 of |n̂×m̂| and n̂·m̂: accurate near 0, where acos(n̂·m̂) loses half its digits.
double angle_between(const double* n, const double* m) {
  const double c = n[0] * m[0] + n[1] * m[1] + n[2] * m[2];
  const double cx = n[1] * m[2] - n[2] * m[1], cy = n[2] * m[0] - n[0] * m[2], cz = n[0] * m[1] - n[1] * m[0];
  return std::atan2(std::sqrt(cx * cx + cy * cy + cz * cz), c);
}
}  // namespace

AxisSample nearest_axis_sample(const std::vector<double>& directions, std::size_t nx, std::size_t ny,
                               const std::array<double, 3>& a) {
  AxisSample s;
  s.angle = std::numeric_limits<double>::infinity();
  // A tie is an angle equal to the best within rounding: the first in row order keeps it.
  constexpr double kTie = 1e-12;
  const std::size_t npix = std::min(nx * ny, directions.size() / 3);
  for (std::size_t px = 0; px < npix; ++px) {
    const double angle = angle_between(&directions[3 * px], a.data());
    if (angle < s.angle - kTie) s.angle = angle, s.iy = px / nx, s.ix = px % nx;
  }
  // The pitch there: the nearest of its (up to four) grid neighbours that is another direction.
  double pitch = std::numeric_limits<double>::infinity();
  const double* n = &directions[3 * (s.iy * nx + s.ix)];
  const auto neighbour = [&](std::size_t ix, std::size_t iy) {
    if (ix >= nx || iy >= ny || 3 * (iy * nx + ix) + 2 >= directions.size()) return;
    const double d = angle_between(n, &directions[3 * (iy * nx + ix)]);
    if (d > kTie) pitch = std::min(pitch, d);
  };
  if (npix > 0) {
    neighbour(s.ix + 1, s.iy), neighbour(s.ix - 1, s.iy), neighbour(s.ix, s.iy + 1), neighbour(s.ix, s.iy - 1);
  }
  s.tolerance = std::isfinite(pitch) ? kOnAxisPitchFraction * pitch : kTie;
  s.on_axis = s.angle <= s.tolerance;
  return s;
}

std::string axis_sample_text(const AxisSample& s, bool flat, double x, double y) {
  char buf[200];
  const int n = std::snprintf(buf, sizeof buf, "%s ix=%zu, iy=%zu", flat ? "pixel" : "direction", s.ix, s.iy);
  std::string out(buf, std::size_t(std::max(0, n)));
  if (flat) {
    std::snprintf(buf, sizeof buf, " at (%.4g, %.4g) mm", x * 1e3, y * 1e3);
    out += buf;
  }
  if (s.on_axis) {
    std::snprintf(buf, sizeof buf, ", on the axis (%.3g mrad)", s.angle * 1e3);
  } else {
    std::snprintf(buf, sizeof buf, ", none on the axis: the nearest %s is %.4g mrad off it", flat ? "pixel" : "direction",
                  s.angle * 1e3);
  }
  return out + buf;
}

std::vector<double> flat_screen_directions(const std::vector<double>& x, const std::vector<double>& y, double z) {
  std::vector<double> d(3 * x.size() * y.size());
  for (std::size_t iy = 0; iy < y.size(); ++iy)
    for (std::size_t ix = 0; ix < x.size(); ++ix) {
      const double R = std::sqrt(x[ix] * x[ix] + y[iy] * y[iy] + z * z);
      double* n = &d[3 * (iy * x.size() + ix)];
      n[0] = x[ix] / R, n[1] = y[iy] / R, n[2] = z / R;
    }
  return d;
}

std::vector<AliasedHarmonic> aliased_harmonics(double line_omega, double a0, double nyquist) {
  std::vector<AliasedHarmonic> out;
  if (!(line_omega > 0) || !(nyquist > 0) || !std::isfinite(line_omega)) return out;
  // The orders with power above the floor, by the one estimate the run's check uses too
  // (edm/coverage.hpp significant_harmonics). 64 bounds the list.
  const int nmax = std::min(64, significant_harmonics(a0, kAliasPowerFloor));
  for (int n = 1; n <= nmax; ++n) {
    const double p = harmonic_power_estimate(a0, n);  // a0 = 0: the fundamental alone
    const double wn = n * line_omega;
    if (p < kAliasPowerFloor || wn <= nyquist) continue;
    const double m = std::fmod(wn, 2 * nyquist);  // sampling folds ω onto [0, 2 Nyquist), then mirrors
    out.push_back({n, wn, m <= nyquist ? m : 2 * nyquist - m, p});
  }
  return out;
}

std::vector<double> window_weights(Window w, std::size_t n) {
  std::vector<double> v(n, 1.0);
  if (w == Window::None || n < 2) return v;
  // 4-term Blackman–Harris (Harris 1978, −92 dB side lobes): keeps weak harmonics visible next to a
  // strong fundamental on a log scale.
  for (std::size_t j = 0; j < n; ++j) v[j] = window_at_phase(w, 2 * kPi * double(j) / double(n - 1));
  return v;
}

HarmonicBase parse_harmonic_base(const std::string& name) {
  if (name == "laser") return HarmonicBase::Laser;
  if (name == "line") return HarmonicBase::Line;
  throw ConfigError("EDM-SPEC-002", "unknown harmonic base '" + name + "' (laser | line)");
}

const char* harmonic_base_name(HarmonicBase b) { return b == HarmonicBase::Laser ? "laser" : "line"; }

double backscatter_line_omega(double laser_omega, double gamma, double a0) {
  const double beta = std::sqrt(std::max(0.0, 1.0 - 1.0 / (gamma * gamma)));
  // (1+β)/(1−β) = γ²(1+β)²: no 1−β cancellation at large γ.
  return laser_omega * gamma * gamma * (1 + beta) * (1 + beta) / (1 + 0.5 * a0 * a0);
}

RunPhysics read_run_physics(const RunManifest& m) {
  RunPhysics p;
  p.scenario = m.scenario();
  p.laser_omega = m.laser_omega();
  p.a0 = m.a0();
  p.emission_in_window = m.window().emission_in_window.value_or(true);
  p.screen_side = m.screen_side();
  if (const auto k = m.kinematics()) {
    p.kinematics = *k;
    p.gamma = k->gamma_mean;
  }
  return p;
}

RunPhysics read_run_physics(const RunFolder& run) {
  return read_run_physics(RunManifest::read(run));
}

bool line_known(const RunPhysics& p) { return p.kinematics.electrons > 0; }

double expected_line_omega(const RunPhysics& p, double gamma, double a0) {
  const double a = a0 >= 0 ? a0 : p.a0;
  if (gamma > 0) {
    if (!(gamma >= 1)) throw ConfigError("EDM-SPEC-022", "--gamma " + format_g(gamma) + " is not a Lorentz factor (≥ 1)");
    return backscatter_line_omega(p.laser_omega, gamma, a);
  }
  const EnsembleKinematics& k = p.kinematics;
  if (k.electrons > 0) {
    if (p.screen_side == 0)
      throw ConfigError("EDM-SPEC-022", "--of line needs the side of the screen: run.toml has no [screen] distance");
    if (p.screen_side == k.laser_direction) return p.laser_omega;  // along the laser: h / h
    return p.laser_omega * k.light_front_h * k.light_front_h / (1 + k.u_perp2_mean + 0.5 * a * a);
  }
  throw ConfigError("EDM-SPEC-022", "--of line needs the initial ensemble: the run.toml of scenario '" + p.scenario +
                                        "' records none ([kinematics]; use --of laser or --gamma)");
}

SpectrumResult compute_spectrum(const RunFolder& run, const SpectrumOptions& options) {
  const RunPhysics physics = read_run_physics(run);
  return compute_spectrum(FieldFile::open(run.field()), physics, options);
}

namespace {

// What every row of one field file shares: the sizes, the frequency axis and its one-sided
// weights, the window, the harmonic bands and the constant factors of the spectrum.
struct Pass {
  std::size_t N = 0, nx = 0, ny = 0, npix = 0, nw = 0, nh = 0;
  double dw = 0;
  std::vector<double> g;                                   // one-sided Parseval weights
  std::vector<double> w;                                   // window weights
  std::vector<std::pair<std::size_t, std::size_t>> bands;  // bin ranges [klo, khi] of each harmonic
  double zabs = 0, nsign = 0, area = 0, pref = 0;
  bool angular = false;
  double R2 = 0;  // angular: R² of the sphere, 1 at infinity (the field is R·E there)
};

// The six field components of a slab of rows, (rows, nx, N) each.
struct Slab {
  std::array<std::vector<double>, 3> E, B;
};

// One thread's FFT and scratch vectors.
struct RowScratch {
  RowScratch(std::size_t N, std::size_t nw) : fft(N), buf(N), power(nw), d2(nw) {
    if (!fft.allocated()) throw Error("EDM-SPEC-030", "cannot allocate an FFT of length " + std::to_string(N));
  }
  analysis::RealFft fft;
  std::vector<double> buf, power, d2;
};

// The field file's geometry into r (FieldFile checked the axes against the cube at open).
void take_geometry(const FieldFile& field, SpectrumResult& r) {
  const FieldGeometry& g = field.geometry();
  r.x = g.x;
  r.y = g.y;
  r.ny = g.ny;
  r.nx = g.nx;
  r.samples = g.samples;
  if (r.samples < 2) throw IoError("EDM-IO-017", field.path().string() + ": fewer than 2 time samples");
  r.dt = g.dt;
  r.screen_z = g.screen_z;
  r.pixel_dx = g.pixel_dx;
  r.pixel_dy = g.pixel_dy;
  r.nyquist_omega = g.nyquist_omega;
  r.angular = g.angular;
  if (!r.angular) return;
  r.far_field = g.far_field;
  r.screen_angles = g.screen_angles;
  r.screen_axis = g.screen_axis;
}

// An angular screen's table (share/docs/outputs.md): the directions, their cells' solid angles, the
// radius.
void take_angular(const FieldFile& field, SpectrumResult& r, Pass& p) {
  p.angular = true;
  p.R2 = r.far_field ? 1.0 : r.screen_z * r.screen_z;
  r.direction = field.geometry().direction;
  r.solid_angle = field.geometry().solid_angle;
}

// The on-axis sample (nearest_axis_sample): an angular grid's directions about its axis, a flat
// screen's pixels about sign(z)·ẑ.
void pick_axis_sample(SpectrumResult& r) {
  if (r.angular) {
    r.axis = nearest_axis_sample(r.direction, r.nx, r.ny, axis_frame(parse_choice<ScreenAxis>(r.screen_axis)).a);
  } else {
    r.axis = nearest_axis_sample(flat_screen_directions(r.x, r.y, r.screen_z), r.nx, r.ny,
                                 {0, 0, r.screen_z > 0 ? 1.0 : -1.0});
  }
  r.center_ix = r.axis.ix;
  r.center_iy = r.axis.iy;
}

// ω_k and the one-sided weights that make discrete Parseval exact (spectrum.hpp).
void frequency_axis(SpectrumResult& r, Pass& p) {
  p.nw = p.N / 2 + 1;
  p.dw = 2 * kPi / (double(p.N) * r.dt);
  r.omega.resize(p.nw);
  for (std::size_t k = 0; k < p.nw; ++k) r.omega[k] = p.dw * double(k);
  p.g.assign(p.nw, 1.0);
  p.g[0] = 0.5;
  if (p.N % 2 == 0) p.g[p.nw - 1] = 0.5;
}

// The expected line for the screen of this field file, which decides which way the on-axis sample
// looks (expected_line_omega).
double line_for_screen(const SpectrumResult& r, const RunPhysics& physics, double gamma, double a0) {
  RunPhysics p = physics;
  // An angular screen looks along its axis, and has a side only when that is ±z.
  if (p.screen_side == 0 && r.angular) p.screen_side = r.screen_axis == "z" ? 1 : r.screen_axis == "-z" ? -1 : 0;
  if (p.screen_side == 0 && !r.angular) p.screen_side = r.screen_z > 0 ? 1 : -1;
  return expected_line_omega(p, gamma, a0);
}

// The run's line (the harmonics' base where that is the line, so --gamma and --a0 count) and its
// harmonics that the sampling folds back under Nyquist (aliased_harmonics, with the a0 the line
// used). A run whose line is not known lists none.
void find_aliases(SpectrumResult& r, const RunPhysics& physics, const SpectrumOptions& opt) {
  if (r.of == HarmonicBase::Line && r.base_omega > 0) {
    r.line_omega = r.base_omega;
  } else if (line_known(physics)) {
    try {
      r.line_omega = line_for_screen(r, physics, 0, -1);
    } catch (const ConfigError&) {
      r.line_omega = 0;  // no side of the screen: no line, so nothing to say about its harmonics
    }
  }
  r.aliased = aliased_harmonics(r.line_omega, opt.a0 >= 0 ? opt.a0 : physics.a0, r.nyquist_omega);
}

// The harmonic orders, their base frequency and band, checked against Nyquist before any data is
// read.
void plan_harmonics(SpectrumResult& r, const RunPhysics& physics, const SpectrumOptions& opt) {
  r.of = opt.of;
  r.band = opt.band;
  // Checked with or without orders: `edm spectrum --band nan` (or 1e300) dropped every default order
  // (none fits under Nyquist with such a band) and so was never checked (found by tests/test_hostile).
  if (!(opt.band > 0 && opt.band <= 0.5))
    throw ConfigError("EDM-SPEC-021", "harmonic band half-width " + format_g(opt.band) +
                                          " must be in (0, 0.5] of the base frequency");
  // The base is recorded with or without orders: with none (the default orders where even the first
  // lies above Nyquist), base_omega = 0 in spectrum.h5 said nothing about why (found by a hostile tester).
  r.base_omega = opt.of == HarmonicBase::Laser ? physics.laser_omega : line_for_screen(r, physics, opt.gamma, opt.a0);
  if (opt.harmonics.empty()) return;
  for (int n : opt.harmonics) {
    if (n < 1) throw ConfigError("EDM-SPEC-023", "harmonic order " + std::to_string(n) + " must be ≥ 1");
    const double wn = n * r.base_omega, top = wn + opt.band * r.base_omega;
    if (top > r.nyquist_omega)
      throw ConfigError("EDM-SPEC-020",
                        "harmonic " + std::to_string(n) + " of the " + harmonic_base_name(opt.of) +
                            " (ω = " + format_g(wn) + " rad/s = " + format_g(wn / physics.laser_omega) +
                            " ω_laser, band up to " + format_g(top) +
                            " rad/s) is above the Nyquist frequency π/dt = " + format_g(r.nyquist_omega) +
                            " rad/s (" + format_g(r.nyquist_omega / physics.laser_omega) +
                            " ω_laser); it would alias. Use more samples_per_period or drop it");
    r.harmonic_orders.push_back(n);
    r.harmonic_omega.push_back(wn);
  }
}

// Bin ranges [klo, khi] of each harmonic band.
void band_bins(const SpectrumResult& r, Pass& p) {
  for (std::size_t h = 0; h < p.nh; ++h) {
    const double lo = r.harmonic_omega[h] - r.band * r.base_omega,
                 hi = r.harmonic_omega[h] + r.band * r.base_omega;
    const std::size_t klo = std::size_t(std::max(0.0, std::ceil(lo / p.dw - 1e-9)));
    const std::size_t khi = std::min(p.nw - 1, std::size_t(std::floor(hi / p.dw + 1e-9)));
    p.bands.emplace_back(klo, khi);
  }
}

// The window's weights and gains, the outputs sized and zeroed, the constant factors.
void prepare_pass(SpectrumResult& r, const SpectrumOptions& opt, Pass& p) {
  p.w = window_weights(opt.window, p.N);
  double s1 = 0, s2 = 0;
  for (double v : p.w) s1 += v, s2 += v * v;
  r.window_coherent_gain = s1 / double(p.N);
  r.window_power_gain = s2 / double(p.N);

  r.on_axis.assign(p.nw, 0.0);
  r.on_axis_unwindowed.assign(p.nw, 0.0);
  r.integrated.assign(p.nw, 0.0);
  r.cut_x.assign(p.nx * p.nw, 0.0);
  r.fluence.assign(p.npix, 0.0);
  r.spectral_energy.assign(p.npix, 0.0);
  r.solid_angle.assign(p.npix, 0.0);
  r.peak_omega.assign(p.npix, 0.0);
  r.harmonic_maps.assign(p.nh * p.npix, 0.0);

  p.zabs = std::abs(r.screen_z);
  p.nsign = r.screen_z > 0 ? 1.0 : -1.0;
  p.area = r.pixel_dx * r.pixel_dy;
  // d²I/dωdΩ(ω_k) = (ε0 c R² dt²/π) Σ_c |X_c,k|² (spectrum.hpp).
  p.pref = si::eps0 * si::c * r.dt * r.dt / kPi;
}

// One pixel's spectrum d2 from its power, and from it the pixel's energy, peak, band integrals and
// share of dI/dω (into acc).
void pixel_spectrum(const Pass& p, SpectrumResult& r, std::size_t iy, std::size_t ix, RowScratch& s,
                    double* acc) {
  const std::size_t px = iy * p.nx + ix;
  double R2 = p.R2;  // angular: the sphere's (solid angles read with the grid)
  if (!p.angular) {
    const double X = r.x[ix], Y = r.y[iy];
    R2 = X * X + Y * Y + r.screen_z * r.screen_z;
    const double R = std::sqrt(R2);
    r.solid_angle[px] = p.area * p.zabs / (R2 * R);
  }
  std::vector<double>& d2 = s.d2;
  double energy = 0, best = -1;
  std::size_t kbest = 0;
  for (std::size_t k = 0; k < p.nw; ++k) {
    d2[k] = p.pref * R2 * s.power[k];
    energy += p.g[k] * d2[k];
    if (k >= 1 && d2[k] > best) best = d2[k], kbest = k;
    acc[k] += d2[k] * r.solid_angle[px];
  }
  r.spectral_energy[px] = energy * p.dw;
  r.peak_omega[px] = best > 0 ? r.omega[kbest] : std::nan("");  // no light: no peak
  for (std::size_t h = 0; h < p.nh; ++h) {
    double sum = 0;
    for (std::size_t k = p.bands[h].first; k <= p.bands[h].second; ++k) sum += p.g[k] * d2[k];
    r.harmonic_maps[h * p.npix + px] = sum * p.dw;
  }
  if (iy == r.center_iy) std::copy(d2.begin(), d2.end(), r.cut_x.begin() + ix * p.nw);
  if (iy == r.center_iy && ix == r.center_ix) r.on_axis = d2;
}

// Σ_j (E×B)·n̂ over one direction's samples starting at off.
double directed_fluence(const Slab& slab, std::size_t off, std::size_t N, const double* n) {
  const auto& E = slab.E;
  const auto& B = slab.B;
  double s = 0;
  for (std::size_t j = off; j < off + N; ++j) {
    const double sx = E[1][j] * B[2][j] - E[2][j] * B[1][j], sy = E[2][j] * B[0][j] - E[0][j] * B[2][j],
                 sz = E[0][j] * B[1][j] - E[1][j] * B[0][j];
    s += sx * n[0] + sy * n[1] + sz * n[2];
  }
  return s;
}

// The on-axis sample once more without a window (the absolute numbers: spectrum.hpp), its
// energy-weighted time and the analysis window's gain w(t_c)² there.
void on_axis_unwindowed(const Pass& p, SpectrumResult& r, const Slab& slab, std::size_t off, RowScratch& s) {
  const std::size_t N = p.N;
  double e2 = 0, je2 = 0, edge = 0;
  const std::size_t rim = std::max<std::size_t>(1, N / 32);  // the record's outer 1/32 at each end
  std::vector<double> power(p.nw, 0.0);
  for (int c = 0; c < 3; ++c) {
    const double* e = slab.E[c].data() + off;
    for (std::size_t j = 0; j < N; ++j) {
      s.buf[j] = e[j];
      e2 += e[j] * e[j];
      je2 += double(j) * e[j] * e[j];
      if (j < rim || j + rim >= N) edge += e[j] * e[j];
    }
    add_power(s.fft, N, s.buf.data(), power.data());
  }
  const double X = r.x[r.center_ix], Y = r.y[r.center_iy];
  const double R2 = p.angular ? p.R2 : X * X + Y * Y + r.screen_z * r.screen_z;  // as pixel_spectrum
  for (std::size_t k = 0; k < p.nw; ++k) r.on_axis_unwindowed[k] = p.pref * R2 * power[k];
  r.pulse_sample = e2 > 0 ? je2 / e2 : std::nan("");
  r.edge_energy_fraction = e2 > 0 ? edge / e2 : 0.0;
  const double u = r.pulse_sample / double(std::max<std::size_t>(1, N - 1));  // 0 … 1 across the record
  const double w = e2 > 0 ? window_at_phase(r.window, 2 * kPi * u) : 1.0;
  r.window_gain_at_pulse = w * w;
}

// One row of pixels: fluence, spectrum, band integrals; the row's share of dI/dω into `acc`.
void spectrum_row(const Pass& p, SpectrumResult& r, const Slab& slab, std::size_t iy, std::size_t iy0,
                  RowScratch& s, double* acc) {
  const std::size_t N = p.N;
  const auto& E = slab.E;
  const auto& B = slab.B;
  std::fill(acc, acc + p.nw, 0.0);
  for (std::size_t ix = 0; ix < p.nx; ++ix) {
    const std::size_t off = ((iy - iy0) * p.nx + ix) * N;
    // Fluence: Σ_j (E×B)·n̂/μ0 dt, n̂ = sign(z) ẑ (flat) or the direction itself (angular).
    if (p.angular) {
      r.fluence[iy * p.nx + ix] = directed_fluence(slab, off, N, &r.direction[3 * (iy * p.nx + ix)]) * r.dt / kMu0;
    } else {
      double sz = 0;
      for (std::size_t j = 0; j < N; ++j) sz += E[0][off + j] * B[1][off + j] - E[1][off + j] * B[0][off + j];
      r.fluence[iy * p.nx + ix] = p.nsign * sz * r.dt / kMu0;
    }

    std::fill(s.power.begin(), s.power.end(), 0.0);
    for (int c = 0; c < 3; ++c) {
      const double* e = E[c].data() + off;
      for (std::size_t j = 0; j < N; ++j) s.buf[j] = p.w[j] * e[j];
      add_power(s.fft, N, s.buf.data(), s.power.data());
    }
    pixel_spectrum(p, r, iy, ix, s, acc);
    if (iy == r.center_iy && ix == r.center_ix) on_axis_unwindowed(p, r, slab, off, s);
  }
}

// Rows [iy0, iy1) of a slab in parallel (slab_rows.hpp); each row's share of dI/dω goes to its own
// line of row_integrated, and the lines are added in row order afterwards.
void process_slab(const Pass& p, SpectrumResult& r, const Slab& slab, std::size_t iy0, std::size_t iy1,
                  std::size_t nthreads, std::vector<double>& row_integrated) {
  analysis::for_rows_in_parallel(
      iy0, iy1, nthreads, [&] { return RowScratch(p.N, p.nw); },
      [&](std::size_t iy, RowScratch& s) {
        spectrum_row(p, r, slab, iy, iy0, s, row_integrated.data() + (iy - iy0) * p.nw);
      });
  for (std::size_t iy = iy0; iy < iy1; ++iy)
    for (std::size_t k = 0; k < p.nw; ++k) r.integrated[k] += row_integrated[(iy - iy0) * p.nw + k];
}

// edm never writes a non-finite field (share/docs/errors.md, "Hostile review, stop 22"), so one is a damaged or foreign file:
// its spectrum would be NaN energies written as a result (found by tests/test_hostile). Names the
// dataset and the sample [iy, ix, k].
void refuse_non_finite(const std::vector<double>& v, const std::string& dataset, std::size_t iy0, std::size_t nx,
                       std::size_t N, const FieldFile& field) {
  const auto bad = std::find_if(v.begin(), v.end(), [](double x) { return !std::isfinite(x); });
  if (bad == v.end()) return;
  const std::size_t i = std::size_t(bad - v.begin());
  const std::size_t row = N * nx;
  throw IoError("EDM-IO-141", field.path().string() + " " + dataset + ": sample [" + std::to_string(iy0 + i / row) +
                                  ", " + std::to_string(i % row / N) + ", " + std::to_string(i % N) + "] is " +
                                  format_g(*bad) + " (edm writes finite fields only: the file is damaged or not edm's)");
}

// The field file slab by slab: six components of (rows, nx, N) doubles within the read budget, the
// far-field buckets where the run wrote them (split mode), else E and B.
void accumulate_slabs(const FieldFile& field, const SpectrumOptions& opt, const Pass& p, SpectrumResult& r) {
  const analysis::SlabRows plan =
      analysis::plan_slab_rows(6 * p.nx * p.N * sizeof(double), opt.slab_bytes, opt.threads);
  std::vector<double> row_integrated(plan.rows_per_slab * p.nw);
  Slab slab;
  const bool split = field.geometry().split;
  const int eb = split ? kBucketEFar : kBucketE, bb = split ? kBucketBFar : kBucketB;
  for (std::size_t iy0 = 0; iy0 < p.ny; iy0 += plan.rows_per_slab) {
    const std::size_t iy1 = std::min(p.ny, iy0 + plan.rows_per_slab);
    for (int c = 0; c < 3; ++c) {
      field.read_rows(eb, c, iy0, iy1, slab.E[c]);
      field.read_rows(bb, c, iy0, iy1, slab.B[c]);
      refuse_non_finite(slab.E[c], FieldFile::component_name(eb, c), iy0, p.nx, p.N, field);
      refuse_non_finite(slab.B[c], FieldFile::component_name(bb, c), iy0, p.nx, p.N, field);
    }
    process_slab(p, r, slab, iy0, iy1, plan.threads, row_integrated);
  }
}

// The on-axis peak (the bin, and its log-parabola interpolation), the total and integrated energies.
// Where the run has a line, the peak is looked for from half of it up: below, a field that does not
// fall to zero at the record's ends (an electron's own Coulomb field on a near screen, Thomson from
// rest in total mode) puts its largest bins at ω → 0, and thomson_lg reported its "on-axis peak"
// at 0.0104 ω, the first bin (found in use).
void finish_totals(const Pass& p, SpectrumResult& r) {
  const std::size_t nw = p.nw;
  double best = -1;
  std::size_t k0 = 1;
  // A line above the record's Nyquist frequency (an alias shows instead) sets no floor.
  const bool floor = r.line_omega > 0 && std::isfinite(r.line_omega) && nw > 2 && 0.5 * r.line_omega < r.omega[nw - 2];
  r.peak_search_from = floor ? 0.5 * r.line_omega : 0.0;
  while (k0 + 1 < nw && r.omega[k0] < r.peak_search_from) ++k0;
  std::size_t kp = k0;
  for (std::size_t k = k0; k < nw; ++k)
    if (r.on_axis[k] > best) best = r.on_axis[k], kp = k;
  // Above the floor that field still falls as a power of ω from the floor's bin: the largest bin that
  // is a maximum of its own (above both neighbours) is the light, where there is one.
  if (r.peak_search_from > 0) {
    double local = -1;
    for (std::size_t k = k0 + 1; k + 1 < nw; ++k)
      if (r.on_axis[k] > r.on_axis[k - 1] && r.on_axis[k] >= r.on_axis[k + 1] && r.on_axis[k] > local)
        local = r.on_axis[k], kp = k;
    if (local > 0) best = local;
  }
  // A zero spectrum has no peak: bin 1 (the first k ≥ 1) was reported as one (issue 29).
  r.peak_omega_on_axis = nw > 1 && best > 0 ? r.omega[kp] : std::nan("");
  r.peak_omega_on_axis_interp = r.peak_omega_on_axis;
  if (!(best > 0)) kp = 0;
  if (kp >= k0 && kp >= 1 && kp + 1 < nw && r.on_axis[kp - 1] > 0 && r.on_axis[kp + 1] > 0 && r.on_axis[kp] > 0) {
    const double a = std::log(r.on_axis[kp - 1]), b = std::log(r.on_axis[kp]),
                 c = std::log(r.on_axis[kp + 1]);
    const double den = a - 2 * b + c;
    if (den < 0) r.peak_omega_on_axis_interp = r.omega[kp] + 0.5 * (a - c) / den * p.dw;
  }
  double tot = 0;
  if (p.angular) {
    // Each direction owns its cell: Σ F ΔΩ R² (F in J/m² on the sphere, J/sr at infinity, R² = 1).
    for (std::size_t px = 0; px < p.npix; ++px) tot += r.fluence[px] * r.solid_angle[px];
    r.total_energy = tot * p.R2;
  } else {
    for (double v : r.fluence) tot += v;
    r.total_energy = p.area > 0 ? tot * p.area : std::nan("");
  }
  double ie = 0;
  for (std::size_t k = 0; k < nw; ++k) ie += p.g[k] * r.integrated[k];
  r.integrated_energy = ie * p.dw;
}

}  // namespace

SpectrumResult compute_spectrum(const FieldFile& field, const RunPhysics& physics, const SpectrumOptions& opt) {
  SpectrumResult r;
  r.window = opt.window;
  r.laser_omega = physics.laser_omega;
  r.mode = field.summary().mode;
  r.run_id = field.summary().run_id;
  r.field_used = field.geometry().split ? "E_far" : "E";
  take_geometry(field, r);
  Pass p;
  p.N = r.samples;
  p.nx = r.nx;
  p.ny = r.ny;
  p.npix = p.nx * p.ny;
  frequency_axis(r, p);
  plan_harmonics(r, physics, opt);
  p.nh = r.harmonic_orders.size();
  band_bins(r, p);
  prepare_pass(r, opt, p);
  if (r.angular) take_angular(field, r, p);
  pick_axis_sample(r);
  find_aliases(r, physics, opt);
  accumulate_slabs(field, opt, p, r);
  finish_totals(p, r);
  if (const LineYield y = on_axis_line_yield(r, physics); y.known) r.line_photons_per_bw = y.photons_per_bw;
  return r;
}

namespace {

void write_axes(hid_t f, const SpectrumResult& r, const std::filesystem::path& partial) {
  const hsize_t nw = r.omega.size(), nx = r.nx, ny = r.ny;
  auto g = h5::create_group(f, "axes", partial);
  h5::write_dataset(g.get(), "omega", {nw}, r.omega.data(), "rad/s", partial);
  if (r.angular) {
    // The grid's angles under field.h5's names and as x, y (rad), and the directions n̂.
    const bool polar = r.screen_angles == "polar";
    h5::write_dataset(g.get(), "x", {nx}, r.x.data(), "rad", partial);
    h5::write_dataset(g.get(), "y", {ny}, r.y.data(), "rad", partial);
    h5::write_dataset(g.get(), polar ? "theta" : "theta_x", {nx}, r.x.data(), "rad", partial);
    h5::write_dataset(g.get(), polar ? "phi" : "theta_y", {ny}, r.y.data(), "rad", partial);
    h5::write_dataset(g.get(), "direction", {ny, nx, 3}, r.direction.data(), "", partial);
    return;
  }
  h5::write_dataset(g.get(), "x", {nx}, r.x.data(), "m", partial);
  h5::write_dataset(g.get(), "y", {ny}, r.y.data(), "m", partial);
  std::vector<double> tx(nx), ty(ny);
  for (std::size_t i = 0; i < nx; ++i) tx[i] = std::atan2(r.x[i], std::abs(r.screen_z));
  for (std::size_t j = 0; j < ny; ++j) ty[j] = std::atan2(r.y[j], std::abs(r.screen_z));
  h5::write_dataset(g.get(), "theta_x", {nx}, tx.data(), "rad", partial);
  h5::write_dataset(g.get(), "theta_y", {ny}, ty.data(), "rad", partial);
}

// The spectra: on the axis, integrated over the screen, along the centre row.
void write_spectra(hid_t f, const SpectrumResult& r, const std::filesystem::path& partial) {
  const hsize_t nw = r.omega.size(), nx = r.nx;
  {
    auto g = h5::create_group(f, "on_axis", partial);
    h5::write_dataset(g.get(), "d2I_domega_dOmega", {nw}, r.on_axis.data(), "J*s/rad/sr", partial);
    h5::write_dataset(g.get(), "d2I_domega_dOmega_unwindowed", {nw}, r.on_axis_unwindowed.data(), "J*s/rad/sr",
                      partial);
    h5::write_attr(g.get(), "ix", double(r.center_ix));
    h5::write_attr(g.get(), "iy", double(r.center_iy));
    h5::write_attr(g.get(), "angle", r.axis.angle);
    h5::write_attr(g.get(), "angle_tolerance", r.axis.tolerance);
    h5::write_attr(g.get(), "on_axis", r.axis.on_axis ? 1.0 : 0.0);
    h5::write_attr(g.get(), "peak_omega", r.peak_omega_on_axis);
    h5::write_attr(g.get(), "peak_omega_interp", r.peak_omega_on_axis_interp);
    h5::write_attr(g.get(), "pulse_sample", r.pulse_sample);
    h5::write_attr(g.get(), "window_gain_at_pulse", r.window_gain_at_pulse);
    h5::write_attr(g.get(), "edge_energy_fraction", r.edge_energy_fraction);
  }
  {
    auto g = h5::create_group(f, "integrated", partial);
    h5::write_dataset(g.get(), "dI_domega", {nw}, r.integrated.data(), "J*s/rad", partial);
  }
  {
    auto g = h5::create_group(f, "cut_x", partial);
    h5::write_dataset(g.get(), "d2I_domega_dOmega", {nx, nw}, r.cut_x.data(), "J*s/rad/sr", partial);
    h5::write_attr(g.get(), "iy", double(r.center_iy));
  }
}

// The per-pixel maps and the harmonic maps.
void write_maps(hid_t f, const SpectrumResult& r, const std::filesystem::path& partial) {
  const hsize_t nx = r.nx, ny = r.ny, nh = r.harmonic_orders.size();
  {
    auto g = h5::create_group(f, "pixel", partial);
    h5::write_dataset(g.get(), "fluence", {ny, nx}, r.fluence.data(), r.angular && r.far_field ? "J/sr" : "J/m^2",
                      partial);
    h5::write_dataset(g.get(), "spectral_energy", {ny, nx}, r.spectral_energy.data(), "J/sr", partial);
    h5::write_dataset(g.get(), "solid_angle", {ny, nx}, r.solid_angle.data(), "sr", partial);
    h5::write_dataset(g.get(), "peak_omega", {ny, nx}, r.peak_omega.data(), "rad/s", partial);
  }
  {
    auto g = h5::create_group(f, "harmonics", partial);
    std::vector<double> order(r.harmonic_orders.begin(), r.harmonic_orders.end());
    h5::write_dataset(g.get(), "order", {nh}, order.data(), "", partial);
    h5::write_dataset(g.get(), "omega", {nh}, r.harmonic_omega.data(), "rad/s", partial);
    h5::write_dataset(g.get(), "maps", {nh, ny, nx}, r.harmonic_maps.data(), "J/sr", partial);
    h5::write_attr(g.get(), "of", std::string(harmonic_base_name(r.of)));
    h5::write_attr(g.get(), "base_omega", r.base_omega);
    h5::write_attr(g.get(), "band", r.band);
  }
}

// A 1-D double attribute (h5.hpp writes scalars only); an empty list is a zero-length one.
void write_attr_list(hid_t obj, const char* name, const std::vector<double>& v,
                     const std::filesystem::path& partial) {
  const hsize_t n = v.size();
  h5::Handle sp(n ? H5Screate_simple(1, &n, nullptr) : H5Screate(H5S_NULL), H5Sclose);
  h5::Handle a(sp.valid() ? H5Acreate2(obj, name, H5T_NATIVE_DOUBLE, sp.get(), H5P_DEFAULT, H5P_DEFAULT) : -1,
               H5Aclose);
  if (!a.valid() || (n && H5Awrite(a.get(), H5T_NATIVE_DOUBLE, v.data()) < 0))
    throw IoError("EDM-IO-032", "cannot write the attribute " + std::string(name) + " of " + partial.string());
}

// The run's line and its harmonics that alias (spectrum.hpp aliased_harmonics).
void write_alias_attributes(hid_t f, const SpectrumResult& r, const std::filesystem::path& partial) {
  std::vector<double> order, omega, alias;
  for (const AliasedHarmonic& a : r.aliased)
    order.push_back(a.order), omega.push_back(a.omega), alias.push_back(a.alias_omega);
  h5::write_attr(f, "line_omega", r.line_omega);
  h5::write_attr(f, "line_photons_per_bw", r.line_photons_per_bw);
  h5::write_attr(f, "alias_power_floor", kAliasPowerFloor);
  write_attr_list(f, "aliased_orders", order, partial);
  write_attr_list(f, "aliased_omega", omega, partial);
  write_attr_list(f, "alias_omega", alias, partial);
}

void write_root_attributes(hid_t f, const SpectrumResult& r) {
  if (!r.angular) {
    h5::write_attr(f, "convention",
                   "d2I/domega/dOmega = 2 eps0 c R^2 |E(omega)|^2, E(omega) = (2 pi)^-1/2 int E(t) "
                   "exp(i omega t) dt, one-sided (omega >= 0); fluence = int (E x B / mu0).n dt, "
                   "n = sign(screen_z) z; see edm/spectrum.hpp");
  } else {
    h5::write_attr(f, "convention",
                   r.far_field ? "angular screen at infinity: the field is R E (V), d2I/domega/dOmega = 2 eps0 c "
                                 "|(R E)(omega)|^2, E(omega) = (2 pi)^-1/2 int E(t) exp(i omega t) dt, one-sided "
                                 "(omega >= 0); fluence = int (R E x R B / mu0).n dt (J/sr), n the direction; "
                                 "see share/docs/outputs.md"
                               : "angular screen on a sphere of radius R = screen_z: d2I/domega/dOmega = 2 eps0 c "
                                 "R^2 |E(omega)|^2, E(omega) = (2 pi)^-1/2 int E(t) exp(i omega t) dt, one-sided "
                                 "(omega >= 0); fluence = int (E x B / mu0).n dt (J/m^2), n the direction; "
                                 "see share/docs/outputs.md");
    h5::write_attr(f, "screen_type", std::string("angular"));
    h5::write_attr(f, "screen_angles", r.screen_angles);
    h5::write_attr(f, "screen_axis", r.screen_axis);
    h5::write_attr(f, "far_field", std::string(r.far_field ? "true" : "false"));
  }
  h5::write_attr(f, "field", r.field_used);
  h5::write_attr(f, "window", std::string(window_name(r.window)));
  h5::write_attr(f, "window_power_gain", r.window_power_gain);
  h5::write_attr(f, "window_coherent_gain", r.window_coherent_gain);
  h5::write_attr(f, "dt", r.dt);
  h5::write_attr(f, "nyquist_omega", r.nyquist_omega);
  h5::write_attr(f, "laser_omega", r.laser_omega);
  h5::write_attr(f, "screen_z", r.screen_z);
  h5::write_attr(f, "pixel_dx", r.pixel_dx);
  h5::write_attr(f, "pixel_dy", r.pixel_dy);
  h5::write_attr(f, "total_energy", r.total_energy);
  h5::write_attr(f, "integrated_energy", r.integrated_energy);
  h5::write_attr(f, "peak_omega_on_axis", r.peak_omega_on_axis);
  h5::write_attr(f, "run_id", r.run_id);
  h5::write_attr(f, "mode", r.mode);
  h5::write_attr(f, "edm_version", std::string(EDM_VERSION));
}

}  // namespace

void write_spectrum(SpectrumWriter& out, const SpectrumResult& r) {
  const hid_t f = out.file();
  const std::filesystem::path& partial = out.partial();
  write_axes(f, r, partial);
  write_spectra(f, r, partial);
  write_maps(f, r, partial);
  write_root_attributes(f, r);
  write_alias_attributes(f, r, partial);
}

}  // namespace edm
