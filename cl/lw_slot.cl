// The per-slot arithmetic of the Liénard–Wiechert kernel: retarded-time Newton steps, the fields at
// the retarded time and the slot update, for ONE electron at ONE (pixel, sample). Written in the
// common subset of OpenCL C 1.2 and C++20 so that the FLOP count of the kernel is taken from this
// very source: core/src/flop_count.cpp includes it with LW_HOST defined and lw_real a counting
// number type (edm::flop_per_slot). Conventions of that count: see core/include/edm/flops.hpp.
// Used by cl/lienard_wiechert.cl (after cl/common.cl). Spline layout: core/include/edm/trajectory.hpp
// (24 doubles per interval, [component][power]: the quintics of t, x, y, z; u = x′, a = x″).
#ifndef EDM_LW_SLOT_CL
#define EDM_LW_SLOT_CL

#ifndef LW_HOST
typedef double lw_real;
#define LW_GLOBAL __global
// Coefficients i, i+1 of an interval in ONE 16-byte load (intervals start at even offsets: 24
// doubles each, offsets multiples of 24). Neighbouring work-items read different intervals (a few
// knots apart), so every load instruction of a warp touches up to 32 cache lines and costs one L1
// pass per line: halving the number of instructions halves that (measured: BENCHMARKS.md).
#define LW_LOAD2(src, i, c)                                          \
  {                                                                  \
    const double2 v_ = ((LW_GLOBAL const double2*)(src))[(i) / 2];   \
    (c)[(i)] = v_.x;                                                 \
    (c)[(i) + 1] = v_.y;                                             \
  }
#endif

// Division, square root and reciprocal square root of the per-slot path. fast = 0: the built-ins
// (correctly rounded / within the OpenCL ULP bounds). fast = 1 (LW_FAST_RECIP, the GPU default): a
// seed refined by cubically convergent FMA steps (error e → e³), no IEEE slow-path branch (what that
// saves on GPUs: BENCHMARKS.md, third session); on CPUs the hardware divide is faster.
// Seeds (LW_NV_SEED, set by the host on NVIDIA devices):
//   0: half_recip / half_rsqrt of the argument rounded to float (≥ 10 bits by the OpenCL spec; the
//      argument must lie within about 1e±37 — here g′/2, R², 1 + |n̂ × u|² and 1 + |u|², far inside
//      for any physical screen). Two refinements (2⁻¹⁰ → 2⁻³⁰ → 2⁻⁹⁰) reach a few ulps.
//   1: NVIDIA's FP64 approximations through inline PTX (rcp.approx.ftz.f64, rsqrt.approx.ftz.f64:
//      MUFU.RCP64H / MUFU.RSQ64H on the double's upper word). Measured on the H200 to 2⁻¹⁹·⁹⁵ and
//      2⁻²⁰·⁰⁴ over 27 binades (scripts/studies/nv_seeds.cu), so ONE refinement reaches 2⁻⁶⁰, and
//      the float round trip (two F2F conversions per seed) is gone (BENCHMARKS.md, fourth
//      session). Arguments within the double range (flushed
//      subnormals: none of the four above can be one).
// The FLOP count (core/src/flop_count.cpp) counts lw_rcp as 1 and lw_rsqrt_nr as 2, as a division
// and an rsqrt, whatever the seed (and the Newton step's quotient: lw_newton_next).
#ifndef LW_COUNTED_RECIP
#ifndef LW_NV_SEED
#define LW_NV_SEED 0
#endif
#if LW_NV_SEED
inline lw_real lw_seed_rcp(const lw_real x) {
  double r;
  asm("rcp.approx.ftz.f64 %0, %1;" : "=d"(r) : "d"(x));
  return r;
}
inline lw_real lw_seed_rsqrt(const lw_real x) {
  double r;
  asm("rsqrt.approx.ftz.f64 %0, %1;" : "=d"(r) : "d"(x));
  return r;
}
#else
inline lw_real lw_seed_rcp(const lw_real x) { return (lw_real)half_recip((float)x); }
inline lw_real lw_seed_rsqrt(const lw_real x) { return (lw_real)half_rsqrt((float)x); }
#endif
// r(1 + e + e²), e = 1 − x r: error e³.
inline lw_real lw_rcp_refine(const lw_real x, const lw_real r) {
  const lw_real e = fma(-x, r, 1.0);
  return fma(r, fma(e, e, e), r);
}
// y(1 + e/2 + 3e²/8), e = 1 − x y²: error ~e³.
inline lw_real lw_rsqrt_refine(const lw_real x, const lw_real y) {
  const lw_real e = fma(-x, y * y, 1.0);
  return fma(y, e * fma(e, 0.375, 0.5), y);
}
// The reciprocal and the reciprocal square root within a few ulps.
inline lw_real lw_rcp(const lw_real x) {
  const lw_real r = lw_rcp_refine(x, lw_seed_rcp(x));
  return LW_NV_SEED ? r : lw_rcp_refine(x, r);
}
inline lw_real lw_rsqrt_nr(const lw_real x) {
  const lw_real y = lw_rsqrt_refine(x, lw_seed_rsqrt(x));
  return LW_NV_SEED ? y : lw_rsqrt_refine(x, y);
}
#endif
inline lw_real lw_div(const lw_real a, const lw_real b, const int fast) { return fast ? a * lw_rcp(b) : a / b; }
inline lw_real lw_sqrt(const lw_real x, const int fast) { return fast ? x * lw_rsqrt_nr(x) : sqrt(x); }
inline lw_real lw_rsqrt(const lw_real x, const int fast) { return fast ? lw_rsqrt_nr(x) : rsqrt(x); }
// The Newton iterate τ − g/(2h). fast: q = g·r from the seed r ≈ 1/h, refined as the quotient
// itself and halved inside the last FMA — no 2h and no separate product (H200: BENCHMARKS.md).
// The step needs only a relative accuracy of 2⁻³⁰ or so: an error δ of it adds δ·|Δτ| to the
// iterate, and the final step of a warm sample is already below 1e-9 of the knot spacing. So
// q(1 + e + e²) from the half seed (2⁻³⁰), q(1 + e) from the PTX seed (2⁻⁴⁰), e = 1 − h r. The FLOP
// count (LW_COUNTED_RECIP) takes it as τ − g·rcp(2h), the operations it replaces.
// fast = 2 (LW_ROUGH_FIRST: a warm solve's steps before its last): the quotient only to the seed's
// accuracy — the PTX seed itself (2⁻¹⁹·⁹⁵), or q(1 + e) from the half seed (2⁻²⁰). Such a step's
// error δ adds δ·|Δτ| to an iterate that the next step squares: from the midpoint predictor (a few
// % of a knot away) that is ~1e-8 of a knot against the ~1e-7 that the step itself leaves, so the
// last step ends where it did (BENCHMARKS.md, issue 17 kernel variants).
#ifndef LW_ROUGH_FIRST
#define LW_ROUGH_FIRST 1
#endif
inline lw_real lw_newton_next(const lw_real tau, const lw_real g, const lw_real h, const int fast) {
#ifdef LW_COUNTED_RECIP
  return tau - (fast ? g * lw_rcp(2.0 * h) : g / (2.0 * h));
#else
  if (fast) {
    const lw_real r = lw_seed_rcp(h);
    const lw_real q = g * r;
#if LW_NV_SEED
    if (fast == 2) return fma(-0.5, q, tau);
#endif
    const lw_real e = fma(-h, r, 1.0);
#if LW_NV_SEED
    return fma(-0.5, fma(q, e, q), tau);
#else
    return fma(-0.5, fast == 2 ? fma(q, e, q) : fma(q, fma(e, e, e), q), tau);
#endif
  }
  return tau - g / (2.0 * h);
#endif
}

