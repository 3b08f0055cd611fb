// Liénard–Wiechert accumulation of a group of electrons onto the screen cube (share/docs/design.md: the radiated field, data flow), plus the
// slab transpose used by FieldAccumulator::finish. Needs common.cl and lw_slot.cl (the per-slot
// arithmetic, shared with the host FLOP count) before it and these defines
// (assembled by core/src/device.cpp from KernelOptions):
//   NEWTON_ITERS   Newton steps per warm sample (exactly this many; ≥ 1)
//   COEF_REUSE     1: load an interval (the t,x,y,z quintics) once per sample and reuse it for every
//                  evaluation of that sample in it (Newton steps, fields); 0: reload per evaluation
//   SAMPLE_CHUNKS  C: chunks per pixel (work-items per pixel)
//   SPLIT_MODE     1: also accumulate the far (1/R) part into Ef, Bf
//   ELECTRON_GROUP G: electrons per launch (each slot read and written once per launch)
//   SCREEN_SIGN    +1.0 / −1.0: the side of the screen (sign of zs)
//   LW_FAST_RECIP  1: divisions and square roots of the per-slot path by refined seeds (lw_slot.cl:
//                  no IEEE slow-path branch); 0: the built-ins
//   LW_NV_SEED     1: those seeds from NVIDIA's FP64 approximation instructions (inline PTX; NVIDIA
//                  only); 0: half_recip / half_rsqrt
//   LW_INTERLEAVE  1: the group's warm solves phase by phase (CPUs; needs LW_STATE_LOCAL 0)
//   LW_STATE_LOCAL 1: the electrons' solver state in local memory, arrays sized by LW_WG (= the
//                  work-group size, fixed by the host); 0: in registers
//   LW_WEIGHTED    1: each electron's macro-particle weight (a 7th double in lw_group) scales its
//                  contribution; absent/0: every weight is 1 (no multiplication)
//   LW_SIMD        W > 0: cl/lw_simd.cl (after this file) defines lw_accumulate instead, W pixels
//                  per work-item on the lanes of a doubleW; 0 or absent: the kernel below
//   LW_RK4         1: the retarded time marched by RK4 from each chunk's first (Newton) root
//                  (lw_rk4_solve; flat screen, scalar kernel, no interleave); absent/0: Newton
//   LW_SUBSTEPS    with LW_RK4: RK4 sub-steps per sample interval, 0 = "auto" (lw_rk4_substeps)
//   LW_ANGULAR     (angular screens only; lw_direction.cl before this file) 1: observers on the
//                  sphere of radius zs, 2: at infinity (R·E of the far field), one direction per
//                  pixel from `dirs`; absent (0): the flat screen, whose code is unchanged
//
// Units and sign: normalised (units.hpp: c = 1, lengths c/ω, times 1/ω) and a UNIT POSITIVE charge
// with 1/(4πε0) = 1, i.e. the field is summed in units of q k²/(4πε0) with q = +1: a static charge
// gives E = n̂/R². The electron's negative charge is carried by Normalization::lw_efield()
// (= −e k²/(4πε0) < 0), which the writer applies; B is in the same units with c = 1 (B = n̂ × E).
//
// Work decomposition: one launch per group of G electrons (G = 1: one per electron); one work-item per
// (device position q, sample chunk c); work-group g covers positions [wg·(g mod P), wg·(g mod P + 1))
// of chunk g / P (P = groups per chunk). Chunk c of position q owns samples [k0, k1) of that pixel and all 3 components of
// every bucket there, so no two work-items touch the same slot (no atomics) and one in-order queue
// adds electrons in the same order whatever the batching (deterministic sums).
//
// Device buffer layout, per bucket (E, B, E_far, B_far): [comp][k][position], position fastest —
// neighbouring work-items (neighbouring positions, same k) touch neighbouring addresses, so the
// read-modify-write of a sample is coalesced on GPUs; position q holds pixel pixel_of[q]. slab_transpose turns rows of it into the
// output layout (iy, ix, k fastest).

