// Liénard–Wiechert accumulation of ONE electron onto the screen cube (DESIGN §2, §4), plus the
// slab transpose used by FieldAccumulator::finish. Needs common.cl before it and these defines
// (assembled by core/src/device.cpp from KernelOptions):
//   NEWTON_ITERS   Newton steps per warm sample (exactly this many; ≥ 1)
//   COEF_REUSE     1: keep the current interval's 48 coefficients in private memory until τ leaves it
//   SAMPLE_CHUNKS  C: chunks per pixel (work-items per pixel)
//   SPLIT_MODE     1: also accumulate the far (1/R) part into Ef, Bf
//   ELECTRON_GROUP G: electrons per launch (each slot read and written once per launch)
//
// Units and sign: normalised (units.hpp: c = 1, lengths c/ω, times 1/ω) and a UNIT POSITIVE charge
// with 1/(4πε0) = 1, i.e. the field is summed in units of q k²/(4πε0) with q = +1: a static charge
// gives E = n̂/R². The electron's negative charge is carried by Normalization::lw_efield()
// (= −e k²/(4πε0) < 0), which the writer applies; B is in the same units with c = 1 (B = n̂ × E).
//
// Work decomposition: one launch per group of G electrons (G = 1: one per electron); one work-item per
// (pixel p, sample chunk c), p fastest in the global id. Chunk c of pixel p owns samples [k0, k1) of that pixel and all 3 components of
// every bucket there, so no two work-items touch the same slot (no atomics) and one in-order queue
// adds electrons in the same order whatever the batching (deterministic sums).
//
// Device buffer layout, per bucket (E, B, E_far, B_far): [comp][k][pixel], pixel = iy·nx + ix
// fastest — neighbouring work-items (neighbouring pixels, same k) touch neighbouring addresses, so
// the read-modify-write of a sample is coalesced on GPUs. slab_transpose turns rows of it into the
// output layout (iy, ix, k fastest).

// Evaluates components [0, ncomp) of the spline at τ into v and, when dv is not null, the τ-derivatives
// of the first four (t, x, y, z) into dv (for an exact Newton slope). With COEF_REUSE the interval's
// 48 coefficients are copied into `cache` when the interval index changes and evaluated from there;
// the arithmetic is the same in both paths, so the results are bit-identical.
//
// It also returns the light-front time t − s_z z as ONE cubic with coefficients c_t − s_z c_z: on a
// γ = 5 trajectory t and z are large and nearly equal, and evaluating them separately would leave
// ~ulp(t) of noise in the residual, so two solves of the same sample (a warm and a cold one, C = 1 vs
// C > 1) would land on different roots within that noise.
inline void lw_eval(__global const double* cf, const int n_int, const double tau0, const double dtau,
                    const double tau, const int ncomp, const double sz, double* v, double* lc,
                    double* dv, double* cache, int* cached_j) {
  const int j = edm_interval(tau, tau0, dtau, n_int);
  const double s = tau - (tau0 + (double)j * dtau);
#if COEF_REUSE
  if (j != *cached_j) {
    __global const double* src = cf + (ulong)j * EDM_NCOEF;
    for (int i = 0; i < EDM_NCOEF; ++i) cache[i] = src[i];
    *cached_j = j;
  }
  for (int c = 0; c < ncomp; ++c)
    if (c != 4) v[c] = edm_horner_p(cache + 4 * c, s);  // u⁰ unused: γ comes from the mass shell
  *lc = edm_horner_lf_p(cache, sz, s);
  if (dv)
    for (int c = 0; c < 4; ++c) dv[c] = edm_dhorner_p(cache + 4 * c, s);
#else
  __global const double* src = cf + (ulong)j * EDM_NCOEF;
  for (int c = 0; c < ncomp; ++c)
    if (c != 4) v[c] = edm_horner_g(src + 4 * c, s);  // u⁰ unused: γ comes from the mass shell
  *lc = edm_horner_lf_g(src, sz, s);
  if (dv)
    for (int c = 0; c < 4; ++c) dv[c] = edm_dhorner_g(src + 4 * c, s);
#endif
}

// Geometry of the light path from the state v (t, x, y, z, …) to the pixel (px, py, Z):
// dx, dy transverse offsets, d = |Z| − s_z z > 0 (distance to the screen plane), R, and the
// screen-relative arrival time (t − s_z z) + ρ²/(R + d) — R − d written without cancellation, so a
// screen at 10⁹ wavelengths loses no digits (t_rel = t − |Z| never forms |Z| + small).
typedef struct {
  double dx, dy, d, R, arrival;
} lw_path;