// 0 ≤ s < h for h > 0. On devices ONE unsigned comparison of the bit patterns: non-negative doubles
// order like their bits, and a negative s (sign bit set) lies above every positive h. Two FP64
// comparisons would take two FP64-pipe issue slots (DSETP on NVIDIA), this takes integer ones
// (H200: BENCHMARKS.md). It differs only for s = −0.0 (outside here): lw_locate then takes the
// floor path, which locates the interval again; NaN is outside either way.
#ifndef LW_HOST
#define LW_IN_SPAN(s, h) (as_ulong(s) < as_ulong(h))
#else
#define LW_IN_SPAN(s, h) ((s) >= 0.0 && (s) < (h))
#endif

// An electron's spline as the kernel sees it (read from the launch's table, not kept in registers):
// coefficients, interval count, first knot, knot spacing, its reciprocal and the last knot.
typedef struct lw_spline {
  LW_GLOBAL const double* cf;
  int n;
  lw_real tau0, dtau, inv_dtau, tau_end;
} lw_spline;

// Per-(electron, pixel) solver state carried from sample to sample (registers): the last root,
// the one before, 1/D at the last root (D = dt_obs/dτ), the coverage window of the pixel, how
// many converged roots precede (0 cold, 1, 2 = warm) and the last root's interval.
typedef struct lw_electron {
  lw_real tau, tau_pp, invd_prev, t_first, t_last;
  int warm;
  int j;  // interval of the last root (−1: none): lw_dir_solve's next sample starts by checking it
} lw_electron;