// The launch's electrons, passed BY VALUE as a kernel argument: NVIDIA keeps kernel arguments in a
// constant bank that arithmetic instructions read directly, so with the electron loops unrolled the
// table costs no load instruction per electron and sample (a global table cost six).
// 6 doubles per electron: coefficient offset (doubles), intervals, τ0, dτ, 1/dτ, τ0 + n dτ (the
// last two from the host, so the kernel never divides to find an interval).
// LW_WEIGHTED 1 (built by the host only for an ensemble with a weight other than 1): a 7th double
// per electron, its macro-particle weight w, multiplies its E and E_far before they are added (B =
// n̂ × E follows). w = 1 would change no bit (x·1 = x in IEEE 754, fused or not), so mixing both
// builds in one run keeps a batched run bit-identical to the single pass.
#ifndef LW_WEIGHTED
#define LW_WEIGHTED 0
#endif
#define LW_STRIDE (6 + LW_WEIGHTED)
typedef struct lw_group {
  double v[LW_STRIDE * ELECTRON_GROUP];
} lw_group;
#if LW_WEIGHTED
#define LW_WEIGH(e, ev, fv)                                  \
  {                                                          \
    const double w_ = grp.v[LW_STRIDE * (e) + 6];            \
    for (int c_ = 0; c_ < 3; ++c_) {                         \
      (ev)[c_] *= w_;                                        \
      if (SPLIT_MODE) (fv)[c_] *= w_; /* total: f unformed */ \
    }                                                        \
  }
#else
#define LW_WEIGH(e, ev, fv)
#endif

inline lw_spline lw_table(__global const double* coef, const lw_group* grp, const int e) {
  lw_spline sp;
  sp.cf = coef + (ulong)grp->v[LW_STRIDE * e];
  sp.n = (int)grp->v[LW_STRIDE * e + 1];
  sp.tau0 = grp->v[LW_STRIDE * e + 2];
  sp.dtau = grp->v[LW_STRIDE * e + 3];
  sp.inv_dtau = grp->v[LW_STRIDE * e + 4];
  sp.tau_end = grp->v[LW_STRIDE * e + 5];
  return sp;
}

// One launch adds the `count` (≤ ELECTRON_GROUP) electrons of grp, sample outer, electron inner:
// per sample a work-item solves every electron of the group (per-electron solver state in local
// memory or registers, LW_STATE_LOCAL; the loop unrolled), reads its slot once, adds the
// contributions IN ELECTRON ORDER and writes it once. Those are the same additions in the same
// order as one launch per electron, so the cube is bit-identical for every group size and for any
// split of the ensemble into batches (no alignment of groups to the global index is needed), while
// the slot traffic (the cube read-modify-write, 96 bytes per slot in total mode) is divided by G.
//
// Work-item q of a chunk owns device position q, i.e. pixel pixel_of[q] (the host's pixel order,
// core/include/edm/accumulator.hpp: rings by default). Neighbouring work-items own neighbouring
// addresses of every slot plane (coalesced slot traffic whatever the order), and in ring order a
// warp's 32 pixels lie on an arc at one distance from the axis, so their retarded times — and the
// 192-byte intervals they load every sample — are a few knots apart for every electron of a beam near
// the axis (4 × 8 tiles: ~18 distinct intervals per warp load at the edge of the benchmark screen,
// rings: ~5), and the warp's load instructions touch few cache lines. The kernel is bound by the
// L1 data pipe (wavefronts per load: BENCHMARKS.md), so fewer distinct lines per load is speed.
//
// grp: the launch's electrons (lw_group), count ≤ ELECTRON_GROUP of them. dirs: angular screens,
// per pixel n̂ and n_z − s_z (4 doubles; core/src/field/accumulator.cpp); unread on the flat screen.
// positions, pos_first, n_positions: the positions this launch covers (n_positions = 0: all).
// row0, rows_total: the screen is rows [row0, row0 + ny) of a screen of rows_total rows (a tile,
// Screen::row0; 0 and ny for a whole screen): y is the full screen's, so a tile adds bit for bit
// what the full screen adds to those rows.
#ifndef LW_SIMD
#define LW_SIMD 0
#endif
#if !LW_SIMD  // the vector-lane kernel of the same name and arguments: cl/lw_simd.cl
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
  const int wg = (int)get_local_size(0), group = (int)get_group_id(0), l = (int)get_local_id(0);
  // n_positions > 0: this launch covers only the device positions positions[pos_first + i],
  // i < n_positions (a slab of screen rows, FieldAccumulator::accumulate_in_slabs), so that slab can
  // be downloaded while later slabs compute. A position gets the same samples, chunk and additions
  // as in a launch over all positions, so the cube is bit-identical either way.
  const int active = n_positions > 0 ? n_positions : npix;
  const int per_chunk = (active + wg - 1) / wg;
  const int idx = (group % per_chunk) * wg + l;
  // device position; past the last one: inactive
  const int q = n_positions > 0 ? (idx < n_positions ? positions[pos_first + idx] : npix) : idx;
  const int chunk = group / per_chunk;
  const int pix = q < npix ? pixel_of[q] : 0;
  const int ix = q < npix ? pix % nx : nx;
  const int iy = q < npix ? pix / nx : ny;
  // Work-items past the last position (padding of the last group) do nothing (no barriers below).
  if (!(ix < nx && iy < ny)) return;
  const int k0 = (int)(((long)samples * chunk) / SAMPLE_CHUNKS);
  const int k1 = (int)(((long)samples * (chunk + 1)) / SAMPLE_CHUNKS);
  const double px = edm_pixel(ix, nx, half_x);
  const double py = edm_pixel(row0 + iy, rows_total, half_y);  // a tile's rows where the full screen has them
  const double sz = SCREEN_SIGN;  // a compile-time ±1: every s_z select in lw_slot.cl folds away
  const double absZ = fabs(zs);
  const ulong plane = (ulong)samples * (ulong)npix;  // one component of one bucket
