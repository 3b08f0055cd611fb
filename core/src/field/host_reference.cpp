// Host reference of the Liénard–Wiechert cube, in plain C++ double precision, sharing NO code with
// the kernel: its own spline evaluation, its own retarded-time root (GSL Brent on the plain light-cone
// residual, evaluated in long double), and the textbook 3-vector form of the field. Slow; for tests
// and spot checks of small screens. The angular screen's observers (edm/directions.hpp) are the
// plain ones too: a point R n̂ of the sphere with t_obs = t_rel + R, or at infinity the phase
// t_obs = t − n̂·x and the textbook far field times R. In potential mode, the four-potential from
// its covariant definition (lw_potential).
#include <gsl/gsl_errno.h>
#include <gsl/gsl_roots.h>

#include <cmath>
#include <memory>
#include <optional>

#include "edm/accumulator.hpp"
#include "edm/error.hpp"

namespace edm {
namespace {

struct Spline {
  const double* coef;
  double tau0, dtau;
  std::uint32_t n;
  // x^μ, u^μ, a^μ at τ: interval by floor (clamped), the quintic and its two derivatives written
  // out term by term in powers of s = τ − τ_j (not the kernel's nested synthetic division).
  void eval(double tau, double out[kSplineComponents]) const {
    long j = long(std::floor((tau - tau0) / dtau));
    if (j < 0) j = 0;
    if (j > long(n) - 1) j = long(n) - 1;
    const double s = tau - (tau0 + double(j) * dtau), s2 = s * s, s3 = s2 * s, s4 = s3 * s, s5 = s4 * s;
    const double* c = coef + std::size_t(j) * kCoefPerInterval;
    for (int k = 0; k < kPositionComponents; ++k) {
      const double* p = c + kSplinePowers * k;
      out[k] = p[0] + p[1] * s + p[2] * s2 + p[3] * s3 + p[4] * s4 + p[5] * s5;
      out[4 + k] = p[1] + 2 * p[2] * s + 3 * p[3] * s2 + 4 * p[4] * s3 + 5 * p[5] * s4;
      out[8 + k] = 2 * p[2] + 6 * p[3] * s + 12 * p[4] * s2 + 20 * p[5] * s3;
    }
  }
  // t, x, y, z at τ in long double (for the residual: t and z of a γ = 5 electron are large and
  // nearly cancel in t − |r − x|; extended precision keeps the root free of their rounding).
  void eval_position(double tau, long double out[4]) const {
    long j = long(std::floor((tau - tau0) / dtau));
    if (j < 0) j = 0;
    if (j > long(n) - 1) j = long(n) - 1;
    const long double s = (long double)tau - ((long double)tau0 + (long double)j * dtau);
    const double* c = coef + std::size_t(j) * kCoefPerInterval;
    for (int k = 0; k < kPositionComponents; ++k) {
      const double* p = c + kSplinePowers * k;
      out[k] = ((((p[5] * s + p[4]) * s + p[3]) * s + p[2]) * s + p[1]) * s + p[0];
    }
  }
};

struct Observer {
  const Spline* spline;
  long double t_obs;      // absolute observer time t_rel + |Z| (long double keeps the digits)
  double px, py, pz;
  bool far = false;        // at infinity in direction n̂ = (px, py, pz); t_obs = t_rel
};

// Plain light-cone residual g(τ) = t_obs − t(τ) − |r − x(τ)|, decreasing in τ.
double residual(double tau, void* params) {
  const auto* o = static_cast<const Observer*>(params);
  long double y[4];
  o->spline->eval_position(tau, y);
  if (o->far) return double(o->t_obs - (y[0] - (o->px * y[1] + o->py * y[2] + o->pz * y[3])));
  const long double dx = o->px - y[1], dy = o->py - y[2], dz = o->pz - y[3];
  return double(o->t_obs - (long double)y[0] - std::sqrt(dx * dx + dy * dy + dz * dz));
}

struct SolverDeleter {
  void operator()(gsl_root_fsolver* s) const { gsl_root_fsolver_free(s); }
};

}  // namespace

namespace {

// The retarded time of observer o on the spline (Brent on the residual), or nothing when it lies
// outside the spline's span.
std::optional<double> retarded_tau(gsl_root_fsolver* solver, Observer& o, double tau0, double tau_end,
                                   double eps_abs) {
  gsl_function F{&residual, &o};
  const double g0 = residual(tau0, &o), g1 = residual(tau_end, &o);
  // A sample whose residual at a span end is zero within rounding sits ON the boundary (the auto
  // window puts sample 0 exactly at the corner arrival of the first knot); the span is closed, as
  // in the kernel, so it counts.
  const double g_round = 64 * 2.220446049250313e-16 * double(std::fabs(o.t_obs) + 1);
  if (g0 < -g_round || g1 > g_round) return std::nullopt;
  if (g0 <= 0) return tau0;
  if (g1 >= 0) return tau_end;
  gsl_root_fsolver_set(solver, &F, tau0, tau_end);
  double tau = 0.5 * (tau0 + tau_end);
  for (int it = 0; it < 300; ++it) {
    if (gsl_root_fsolver_iterate(solver) != GSL_SUCCESS) break;
    tau = gsl_root_fsolver_root(solver);
    const double lo = gsl_root_fsolver_x_lower(solver), hi = gsl_root_fsolver_x_upper(solver);
    if (gsl_root_test_interval(lo, hi, eps_abs, 2e-16) == GSL_SUCCESS) break;
  }
  return tau;
}

// The field at the observer of the spline's state at τ, in the textbook 3-vector form (Jackson
// 14.14), unit positive charge, c = 1, 1/(4πε0) = 1:
//   E = (n̂ − β)/(γ²κ³R²) + n̂ × ((n̂ − β) × β̇)/(κ³R),  κ = 1 − n̂·β,  β̇ = dβ/dt.
// Enear and Efar are the two terms, n the unit vector to the observer.
void lw_field(const Spline& sp, double tau, const Observer& o, double Enear[3], double Efar[3], double n[3]) {
  double y[kSplineComponents];
  sp.eval(tau, y);
  const double r[3] = {o.px - y[1], o.py - y[2], o.pz - y[3]};
  // At infinity n̂ is the direction itself and R·E is formed (R = 1 below, no near term).
  const double R = o.far ? 1.0 : std::sqrt(r[0] * r[0] + r[1] * r[1] + r[2] * r[2]);
  const double dir[3] = {o.px, o.py, o.pz};
  for (int i = 0; i < 3; ++i) n[i] = o.far ? dir[i] : r[i] / R;
  // γ from the mass shell of the spatial u (not the spline's u⁰ component, which agrees with it
  // only to interpolation accuracy) — the same convention as the kernel.
  const double u[3] = {y[5], y[6], y[7]};
  const double g = std::sqrt(1.0 + (u[0] * u[0] + u[1] * u[1] + u[2] * u[2]));
  const double beta[3] = {u[0] / g, u[1] / g, u[2] / g};
  // β̇ = dβ/dt = (1/γ) d(u/γ)/dτ = (a γ − u a⁰)/γ³.
  const double bd[3] = {(y[9] * g - u[0] * y[8]) / (g * g * g), (y[10] * g - u[1] * y[8]) / (g * g * g),
                        (y[11] * g - u[2] * y[8]) / (g * g * g)};
  // κ = (γ − n̂·u)/γ = (1 + |n̂ × u|²)/(γ(γ + n̂·u)) with γ² = 1 + |u|²: no cancellation.
  const double nxu[3] = {n[1] * u[2] - n[2] * u[1], n[2] * u[0] - n[0] * u[2], n[0] * u[1] - n[1] * u[0]};
  const double nu = n[0] * u[0] + n[1] * u[1] + n[2] * u[2];
  const double kappa = (1.0 + nxu[0] * nxu[0] + nxu[1] * nxu[1] + nxu[2] * nxu[2]) / (g * (g + nu));
  const double k3 = kappa * kappa * kappa;
  const double nb_[3] = {n[0] - beta[0], n[1] - beta[1], n[2] - beta[2]};
  const double cross1[3] = {nb_[1] * bd[2] - nb_[2] * bd[1], nb_[2] * bd[0] - nb_[0] * bd[2],
                            nb_[0] * bd[1] - nb_[1] * bd[0]};
  const double cross2[3] = {n[1] * cross1[2] - n[2] * cross1[1], n[2] * cross1[0] - n[0] * cross1[2],
                            n[0] * cross1[1] - n[1] * cross1[0]};
  for (int i = 0; i < 3; ++i) {
    Enear[i] = o.far ? 0.0 : nb_[i] / (g * g * k3 * R * R);
    Efar[i] = cross2[i] / (k3 * R);
  }
}

// The four-potential at the observer of the spline's state at τ, from its definition (unit positive
// charge, c = 1, 1/(4πε0) = 1): A^μ = u^μ/(X·u) with X = (t_obs − t, r − x) the light-like
// separation, X·u = X⁰u⁰ − X·u written as the plain Minkowski product (not the kernel's R D), u⁰ = γ
// from the mass shell. A[0] = A⁰ = φ/c, A[1..3] = A.
void lw_potential(const Spline& sp, double tau, const Observer& o, double A[4]) {
  double y[kSplineComponents];
  sp.eval(tau, y);
  const double r[3] = {o.px - y[1], o.py - y[2], o.pz - y[3]};
  const double R = std::sqrt(r[0] * r[0] + r[1] * r[1] + r[2] * r[2]);  // X⁰ = R on the light cone
  const double u[3] = {y[5], y[6], y[7]};
  const double g = std::sqrt(1.0 + (u[0] * u[0] + u[1] * u[1] + u[2] * u[2]));
  const double xu = R * g - (r[0] * u[0] + r[1] * u[1] + r[2] * u[2]);
  A[0] = g / xu;
  for (int i = 0; i < 3; ++i) A[1 + i] = u[i] / xu;
}

// The observer of pixel (ix, iy): flat, (x_i, y_j, Z); angular, R n̂ or n̂ at infinity.
Observer observer(const Screen& screen, const Spline* sp, std::size_t ix, std::size_t iy) {
  if (!screen.angular()) return Observer{sp, 0, screen.pixel_x(int(ix)), screen.pixel_y(int(iy)), screen.z};
  const auto& n = screen.directions[iy * std::size_t(screen.nx) + ix].n;
  if (screen.far_field()) return Observer{sp, 0, n[0], n[1], n[2], true};
  return Observer{sp, 0, screen.z * n[0], screen.z * n[1], screen.z * n[2]};
}

}  // namespace

std::vector<double> host_reference_field(const Screen& screen, Mode mode, const SplineBatch& batch) {
  if (mode == Mode::Potential && screen.far_field())
    throw ConfigError("EDM-ACC-090", "host_reference_field: run.mode = \"potential\" on the far-field screen "
                                     "(screen.distance = \"infinity\"): A^mu needs a finite distance");
  const int nb = bucket_count(mode);
  const std::size_t S = std::size_t(screen.samples), nx = std::size_t(screen.nx), ny = std::size_t(screen.ny);
  const std::size_t comp_size = ny * nx * S;
  std::vector<double> cube(std::size_t(nb) * 3 * comp_size, 0.0);
  std::unique_ptr<gsl_root_fsolver, SolverDeleter> solver(gsl_root_fsolver_alloc(gsl_root_fsolver_brent));
  gsl_error_handler_t* old_handler = gsl_set_error_handler_off();  // we check status codes

  for (const auto& e : batch.electrons) {
    Spline sp{batch.coef.data() + e.offset, e.tau0, e.dtau, e.n_intervals};
    const double tau_end = e.tau0 + e.dtau * e.n_intervals;
    // Brent stops when the bracket is a couple of ulps of the span's τ wide.
    const double eps_abs = 4.0 * 2.220446049250313e-16 * std::fmax(std::fabs(e.tau0), std::fabs(tau_end));
    for (std::size_t iy = 0; iy < ny; ++iy)
      for (std::size_t ix = 0; ix < nx; ++ix) {
        Observer o = observer(screen, &sp, ix, iy);
        for (std::size_t k = 0; k < S; ++k) {
          o.t_obs = (long double)screen.t_rel(int(k)) + (o.far ? 0.0L : std::fabs((long double)screen.z));
          const std::optional<double> tau = retarded_tau(solver.get(), o, e.tau0, tau_end, eps_abs);
          if (!tau) continue;  // retarded time outside the spline: nothing
          if (mode == Mode::Potential) {  // A in bucket 0, A⁰ in bucket 1's first component (as the kernel)
            double A[4];
            lw_potential(sp, *tau, o, A);
            const std::size_t at = (iy * nx + ix) * S + k;
            for (int c = 0; c < 3; ++c) cube[std::size_t(c) * comp_size + at] += A[1 + c] * e.weight;
            cube[3 * comp_size + at] += A[0] * e.weight;
            continue;
          }
          double Enear[3], Efar[3], n[3];
          lw_field(sp, *tau, o, Enear, Efar, n);
          // The macro-particle weight scales the electron's whole field (share/docs/ensembles.md).
          for (int c = 0; c < 3; ++c) {
            Enear[c] *= e.weight;
            Efar[c] *= e.weight;
          }
          const double Et[3] = {Enear[0] + Efar[0], Enear[1] + Efar[1], Enear[2] + Efar[2]};
          auto put = [&](int bucket, const double v[3], bool cross_n) {
            double w[3] = {v[0], v[1], v[2]};
            if (cross_n) {  // B = n̂ × E
              w[0] = n[1] * v[2] - n[2] * v[1];
              w[1] = n[2] * v[0] - n[0] * v[2];
              w[2] = n[0] * v[1] - n[1] * v[0];
            }
            for (int c = 0; c < 3; ++c)
              cube[(std::size_t(bucket) * 3 + std::size_t(c)) * comp_size + (iy * nx + ix) * S + k] += w[c];
          };
          put(0, Et, false);
          put(1, Et, true);
          if (mode == Mode::Split) {
            put(2, Efar, false);
            put(3, Efar, true);
          }
        }
      }
  }
  gsl_set_error_handler(old_handler);
  return cube;
}

}  // namespace edm