// The light front lc = t − s_z z written over the t-quintic of one interval (24 doubles at c): every
// use of t needs it only in that combination (or as a⁰ = lc″ + s_z z″), so it is formed ONCE per
// uploaded batch (kernel lw_light_front) instead of at every interval load — 6 FP64 subtractions
// per load, about one load per slot in the benchmark cell, each waiting on the load (H200:
// BENCHMARKS.md). Host callers of lw_solve (FLOP count, tests) form it on their tables too.
inline void lw_form_light_front(LW_GLOBAL double* c, const double sz) {
  for (int i = 0; i < 6; ++i) c[i] = sz > 0.0 ? c[i] - c[18 + i] : c[i] + c[18 + i];
}

// The current interval in private memory, 24 doubles: the quintics of the light front
// lc = t − s_z z (lw_form_light_front), x, y and z. A Newton step reads all of it, and so does the
// field evaluation (position, u = x′, a = x″): with reuse, one load of 192 bytes per sample serves
// both — the cubic layout before read 352 (H200: BENCHMARKS.md).
typedef struct lw_coef {
  lw_real c[24];
  lw_real tau_j;  // its first knot τ0 + j dτ
  int j;          // interval located (−1: none)
  int have;       // c holds interval j's coefficients
} lw_coef;

// An empty interval cache that starts from interval j (−1: none), its coefficients not yet loaded.
inline void lw_coef_start(lw_coef* k, const lw_spline* sp, const int j) {
  k->j = j;
  k->tau_j = fma((lw_real)(j < 0 ? 0 : j), sp->dtau, sp->tau0);  // as lw_interval
  k->have = 0;
}

// Interval of τ on uniform knots (multiplication by 1/dτ: no division), clamped to [0, n−1];
// *tau_j = its first knot. Outside the span the end quintic is extrapolated (callers stay inside).
inline int lw_interval(const lw_spline* sp, const lw_real tau, lw_real* tau_j) {
  const lw_real f = floor((tau - sp->tau0) * sp->inv_dtau);
  const int j = f < 0.0 ? 0 : (f >= (lw_real)sp->n ? sp->n - 1 : (int)f);
  *tau_j = fma((lw_real)j, sp->dtau, sp->tau0);  // one FP64 instruction per solve (lw_coef_start)
  return j;
}

// a − s_z b for s_z = ±1 as a select (exact, and no multiplication).
inline lw_real lw_pm(const lw_real a, const lw_real b, const lw_real sz) { return sz > 0.0 ? a - b : a + b; }

// Loads interval j (its light front already formed: lw_form_light_front).
inline void lw_load(const lw_spline* sp, const int j, lw_coef* k) {
  LW_GLOBAL const double* src = sp->cf + (long)j * 24;
  for (int i = 0; i < 24; i += 2) LW_LOAD2(src, i, k->c);
  k->j = j;
  k->have = 1;
}

// The offset s = τ − τ_j of τ in its interval, with that interval's coefficients in k. The interval
// located last (or the previous root's, lw_coef_start) is kept while τ stays inside
// [τ_j, τ_j + dτ) — one subtraction and two comparisons instead of the floor; the Newton steps and
// the field evaluation of a sample, and often the next sample too, share one interval — else it is
// located by the floor. lw_coef_start may seed it with the previous root's interval, whose index
// is known before the predictor (BENCHMARKS.md, third session; lw_solve_mode no longer does: see there).
// Where an interval is located does not depend on reuse: reuse only decides whether coefficients
// already in k are used again (1) or loaded again for every evaluation (0), so both give
// bit-identical results.
inline lw_real lw_locate(const lw_spline* sp, const lw_real tau, const int reuse, lw_coef* k) {
  if (k->j >= 0) {
    const lw_real s = tau - k->tau_j;
    if (LW_IN_SPAN(s, sp->dtau)) {
      if (!reuse || !k->have) lw_load(sp, k->j, k);
      return s;
    }
  }
  lw_real tau_j;
  const int j = lw_interval(sp, tau, &tau_j);
  lw_load(sp, j, k);
  k->tau_j = tau_j;
  return tau - tau_j;
}