#ifndef LW_ANGULAR
#define LW_ANGULAR 0
#endif
#ifndef LW_RK4
#define LW_RK4 0
#define LW_SUBSTEPS 0
#endif
#if LW_ANGULAR
  lw_dir o;  // this pixel's direction (cl/lw_direction.cl)
  o.n0 = dirs[4 * pix];
  o.n1 = dirs[4 * pix + 1];
  o.n2 = dirs[4 * pix + 2];
  o.w = dirs[4 * pix + 3];
  o.R = zs;
#define LW_SETUP(x, sp) lw_dir_setup(x, sp, &o)
#define LW_SOLVE(x, sp, ev, fv, n) \
  lw_dir_solve(x, sp, t_rel, dt, &o, sz, NEWTON_ITERS, COEF_REUSE, LW_FAST_RECIP, ev, fv, n)
#elif LW_RK4
#define LW_SETUP(x, sp) lw_setup(x, sp, px, py, sz, absZ)
#define LW_SOLVE(x, sp, ev, fv, n) \
  lw_rk4_solve(x, sp, t_rel, dt, px, py, sz, absZ, LW_SUBSTEPS, COEF_REUSE, LW_FAST_RECIP, SPLIT_MODE, ev, fv, n)
#else
#define LW_SETUP(x, sp) lw_setup(x, sp, px, py, sz, absZ)
#define LW_SOLVE(x, sp, ev, fv, n) \
  lw_solve_mode(x, sp, t_rel, dt, px, py, sz, absZ, NEWTON_ITERS, COEF_REUSE, LW_FAST_RECIP, SPLIT_MODE, ev, fv, n)
#endif

#if LW_STATE_LOCAL
  // The G electrons' solver state in local memory, one slot per (electron, work-item), copied into
  // registers only while that electron is solved: G × 11 registers fewer per work-item, which with
  // the old cubic layout's u, a read from memory and a register cap let 16 instead of 8 warps share
  // an SM (BENCHMARKS.md, second session). Arrays per member:
  // consecutive work-items touch consecutive words (no bank conflicts).
  __local double s_tau[ELECTRON_GROUP * LW_WG], s_pp[ELECTRON_GROUP * LW_WG], s_invd[ELECTRON_GROUP * LW_WG],
      s_tf[ELECTRON_GROUP * LW_WG], s_tl[ELECTRON_GROUP * LW_WG];
  // warm (0..2) and the last root's interval j (≥ −1) share one int: 4 (j + 1) + warm.
  __local int s_wj[ELECTRON_GROUP * LW_WG];
