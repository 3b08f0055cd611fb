// The Lorenz-gauge check of the four-potential (edm/lorenz_gauge.hpp; share/docs/potential.md): the
// divergence ∂_μA^μ at the middle of three planes by central differences, relative to its terms.
// Why three planes: one field.h5 holds A^μ on one plane z = Z over (x, y, t), and ∂_z A_z is not a
// derivative along that grid; a formula for it from the retarded solution would check the kernel
// against its own algebra, while three runs at Z − h, Z, Z + h give it by the same finite
// difference as the other three terms, independently of how A^μ was computed.
#include "edm/lorenz_gauge.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "edm/error.hpp"
#include "edm/units.hpp"

namespace edm {
namespace {

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

// The patch resolved against the grid: the default is every interior point; an explicit one is
// clipped to the interior. EDM-GAUGE-002 when nothing is left.
GaugePatch resolve_patch(const GaugeGrid& g, GaugePatch p) {
  if (p.ix1 == 0 && p.iy1 == 0 && p.k1 == 0) p = {1, g.nx - 1, 1, g.ny - 1, 1, g.samples - 1};
  p.ix0 = std::max<std::size_t>(p.ix0, 1), p.iy0 = std::max<std::size_t>(p.iy0, 1), p.k0 = std::max<std::size_t>(p.k0, 1);
  p.ix1 = std::min(p.ix1, g.nx - 1), p.iy1 = std::min(p.iy1, g.ny - 1), p.k1 = std::min(p.k1, g.samples - 1);
  if (g.nx < 3 || g.ny < 3 || g.samples < 3 || p.ix0 >= p.ix1 || p.iy0 >= p.iy1 || p.k0 >= p.k1)
    throw ConfigError("EDM-GAUGE-002", "Lorenz gauge: no interior point to difference (screen " + std::to_string(g.nx) +
                                           " x " + std::to_string(g.ny) + " pixels, " + std::to_string(g.samples) +
                                           " samples; each needs 3 or more, and the patch must hold one)");
  return p;
}

void check_planes(const GaugeGrid& g, const PotentialPlane& lo, const PotentialPlane& mid, const PotentialPlane& hi) {
  const std::size_t n = g.nx * g.ny * g.samples;
  for (const PotentialPlane* p : {&lo, &mid, &hi})
    for (const auto& a : p->A)
      if (a.size() != n)
        throw ConfigError("EDM-GAUGE-002", "Lorenz gauge: the plane at z = " + num(p->z) + " m holds " +
                                               std::to_string(a.size()) + " values per component, the grid " +
                                               std::to_string(n));
  const double h = mid.z - lo.z, h2 = hi.z - mid.z;
  if (!(h > 0) || !(std::abs(h2 - h) <= 1e-6 * h))
    throw ConfigError("EDM-GAUGE-002", "Lorenz gauge: the planes z = " + num(lo.z) + ", " + num(mid.z) + ", " +
                                           num(hi.z) + " m are not ascending and equally spaced (∂_z A_z is their "
                                           "central difference): run them at Z − h, Z, Z + h");
  if (!(g.dx > 0 && g.dy > 0 && g.dt > 0))
    throw ConfigError("EDM-GAUGE-002", "Lorenz gauge: the grid's dx, dy, dt (" + num(g.dx) + " m, " + num(g.dy) +
                                           " m, " + num(g.dt) + " s) must be positive");
}

}  // namespace

GaugeResult lorenz_gauge_residual(const GaugeGrid& g, const PotentialPlane& lo, const PotentialPlane& mid,
                                  const PotentialPlane& hi, GaugePatch patch) {
  check_planes(g, lo, mid, hi);
  GaugeResult r;
  r.patch = resolve_patch(g, patch);
  r.h = mid.z - lo.z;
  const std::size_t sx = g.samples, sy = g.nx * g.samples;  // strides of ix and iy (k fastest)
  // The four terms' scales: (1/c)·1/(2dt) for A⁰ = φ/c, 1/(2dx), 1/(2dy), 1/(2h).
  const double ct = 1.0 / (si::c * 2 * g.dt), cx = 1.0 / (2 * g.dx), cy = 1.0 / (2 * g.dy), cz = 1.0 / (2 * r.h);
  double div2 = 0, abs2 = 0;
  std::array<double, 4> t2{};
  const auto& M = mid.A;
  for (std::size_t iy = r.patch.iy0; iy < r.patch.iy1; ++iy)
    for (std::size_t ix = r.patch.ix0; ix < r.patch.ix1; ++ix)
      for (std::size_t k = r.patch.k0; k < r.patch.k1; ++k) {
        const std::size_t i = iy * sy + ix * sx + k;
        const std::array<double, 4> T = {ct * (M[3][i + 1] - M[3][i - 1]), cx * (M[0][i + sx] - M[0][i - sx]),
                                         cy * (M[1][i + sy] - M[1][i - sy]), cz * (hi.A[2][i] - lo.A[2][i])};
        const double div = (T[0] + T[1]) + (T[2] + T[3]);
        const double sum_abs = std::abs(T[0]) + std::abs(T[1]) + std::abs(T[2]) + std::abs(T[3]);
        div2 += div * div;
        abs2 += sum_abs * sum_abs;
        for (int m = 0; m < 4; ++m) t2[m] += T[m] * T[m];
        ++r.points;
      }
  const double np = double(r.points);
  r.residual = abs2 > 0 ? std::sqrt(div2 / abs2) : (div2 > 0 ? INFINITY : 0.0);
  r.divergence_rms = std::sqrt(div2 / np);
  for (int m = 0; m < 4; ++m) r.term_rms[m] = std::sqrt(t2[m] / np);
  return r;
}

namespace {

// One file's plane: a flat screen's potential, on the grid of the first file.
PotentialPlane read_plane(const FieldFile& f, const FieldFile& first) {
  const FieldGeometry& g = f.geometry();
  const FieldGeometry& g0 = first.geometry();
  const std::string who = "Lorenz gauge: " + f.path().string();
  if (!g.potential)
    throw ConfigError("EDM-GAUGE-002", who + " is of run.mode = \"" + f.summary().mode +
                                           "\": the gauge is checked on runs of run.mode = \"potential\"");
  if (g.angular) throw ConfigError("EDM-GAUGE-002", who + " is an angular screen: the check differences a flat screen's x, y");
  if (g.nx != g0.nx || g.ny != g0.ny || g.samples != g0.samples)
    throw ConfigError("EDM-GAUGE-002", who + ": " + std::to_string(g.nx) + " x " + std::to_string(g.ny) + " pixels, " +
                                           std::to_string(g.samples) + " samples; " + first.path().string() + " has " +
                                           std::to_string(g0.nx) + " x " + std::to_string(g0.ny) + ", " +
                                           std::to_string(g0.samples));
  // One grid: pixel centres and the ABSOLUTE observer times alike (screen.window = "explicit" with
  // one screen.t_start), since ∂_z is taken at fixed (x, y, t).
  const auto differs = [](const std::vector<double>& a, const std::vector<double>& b, double step) {
    for (std::size_t i = 0; i < a.size(); ++i)
      if (!(std::abs(a[i] - b[i]) <= 1e-6 * step)) return true;
    return false;
  };
  const char* axis = differs(g.x, g0.x, g0.pixel_dx) ? "x" : differs(g.y, g0.y, g0.pixel_dy) ? "y"
                     : differs(g.t, g0.t, g0.dt)     ? "t" : nullptr;
  if (axis)
    throw ConfigError("EDM-GAUGE-002", who + ": /axes/" + axis + " differs from " + first.path().string() +
                                           "'s (the planes need one x, y and absolute t grid: the same screen "
                                           "half widths, nx, ny, samples, and screen.window = \"explicit\" with one "
                                           "screen.t_start)");
  PotentialPlane p;
  p.z = g.screen_z;
  for (int c = 0; c < 4; ++c) f.read_potential_rows(c, 0, g.ny, p.A[std::size_t(c)]);
  return p;
}

}  // namespace

GaugeResult lorenz_gauge(const FieldFile& a, const FieldFile& b, const FieldFile& c, GaugePatch patch) {
  std::array<PotentialPlane, 3> planes = {read_plane(a, a), read_plane(b, a), read_plane(c, a)};
  std::sort(planes.begin(), planes.end(), [](const PotentialPlane& p, const PotentialPlane& q) { return p.z < q.z; });
  const FieldGeometry& g = a.geometry();
  const GaugeGrid grid{g.nx, g.ny, g.samples, g.pixel_dx, g.pixel_dy, g.dt};
  return lorenz_gauge_residual(grid, planes[0], planes[1], planes[2], patch);
}

void check_lorenz_gauge(const GaugeResult& r, double tol) {
  if (!std::isfinite(tol) || !(tol > 0))
    throw ConfigError("EDM-GAUGE-003", "Lorenz gauge tolerance " + num(tol) + ": not a finite number > 0");
  if (!(r.residual <= tol))
    throw PhysicsError("EDM-GAUGE-001",
                       "Lorenz gauge broken: |d_mu A^mu| / sum |terms| = " + num(r.residual) + " over " +
                           std::to_string(r.points) + " points exceeds the tolerance " + num(tol) +
                           " (terms RMS, V s/m^2: (1/c) dt A0 " + num(r.term_rms[0]) + ", dx Ax " + num(r.term_rms[1]) +
                           ", dy Ay " + num(r.term_rms[2]) + ", dz Az " + num(r.term_rms[3]) +
                           "); a potential that satisfies the gauge leaves only the differences' truncation error, "
                           "which falls as the square of dx, dy, dt and h");
}

}  // namespace edm
