// Topological charge on rings and the speckle envelope (edm/oam.hpp): bicubic sampling of complex
// maps, phase unwrapping against the azimuth, the least-squares winding and its quality figures,
// and the refusals that name the option at fault.
#include "edm/oam.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numbers>

#include "edm/error.hpp"

namespace edm {
namespace {

constexpr double kPi = std::numbers::pi;

std::string format_g(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

// Keys' cubic convolution weights (a = −½) for offset t ∈ [0, 1) from the second of four nodes.
inline void keys_weights(double t, double w[4]) {
  const double t2 = t * t, t3 = t2 * t;
  w[0] = -0.5 * t3 + t2 - 0.5 * t;
  w[1] = 1.5 * t3 - 2.5 * t2 + 1.0;
  w[2] = -1.5 * t3 + 2.0 * t2 + 0.5 * t;
  w[3] = 0.5 * t3 - 0.5 * t2;
}

// Cell index i and offset t of coordinate v on an axis of n nodes, clamped so that v = last node
// falls in the last cell (t = 1).
inline void locate(double v, double v0, double dv, std::size_t n, std::size_t& i, double& t) {
  if (n < 2 || dv == 0) {
    i = 0;
    t = 0;
    return;
  }
  const double f = (v - v0) / dv;
  const double fi = std::clamp(std::floor(f), 0.0, double(n - 2));
  i = std::size_t(fi);
  t = f - fi;
}

template <class T>
T interpolate_impl(const T* map, const GridGeometry& g, double x, double y) {
  std::size_t i, j;
  double tx, ty;
  locate(x, g.x0, g.dx, g.nx, i, tx);
  locate(y, g.y0, g.dy, g.ny, j, ty);
  if (g.nx < 2 || g.ny < 2) return map[j * g.nx + i];
  const bool cubic = i >= 1 && i + 2 < g.nx && j >= 1 && j + 2 < g.ny;
  if (!cubic) {
    const T a = map[j * g.nx + i], b = map[j * g.nx + i + 1];
    const T c = map[(j + 1) * g.nx + i], d = map[(j + 1) * g.nx + i + 1];
    return (a * (1 - tx) + b * tx) * (1 - ty) + (c * (1 - tx) + d * tx) * ty;
  }
  double wx[4], wy[4];
  keys_weights(tx, wx);
  keys_weights(ty, wy);
  T out{};
  for (int b = 0; b < 4; ++b) {
    T row{};
    const T* r = map + (j + b - 1) * g.nx + (i - 1);
    for (int a = 0; a < 4; ++a) row += r[a] * wx[a];
    out += row * wy[b];
  }
  return out;
}

inline double principal(double a) { return std::remainder(a, 2 * kPi); }  // in [−π, π]

// Unwraps the phase along the samples above the floor (a gap bridged by the principal value of the
// step across it; the closed loop gives the integer winding) and fits ψ = ℓφ + c to them.
void unwrap_and_fit(const std::vector<double>& phi, const std::vector<std::complex<double>>& a,
                    double floor_abs, RingFit& f) {
  const std::size_t points = phi.size();
  double psi = 0, first_psi = 0, first_arg = 0, last_arg = 0;
  bool started = false;
  for (std::size_t i = 0; i < points; ++i) {
    if (!(f.amplitude[i] >= floor_abs && f.amplitude[i] > 0)) continue;
    const double arg = std::arg(a[i]);
    psi = started ? psi + principal(arg - last_arg) : arg;
    if (!started) first_arg = first_psi = arg;
    started = true;
    last_arg = arg;
    f.phase[i] = psi;
  }
  const double loop = psi - first_psi + principal(first_arg - last_arg);
  f.winding = int(std::lround(loop / (2 * kPi)));
  double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (std::size_t i = 0; i < points; ++i) {
    if (std::isnan(f.phase[i])) continue;
    n += 1;
    sx += phi[i];
    sy += f.phase[i];
    sxx += phi[i] * phi[i];
    sxy += phi[i] * f.phase[i];
  }
  const double den = n * sxx - sx * sx;
  f.ell_fit = den > 0 ? (n * sxy - sx * sy) / den : 0.0;
  const double c = (sy - f.ell_fit * sx) / n;
  double r2 = 0;
  for (std::size_t i = 0; i < points; ++i) {
    if (std::isnan(f.phase[i])) continue;
    const double d = f.phase[i] - (f.ell_fit * phi[i] + c);
    r2 += d * d;
  }
  f.residual_rms = std::sqrt(r2 / n);
}

}  // namespace

GridGeometry grid_geometry(const std::vector<double>& x, const std::vector<double>& y) {
  GridGeometry g;
  g.nx = x.size();
  g.ny = y.size();
  g.x0 = x.empty() ? 0 : x.front();
  g.y0 = y.empty() ? 0 : y.front();
  g.dx = g.nx > 1 ? (x.back() - x.front()) / double(g.nx - 1) : 0;
  g.dy = g.ny > 1 ? (y.back() - y.front()) / double(g.ny - 1) : 0;
  return g;
}

std::complex<double> interpolate(const std::complex<double>* map, const GridGeometry& g, double x, double y) {
  return interpolate_impl(map, g, x, y);
}
double interpolate(const double* map, const GridGeometry& g, double x, double y) {
  return interpolate_impl(map, g, x, y);
}

RingPlan plan_rings(const GridGeometry& g, const RingOptions& o) {
  if (!(o.floor > 0 && o.floor < 1))
    throw ConfigError("EDM-OAM-004", "--ring-floor " + format_g(o.floor) +
                                         ": the amplitude floor is a fraction of the map's peak, in (0, 1)");
  if (!(o.min_fraction > 0 && o.min_fraction <= 1))
    throw ConfigError("EDM-OAM-005",
                      "--ring-min-fraction " + format_g(o.min_fraction) + ": must be in (0, 1]");
  if (!(o.max_residual > 0 && o.max_residual <= kPi))
    throw ConfigError("EDM-OAM-008", "--ring-max-residual " + format_g(o.max_residual) +
                                         ": the rms phase residual cut is in radians, in (0, π]");
  if (o.points != 0 && o.points < 8)
    throw ConfigError("EDM-OAM-003",
                      "--ring-points " + std::to_string(o.points) + ": a ring needs at least 8 samples");
  RingPlan p;
  p.centre_x = o.centre_given ? o.centre_x : 0.0;
  p.centre_y = o.centre_given ? o.centre_y : 0.0;
  const std::string span = "[" + format_g(g.x0) + ", " + format_g(g.x1()) + "] × [" + format_g(g.y0) + ", " +
                           format_g(g.y1()) + "] m";
  const bool inside =
      p.centre_x >= g.x0 && p.centre_x <= g.x1() && p.centre_y >= g.y0 && p.centre_y <= g.y1();
  if (!inside)
    throw ConfigError("EDM-OAM-001", "--ring-centre " + format_g(p.centre_x) + "," + format_g(p.centre_y) +
                                         " m is off the screen (pixel centres span " + span + ")");
  p.largest_radius =
      std::min({p.centre_x - g.x0, g.x1() - p.centre_x, p.centre_y - g.y0, g.y1() - p.centre_y});
  const double pitch = std::min(g.dx > 0 ? g.dx : INFINITY, g.dy > 0 ? g.dy : INFINITY);
  if (!o.radii.empty()) {
    for (double r : o.radii) {
      if (!(r > 0))
        throw ConfigError("EDM-OAM-007", "--ring-radii: radius " + format_g(r) + " m must be > 0");
      if (r > p.largest_radius * (1 + 1e-12))
        throw ConfigError("EDM-OAM-002", "--ring-radii: the ring of radius " + format_g(r) + " m about (" +
                                             format_g(p.centre_x) + ", " + format_g(p.centre_y) +
                                             ") m leaves the screen (pixel centres span " + span +
                                             "); the largest ring that fits has radius " +
                                             format_g(p.largest_radius) + " m");
    }
    p.radii = o.radii;
  } else if (std::isfinite(pitch) && p.largest_radius >= 2 * pitch) {
    for (std::size_t i = 1; i <= o.auto_rings; ++i)
      p.radii.push_back(p.largest_radius * double(i) / double(o.auto_rings + 1));
  }
  if (o.points) {
    p.points = o.points;
  } else if (!p.radii.empty()) {
    // A quarter pixel apart on the largest ring: the phase step between samples stays far below π
    // for any winding the pixel grid can resolve (|ℓ| up to about the ring's circumference in pixels).
    const double rmax = *std::max_element(p.radii.begin(), p.radii.end());
    p.points = std::clamp<std::size_t>(std::size_t(std::ceil(2 * kPi * rmax / (0.25 * pitch))), 64, 8192);
  }
  return p;
}

const char* ring_status_name(RingStatus s) {
  switch (s) {
    case RingStatus::Ok:
      return "ok";
    case RingStatus::LowAmplitude:
      return "refused: amplitude below the floor on too much of the ring";
    case RingStatus::NoSignal:
      return "refused: no sample above the floor";
    case RingStatus::NoEnergy:
      return "skipped: the harmonic holds no energy";
    case RingStatus::NoLine:
      return "skipped: no line of the harmonic in its band";
  }
  return "?";
}

std::vector<double> ring_azimuths(std::size_t points) {
  std::vector<double> phi(points);
  // Half a step off 0: the set {φ_i} is its own mirror image (φ → 2π − φ), so the fit of a mirrored
  // map is the exact negative of the original's.
  for (std::size_t i = 0; i < points; ++i) phi[i] = 2 * kPi * (double(i) + 0.5) / double(points);
  return phi;
}

RingFit fit_ring(const std::complex<double>* map, const GridGeometry& g, int normal, double cx, double cy,
                 double radius, std::size_t points, double floor_abs, double min_fraction) {
  RingFit f;
  f.radius = radius;
  const std::vector<double> phi = ring_azimuths(points);
  std::vector<std::complex<double>> a(points);
  std::size_t above = 0;
  double amp_sum = 0;
  f.amplitude.resize(points);
  for (std::size_t i = 0; i < points; ++i) {
    const double x = std::clamp(cx + radius * std::cos(phi[i]), g.x0, g.x1());
    const double y = std::clamp(cy + normal * radius * std::sin(phi[i]), g.y0, g.y1());
    a[i] = interpolate(map, g, x, y);
    f.amplitude[i] = std::abs(a[i]);
    amp_sum += f.amplitude[i];
    if (f.amplitude[i] >= floor_abs && f.amplitude[i] > 0) ++above;
  }
  f.mean_amplitude = amp_sum / double(points);
  f.fraction_above_floor = double(above) / double(points);
  f.phase.assign(points, std::nan(""));
  const std::string where = "ring r = " + format_g(radius) + " m";
  if (above == 0) {
    f.status = RingStatus::NoSignal;
    f.message = where + ": no sample above the amplitude floor " + format_g(floor_abs) + " V·s";
    return f;
  }
  if (f.fraction_above_floor < min_fraction) {
    f.status = RingStatus::LowAmplitude;
    f.message = where + ": amplitude below the floor " + format_g(floor_abs) + " V·s on " +
                format_g(100 * (1 - f.fraction_above_floor)) + " % of the ring (a fit needs " +
                format_g(100 * min_fraction) + " % above it; --ring-floor, --ring-min-fraction)";
    return f;
  }
  unwrap_and_fit(phi, a, floor_abs, f);
  const double pitch = std::min(g.dx > 0 ? g.dx : INFINITY, g.dy > 0 ? g.dy : INFINITY);
  f.phase_per_pixel = std::isfinite(pitch) ? std::abs(f.winding) * pitch / radius : 0.0;
  return f;
}

const char* ring_cut_name(RingCut c) {
  switch (c) {
    case RingCut::Pass:
      return "in the headline";
    case RingCut::Refused:
      return "fit refused";
    case RingCut::BelowNoise:
      return "below the noise floor";
    case RingCut::Residual:
      return "phase residual above the cut";
    case RingCut::OtherWinding:
      return "winds differently from the other rings";
    case RingCut::NoCommonWinding:
      return "no winding shared by more than half the rings";
  }
  return "?";
}

namespace {

// The amplitude and residual cuts of one ring; true when it passes them.
bool judge_ring(RingFit& f, const RingCuts& cuts) {
  if (f.status != RingStatus::Ok) {
    f.cut = RingCut::Refused;
    return false;
  }
  std::size_t above = 0;
  for (double a : f.amplitude) above += a >= cuts.noise_floor ? 1 : 0;
  f.fraction_above_noise = f.amplitude.empty() ? 1.0 : double(above) / double(f.amplitude.size());
  const std::string where = "ring r = " + format_g(f.radius) + " m";
  if (f.fraction_above_noise < cuts.min_fraction) {
    f.cut = RingCut::BelowNoise;
    f.cut_message = where + ": " + format_g(100 * (1 - f.fraction_above_noise)) +
                    " % of the ring below the noise floor " + format_g(cuts.noise_floor) +
                    " V·s of the field cube: its phase is numerical noise, not in ℓ";
    return false;
  }
  if (!(f.residual_rms <= cuts.max_residual)) {
    f.cut = RingCut::Residual;
    f.cut_message = where + ": phase residual " + format_g(f.residual_rms) + " rad above " +
                    format_g(cuts.max_residual) + " rad (--ring-max-residual): not one clean vortex, not in ℓ";
    return false;
  }
  return true;
}

// The winding shared by more than half of `windings`, if any.
bool majority_winding(const std::vector<int>& windings, int& common) {
  for (int w : windings)
    if (2 * std::size_t(std::count(windings.begin(), windings.end(), w)) > windings.size()) {
      common = w;
      return true;
    }
  return false;
}

}  // namespace

WindingSummary summarise_rings(std::vector<RingFit>& fits, const RingCuts& cuts) {
  WindingSummary s;
  std::vector<RingFit*> candidates;
  for (auto& f : fits) {
    f.cut = RingCut::Pass;
    f.cut_message.clear();
    s.accepted += f.status == RingStatus::Ok ? 1 : 0;
    if (judge_ring(f, cuts)) {
      candidates.push_back(&f);
      s.windings.push_back(f.winding);
    } else {
      s.below_noise += f.cut == RingCut::BelowNoise ? 1 : 0;
      s.residual += f.cut == RingCut::Residual ? 1 : 0;
    }
  }
  s.ell = std::nan("");
  // A winding that half the rings or fewer share is no headline: two rings that disagree could
  // either of them be right, and an average of two integers is neither.
  if (!majority_winding(s.windings, s.winding)) {
    for (RingFit* f : candidates) f->cut = RingCut::NoCommonWinding;
    return s;
  }
  double sum = 0, lo = INFINITY, hi = -INFINITY;
  for (RingFit* f : candidates) {
    if (f->winding != s.winding) {
      f->cut = RingCut::OtherWinding;
      f->cut_message = "ring r = " + format_g(f->radius) + " m: winding " + std::to_string(f->winding) +
                       " where the other rings share " + std::to_string(s.winding) + ", not in ℓ";
      ++s.other_winding;
      continue;
    }
    ++s.passed;
    sum += f->ell_fit;
    lo = std::min(lo, f->ell_fit);
    hi = std::max(hi, f->ell_fit);
  }
  s.ell = sum / double(s.passed);
  s.ell_spread = (hi - lo) / 2;
  s.consistent = s.other_winding == 0;
  return s;
}

SpeckleEnvelope speckle_envelope(const double* map, const GridGeometry& g, int normal, double cx, double cy,
                                 double largest_radius, std::size_t azimuth_bins) {
  SpeckleEnvelope e;
  const double pitch = std::min(g.dx > 0 ? g.dx : INFINITY, g.dy > 0 ? g.dy : INFINITY);
  e.map.assign(g.nx * g.ny, std::nan(""));
  e.azimuth = ring_azimuths(azimuth_bins);
  e.azimuthal_mean.assign(azimuth_bins, 0.0);
  if (!std::isfinite(pitch) || !(largest_radius >= pitch)) return e;
  const std::size_t nb =
      std::size_t(std::floor(largest_radius / pitch + 1e-9));  // a whole pitch count stays whole
  double weight = 0;
  for (std::size_t b = 0; b < nb; ++b) {
    const double r = (double(b) + 0.5) * pitch;
    // Samples half a pixel apart (at least 16), a whole number of them per azimuth bin.
    const std::size_t per_bin =
        std::max<std::size_t>(1, std::size_t(std::ceil(4 * kPi * r / pitch / double(azimuth_bins))));
    const std::size_t m = std::max<std::size_t>(16, per_bin * azimuth_bins);
    const std::size_t per = m / azimuth_bins;
    double s1 = 0, s2 = 0;
    std::vector<double> bins(azimuth_bins, 0.0);
    for (std::size_t i = 0; i < m; ++i) {
      const double phi = 2 * kPi * (double(i) + 0.5) / double(m);
      const double x = std::clamp(cx + r * std::cos(phi), g.x0, g.x1());
      const double y = std::clamp(cy + normal * r * std::sin(phi), g.y0, g.y1());
      const double v = interpolate(map, g, x, y);
      s1 += v;
      s2 += v * v;
      bins[std::min(azimuth_bins - 1, i / per)] += v / double(per);
    }
    const double mean = s1 / double(m);
    e.radius.push_back(r);
    e.radial_mean.push_back(mean);
    e.radial_contrast.push_back(
        mean != 0 ? std::sqrt(std::max(0.0, s2 / double(m) - mean * mean)) / std::abs(mean) : std::nan(""));
    for (std::size_t a = 0; a < azimuth_bins; ++a) e.azimuthal_mean[a] += r * bins[a];
    weight += r;
  }
  for (auto& v : e.azimuthal_mean) v /= weight;
  for (auto& v : e.azimuth) v += kPi / double(azimuth_bins);  // bin centres
  for (std::size_t j = 0; j < g.ny; ++j)
    for (std::size_t i = 0; i < g.nx; ++i) {
      const double r = std::hypot(g.x0 + g.dx * double(i) - cx, g.y0 + g.dy * double(j) - cy);
      if (r > largest_radius || e.radius.empty()) continue;
      const double f = std::clamp(r / pitch - 0.5, 0.0, double(e.radius.size() - 1));
      const std::size_t b = std::min(e.radius.size() - 1, std::size_t(f));
      const double t = f - double(b);
      const double next = b + 1 < e.radius.size() ? e.radial_mean[b + 1] : e.radial_mean[b];
      e.map[j * g.nx + i] = e.radial_mean[b] * (1 - t) + next * t;
    }
  return e;
}

}  // namespace edm
