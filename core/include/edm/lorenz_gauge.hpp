// The Lorenz-gauge check of the four-potential (issue 31 item 1; share/docs/potential.md): with
// A^μ = (φ/c, A) written by run.mode = "potential" on three parallel planes z − h, z, z + h of one
// (x, y, t) grid, the divergence ∂_μA^μ = (1/c)∂_t(φ/c) + ∂_x A_x + ∂_y A_y + ∂_z A_z at the middle
// plane by second-order central differences (x, y, t on the plane's own grid, z across the planes),
// and its residual relative to the terms: √Σ(Σ_μ T_μ)² / √Σ(Σ_μ |T_μ|)² over a patch of interior
// points. The Liénard–Wiechert potential satisfies the gauge exactly, so the residual is the
// differences' truncation error, O(dx², dy², dt², h²), plus the accumulator's own error.
#pragma once
#include <array>
#include <cstddef>
#include <vector>

#include "edm/field_file.hpp"

namespace edm {

// The three planes' potentials on one grid, SI: A[comp] with comp 0..3 = A_x, A_y, A_z, A⁰ = φ/c
// (V·s/m), each (ny, nx, samples) in C order as field.h5 stores them; z in m, ascending.
struct PotentialPlane {
  std::array<std::vector<double>, 4> A;
  double z = 0;
};
struct GaugeGrid {
  std::size_t nx = 0, ny = 0, samples = 0;
  double dx = 0, dy = 0, dt = 0;  // m, m, s
};
// The points checked: pixel and sample ranges [lo, hi) of the middle plane; the default (all 0) is
// every interior point (one point in from each edge, where the central differences have neighbours).
struct GaugePatch {
  std::size_t ix0 = 0, ix1 = 0, iy0 = 0, iy1 = 0, k0 = 0, k1 = 0;
};

struct GaugeResult {
  double residual = 0;                 // √Σ(∂_μA^μ)² / √Σ(Σ_μ|T_μ|)², dimensionless
  std::array<double, 4> term_rms{};    // RMS of (1/c)∂_t A⁰, ∂_x A_x, ∂_y A_y, ∂_z A_z, V·s/m²
  double divergence_rms = 0;           // RMS of ∂_μA^μ, V·s/m²
  std::size_t points = 0;
  double h = 0;                        // m, the planes' spacing
  GaugePatch patch;                    // the patch used (the default resolved)
};

// The residual on the cubes (tests, and lorenz_gauge below). ConfigError EDM-GAUGE-002 when the
// planes are not equally spaced, a cube has another size, or the patch leaves no interior point.
GaugeResult lorenz_gauge_residual(const GaugeGrid& grid, const PotentialPlane& below, const PotentialPlane& mid,
                                  const PotentialPlane& above, GaugePatch patch = {});

// The three field.h5 of potential runs (any order: sorted by screen_z), checked to be flat screens
// of one (x, y, t) grid (EDM-GAUGE-002 naming the file and what differs; EDM-IO-011 from the reader
// for a file of the fields), read and checked.
GaugeResult lorenz_gauge(const FieldFile& a, const FieldFile& b, const FieldFile& c, GaugePatch patch = {});

// PhysicsError EDM-GAUGE-001 when the residual exceeds tol (or is not a number): the potential
// breaks the gauge beyond the discretisation; ConfigError EDM-GAUGE-003 for a tol that is not a
// finite number > 0.
void check_lorenz_gauge(const GaugeResult& r, double tol);

}  // namespace edm
