// The field kernel for CPUs with FP64 vector units: LW_SIMD = W neighbouring device positions per
// work-item, one per lane of a doubleW, for the flat screen (cl/lienard_wiechert.cl's kernel
// otherwise; that file comes before this one and skips its own lw_accumulate when LW_SIMD is set).
//
// Why: an OpenCL CPU runtime (PoCL) runs a work-group's work-items as a loop, and vectorises
// across them only where the work-item's body has no loop of its own; the field kernel's sample loop
// keeps every FP64 operation scalar, so a core with 8-wide FMA units ran at an eighth of its peak
// (BENCHMARKS.md, "PoCL: the vector units"). Here the lanes are written out: each operation of a
// warm solve is one vector operation for W pixels.
//
// The arithmetic is lw_slot.cl's, operation by operation, with LW_FAST_RECIP 0 (the built-in
// division, sqrt and rsqrt, as the CPU row chooses) and the branches as selects:
// - a warm solve (two converged roots known) is done for all lanes together: the midpoint
//   predictor, NEWTON_ITERS safeguarded Newton steps, the fields;
// - a cold solve (the first two covered samples of a chunk at a pixel, iterated to convergence) is
//   done lane by lane by lw_solve_mode itself;
// - an interval is located as lw_locate does: kept while τ stays inside it, else by the floor;
//   the coefficients are gathered again only when some lane's interval changed. With 4 or 8 lanes
//   each lane's interval is read as whole rows and transposed into the coefficient vectors
//   (lw_vgather); gathering the 24 coefficients one lane at a time took 24 % of the kernel's
//   samples on an AVX-512 core (BENCHMARKS.md, session 25).
// Contributions are added in electron order, lanes that the electron does not cover keep their
// sums (a select, not an addition of 0), so the cube does not depend on the group size or on how
// the ensemble is split into batches: a batched run stays bit-identical to the single pass.
#if LW_SIMD

#define LW_CAT_(a, b) a##b
#define LW_CAT(a, b) LW_CAT_(a, b)
typedef LW_CAT(double, LW_SIMD) lw_vd;
typedef LW_CAT(long, LW_SIMD) lw_vl;  // comparison results: −1 where true, 0 where false
#define LW_VLOAD LW_CAT(vload, LW_SIMD)
#define LW_VSTORE LW_CAT(vstore, LW_SIMD)
#define LW_VLONG LW_CAT(convert_long, LW_SIMD)
// a − s_z b and a + s_z b for the compile-time s_z (SCREEN_SIGN), as lw_pm.
#define LW_VPM(a, b) (SCREEN_SIGN > 0.0 ? (a) - (b) : (a) + (b))
#define LW_VMP(a, b) (SCREEN_SIGN > 0.0 ? (a) + (b) : (a) - (b))

// The quintics of lw_slot.cl on lanes: c points at 6 coefficient vectors.
inline lw_vd lw_vq_d(const lw_vd* c, const lw_vd s, lw_vd* d) {
  const lw_vd b4 = fma(s, c[5], c[4]), b3 = fma(s, b4, c[3]), b2 = fma(s, b3, c[2]), b1 = fma(s, b2, c[1]);
  *d = fma(s, fma(s, fma(s, fma(s, c[5], b4), b3), b2), b1);
  return fma(s, b1, c[0]);
}
inline lw_vd lw_vq_d2h(const lw_vd* c, const lw_vd s, lw_vd* d, lw_vd* dd_half) {
  const lw_vd b4 = fma(s, c[5], c[4]), b3 = fma(s, b4, c[3]), b2 = fma(s, b3, c[2]), b1 = fma(s, b2, c[1]);
  const lw_vd e3 = fma(s, c[5], b4), e2 = fma(s, e3, b3), e1 = fma(s, e2, b2);
  *d = fma(s, e1, b1);
  *dd_half = fma(s, fma(s, fma(s, c[5], e3), e2), e1);
  return fma(s, b1, c[0]);
}
inline lw_vd lw_vq_ddh(const lw_vd* c, const lw_vd s) {
  return fma(s, fma(s, fma(s, 10.0 * c[5], 6.0 * c[4]), 3.0 * c[3]), c[2]);
}