// The quintic at c[0..5], with explicit FMAs (FP_CONTRACT is off: same rounding everywhere).
inline lw_real lw_q(const lw_real* c, const lw_real s) {
  return fma(s, fma(s, fma(s, fma(s, fma(s, c[5], c[4]), c[3]), c[2]), c[1]), c[0]);
}
// Value and first derivative by synthetic division (p = (σ − s)·q + p(s), p′(s) = q(s)): 9 FMAs.
inline lw_real lw_q_d(const lw_real* c, const lw_real s, lw_real* d) {
  const lw_real b4 = fma(s, c[5], c[4]), b3 = fma(s, b4, c[3]), b2 = fma(s, b3, c[2]), b1 = fma(s, b2, c[1]);
  *d = fma(s, fma(s, fma(s, fma(s, c[5], b4), b3), b2), b1);
  return fma(s, b1, c[0]);
}
// Value, first and HALF the second derivative: synthetic division once more on q (p″(s) = 2 q′(s));
// the factor 2 goes into the field's prefactor once (lw_fields) instead of four multiplications.
inline lw_real lw_q_d2h(const lw_real* c, const lw_real s, lw_real* d, lw_real* dd_half) {
  const lw_real b4 = fma(s, c[5], c[4]), b3 = fma(s, b4, c[3]), b2 = fma(s, b3, c[2]), b1 = fma(s, b2, c[1]);
  const lw_real e3 = fma(s, c[5], b4), e2 = fma(s, e3, b3), e1 = fma(s, e2, b2);
  *d = fma(s, e1, b1);
  *dd_half = fma(s, fma(s, fma(s, c[5], e3), e2), e1);
  return fma(s, b1, c[0]);
}
// Half the second derivative alone: c2 + s(3c3 + s(6c4 + s·10c5)).
inline lw_real lw_q_ddh(const lw_real* c, const lw_real s) {
  return fma(s, fma(s, fma(s, 10.0 * c[5], 6.0 * c[4]), 3.0 * c[3]), c[2]);
}

// Screen-relative arrival time at (px, py) of light leaving the spline at τ (share/docs/design.md, screen-relative times):
// (t − s_z z) + ρ²/(R + d), R − d written without cancellation. Setup only (two per work-item).
inline lw_real lw_arrival(const lw_spline* sp, const lw_real tau, const lw_real px, const lw_real py,
                          const lw_real sz, const lw_real absZ, lw_coef* k) {
  const lw_real s = lw_locate(sp, tau, 1, k);
  const lw_real* c = k->c;
  const lw_real lc = lw_q(c, s);
  const lw_real dx = px - lw_q(c + 6, s), dy = py - lw_q(c + 12, s);
  const lw_real d = lw_pm(absZ, lw_q(c + 18, s), sz);
  // Same operations as Screen::arrival_rel (no FMA): a window anchored on the host at a pixel's
  // first arrival then includes that sample here too.
  const lw_real rho2 = dx * dx + dy * dy;
  return lc + rho2 / (sqrt(rho2 + d * d) + d);
}

// One safeguarded Newton step for the retarded time, on g(τ) = ρ² − A(A + 2d) with
// A = t_rel − lc (lc = t − s_z z, the light-front quintic) and d = |Z| − s_z z: the light-cone
// condition R = A + d squared (R² = ρ² + d²). g = −f·(R + d + A) with f = t_rel − arrival(τ) =
// A − (R − d) strictly decreasing, so between the start of the span and the ADVANCED root
// (A + d = −R, where g vanishes again) g is strictly increasing with the retarded root as its only
// zero; the bracket is updated from f's sign, f > 0 ⇔ (g < 0 and A + d > 0), so it stays exact
// wherever an iterate lands, and where A + d ≤ 0 (towards the advanced root) the step bisects
// (tests/test_newton_step). A step needs ONE division and NO square root (f needs one: H200, one
// sqrt less per step). No digits are lost: g is a difference of terms of size ρ² (not Z²), and near
// the root g ≈ −2R f, so a far screen keeps f's absolute accuracy (share/docs/design.md).
//   g'/2 = lc'(A + d) + s_z z' A − (Δx x' + Δy y')    (A' = −lc', d' = −s_z z', (ρ²)' = −2(Δx x' + Δy y'))
// lc' comes from the light-front quintic, so the slope has no cancellation at high γ (t' and z' are
// both ≈ γ; lc' ≈ 1/(2γ) on the forward axis). Returns the next τ; *step = |Δτ|.
inline lw_real lw_newton_step(const lw_real* c, const lw_real s, const lw_real tau, const lw_real t_rel,
                              const lw_real px, const lw_real py, const lw_real sz, const lw_real absZ,
                              const int fast, lw_real* lo, lw_real* hi, lw_real* step) {
  lw_real dlc, vx, vy, vz;
  const lw_real lc = lw_q_d(c, s, &dlc);
  const lw_real dx = px - lw_q_d(c + 6, s, &vx);
  const lw_real dy = py - lw_q_d(c + 12, s, &vy);
  const lw_real d = lw_pm(absZ, lw_q_d(c + 18, s, &vz), sz);
  const lw_real A = t_rel - lc;
  const lw_real rho2 = fma(dx, dx, dy * dy);
  const lw_real g = fma(-A, fma(2.0, d, A), rho2);
  const lw_real h = fma(dlc, A + d, fma(A, sz > 0.0 ? vz : -vz, -fma(dx, vx, dy * vy)));
  // f > 0 (the root lies later) ⇔ A + d > R ⇔ g < 0 and A + d > 0 (beyond the advanced root g < 0
  // too, but f < 0 there).
  const int after_light = A + d > 0.0;
  if (g < 0.0 && after_light) *lo = tau; else *hi = tau;
  // Newton only where A + d > 0: with A + d < 0 the step on g heads for the advanced root (a zero
  // of g, not of f), so the iterate bisects the bracket instead. Near the retarded root A + d ≈ R.
  lw_real next = lw_newton_next(tau, g, h, fast);
  if (!(after_light && next >= *lo && next <= *hi)) next = 0.5 * (*lo + *hi);  // g = 0: next = τ = hi
  *step = fabs(next - tau);
  return next;
}