inline lw_path lw_geometry(const double* v, const double lc, const double px, const double py,
                           const double sz, const double absZ) {
  lw_path g;
  g.dx = px - v[1];
  g.dy = py - v[2];
  g.d = absZ - sz * v[3];
  const double rho2 = g.dx * g.dx + g.dy * g.dy;
  g.R = sqrt(rho2 + g.d * g.d);
  g.arrival = lc + rho2 / (g.R + g.d);
  return g;
}

// D = γ − n̂·u without cancellation at high γ: (γ² − (n̂·u)²)/(γ + n̂·u) with the mass shell
// γ² = 1 + |u|² and |u|² − (n̂·u)² = |n̂ × u|² (STYLE 9). γ is taken from the mass shell of the spatial
// u, not from the spline's u⁰ component: the spline's u⁰ and |u| agree only to interpolation accuracy
// (~1e-5 at 16 knots per period), and this makes D = γ − n̂·u an exact identity, which the covariant
// field below relies on (the host reference uses the same γ).
inline double lw_doppler(const double* v, const lw_path* g, const double sz, const double gamma) {
  const double inv = 1.0 / g->R;
  const double nx = g->dx * inv, ny = g->dy * inv, nz = sz * g->d * inv;
  const double cx = ny * v[7] - nz * v[6];
  const double cy = nz * v[5] - nx * v[7];
  const double cz = nx * v[6] - ny * v[5];
  const double nu = nx * v[5] + ny * v[6] + nz * v[7];
  return (1.0 + (cx * cx + cy * cy + cz * cz)) / (gamma + nu);
}

inline double lw_gamma(const double* v) {
  return sqrt(1.0 + (v[5] * v[5] + v[6] * v[6] + v[7] * v[7]));
}

// Exact slope −df/dτ = t' − n̂·x' of the residual ON THE SPLINE (t', x' from the spline's derivative),
// written as D + (t' − γ) − n̂·(x' − u): the corrections are small (spline vs mass shell), so there is
// no cancellation, and Newton converges quadratically on the spline (NEWTON_ITERS 2 vs 4 agree).
inline double lw_slope(const double* v, const double* dv, const lw_path* g, const double sz,
                       const double gamma, const double D) {
  const double inv = 1.0 / g->R;
  const double nx = g->dx * inv, ny = g->dy * inv, nz = sz * g->d * inv;
  return D + ((dv[0] - gamma) - (nx * (dv[1] - v[5]) + ny * (dv[2] - v[6]) + nz * (dv[3] - v[7])));
}

// Retarded-time solver state of one electron at one pixel (private memory).
typedef struct {
  __global const double* cf;  // its coefficients
  int n_int, warm;            // warm: 0 cold; 1 one previous root; 2 two consecutive roots
  double tau0, dtau, tau_end;
  double t_first, t_last;     // arrival at this pixel of light from the first / last knot
  double tau_tol;             // convergence scale of the converged solves (a few ulps of τ)
  double tau, tau_pp, doppler_prev;
} lw_electron;

// Sets up electron e of the launch for pixel (px, py). Light from the first / last knot reaches the
// pixel at t_first / t_last: samples outside [t_first, t_last] have no retarded time inside the spline
// and get nothing from this electron (check_coverage reports them on the host). Inside, the residual
// f(τ) = t_rel − arrival(τ) is strictly decreasing (time-like worldline), so the root is unique.
inline void lw_setup(lw_electron* el, __global const double* coef, __global const double* table,
                     const double px, const double py, const double sz, const double absZ,
                     double* cache, int* cached_j) {
  double v[EDM_NCOMP] = {0}, lc;
  el->cf = coef + (ulong)table[0];
  el->n_int = (int)table[1];
  el->tau0 = table[2];
  el->dtau = table[3];
  el->tau_end = el->tau0 + el->dtau * (double)el->n_int;
  *cached_j = -1;
  lw_eval(el->cf, el->n_int, el->tau0, el->dtau, el->tau0, 8, sz, v, &lc, 0, cache, cached_j);
  el->t_first = lw_geometry(v, lc, px, py, sz, absZ).arrival;
  lw_eval(el->cf, el->n_int, el->tau0, el->dtau, el->tau_end, 8, sz, v, &lc, 0, cache, cached_j);
  el->t_last = lw_geometry(v, lc, px, py, sz, absZ).arrival;
  el->tau_tol = 4.0 * DBL_EPSILON * fmax(fabs(el->tau0), fabs(el->tau_end));
  el->warm = 0;
  el->tau = el->tau_pp = el->tau0;
  el->doppler_prev = 1.0;
}