// The lanes' current intervals (one electron): coefficients [24] as vectors, first knots, indices.
typedef struct lw_vcoef {
  lw_vd c[24];
  lw_vd tau_j;
  lw_vl j;  // −1: none located yet
} lw_vcoef;

// Gathers interval j[l] of every lane (the light front already formed).
#if LW_SIMD == 8
// Each lane's interval is 24 contiguous doubles: three 8-double rows per lane, turned into the 24
// coefficient vectors by 8 × 8 transposes, three rounds of two-vector shuffles (written as vector
// literals of single components, which the compiler turns into shuffles; half-vector swizzles such
// as .lo in a literal crash oclgrind 21.10's uninitialised-value checker), instead of 24 gathers.
inline void lw_vtranspose8(const double8* r, lw_vd* out) {
  double8 t[8], u[8];
  for (int m = 0; m < 4; ++m) {
    const double8 a = r[2 * m], b = r[2 * m + 1];
    t[2 * m] = (double8)(a.s0, b.s0, a.s2, b.s2, a.s4, b.s4, a.s6, b.s6);
    t[2 * m + 1] = (double8)(a.s1, b.s1, a.s3, b.s3, a.s5, b.s5, a.s7, b.s7);
  }
  for (int h = 0; h < 2; ++h)
    for (int o = 0; o < 2; ++o) {
      const double8 a = t[4 * h + o], b = t[4 * h + 2 + o];
      u[4 * h + o] = (double8)(a.s0, a.s1, b.s0, b.s1, a.s4, a.s5, b.s4, b.s5);
      u[4 * h + 2 + o] = (double8)(a.s2, a.s3, b.s2, b.s3, a.s6, a.s7, b.s6, b.s7);
    }
  // u[0]: columns 0 | 4 of rows 0–3; u[1]: 1 | 5; u[2]: 2 | 6; u[3]: 3 | 7; u[4..7]: rows 4–7.
  out[0] = (double8)(u[0].s0, u[0].s1, u[0].s2, u[0].s3, u[4].s0, u[4].s1, u[4].s2, u[4].s3);
  out[4] = (double8)(u[0].s4, u[0].s5, u[0].s6, u[0].s7, u[4].s4, u[4].s5, u[4].s6, u[4].s7);
  out[1] = (double8)(u[1].s0, u[1].s1, u[1].s2, u[1].s3, u[5].s0, u[5].s1, u[5].s2, u[5].s3);
  out[5] = (double8)(u[1].s4, u[1].s5, u[1].s6, u[1].s7, u[5].s4, u[5].s5, u[5].s6, u[5].s7);
  out[2] = (double8)(u[2].s0, u[2].s1, u[2].s2, u[2].s3, u[6].s0, u[6].s1, u[6].s2, u[6].s3);
  out[6] = (double8)(u[2].s4, u[2].s5, u[2].s6, u[2].s7, u[6].s4, u[6].s5, u[6].s6, u[6].s7);
  out[3] = (double8)(u[3].s0, u[3].s1, u[3].s2, u[3].s3, u[7].s0, u[7].s1, u[7].s2, u[7].s3);
  out[7] = (double8)(u[3].s4, u[3].s5, u[3].s6, u[3].s7, u[7].s4, u[7].s5, u[7].s6, u[7].s7);
}
inline void lw_vgather(const lw_spline* sp, const lw_vl j, lw_vcoef* k) {
  const long jl[8] = {j.s0, j.s1, j.s2, j.s3, j.s4, j.s5, j.s6, j.s7};
  for (int b = 0; b < 3; ++b) {
    double8 r[8];
    for (int l = 0; l < 8; ++l) r[l] = vload8(0, sp->cf + jl[l] * 24 + 8 * b);
    lw_vtranspose8(r, k->c + 8 * b);
  }
  k->j = j;
}
#elif LW_SIMD == 4
// Six 4-double rows per lane, turned into the coefficient vectors by 4 × 4 transposes.
inline void lw_vgather(const lw_spline* sp, const lw_vl j, lw_vcoef* k) {
  const long jl[4] = {j.s0, j.s1, j.s2, j.s3};
  for (int b = 0; b < 6; ++b) {
    double4 r[4];
    for (int l = 0; l < 4; ++l) r[l] = vload4(0, sp->cf + jl[l] * 24 + 4 * b);
    const double4 t0 = (double4)(r[0].s0, r[1].s0, r[0].s2, r[1].s2), t1 = (double4)(r[0].s1, r[1].s1, r[0].s3, r[1].s3);
    const double4 t2 = (double4)(r[2].s0, r[3].s0, r[2].s2, r[3].s2), t3 = (double4)(r[2].s1, r[3].s1, r[2].s3, r[3].s3);
    k->c[4 * b] = (double4)(t0.s0, t0.s1, t2.s0, t2.s1);
    k->c[4 * b + 1] = (double4)(t1.s0, t1.s1, t3.s0, t3.s1);
    k->c[4 * b + 2] = (double4)(t0.s2, t0.s3, t2.s2, t2.s3);
    k->c[4 * b + 3] = (double4)(t1.s2, t1.s3, t3.s2, t3.s3);
  }
  k->j = j;
}
#else
inline void lw_vgather(const lw_spline* sp, const lw_vl j, lw_vcoef* k) {
  long jl[LW_SIMD];
  LW_VSTORE(j, 0, jl);
  for (int i = 0; i < 24; ++i) {
    double v[LW_SIMD];
    for (int l = 0; l < LW_SIMD; ++l) v[l] = sp->cf[jl[l] * 24 + i];
    k->c[i] = LW_VLOAD(0, v);
  }
  k->j = j;
}
#endif