// Fields at the retarded τ (interval offset s; c = the interval as lw_load leaves it): position,
// u = x′ and a = x″ from the quintics (a⁰ = t″ = lc″ + s_z z″). With n̂ = (r − x)/R,
// u⁰ = γ from the mass shell of the spatial u (the spline's t′ = u⁰ agrees only to interpolation
// accuracy; this makes D = γ − n̂·u an identity), D = (1 + |n̂ × u|²)/(γ + n̂·u) without
// cancellation at high γ, X·u = R D, X·a = R(a⁰ − n̂·a):
//   near^i = (n^i γ − u^i)/(R² D³)
//   far^i  = (n^i a⁰ − a^i)/(R D²) − (a⁰ − n̂·a)(n^i γ − u^i)/(R D³)
// near and far stay separate until the sum (the small-a0 far part keeps its digits). Only 1/R and
// 1/D are needed: one reciprocal square root and one division. Returns 1/D (next predictor).
// e = near + far, f = far, n = n̂ (B = n̂ × E is formed by lw_add).
// split = 0 (total mode, LW_TOTAL_FIELDS): only e = near + far, as
//   e^i = 2 far_a (n^i ah⁰ − ah^i) + (near_f − 2 far_a qh)(n^i γ − u^i),
// the two multiples of (n^i γ − u^i) taken together before the product (the same sum, rounded at
// the same scale as before: two FP64 operations fewer per electron and slot); f is not formed.
#ifndef LW_TOTAL_FIELDS
#define LW_TOTAL_FIELDS 1
#endif
// LW_POTENTIAL 1 (run.mode = "potential"): the slot sums the Liénard–Wiechert four-potential
// instead of the fields, A^μ = u^μ/(X·u) at the same retarded root (unit positive charge, c = 1,
// 1/(4πε0) = 1; X·u = R D with X = (R, R n̂)): e = A (the spatial part, u/(R D)), f[0] = A⁰ = φ/c =
// γ/(R D); no acceleration term. n is formed as for the fields (unused by lw_add then).
#ifndef LW_POTENTIAL
#define LW_POTENTIAL 0
#endif
inline lw_real lw_fields_mode(const lw_real* c, const lw_real s, const lw_real px, const lw_real py,
                              const lw_real sz, const lw_real absZ, const int fast, const int split, lw_real* e,
                              lw_real* f, lw_real* n) {
  // Half accelerations (ah = a/2): far is linear in a, so far = 2·far_a·(far written with ah).
  lw_real ux, uy, uz, ahx, ahy, ahz;
  const lw_real dx = px - lw_q_d2h(c + 6, s, &ux, &ahx), dy = py - lw_q_d2h(c + 12, s, &uy, &ahy);
  const lw_real d = lw_pm(absZ, lw_q_d2h(c + 18, s, &uz, &ahz), sz);
  const lw_real ah0 = lw_pm(lw_q_ddh(c, s), ahz, -sz);
  const lw_real invR = lw_rsqrt(fma(d, d, fma(dx, dx, dy * dy)), fast);
  n[0] = dx * invR;
  n[1] = dy * invR;
  n[2] = (sz > 0.0 ? d : -d) * invR;
  // 1 + |u|² and 1 + |n̂ × u|² with the 1 inside the innermost FMA (one addition fewer each).
  const lw_real gam = lw_sqrt(fma(ux, ux, fma(uy, uy, fma(uz, uz, 1.0))), fast);
  const lw_real cx = fma(n[1], uz, -(n[2] * uy)), cy = fma(n[2], ux, -(n[0] * uz)), cz = fma(n[0], uy, -(n[1] * ux));
  const lw_real nu = fma(n[0], ux, fma(n[1], uy, n[2] * uz));
  const lw_real invD = lw_div(gam + nu, fma(cx, cx, fma(cy, cy, fma(cz, cz, 1.0))), fast);
  const lw_real w0 = fma(n[0], gam, -ux), w1 = fma(n[1], gam, -uy), w2 = fma(n[2], gam, -uz);
  const lw_real rd = invR * invD;
  if (LW_POTENTIAL) {  // A^μ = u^μ/(R D): the fields' 1/R and 1/D, nothing else
    e[0] = ux * rd;
    e[1] = uy * rd;
    e[2] = uz * rd;
    f[0] = gam * rd;
    return invD;
  }
  const lw_real far_a = rd * invD;     // 1/(R D²)
  const lw_real near_f = rd * far_a;   // 1/(R² D³)
  const lw_real far_2 = 2.0 * far_a;   // exact
  const lw_real nah = fma(n[0], ahx, fma(n[1], ahy, n[2] * ahz));
  const lw_real qh = (ah0 - nah) * invD;  // far^i = 2 far_a · ((n^i ah⁰ − ah^i) − qh (n^i γ − u^i))
  if (LW_TOTAL_FIELDS && !split) {
    const lw_real wk = fma(-far_2, qh, near_f);
    e[0] = fma(far_2, fma(n[0], ah0, -ahx), w0 * wk);
    e[1] = fma(far_2, fma(n[1], ah0, -ahy), w1 * wk);
    e[2] = fma(far_2, fma(n[2], ah0, -ahz), w2 * wk);
    return invD;
  }
  f[0] = far_2 * fma(-qh, w0, fma(n[0], ah0, -ahx));
  f[1] = far_2 * fma(-qh, w1, fma(n[1], ah0, -ahy));
  f[2] = far_2 * fma(-qh, w2, fma(n[2], ah0, -ahz));
  e[0] = fma(w0, near_f, f[0]);
  e[1] = fma(w1, near_f, f[1]);
  e[2] = fma(w2, near_f, f[2]);
  return invD;
}
inline lw_real lw_fields(const lw_real* c, const lw_real s, const lw_real px, const lw_real py,
                         const lw_real sz, const lw_real absZ, const int fast, lw_real* e, lw_real* f, lw_real* n) {
  return lw_fields_mode(c, s, px, py, sz, absZ, fast, 1, e, f, n);
}