// Solves the retarded time of sample t_rel (inside [t_first, t_last]) and returns the contribution:
// e[3] = near + far E, f[3] = far E, and n̂ (B = n̂ × E is formed by the caller).
inline void lw_contribution(lw_electron* el, const double t_rel, const double dt, const double px,
                            const double py, const double sz, const double absZ, double* cache,
                            int* cached_j, double* e, double* f, double* n) {
  double v[EDM_NCOMP] = {0}, dv[4], lc;
  double lo, hi = el->tau_end, tau = el->tau;
  // Start of the solve. Cold (first covered sample of the chunk): the whole span. Warm, from the
  // previous root τ₁ with the slope dτ/dt = 1/(γ − n̂·u) there: after two consecutive roots the
  // midpoint rule τ₂ + 2 dt/D₁ (error O(dt³)), else the first-order step τ₁ + dt/D₁ (O(dt²)). At
  // γ = 5 and 16 samples per Doppler period a first-order start leaves ~1e-4 in f and 2 Newton steps
  // reach only ~1e-12 in τ; the midpoint start is converged to rounding after 2.
  if (el->warm == 0) {
    lo = el->tau0;
    tau = el->tau0;
  } else {
    lo = tau;
    const double pred = el->warm == 2 ? el->tau_pp + 2.0 * dt / el->doppler_prev
                                      : tau + dt / el->doppler_prev;
    el->tau_pp = tau;
    tau = pred;
    if (!(tau > lo && tau < hi)) tau = 0.5 * (lo + hi);
  }
  // Safeguarded Newton in [lo, hi] (bisection whenever a step leaves the bracket): exactly
  // NEWTON_ITERS steps once two roots are known; the first two samples of a chunk iterate until
  // converged, so every later sample starts from an accurate midpoint predictor (and chunking does
  // not change the result beyond rounding).
  const int fixed = el->warm == 2;
  for (int it = 0; it < (fixed ? NEWTON_ITERS : 200); ++it) {
    lw_eval(el->cf, el->n_int, el->tau0, el->dtau, tau, 8, sz, v, &lc, dv, cache, cached_j);
    const lw_path g = lw_geometry(v, lc, px, py, sz, absZ);
    const double res = t_rel - g.arrival;
    if (res > 0.0) lo = tau; else hi = tau;
    const double gam = lw_gamma(v);
    double next = tau + res / lw_slope(v, dv, &g, sz, gam, lw_doppler(v, &g, sz, gam));
    if (!(next >= lo && next <= hi)) next = 0.5 * (lo + hi);  // closed: res = 0 gives next = τ = hi
    const double step = fabs(next - tau);
    tau = next;
    if (!fixed && (step <= el->tau_tol || hi - lo <= el->tau_tol)) break;
  }
  el->warm = el->warm < 2 ? el->warm + 1 : 2;
  el->tau = tau;

  // Fields at the retarded τ. With n̂ = (r − x)/R, D = u⁰ − n̂·u (X·u = R D), X·a = R(a⁰ − n̂·a),
  // u⁰ = γ from the mass shell (see lw_doppler):
  //   near^i = (X^i u⁰ − X⁰ u^i)/(X·u)³          = (n^i u⁰ − u^i)/(R² D³)
  //   far^i  = (X^i a⁰ − X⁰ a^i)/(X·u)² − (X·a)(X^i u⁰ − X⁰ u^i)/(X·u)³
  //          = (n^i a⁰ − a^i)/(R D²) − (a⁰ − n̂·a)(n^i u⁰ − u^i)/(R D³)
  // (E^i = F^{i0}); near and far stay separate until the sum so the small-a0 far part keeps its
  // digits.
  lw_eval(el->cf, el->n_int, el->tau0, el->dtau, tau, EDM_NCOMP, sz, v, &lc, 0, cache, cached_j);
  const lw_path g = lw_geometry(v, lc, px, py, sz, absZ);
  const double gam = lw_gamma(v);
  const double D = lw_doppler(v, &g, sz, gam);
  el->doppler_prev = D;
  const double invR = 1.0 / g.R;
  n[0] = g.dx * invR;
  n[1] = g.dy * invR;
  n[2] = sz * g.d * invR;
  const double invD = 1.0 / D;
  const double w0 = n[0] * gam - v[5], w1 = n[1] * gam - v[6], w2 = n[2] * gam - v[7];
  const double near_f = invR * invR * invD * invD * invD;
  const double na = n[0] * v[9] + n[1] * v[10] + n[2] * v[11];
  const double far_a = invR * invD * invD;
  const double far_u = (v[8] - na) * invR * invD * invD * invD;
  f[0] = (n[0] * v[8] - v[9]) * far_a - far_u * w0;
  f[1] = (n[1] * v[8] - v[10]) * far_a - far_u * w1;
  f[2] = (n[2] * v[8] - v[11]) * far_a - far_u * w2;
  e[0] = w0 * near_f + f[0];
  e[1] = w1 * near_f + f[1];
  e[2] = w2 * near_f + f[2];
}

