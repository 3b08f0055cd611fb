// The angular screen's observer (screen.type = "angular", core/include/edm/directions.hpp): one
// direction n̂ per pixel, an observer on the sphere of radius R (LW_ANGULAR 1) or at infinity
// (LW_ANGULAR 2). Used by cl/lienard_wiechert.cl after cl/lw_slot.cl (its spline, interval cache,
// predictor and arithmetic helpers), only when LW_ANGULAR is defined non-zero: the flat screen's
// program does not contain this file.
//
// Times are relative to R (share/docs/design.md, conventions): t_rel = t_obs − R. With
// ψ = t − n̂·x (the far-field phase), d = R − n̂·x and q² = |n̂ × x|² (the squared distance of the
// electron from the line of sight through the origin), the arrival time of light leaving x at t is
// t_rel = ψ + q²/(|R n̂ − x| + d), written without cancellation; R → ∞ gives the far field's ψ.
// ψ is formed as (t − s z) − n_x x − n_y y − (n_z − s) z from the light front t − s z that the
// device already holds (lw_form_light_front) and w = n_z − s computed on the host without
// cancellation (n_z_minus_sign): at high γ, t and n̂·x are both ≈ γτ, their difference is not.
#ifndef EDM_LW_DIRECTION_CL
#define EDM_LW_DIRECTION_CL

// One direction: n̂, w = n_z − s_z and the radius R (normalised; unused at infinity).
typedef struct lw_dir {
  lw_real n0, n1, n2, w, R;
} lw_dir;

// ψ = t − n̂·x from the light front lc = t − s_z z and the positions (same operations as
// Screen::arrival_rel on the host, no FMA, so that a window anchored on the host includes the sample).
inline lw_real lw_dir_psi(const lw_dir* o, const lw_real lc, const lw_real x, const lw_real y, const lw_real z) {
  return ((lc - o->n0 * x) - o->n1 * y) - o->w * z;
}

// q² = |n̂ × x|², and d = R − n̂·x.
inline lw_real lw_dir_q2(const lw_dir* o, const lw_real x, const lw_real y, const lw_real z) {
  const lw_real c0 = o->n1 * z - o->n2 * y, c1 = o->n2 * x - o->n0 * z, c2 = o->n0 * y - o->n1 * x;
  return c0 * c0 + c1 * c1 + c2 * c2;
}

// Arrival time t_rel of light leaving the spline at τ (setup only, two per work-item).
inline lw_real lw_dir_arrival(const lw_spline* sp, const lw_real tau, const lw_dir* o, lw_coef* k) {
  const lw_real s = lw_locate(sp, tau, 1, k);
  const lw_real* c = k->c;
  const lw_real x = lw_q(c + 6, s), y = lw_q(c + 12, s), z = lw_q(c + 18, s);
  const lw_real psi = lw_dir_psi(o, lw_q(c, s), x, y, z);
#if LW_ANGULAR == 2
  return psi;
#else
  const lw_real d = o->R - ((o->n0 * x + o->n1 * y) + o->n2 * z);
  const lw_real q2 = lw_dir_q2(o, x, y, z);
  return psi + q2 / (sqrt(q2 + d * d) + d);
#endif
}