// Sets up one electron at one pixel: light from the first / last knot reaches the pixel at
// t_first / t_last; samples outside get nothing from this electron (check_coverage reports them on
// the host). Inside, the residual is strictly decreasing (time-like worldline): the root is unique.
inline void lw_setup(lw_electron* el, const lw_spline* sp, const lw_real px, const lw_real py,
                     const lw_real sz, const lw_real absZ) {
  lw_coef k;
  lw_coef_start(&k, sp, -1);
  el->t_first = lw_arrival(sp, sp->tau0, px, py, sz, absZ, &k);
  el->t_last = lw_arrival(sp, sp->tau_end, px, py, sz, absZ, &k);
  el->warm = 0;
  el->j = -1;
  el->tau = el->tau_pp = sp->tau0;
  el->invd_prev = 1.0;
}

// The start of a solve and its bracket [lo, hi]: cold (warm 0), the whole span from its start;
// warm, the predictor from the previous root (see lw_solve). Records the previous root.
inline lw_real lw_predict(lw_electron* el, const lw_spline* sp, const lw_real dt, lw_real* lo, lw_real* hi) {
  *hi = sp->tau_end;
  if (el->warm == 0) {
    *lo = sp->tau0;
    return sp->tau0;
  }
  const lw_real tau = el->tau;
  *lo = tau;
  lw_real pred = el->warm == 2 ? el->tau_pp + 2.0 * dt * el->invd_prev : tau + dt * el->invd_prev;
  el->tau_pp = tau;
  if (!(pred > *lo && pred < *hi)) pred = 0.5 * (*lo + *hi);
  return pred;
}