// One launch adds electrons [first, first + count) of the batch (count ≤ ELECTRON_GROUP): each
// work-item reads its slot once, adds the electrons' contributions IN ELECTRON ORDER, and writes it
// once — the same additions in the same order as one launch per electron (bit-identical for every
// group size), with the slot traffic divided by the group size.
// table: 4 doubles per electron of the batch: coefficient offset (doubles), intervals, τ0, dτ.
__kernel void lw_accumulate(__global const double* restrict coef, __global const double* restrict table,
                            const int first, const int count,
                            const int nx, const int ny, const int samples,
                            const double half_x, const double half_y, const double zs,
                            const double t0_rel, const double dt,
                            __global double* restrict E, __global double* restrict B,
                            __global double* restrict Ef, __global double* restrict Bf) {
  const int npix = nx * ny;
  const ulong gid = get_global_id(0);
  if (gid >= (ulong)npix * SAMPLE_CHUNKS) return;  // padding up to a work-group multiple
  const int p = (int)(gid % (ulong)npix);
  const int chunk = (int)(gid / (ulong)npix);
  const int k0 = (int)(((long)samples * chunk) / SAMPLE_CHUNKS);
  const int k1 = (int)(((long)samples * (chunk + 1)) / SAMPLE_CHUNKS);
  const double px = edm_pixel(p % nx, nx, half_x);
  const double py = edm_pixel(p / nx, ny, half_y);
  const double sz = zs >= 0.0 ? 1.0 : -1.0;
  const double absZ = fabs(zs);
  const ulong plane = (ulong)samples * (ulong)npix;  // one component of one bucket

  lw_electron el[ELECTRON_GROUP];
  double cache[ELECTRON_GROUP][EDM_NCOEF];
  int cached_j[ELECTRON_GROUP];
  for (int e = 0; e < ELECTRON_GROUP; ++e)
    if (e < count)
      lw_setup(&el[e], coef, table + 4 * (ulong)(first + e), px, py, sz, absZ, cache[e], &cached_j[e]);

  for (int k = k0; k < k1; ++k) {
    const double t_rel = t0_rel + dt * (double)k;
    const ulong i0 = (ulong)k * (ulong)npix + (ulong)p;
    int loaded = 0;
    double acc[12];  // E xyz, B xyz, E_far xyz, B_far xyz of this slot
    for (int e = 0; e < ELECTRON_GROUP; ++e) {
      if (e >= count || t_rel < el[e].t_first || t_rel > el[e].t_last) continue;
      double ev[3], fv[3], n[3];
      lw_contribution(&el[e], t_rel, dt, px, py, sz, absZ, cache[e], &cached_j[e], ev, fv, n);
      if (!loaded) {  // read the slot only when something is added (no traffic otherwise)
        for (int c = 0; c < 3; ++c) {
          acc[c] = E[i0 + c * plane];
          acc[3 + c] = B[i0 + c * plane];
#if SPLIT_MODE
          acc[6 + c] = Ef[i0 + c * plane];
          acc[9 + c] = Bf[i0 + c * plane];
#endif
        }
        loaded = 1;
      }
      acc[0] += ev[0];
      acc[1] += ev[1];
      acc[2] += ev[2];
      acc[3] += n[1] * ev[2] - n[2] * ev[1];  // B = n̂ × E
      acc[4] += n[2] * ev[0] - n[0] * ev[2];
      acc[5] += n[0] * ev[1] - n[1] * ev[0];
#if SPLIT_MODE
      acc[6] += fv[0];
      acc[7] += fv[1];
      acc[8] += fv[2];
      acc[9] += n[1] * fv[2] - n[2] * fv[1];
      acc[10] += n[2] * fv[0] - n[0] * fv[2];
      acc[11] += n[0] * fv[1] - n[1] * fv[0];
#endif
    }
    if (loaded) {
      for (int c = 0; c < 3; ++c) {
        E[i0 + c * plane] = acc[c];
        B[i0 + c * plane] = acc[3 + c];
#if SPLIT_MODE
        Ef[i0 + c * plane] = acc[6 + c];
        Bf[i0 + c * plane] = acc[9 + c];
#endif
      }
    }
  }
}

// Rows [iy0, iy0 + rows) of component `comp` of one bucket, from the device layout [comp][k][pixel]
// to the output layout (row, ix, k) with k fastest. Global id 0 runs over k so the writes are
// coalesced; the strided reads happen once per run, at finish.
__kernel void slab_transpose(__global const double* restrict src, __global double* restrict dst,
                             const int nx, const int ny, const int samples, const int comp,
                             const int iy0, const int rows) {
  const int k = (int)get_global_id(0);
  const int q = (int)get_global_id(1);  // (row − iy0)·nx + ix
  if (k >= samples || q >= rows * nx) return;
  const ulong npix = (ulong)nx * (ulong)ny;
  dst[(ulong)q * (ulong)samples + (ulong)k] =
      src[((ulong)comp * (ulong)samples + (ulong)k) * npix + (ulong)iy0 * (ulong)nx + (ulong)q];
}