// One safeguarded Newton step for the retarded time (lw_newton_step's bracket logic).
// Sphere: g = q² − A(A + 2d), A = t_rel − ψ (the light cone |R n̂ − x| = A + d squared), strictly
// increasing up to the advanced root like the flat screen's g, with
//   g′/2 = ψ′(A + d) + A (n̂·u) + (n̂ × x)·(n̂ × u).
// Infinity: f = A itself (strictly decreasing, ψ′ = γ − n̂·u > 0): τ + A/ψ′, i.e. g = −A, h = ψ′/2
// in lw_newton_next's τ − g/(2h).
inline lw_real lw_dir_newton_step(const lw_real* c, const lw_real s, const lw_real tau, const lw_real t_rel,
                                  const lw_dir* o, const int fast, lw_real* lo, lw_real* hi, lw_real* step) {
  lw_real dlc, vx, vy, vz;
  const lw_real lc = lw_q_d(c, s, &dlc);
  const lw_real x = lw_q_d(c + 6, s, &vx), y = lw_q_d(c + 12, s, &vy), z = lw_q_d(c + 18, s, &vz);
  const lw_real A = t_rel - lw_dir_psi(o, lc, x, y, z);
  const lw_real dpsi = ((dlc - o->n0 * vx) - o->n1 * vy) - o->w * vz;
#if LW_ANGULAR == 2
  const int after_light = 1;
  const lw_real g = -A, h = 0.5 * dpsi;
  if (A > 0.0) *lo = tau; else *hi = tau;
#else
  const lw_real nx_ = o->n0 * x + o->n1 * y + o->n2 * z, nu = o->n0 * vx + o->n1 * vy + o->n2 * vz;
  const lw_real d = o->R - nx_;
  const lw_real c0 = o->n1 * z - o->n2 * y, c1 = o->n2 * x - o->n0 * z, c2 = o->n0 * y - o->n1 * x;
  const lw_real w0 = o->n1 * vz - o->n2 * vy, w1 = o->n2 * vx - o->n0 * vz, w2 = o->n0 * vy - o->n1 * vx;
  const lw_real q2 = fma(c0, c0, fma(c1, c1, c2 * c2));
  const lw_real g = fma(-A, fma(2.0, d, A), q2);
  const lw_real h = fma(dpsi, A + d, fma(A, nu, fma(c0, w0, fma(c1, w1, c2 * w2))));
  const int after_light = A + d > 0.0;
  if (g < 0.0 && after_light) *lo = tau; else *hi = tau;
#endif
  lw_real next = lw_newton_next(tau, g, h, fast);
  if (!(after_light && next >= *lo && next <= *hi)) next = 0.5 * (*lo + *hi);
  *step = fabs(next - tau);
  return next;
}

// Fields at the retarded τ, as lw_fields (same formulas, same rounding pattern), with the observer
// direction from the electron: sphere, (R n̂ − x)/|R n̂ − x| and 1/R from it; infinity, n̂ itself and
// the far part times R: R·far^i = (n^i a⁰ − a^i)/D² − (a⁰ − n̂·a)(n^i γ − u^i)/D³, no near part (the
// velocity field falls as 1/R², so R·near → 0). Returns 1/D.
inline lw_real lw_dir_fields(const lw_real* c, const lw_real s, const lw_dir* o, const lw_real sz, const int fast,
                             lw_real* e, lw_real* f, lw_real* n) {
  lw_real ux, uy, uz, ahx, ahy, ahz;
  const lw_real x = lw_q_d2h(c + 6, s, &ux, &ahx), y = lw_q_d2h(c + 12, s, &uy, &ahy);
  const lw_real z = lw_q_d2h(c + 18, s, &uz, &ahz);
  const lw_real ah0 = lw_pm(lw_q_ddh(c, s), ahz, -sz);
#if LW_ANGULAR == 2
  n[0] = o->n0;
  n[1] = o->n1;
  n[2] = o->n2;
  const lw_real invR = 1.0;
#else
  const lw_real r0 = fma(o->R, o->n0, -x), r1 = fma(o->R, o->n1, -y), r2 = fma(o->R, o->n2, -z);
  const lw_real invR = lw_rsqrt(fma(r0, r0, fma(r1, r1, r2 * r2)), fast);
  n[0] = r0 * invR;
  n[1] = r1 * invR;
  n[2] = r2 * invR;
#endif
  const lw_real gam = lw_sqrt(1.0 + fma(ux, ux, fma(uy, uy, uz * uz)), fast);
  const lw_real cx = fma(n[1], uz, -(n[2] * uy)), cy = fma(n[2], ux, -(n[0] * uz)), cz = fma(n[0], uy, -(n[1] * ux));
  const lw_real nu = fma(n[0], ux, fma(n[1], uy, n[2] * uz));
  const lw_real invD = lw_div(gam + nu, 1.0 + fma(cx, cx, fma(cy, cy, cz * cz)), fast);
  const lw_real w0 = fma(n[0], gam, -ux), w1 = fma(n[1], gam, -uy), w2 = fma(n[2], gam, -uz);
  const lw_real rd = invR * invD;
#if LW_POTENTIAL && LW_ANGULAR != 2
  // The four-potential on the sphere, as lw_fields_mode: A^μ = u^μ/(R D) (the far field has none).
  e[0] = ux * rd;
  e[1] = uy * rd;
  e[2] = uz * rd;
  f[0] = gam * rd;
  return invD;
#endif
  const lw_real far_a = rd * invD;
  const lw_real far_2 = 2.0 * far_a;
  const lw_real nah = fma(n[0], ahx, fma(n[1], ahy, n[2] * ahz));
  const lw_real qh = (ah0 - nah) * invD;
  f[0] = far_2 * fma(-qh, w0, fma(n[0], ah0, -ahx));
  f[1] = far_2 * fma(-qh, w1, fma(n[1], ah0, -ahy));
  f[2] = far_2 * fma(-qh, w2, fma(n[2], ah0, -ahz));
#if LW_ANGULAR == 2
  e[0] = f[0];
  e[1] = f[1];
  e[2] = f[2];
#else
  const lw_real near_f = rd * far_a;
  e[0] = fma(w0, near_f, f[0]);
  e[1] = fma(w1, near_f, f[1]);
  e[2] = fma(w2, near_f, f[2]);
#endif
  return invD;
}