// Retarded time of sample t_rel (inside [t_first, t_last]) and the contribution there.
// Start: cold (first covered sample of the chunk) the whole span; warm, from the previous root τ₁
// with dτ/dt = 1/D₁: after two consecutive roots the midpoint rule τ₂ + 2 dt/D₁ (error O(dt³)),
// else τ₁ + dt/D₁. Then exactly newton_iters safeguarded steps once two roots are known; the first
// two samples iterate to convergence, so the midpoint predictor starts from accurate roots (and
// chunking changes results only at rounding level). reuse / newton_iters / fast / the split flag
// are compile-time constants in the kernel.
// split: the far part f is formed too (split mode); 0: only e (lw_fields_mode). lw_solve: split.
inline void lw_solve_mode(lw_electron* el, const lw_spline* sp, const lw_real t_rel, const lw_real dt,
                          const lw_real px, const lw_real py, const lw_real sz, const lw_real absZ,
                          const int newton_iters, const int reuse, const int fast, const int split, lw_real* e,
                          lw_real* f, lw_real* n) {
  // The predictor's interval is located directly (floor), not first tested against the previous
  // root's: at the benchmark cells' 512 samples per laser period a root moves ~3 knots per sample, so
  // that test nearly always failed and only added a branch and an int → double conversion before
  // the floor (BENCHMARKS.md, issue 17 kernel variants). To rounding at a knot, both find the same
  // interval. el->j still records the root's interval (the angular screen's lw_dir_solve uses it).
  lw_coef k;
  lw_coef_start(&k, sp, -1);
  lw_real lo, hi, s, step;
  lw_real tau = lw_predict(el, sp, dt, &lo, &hi);
  if (el->warm == 2) {
    for (int it = 0; it < newton_iters; ++it) {
      s = lw_locate(sp, tau, reuse, &k);
      const int rough = LW_ROUGH_FIRST && fast && it + 1 < newton_iters;
      tau = lw_newton_step(k.c, s, tau, t_rel, px, py, sz, absZ, rough ? 2 : fast, &lo, &hi, &step);
    }
  } else {
    // Convergence scale: a few ulps of τ over the span.
    const lw_real tol = 4.0 * DBL_EPSILON * fmax(fabs(sp->tau0), fabs(sp->tau_end));
    for (int it = 0; it < 200; ++it) {
      s = lw_locate(sp, tau, reuse, &k);
      tau = lw_newton_step(k.c, s, tau, t_rel, px, py, sz, absZ, fast, &lo, &hi, &step);
      if (step <= tol || hi - lo <= tol) break;
    }
    el->warm += 1;
  }
  el->tau = tau;
  s = lw_locate(sp, tau, reuse, &k);
  el->j = k.j;
  el->invd_prev = lw_fields_mode(k.c, s, px, py, sz, absZ, fast, split, e, f, n);
}
inline void lw_solve(lw_electron* el, const lw_spline* sp, const lw_real t_rel, const lw_real dt,
                     const lw_real px, const lw_real py, const lw_real sz, const lw_real absZ,
                     const int newton_iters, const int reuse, const int fast, lw_real* e, lw_real* f, lw_real* n) {
  lw_solve_mode(el, sp, t_rel, dt, px, py, sz, absZ, newton_iters, reuse, fast, 1, e, f, n);
}

// Adds one contribution to the slot's sums (E, B, and in split mode E_far, B_far), B = n̂ × E.
inline void lw_add(lw_real* acc, const lw_real* e, const lw_real* f, const lw_real* n, const int split) {
  if (LW_POTENTIAL) {  // A in E's slots, A⁰ = φ/c in B's first (the host writes them as /A)
    acc[0] += e[0];
    acc[1] += e[1];
    acc[2] += e[2];
    acc[3] += f[0];
    return;
  }
  acc[0] += e[0];
  acc[1] += e[1];
  acc[2] += e[2];
  acc[3] += fma(n[1], e[2], -(n[2] * e[1]));
  acc[4] += fma(n[2], e[0], -(n[0] * e[2]));
  acc[5] += fma(n[0], e[1], -(n[1] * e[0]));
  if (split) {
    acc[6] += f[0];
    acc[7] += f[1];
    acc[8] += f[2];
    acc[9] += fma(n[1], f[2], -(n[2] * f[1]));
    acc[10] += fma(n[2], f[0], -(n[0] * f[2]));
    acc[11] += fma(n[0], f[1], -(n[1] * f[0]));
  }
}

// ---- The second kernel: a fixed-step RK4 march of the retarded time (accumulator.kernel = "rk4") ----
// Within a work-item's chunk of consecutive samples the first covered sample's root comes from the
// bracketed Newton solve above (cold, to convergence); every later sample advances τ by RK4 on
//   dτ/dt_obs = 1/D(τ),  D = d(arrival)/dτ = lc′ + (s_z z′ ρ²/(R + d) − (Δx x′ + Δy y′))/R
// over one sample interval in m sub-steps: the derivative of lw_arrival's lc + ρ²/(R + d) in the
// same light-front variables as the Newton step (no t′ − z′ cancellation at high γ, and the very
// function whose root Newton finds, so both kernels aim at one root). No correction follows: the
// march's error is a smooth drift along the chunk, not a per-sample residual; on an electron at rest
// 1/D is constant and the march is exact. m: LW_SUBSTEPS > 0 fixed, 0 "auto" (lw_rk4_substeps).
// share/docs/design.md (the second kernel) states the bound.

// Sub-steps per sample so that one sub-step moves τ by at most LW_RK4_KNOT_FRACTION of a knot
// spacing, from the rate at the sample's start ("auto"; the host checks a fixed count against the
// same fraction with the batch's largest rate, u⁰ + |u|: FieldAccumulator).
#ifndef LW_RK4_KNOT_FRACTION
#define LW_RK4_KNOT_FRACTION 0.125
#endif
inline int lw_rk4_substeps(const lw_spline* sp, const lw_real dt, const lw_real rate) {
  const lw_real knots = dt * rate * sp->inv_dtau * (1.0 / LW_RK4_KNOT_FRACTION);
  return knots <= 1.0 ? 1 : (knots >= 4096.0 ? 4096 : (int)ceil(knots));
}