#define LW_T_FIRST(e) s_tf[(e) * LW_WG + l]
#define LW_T_LAST(e) s_tl[(e) * LW_WG + l]
#else
  lw_electron el[ELECTRON_GROUP];
#define LW_T_FIRST(e) el[e].t_first
#define LW_T_LAST(e) el[e].t_last
#endif
  // The union of the electrons' coverage windows, as one range (a superset where they do not
  // overlap: a slot read and written back unchanged costs traffic, not bits).
  double any_lo = INFINITY, any_hi = -INFINITY;
#pragma unroll
  for (int e = 0; e < ELECTRON_GROUP; ++e)
    if (e < count) {
      const lw_spline sp = lw_table(coef, &grp, e);
      lw_electron x;
      LW_SETUP(&x, &sp);
      any_lo = fmin(any_lo, x.t_first);
      any_hi = fmax(any_hi, x.t_last);
#if LW_STATE_LOCAL
      const int i = e * LW_WG + l;
      s_tau[i] = x.tau;
      s_pp[i] = x.tau_pp;
      s_invd[i] = x.invd_prev;
      s_tf[i] = x.t_first;
      s_tl[i] = x.t_last;
      s_wj[i] = 4 * (x.j + 1) + x.warm;
#else
      el[e] = x;
#endif
    }

  for (int k = k0; k < k1; ++k) {
    const double t_rel = t0_rel + dt * (double)k;
    const ulong i0 = (ulong)k * (ulong)npix + (ulong)q;  // the slot within a plane
    // The slot is read (early, so the load overlaps the solves) only when an electron may cover
    // this sample.
    if (!(t_rel >= any_lo && t_rel <= any_hi)) continue;
    double acc[12];  // E xyz, B xyz, E_far xyz, B_far xyz of this slot
    for (int c = 0; c < 3; ++c) {
      acc[c] = E[i0 + c * plane];
      acc[3 + c] = B[i0 + c * plane];
#if SPLIT_MODE
      acc[6 + c] = Ef[i0 + c * plane];
      acc[9 + c] = Bf[i0 + c * plane];
#endif
    }
#if LW_INTERLEAVE && !LW_ANGULAR && !LW_RK4
    {
      // CPUs: the same per-electron operations as lw_solve, phase by phase across the group — every
      // predictor, then each Newton step for every electron, then every field evaluation — so each
      // phase is a short loop of independent solves that an out-of-order core overlaps (one solve
      // is a dependent chain of several hundred instructions, longer than the reorder window; PoCL,
      // 2 cores: BENCHMARKS.md). Cold solves (the first two samples of a chunk) go through lw_solve.
      // Contributions are added in electron order: bit-identical to the loop below.
      lw_spline sp[ELECTRON_GROUP];
      lw_coef kc[ELECTRON_GROUP];
      double tau[ELECTRON_GROUP], lo[ELECTRON_GROUP], hi[ELECTRON_GROUP];
      double ev[ELECTRON_GROUP][3], fv[ELECTRON_GROUP][3], nv[ELECTRON_GROUP][3];
      int on[ELECTRON_GROUP], warm[ELECTRON_GROUP];
      for (int e = 0; e < ELECTRON_GROUP; ++e) {
        on[e] = e < count && t_rel >= el[e].t_first && t_rel <= el[e].t_last;
        warm[e] = on[e] && el[e].warm == 2;
        if (!on[e]) continue;
        sp[e] = lw_table(coef, &grp, e);
        if (warm[e]) {
          lw_coef_start(&kc[e], &sp[e], -1);  // as lw_solve_mode: the same interval on every schedule
          tau[e] = lw_predict(&el[e], &sp[e], dt, &lo[e], &hi[e]);
        } else {
          lw_solve_mode(&el[e], &sp[e], t_rel, dt, px, py, sz, absZ, NEWTON_ITERS, COEF_REUSE, LW_FAST_RECIP,
                        SPLIT_MODE, ev[e], fv[e], nv[e]);
        }
      }
      for (int it = 0; it < NEWTON_ITERS; ++it) {
        // lw_solve_mode's quotient per step: the rough one before the last where fast_recip is on.
        const int fast = LW_ROUGH_FIRST && LW_FAST_RECIP && it + 1 < NEWTON_ITERS ? 2 : LW_FAST_RECIP;
        for (int e = 0; e < ELECTRON_GROUP; ++e)
          if (warm[e]) {
            double step;
            const double s = lw_locate(&sp[e], tau[e], COEF_REUSE, &kc[e]);
            tau[e] = lw_newton_step(kc[e].c, s, tau[e], t_rel, px, py, sz, absZ, fast, &lo[e], &hi[e], &step);
          }
      }
      for (int e = 0; e < ELECTRON_GROUP; ++e)
        if (warm[e]) {
          el[e].tau = tau[e];
          const double s = lw_locate(&sp[e], tau[e], COEF_REUSE, &kc[e]);
          el[e].j = kc[e].j;
          el[e].invd_prev = lw_fields_mode(kc[e].c, s, px, py, sz, absZ, LW_FAST_RECIP, SPLIT_MODE, ev[e], fv[e],
                                           nv[e]);
        }
      for (int e = 0; e < ELECTRON_GROUP; ++e)
        if (on[e]) {
          LW_WEIGH(e, ev[e], fv[e]);
          lw_add(acc, ev[e], fv[e], nv[e], SPLIT_MODE);
        }
    }
#else
#pragma unroll
    for (int e = 0; e < ELECTRON_GROUP; ++e) {
      if (e >= count) continue;  // uniform across the work-group
      if (!(t_rel >= LW_T_FIRST(e) && t_rel <= LW_T_LAST(e))) continue;
      const lw_spline sp = lw_table(coef, &grp, e);
      double ev[3], fv[3], n[3];
#if LW_STATE_LOCAL
      const int i = e * LW_WG + l;
      lw_electron x;
      x.tau = s_tau[i];
      x.tau_pp = s_pp[i];
      x.invd_prev = s_invd[i];
      x.t_first = x.t_last = 0.0;  // not read by lw_solve (coverage is checked above)
      const int wj = s_wj[i];
      x.warm = wj & 3;
      x.j = (wj >> 2) - 1;
      LW_SOLVE(&x, &sp, ev, fv, n);
      s_tau[i] = x.tau;
      s_pp[i] = x.tau_pp;
      s_invd[i] = x.invd_prev;
      s_wj[i] = 4 * (x.j + 1) + x.warm;
#else
      LW_SOLVE(&el[e], &sp, ev, fv, n);
#endif
      LW_WEIGH(e, ev, fv);
      lw_add(acc, ev, fv, n, SPLIT_MODE);
    }
#endif
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
#endif  // !LW_SIMD

// The light front formed in place of t in every interval of an uploaded batch (lw_form_light_front),
// once before the batch's launches.
__kernel void lw_light_front(__global double* restrict coef, const ulong intervals) {
  const ulong j = get_global_id(0);
  if (j < intervals) lw_form_light_front(coef + 24 * j, SCREEN_SIGN);
}

// Rows [iy0, iy0 + rows) of component `comp` of one bucket, from the device layout
// [comp][k][position] to the output layout (row, ix, k) with k fastest; position_of[pixel] inverts
// the pixel order. Global id 0 runs over k so the writes are coalesced; the scattered reads happen
// once per run, at finish.
__kernel void slab_transpose(__global const double* restrict src, __global double* restrict dst,
                             const int nx, const int ny, const int samples, const int comp,
                             const int iy0, const int rows, __global const int* restrict position_of) {
  const int k = (int)get_global_id(0);
  const int q = (int)get_global_id(1);  // (row − iy0)·nx + ix
  if (k >= samples || q >= rows * nx) return;
  const ulong npix = (ulong)nx * (ulong)ny;
  dst[(ulong)q * (ulong)samples + (ulong)k] =
      src[((ulong)comp * (ulong)samples + (ulong)k) * npix + (ulong)position_of[iy0 * nx + q]];
}