// lw_setup for a direction: the coverage window [t_first, t_last] of the pixel.
inline void lw_dir_setup(lw_electron* el, const lw_spline* sp, const lw_dir* o) {
  lw_coef k;
  lw_coef_start(&k, sp, -1);
  el->t_first = lw_dir_arrival(sp, sp->tau0, o, &k);
  el->t_last = lw_dir_arrival(sp, sp->tau_end, o, &k);
  el->warm = 0;
  el->j = -1;
  el->tau = el->tau_pp = sp->tau0;
  el->invd_prev = 1.0;
}

// lw_solve for a direction: the same predictor, iteration counts and convergence rule.
inline void lw_dir_solve(lw_electron* el, const lw_spline* sp, const lw_real t_rel, const lw_real dt,
                         const lw_dir* o, const lw_real sz, const int newton_iters, const int reuse,
                         const int fast, lw_real* e, lw_real* f, lw_real* n) {
  lw_coef k;
  lw_coef_start(&k, sp, el->j);
  lw_real lo, hi, s, step;
  lw_real tau = lw_predict(el, sp, dt, &lo, &hi);
  if (el->warm == 2) {
    for (int it = 0; it < newton_iters; ++it) {
      s = lw_locate(sp, tau, reuse, &k);
      tau = lw_dir_newton_step(k.c, s, tau, t_rel, o, fast, &lo, &hi, &step);
    }
  } else {
    const lw_real tol = 4.0 * DBL_EPSILON * fmax(fabs(sp->tau0), fabs(sp->tau_end));
    for (int it = 0; it < 200; ++it) {
      s = lw_locate(sp, tau, reuse, &k);
      tau = lw_dir_newton_step(k.c, s, tau, t_rel, o, fast, &lo, &hi, &step);
      if (step <= tol || hi - lo <= tol) break;
    }
    el->warm += 1;
  }
  el->tau = tau;
  s = lw_locate(sp, tau, reuse, &k);
  el->j = k.j;
  el->invd_prev = lw_dir_fields(k.c, s, o, sz, fast, e, f, n);
}

#endif  // EDM_LW_DIRECTION_CL