// dτ/dt_obs = 1/D at τ. Multiplied through by R (R + d): D R (R + d) = lc′ R (R + d) + s_z z′ ρ² −
// (Δx x′ + Δy y′)(R + d), so one reciprocal square root (R) and one division.
inline lw_real lw_rk4_rate(const lw_spline* sp, const lw_real tau, const lw_real px, const lw_real py,
                           const lw_real sz, const lw_real absZ, const int reuse, const int fast, lw_coef* k) {
  const lw_real s = lw_locate(sp, tau, reuse, k);
  const lw_real* c = k->c;
  lw_real vx, vy, vz;
  // lc′ alone: lw_q_d's derivative chain without the value (8 FMAs).
  const lw_real b4 = fma(s, c[5], c[4]), b3 = fma(s, b4, c[3]), b2 = fma(s, b3, c[2]), b1 = fma(s, b2, c[1]);
  const lw_real dlc = fma(s, fma(s, fma(s, fma(s, c[5], b4), b3), b2), b1);
  const lw_real dx = px - lw_q_d(c + 6, s, &vx), dy = py - lw_q_d(c + 12, s, &vy);
  const lw_real d = lw_pm(absZ, lw_q_d(c + 18, s, &vz), sz);
  const lw_real rho2 = fma(dx, dx, dy * dy);
  const lw_real R2 = fma(d, d, rho2);
  const lw_real R = R2 * lw_rsqrt(R2, fast);
  const lw_real rd = R + d;
  const lw_real den = fma(dlc * R, rd, fma(sz > 0.0 ? vz : -vz, rho2, -(fma(dx, vx, dy * vy) * rd)));
  return lw_div(R * rd, den, fast);
}

// One sample of the march: τ from the previous sample's root by m RK4 sub-steps, then the fields.
// el->invd_prev holds the rate at that root (the next sub-step's k1: 4 rate evaluations per sub-step).
inline void lw_rk4_solve(lw_electron* el, const lw_spline* sp, const lw_real t_rel, const lw_real dt,
                         const lw_real px, const lw_real py, const lw_real sz, const lw_real absZ,
                         const int substeps, const int reuse, const int fast, const int split, lw_real* e,
                         lw_real* f, lw_real* n) {
  lw_coef k;
  if (el->warm == 0) {  // the chunk's first covered sample: Newton to convergence (lw_solve_mode's cold path)
    lw_solve_mode(el, sp, t_rel, dt, px, py, sz, absZ, 1, reuse, fast, split, e, f, n);
    lw_coef_start(&k, sp, -1);
    el->invd_prev = lw_rk4_rate(sp, el->tau, px, py, sz, absZ, reuse, fast, &k);
    el->tau_pp = 0.0;  // the march's compensation (below)
    el->warm = 2;
    return;
  }
  const int m = substeps > 0 ? substeps : lw_rk4_substeps(sp, dt, el->invd_prev);
  const lw_real h = substeps > 0 ? dt * (1.0 / substeps) : dt / (lw_real)m;  // fixed: folded at compile time
  const lw_real h2 = 0.5 * h, h6 = h * (1.0 / 6.0);
  lw_coef_start(&k, sp, -1);
  // τ is summed with a compensation (Kahan; el->tau_pp carries it, Newton's previous root, unused
  // here): τ is large where the window starts long after τ0, and the rounding of thousands of
  // increments of ε|τ| would otherwise add up to a random walk (6e-12 of the field on a rest-electron
  // map of 2560 samples, 96 % of it the walk: BENCHMARKS.md, "The second kernel").
  lw_real tau = el->tau, comp = el->tau_pp, k1 = el->invd_prev;
  for (int i = 0; i < m; ++i) {
    const lw_real k2 = lw_rk4_rate(sp, fma(h2, k1, tau), px, py, sz, absZ, reuse, fast, &k);
    const lw_real k3 = lw_rk4_rate(sp, fma(h2, k2, tau), px, py, sz, absZ, reuse, fast, &k);
    const lw_real k4 = lw_rk4_rate(sp, fma(h, k3, tau), px, py, sz, absZ, reuse, fast, &k);
    const lw_real y = fma(h6, k1 + fma(2.0, k2 + k3, k4), -comp);
    const lw_real next = tau + y;
    comp = (next - tau) - y;
    tau = next < sp->tau0 ? sp->tau0 : (next > sp->tau_end ? sp->tau_end : next);  // inside the span
    k1 = lw_rk4_rate(sp, tau, px, py, sz, absZ, reuse, fast, &k);
  }
  el->tau = tau;
  el->tau_pp = comp;
  el->invd_prev = k1;
  const lw_real s = lw_locate(sp, tau, reuse, &k);
  el->j = k.j;
  (void)lw_fields_mode(k.c, s, px, py, sz, absZ, fast, split, e, f, n);
}

#endif  // EDM_LW_SLOT_CL
