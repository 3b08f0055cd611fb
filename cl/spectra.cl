// Direct far-field spectra: the complex amplitude A(ω, n̂) of each electron by quadrature over its
// quintic spline pieces, summed coherently (Σ w A) and incoherently (Σ w |A|²) per bin
// (share/docs/outputs.md "Direct spectra", core/include/edm/spectra.hpp). Needs common.cl before it
// and these defines (core/src/field/spectra.cpp):
//   SPEC_NODES   Gauss–Legendre nodes per sub-piece (the node table `gl` holds 2·SPEC_NODES doubles)
//   SPEC_BLOCK   frequencies per work-item (one trajectory evaluation serves all of them)
//   SPEC_PHASE   largest phase excursion ω_max·Δ(t − n̂·x) of one sub-piece, rad
//
// The amplitude, normalised (c = 1, times 1/ω_L, unit charge), is the acceleration form of the
// far-field integral (Jackson 14.67) in proper time:
//   I(ω, n̂) = ∫ n̂ × ((n̂ − β) × β̇) / (1 − n̂·β)² · γ dτ · e^{iω(t − n̂·x)},
// β̇ = dβ/dt = (a⃗ − β a⁰)/γ². It is dimensionless; the host scales it to SI (V·s). The integrand
// vanishes where the electron does not accelerate, so the spline's ends add no boundary term.
// 1 − n̂·β is formed as (1 + |n̂ × u|²)/(γ (γ + n̂·u)) when n̂·u > 0: no cancellation at high γ
// (the PIConGPU radiation plugin switches to a series for the same reason).
//
// Work decomposition: one work-item per (direction d, block b of SPEC_BLOCK frequencies); it owns
// those bins (no atomics) and adds the launch's electrons in electron order, each electron's
// amplitude complete before it is added, so the sums are the same whatever the batching. The host
// pads the launch up to a multiple of the work-group size it chooses (core/src/field/spectra.cpp,
// spectra_work_group): items from ndir·blocks on own no bin and return before touching memory.
// Layouts: coh[((d·nw + k)·3 + c)·2 + {0 re, 1 im}], inc[d·nw + k]; per electron of the launch
// tab[4e..4e+3] = (coefficient offset in doubles, intervals, dτ, weight).

inline void spec_eval(__global const double* c, const double s, double x[4], double u[4], double a[4]) {
  for (int k = 0; k < 4; ++k) {
    __global const double* p = c + 6 * k;
    x[k] = p[0] + s * (p[1] + s * (p[2] + s * (p[3] + s * (p[4] + s * p[5]))));
    u[k] = p[1] + s * (2.0 * p[2] + s * (3.0 * p[3] + s * (4.0 * p[4] + s * 5.0 * p[5])));
    a[k] = 2.0 * p[2] + s * (6.0 * p[3] + s * (12.0 * p[4] + s * 20.0 * p[5]));
  }
}

// γ(1 − n̂·β) = γ − n̂·u = d(t − n̂·x)/dτ, the phase rate, without cancellation.
inline double spec_kappa(const double u[4], const double3 n) {
  const double nu = n.x * u[1] + n.y * u[2] + n.z * u[3];
  if (nu <= 0.0) return u[0] - nu;
  const double cx = n.y * u[3] - n.z * u[2], cy = n.z * u[1] - n.x * u[3], cz = n.x * u[2] - n.y * u[1];
  return (1.0 + cx * cx + cy * cy + cz * cz) / (u[0] + nu);
}