// lw_locate on lanes: τ's offset in its interval, the interval kept while τ stays inside
// [τ_j, τ_j + dτ), else located by the floor (clamped to [0, n − 1]) — the interval lw_locate
// finds for each lane.
inline lw_vd lw_vlocate(const lw_spline* sp, const lw_vd tau, lw_vcoef* k) {
  const lw_vd s_kept = tau - k->tau_j;
  const lw_vl keep = (k->j >= 0) & (s_kept >= 0.0) & (s_kept < sp->dtau);
  const lw_vd f = floor((tau - sp->tau0) * sp->inv_dtau);
  const lw_vd fj = fmax(fmin(f, (double)(sp->n - 1)), 0.0);  // lw_interval's clamp (NaN → n − 1)
  const lw_vd tau_j = fma(fj, sp->dtau, sp->tau0);
  const lw_vl j = select(LW_VLONG(fj), k->j, keep);
  k->tau_j = select(tau_j, k->tau_j, keep);
  if (any(j != k->j)) lw_vgather(sp, j, k);
  return select(tau - tau_j, s_kept, keep);
}

// lw_newton_step on lanes (fast 0): the safeguarded step on g = ρ² − A(A + 2d), bracket by f's sign.
inline lw_vd lw_vnewton(const lw_vd* c, const lw_vd s, const lw_vd tau, const double t_rel, const lw_vd px,
                        const lw_vd py, const double absZ, lw_vd* lo, lw_vd* hi) {
  lw_vd dlc, vx, vy, vz;
  const lw_vd lc = lw_vq_d(c, s, &dlc);
  const lw_vd dx = px - lw_vq_d(c + 6, s, &vx);
  const lw_vd dy = py - lw_vq_d(c + 12, s, &vy);
  const lw_vd d = LW_VPM(absZ, lw_vq_d(c + 18, s, &vz));
  const lw_vd A = t_rel - lc;
  const lw_vd rho2 = fma(dx, dx, dy * dy);
  const lw_vd g = fma(-A, fma(2.0, d, A), rho2);
  const lw_vd h = fma(dlc, A + d, fma(A, SCREEN_SIGN > 0.0 ? vz : -vz, -fma(dx, vx, dy * vy)));
  const lw_vl after_light = A + d > 0.0;
  const lw_vl take_lo = (g < 0.0) & after_light;
  *lo = select(*lo, tau, take_lo);
  *hi = select(tau, *hi, take_lo);
  const lw_vd next = tau - g / (2.0 * h);
  const lw_vl ok = after_light & (next >= *lo) & (next <= *hi);
  return select(0.5 * (*lo + *hi), next, ok);
}