__kernel void spec_accumulate(__global const double* restrict coef, __global const double* restrict tab,
                              const int count, __global const double* restrict dirs, const int ndir,
                              __global const double* restrict omega, const int nw,
                              __global const double* restrict gl, __global double* restrict coh,
                              __global double* restrict inc) {
  const int blocks = (nw + SPEC_BLOCK - 1) / SPEC_BLOCK;
  const int gid = (int)get_global_id(0);
  if (gid >= ndir * blocks) return;
  const int d = gid / blocks, k0 = (gid % blocks) * SPEC_BLOCK;
  const int kn = min(SPEC_BLOCK, nw - k0);
  const double3 n = (double3)(dirs[3 * d], dirs[3 * d + 1], dirs[3 * d + 2]);
  double w_max = 0.0;
  for (int b = 0; b < kn; ++b) w_max = fmax(w_max, fabs(omega[k0 + b]));

  for (int e = 0; e < count; ++e) {
    __global const double* cf = coef + (ulong)tab[4 * e];
    const int nint = (int)tab[4 * e + 1];
    const double dtau = tab[4 * e + 2], weight = tab[4 * e + 3];
    double re[3 * SPEC_BLOCK], im[3 * SPEC_BLOCK];
    for (int q = 0; q < 3 * SPEC_BLOCK; ++q) re[q] = im[q] = 0.0;

    for (int j = 0; j < nint; ++j) {
      __global const double* c = cf + 24 * (ulong)j;
      // Sub-pieces from the interval's phase excursion at the block's highest ω (the phase
      // t − n̂·x grows monotonically: 1 − n̂·β > 0).
      double x0[4], x1[4], u[4], a[4];
      spec_eval(c, 0.0, x0, u, a);
      spec_eval(c, dtau, x1, u, a);
      const double dphi = w_max * fabs((x1[0] - x0[0]) - (n.x * (x1[1] - x0[1]) + n.y * (x1[2] - x0[2]) + n.z * (x1[3] - x0[3])));
      const int pieces = max(1, (int)ceil(dphi / SPEC_PHASE));
      const double hp = dtau / (double)pieces;
      for (int p = 0; p < pieces; ++p) {
        for (int g = 0; g < SPEC_NODES; ++g) {
          const double s = hp * ((double)p + 0.5 * (1.0 + gl[2 * g])), wq = 0.5 * hp * gl[2 * g + 1];
          double x[4];
          spec_eval(c, s, x, u, a);
          const double gam = u[0];
          const double3 beta = (double3)(u[1], u[2], u[3]) / gam;
          const double3 bdot = ((double3)(a[1], a[2], a[3]) - beta * a[0]) / (gam * gam);
          const double kap = spec_kappa(u, n);  // γ(1 − n̂·β)
          const double one_m_nb = kap / gam;
          // n̂ × ((n̂ − β) × β̇) = (n̂ − β)(n̂·β̇) − β̇ (1 − n̂·β), over (1 − n̂·β)², times γ dτ.
          const double3 v = ((n - beta) * dot(n, bdot) - bdot * one_m_nb) * (wq * gam * gam * gam / (kap * kap));
          const double phase = x[0] - (n.x * x[1] + n.y * x[2] + n.z * x[3]);
          for (int b = 0; b < kn; ++b) {
            double cs;
            const double sn = sincos(omega[k0 + b] * phase, &cs);
            re[3 * b] += v.x * cs; im[3 * b] += v.x * sn;
            re[3 * b + 1] += v.y * cs; im[3 * b + 1] += v.y * sn;
            re[3 * b + 2] += v.z * cs; im[3 * b + 2] += v.z * sn;
          }
        }
      }
    }
    for (int b = 0; b < kn; ++b) {
      const ulong bin = (ulong)d * (ulong)nw + (ulong)(k0 + b);
      double mag2 = 0.0;
      for (int c3 = 0; c3 < 3; ++c3) {
        coh[(bin * 3 + c3) * 2] += weight * re[3 * b + c3];
        coh[(bin * 3 + c3) * 2 + 1] += weight * im[3 * b + c3];
        mag2 += re[3 * b + c3] * re[3 * b + c3] + im[3 * b + c3] * im[3 * b + c3];
      }
      inc[bin] += weight * mag2;
    }
  }
}