// lw_fields_mode on lanes (fast 0): e = near + far (total mode) or e and f = far (split mode),
// n = n̂; returns 1/D.
inline lw_vd lw_vfields(const lw_vd* c, const lw_vd s, const lw_vd px, const lw_vd py, const double absZ, lw_vd* e,
                        lw_vd* f, lw_vd* n) {
  lw_vd ux, uy, uz, ahx, ahy, ahz;
  const lw_vd dx = px - lw_vq_d2h(c + 6, s, &ux, &ahx), dy = py - lw_vq_d2h(c + 12, s, &uy, &ahy);
  const lw_vd d = LW_VPM(absZ, lw_vq_d2h(c + 18, s, &uz, &ahz));
  const lw_vd ah0 = LW_VMP(lw_vq_ddh(c, s), ahz);  // lw_pm(·, ahz, −s_z)
  const lw_vd invR = rsqrt(fma(d, d, fma(dx, dx, dy * dy)));
  n[0] = dx * invR;
  n[1] = dy * invR;
  n[2] = (SCREEN_SIGN > 0.0 ? d : -d) * invR;
  const lw_vd gam = sqrt(fma(ux, ux, fma(uy, uy, fma(uz, uz, 1.0))));
  const lw_vd cx = fma(n[1], uz, -(n[2] * uy)), cy = fma(n[2], ux, -(n[0] * uz)), cz = fma(n[0], uy, -(n[1] * ux));
  const lw_vd nu = fma(n[0], ux, fma(n[1], uy, n[2] * uz));
  const lw_vd invD = (gam + nu) / fma(cx, cx, fma(cy, cy, fma(cz, cz, 1.0)));
  const lw_vd w0 = fma(n[0], gam, -ux), w1 = fma(n[1], gam, -uy), w2 = fma(n[2], gam, -uz);
  const lw_vd rd = invR * invD;
  const lw_vd far_a = rd * invD;
  const lw_vd near_f = rd * far_a;
  const lw_vd far_2 = 2.0 * far_a;
  const lw_vd nah = fma(n[0], ahx, fma(n[1], ahy, n[2] * ahz));
  const lw_vd qh = (ah0 - nah) * invD;
  // A preprocessor test, not an if on two macro constants: clang warned "use of logical '&&'
  // with constant operand" on every build, and PoCL printed "1 warning generated." to stderr.
#if LW_TOTAL_FIELDS && !SPLIT_MODE
  {
    const lw_vd wk = fma(-far_2, qh, near_f);
    e[0] = fma(far_2, fma(n[0], ah0, -ahx), w0 * wk);
    e[1] = fma(far_2, fma(n[1], ah0, -ahy), w1 * wk);
    e[2] = fma(far_2, fma(n[2], ah0, -ahz), w2 * wk);
    return invD;
  }
#endif
  f[0] = far_2 * fma(-qh, w0, fma(n[0], ah0, -ahx));
  f[1] = far_2 * fma(-qh, w1, fma(n[1], ah0, -ahy));
  f[2] = far_2 * fma(-qh, w2, fma(n[2], ah0, -ahz));
  e[0] = fma(w0, near_f, f[0]);
  e[1] = fma(w1, near_f, f[1]);
  e[2] = fma(w2, near_f, f[2]);
  return invD;
}

// One electron's solver state on the lanes (lw_electron's members; warm 0, 1, 2).
typedef struct lw_velectron {
  lw_vd tau, tau_pp, invd_prev, t_first, t_last;
  lw_vl warm;
} lw_velectron;

// Same arguments as cl/lienard_wiechert.cl's lw_accumulate (the host sets them alike); work-item
// idx of a chunk owns device positions [W·idx, W·idx + W) (or those of positions[] in a slab).
__kernel void lw_accumulate(__global const double* restrict coef, const lw_group grp, const int count,
                            const int nx, const int ny, const int samples,
                            const double half_x, const double half_y, const double zs,
                            const double t0_rel, const double dt,
                            __global double* restrict E, __global double* restrict B,
                            __global double* restrict Ef, __global double* restrict Bf,
                            __global const int* restrict pixel_of, __global const double* restrict dirs,
                            __global const int* restrict positions, const int pos_first, const int n_positions,
                            const int row0, const int rows_total) {
  const int npix = nx * ny;
  const int wg = (int)get_local_size(0), group = (int)get_group_id(0), lid = (int)get_local_id(0);
  const int active = n_positions > 0 ? n_positions : npix;
  const int items_per_chunk = (active + LW_SIMD - 1) / LW_SIMD;
  const int per_chunk = (items_per_chunk + wg - 1) / wg;
  const int idx = (group % per_chunk) * wg + lid;
  const int chunk = group / per_chunk;
  if (idx >= items_per_chunk) return;  // padding of the last group (no barriers below)
  const int first = idx * LW_SIMD;
  // The lanes' positions and pixels; a lane past the last position repeats the last one (finite
  // arithmetic) and is never stored.
  int q[LW_SIMD];
  long valid_l[LW_SIMD];
  double px_l[LW_SIMD], py_l[LW_SIMD];
  int contiguous = n_positions == 0 && first + LW_SIMD <= npix;
  for (int l = 0; l < LW_SIMD; ++l) {
    const int i = min(first + l, active - 1);
    q[l] = n_positions > 0 ? positions[pos_first + i] : i;
    valid_l[l] = first + l < active ? -1 : 0;
    const int pix = pixel_of[q[l]];
    px_l[l] = edm_pixel(pix % nx, nx, half_x);
    py_l[l] = edm_pixel(row0 + pix / nx, rows_total, half_y);
  }
  const lw_vl valid = LW_VLOAD(0, valid_l);
  const lw_vd px = LW_VLOAD(0, px_l), py = LW_VLOAD(0, py_l);
  const int k0 = (int)(((long)samples * chunk) / SAMPLE_CHUNKS);
  const int k1 = (int)(((long)samples * (chunk + 1)) / SAMPLE_CHUNKS);
  const double sz = SCREEN_SIGN;
  const double absZ = fabs(zs);
  const ulong plane = (ulong)samples * (ulong)npix;

  lw_velectron el[ELECTRON_GROUP];
  double any_lo = INFINITY, any_hi = -INFINITY;
  for (int e = 0; e < ELECTRON_GROUP; ++e)
    if (e < count) {
      const lw_spline sp = lw_table(coef, &grp, e);
      double tf[LW_SIMD], tl[LW_SIMD];
      for (int l = 0; l < LW_SIMD; ++l) {
        lw_electron x;
        lw_setup(&x, &sp, px_l[l], py_l[l], sz, absZ);
        tf[l] = x.t_first;
        tl[l] = x.t_last;
        if (valid_l[l]) {
          any_lo = fmin(any_lo, x.t_first);
          any_hi = fmax(any_hi, x.t_last);
        }
      }
      el[e].t_first = LW_VLOAD(0, tf);
      el[e].t_last = LW_VLOAD(0, tl);
      el[e].tau = el[e].tau_pp = (lw_vd)(sp.tau0);  // as lw_setup
      el[e].invd_prev = (lw_vd)(1.0);
      el[e].warm = (lw_vl)(0);
    }

  for (int k = k0; k < k1; ++k) {
    const double t_rel = t0_rel + dt * (double)k;
    if (!(t_rel >= any_lo && t_rel <= any_hi)) continue;
    const ulong i0 = (ulong)k * (ulong)npix;
    lw_vd acc[12];
    __global double* const bucket[4] = {E, B, Ef, Bf};
    for (int b = 0; b < (SPLIT_MODE ? 4 : 2); ++b)
      for (int c = 0; c < 3; ++c) {
        __global const double* src = bucket[b] + c * plane + i0;
        if (contiguous) {
          acc[3 * b + c] = LW_VLOAD(0, src + first);
        } else {
          double v[LW_SIMD];
          for (int l = 0; l < LW_SIMD; ++l) v[l] = src[q[l]];
          acc[3 * b + c] = LW_VLOAD(0, v);
        }
      }
    for (int e = 0; e < ELECTRON_GROUP; ++e) {
      if (e >= count) continue;
      lw_velectron* x = &el[e];
      const lw_vl on = valid & (t_rel >= x->t_first) & (t_rel <= x->t_last);
      if (!any(on)) continue;
      const lw_spline sp = lw_table(coef, &grp, e);
      // Zero where no solve writes (lanes the electron does not cover; f in total mode): discarded
      // by the selects below, but never read uninitialised (oclgrind checks it: tests/checker).
      lw_vd ev[3] = {0.0, 0.0, 0.0}, fv[3] = {0.0, 0.0, 0.0}, nv[3] = {0.0, 0.0, 0.0};
      const lw_vl cold = on & (x->warm < 2);
      const lw_vl warm = on & (x->warm == 2);
      if (any(warm)) {
        // lw_predict and lw_solve_mode's warm branch; lanes off this solve start from τ0 so that
        // they stay in one interval and cause no gathers.
        lw_vd lo = x->tau, hi = (lw_vd)(sp.tau_end);
        lw_vd tau = x->tau_pp + 2.0 * dt * x->invd_prev;
        tau = select(0.5 * (lo + hi), tau, (tau > lo) & (tau < hi));
        tau = select((lw_vd)(sp.tau0), tau, warm);
        lw_vcoef kc;
        kc.j = (lw_vl)(-1);
        kc.tau_j = (lw_vd)(sp.tau0);
        for (int it = 0; it < NEWTON_ITERS; ++it) {
          const lw_vd s = lw_vlocate(&sp, tau, &kc);
          tau = select(tau, lw_vnewton(kc.c, s, tau, t_rel, px, py, absZ, &lo, &hi), warm);  // the others stay
        }
        const lw_vd s = lw_vlocate(&sp, tau, &kc);
        const lw_vd invd = lw_vfields(kc.c, s, px, py, absZ, ev, fv, nv);
        x->tau_pp = select(x->tau_pp, x->tau, warm);
        x->tau = select(x->tau, tau, warm);
        x->invd_prev = select(x->invd_prev, invd, warm);
      }
      if (any(cold)) {
        // Lane by lane through lw_solve_mode itself (iterated to convergence; two samples per chunk
        // and pixel), its results put into the lanes.
        long cold_l[LW_SIMD], warm_l[LW_SIMD];
        double tau_l[LW_SIMD], pp_l[LW_SIMD], invd_l[LW_SIMD], e_l[3][LW_SIMD], f_l[3][LW_SIMD], n_l[3][LW_SIMD];
        LW_VSTORE(cold, 0, cold_l);
        LW_VSTORE(x->warm, 0, warm_l);
        LW_VSTORE(x->tau, 0, tau_l);
        LW_VSTORE(x->tau_pp, 0, pp_l);
        LW_VSTORE(x->invd_prev, 0, invd_l);
        for (int c = 0; c < 3; ++c) {
          LW_VSTORE(ev[c], 0, e_l[c]);
          LW_VSTORE(SPLIT_MODE ? fv[c] : ev[c], 0, f_l[c]);
          LW_VSTORE(nv[c], 0, n_l[c]);
        }
        for (int l = 0; l < LW_SIMD; ++l) {
          if (!cold_l[l]) continue;
          lw_electron s;
          s.tau = tau_l[l];
          s.tau_pp = pp_l[l];
          s.invd_prev = invd_l[l];
          s.t_first = s.t_last = 0.0;  // not read by lw_solve_mode (coverage is checked above)
          s.warm = (int)warm_l[l];
          s.j = -1;
          double e1[3], f1[3], n1[3];
          lw_solve_mode(&s, &sp, t_rel, dt, px_l[l], py_l[l], sz, absZ, NEWTON_ITERS, COEF_REUSE, 0, SPLIT_MODE,
                        e1, f1, n1);
          tau_l[l] = s.tau;
          pp_l[l] = s.tau_pp;
          invd_l[l] = s.invd_prev;
          warm_l[l] = s.warm;
          for (int c = 0; c < 3; ++c) {
            e_l[c][l] = e1[c];
            f_l[c][l] = f1[c];
            n_l[c][l] = n1[c];
          }
        }
        x->tau = LW_VLOAD(0, tau_l);
        x->tau_pp = LW_VLOAD(0, pp_l);
        x->invd_prev = LW_VLOAD(0, invd_l);
        x->warm = LW_VLOAD(0, warm_l);
        for (int c = 0; c < 3; ++c) {
          ev[c] = LW_VLOAD(0, e_l[c]);
          fv[c] = LW_VLOAD(0, f_l[c]);
          nv[c] = LW_VLOAD(0, n_l[c]);
        }
      }
#if LW_WEIGHTED
      {
        const double w = grp.v[LW_STRIDE * e + 6];
        for (int c = 0; c < 3; ++c) {
          ev[c] *= w;
          if (SPLIT_MODE) fv[c] *= w;
        }
      }
#endif
      // lw_add, on the covered lanes only.
      for (int c = 0; c < 3; ++c) acc[c] = select(acc[c], acc[c] + ev[c], on);
      acc[3] = select(acc[3], acc[3] + fma(nv[1], ev[2], -(nv[2] * ev[1])), on);
      acc[4] = select(acc[4], acc[4] + fma(nv[2], ev[0], -(nv[0] * ev[2])), on);
      acc[5] = select(acc[5], acc[5] + fma(nv[0], ev[1], -(nv[1] * ev[0])), on);
      if (SPLIT_MODE) {
        for (int c = 0; c < 3; ++c) acc[6 + c] = select(acc[6 + c], acc[6 + c] + fv[c], on);
        acc[9] = select(acc[9], acc[9] + fma(nv[1], fv[2], -(nv[2] * fv[1])), on);
        acc[10] = select(acc[10], acc[10] + fma(nv[2], fv[0], -(nv[0] * fv[2])), on);
        acc[11] = select(acc[11], acc[11] + fma(nv[0], fv[1], -(nv[1] * fv[0])), on);
      }
    }
    for (int b = 0; b < (SPLIT_MODE ? 4 : 2); ++b)
      for (int c = 0; c < 3; ++c) {
        __global double* dst = bucket[b] + c * plane + i0;
        if (contiguous) {
          LW_VSTORE(acc[3 * b + c], 0, dst + first);
        } else {
          double v[LW_SIMD];
          LW_VSTORE(acc[3 * b + c], 0, v);
          for (int l = 0; l < LW_SIMD; ++l)
            if (valid_l[l]) dst[q[l]] = v[l];
        }
      }
  }
}

#endif  // LW_SIMD
