// Trajectory solver: GSL odeiv2 (rk8pd) integration of a scenario's equations of motion in proper
// time, knot to knot on a uniform τ grid, then the flat spline layout of trajectory.hpp (quintic
// Hermite position from x, u and a at the knots). Also resampling of tabulated tracks, the
// γ(τ) trace, and the Lorentz and Landau–Lifshitz equations of motion (normalised, q = −e).
#include "edm/trajectory.hpp"

#include <gsl/gsl_errno.h>
#include <gsl/gsl_interp.h>
#include <gsl/gsl_odeiv2.h>
#include <malloc.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <exception>
#include <memory>
#include <numbers>
#include <string>
#include <thread>

#include "edm/error.hpp"
#include "edm/schema.hpp"

namespace edm {
namespace {

constexpr double kTwoPi = 2.0 * std::numbers::pi;

// Knot values of one electron: state (8 per knot) and 4-acceleration (4 per knot); and, where the
// solver knows them, the positions as displacements from a reference straight line
// x_ref(τ) = x_ref0 + u_ref·τ (4 per knot, `dx`), from which the spline's steps are formed without
// cancellation (build_coefficients).
struct Knots {
  double dtau = 0;
  std::vector<double> y, a, dx;
  double u_ref[4] = {0, 0, 0, 0};
  std::size_t size() const { return a.size() / 4; }
  void push(const double yy[8], const double aa[4]) {
    y.insert(y.end(), yy, yy + 8);
    a.insert(a.end(), aa, aa + 4);
  }
};

// RAII for GSL objects.
struct InterpDeleter {
  void operator()(gsl_interp* p) const { gsl_interp_free(p); }
};
struct AccelDeleter {
  void operator()(gsl_interp_accel* p) const { gsl_interp_accel_free(p); }
};
struct DriverDeleter {
  void operator()(gsl_odeiv2_driver* p) const { gsl_odeiv2_driver_free(p); }
};
using InterpPtr = std::unique_ptr<gsl_interp, InterpDeleter>;
using AccelPtr = std::unique_ptr<gsl_interp_accel, AccelDeleter>;

// Per-interval power coefficients (layout of trajectory.hpp) from the knots: per component of the
// position, the quintic Hermite through x, u = dx/dτ and a = du/dτ at both ends of the interval.
std::vector<double> build_coefficients(const Knots& k) {
  const std::size_t ni = k.size() - 1;
  std::vector<double> coef(ni * kCoefPerInterval);
  for (std::size_t j = 0; j < ni; ++j) {
    const double* y0 = &k.y[8 * j];
    const double* y1 = &k.y[8 * (j + 1)];
    const double* a0 = &k.a[4 * j];
    const double* a1 = &k.a[4 * (j + 1)];
    for (int comp = 0; comp < kPositionComponents; ++comp) {
      double* c = &coef[j * kCoefPerInterval + kSplinePowers * comp];
      if (k.dx.empty()) {
        quintic_hermite(y0[comp], y0[4 + comp], a0[comp], y1[comp], y1[4 + comp], a1[comp], k.dtau, c);
        continue;
      }
      // f1 − f0 − h·d0 = (Δx1 − Δx0) − h·(d0 − u_ref): small numbers only. Formed from the absolute
      // knot values, whose rounding is ε|x| (t and z reach 10³–10⁴), the residual carried noise that
      // the quintic turns into ε|x|/h² of acceleration: uniform motion radiated, relative L2 8.9e-3
      // at 1024 knots per period against 3.7e-6 at 16 (found by a tester).
      const double h = k.dtau;
      const double F = (k.dx[4 * (j + 1) + comp] - k.dx[4 * j + comp]) - h * ((y0[4 + comp] - k.u_ref[comp]) + 0.5 * h * a0[comp]);
      quintic_hermite_residual(y0[comp], y0[4 + comp], a0[comp], F, y1[4 + comp], a1[comp], h, c);
    }
  }
  return coef;
}

// The solver's state is z = (Δx^μ, u^μ): the position as its displacement from the reference line
// x_ref(τ) = x0 + u0·τ through the initial state, so dΔx/dτ = u − u0. Its steps keep the digits of
// the displacement (zero in uniform motion), where absolute positions of 10³–10⁴ kept ε|x| of noise.
struct OdeContext {
  const Scenario* scenario;
  std::string error;
  double x0[4] = {0, 0, 0, 0}, u0[4] = {0, 0, 0, 0};
  // The absolute state at τ from z.
  void absolute(double tau, const double z[8], double y[8]) const {
    for (int c = 0; c < 4; ++c) {
      y[c] = x0[c] + u0[c] * tau + z[c];
      y[4 + c] = z[4 + c];
    }
  }
};

int ode_function(double tau, const double z[], double f[], void* params) {
  auto* ctx = static_cast<OdeContext*>(params);
  try {
    double y[8];
    ctx->absolute(tau, z, y);
    ctx->scenario->rhs(tau, y, f);
    for (int c = 0; c < 4; ++c) f[c] -= ctx->u0[c];  // dΔx/dτ = u − u0
  } catch (const std::exception& e) {
    ctx->error = e.what();
    return GSL_EBADFUNC;  // no exception may cross GSL's C frames
  }
  return GSL_SUCCESS;
}

// The solve was asked to stop (share/docs/errors.md, exit 130): the batch loop turns this into a
// checkpoint of the electrons summed so far.
[[noreturn]] void throw_stopped(std::uint64_t electron) {
  throw Interrupted("EDM-TRJ-040", "the trajectory solve was stopped on request at electron " + std::to_string(electron));
}

// Four significant digits, never "0.000000".
std::string shortest_text(double x) {
  char b[32];
  std::snprintf(b, sizeof b, "%.4g", x);
  return b;
}

Knots integrate_electron(const Scenario& sc, std::uint64_t i, const SolveOptions& opt) {
  double y[8], dy[8];
  sc.initial_state(i, y);
  const int s = sc.laser_direction();
  const double h0 = y[4] - s * y[7];
  if (!(h0 > 0)) throw PhysicsError("EDM-TRJ-010", "light-front momentum h0 = γ − s uᶻ is not > 0");
  Knots k;
  k.dtau = kTwoPi / h0 / opt.knots_per_period;

  OdeContext ctx{&sc, {}};
  for (int c = 0; c < 4; ++c) {
    ctx.x0[c] = y[c];
    ctx.u0[c] = k.u_ref[c] = y[4 + c];
  }
  double z[8] = {0, 0, 0, 0, y[4], y[5], y[6], y[7]};
  gsl_odeiv2_system sys{ode_function, nullptr, 8, &ctx};
  // The step control as on absolute positions: each displacement component is allowed the error
  // rtol·X (X the position's size at the pulse's end, |x0| + |u0|·τ_end), which the absolute state had;
  // the displacement's own rtol·|Δx| alone made the steps 40 % more for no gain (the truncation error is
  // smooth: it is the knots' rounding that the displacement removes). u keeps atol + rtol·|u|.
  const double tau_end = std::max(0.0, (sc.xi_end() - (y[0] - s * y[3])) / h0);
  double scale[8] = {1, 1, 1, 1, 1, 1, 1, 1};
  for (int c = 0; c < 4; ++c)
    scale[c] = std::max(1.0, opt.rtol * (std::abs(y[c]) + std::abs(y[4 + c]) * tau_end) / opt.atol);
  std::unique_ptr<gsl_odeiv2_driver, DriverDeleter> drv(gsl_odeiv2_driver_alloc_scaled_new(
      &sys, gsl_odeiv2_step_rk8pd, 0.1 * k.dtau, opt.atol, opt.rtol, 1.0, 0.0, scale));
  // The step cap: one knot spacing, i.e. 1/knots_per_period of a Doppler-shifted carrier period,
  // so the adaptive control can never stride over a short interaction where the field is still 0.
  gsl_odeiv2_driver_set_hmax(drv.get(), k.dtau);

  auto record = [&](double tau) {
    ctx.absolute(tau, z, y);
    sc.rhs(tau, y, dy);
    k.push(y, dy + 4);
    k.dx.insert(k.dx.end(), z, z + 4);
  };
  auto done = [&]() { return y[0] - s * y[3] >= sc.xi_end() && (!opt.observe_done || opt.observe_done(y)); };
  double tau = 0;
  record(tau);
  int extra = done() ? 2 : -1;
  for (std::uint64_t j = 1; extra != 0; ++j) {
    if (opt.stop && opt.stop->load(std::memory_order_relaxed)) throw_stopped(i);
    const double target = double(j) * k.dtau;
    if (target > sc.tau_max())
      throw PhysicsError("EDM-TRJ-011", "proper time exceeded tau_max = " + shortest_text(sc.tau_max()) +
                                            " (normalised: units of 1/ω, a laser period is 2π) before the stop "
                                            "condition (ξ_end, observer window)");
    const int status = gsl_odeiv2_driver_apply(drv.get(), &tau, target, z);
    if (status != GSL_SUCCESS)
      throw PhysicsError("EDM-TRJ-012", "GSL odeiv2 failed (" + std::string(gsl_strerror(status)) +
                                            ") at tau = " + std::to_string(tau) +
                                            (ctx.error.empty() ? "" : ": " + ctx.error));
    record(tau);
    if (extra > 0)
      --extra;
    else if (done())
      extra = 2;  // two knots past the end so the last interval's splines are not end-clamped
  }
  return k;
}

// ∫_a^b f by 5-point Gauss–Legendre: exact for polynomials to degree 9, so for γ(τ) over one knot
// spacing of a cubic u-spline its error is far below the steps' rounding.
template <class F>
double gauss_legendre_5(double a, double b, F&& f) {
  static constexpr double x[5] = {0.0, 0.5384693101056831, -0.5384693101056831, 0.9061798459386640, -0.9061798459386640};
  static constexpr double w[5] = {0.5688888888888889, 0.4786286704993665, 0.4786286704993665, 0.2369268850561891,
                                  0.2369268850561891};
  const double m = 0.5 * (a + b), r = 0.5 * (b - a);
  double sum = 0;
  for (int i = 0; i < 5; ++i) sum += w[i] * f(m + r * x[i]);
  return sum * r;
}

// Model "tracks": resample an external trajectory (arbitrary times, normalised) on uniform τ knots.
// τ(t) = ∫ dt/γ by the integral of a cubic spline of 1/γ(t); u is then a cubic spline in τ through
// the samples, and the position the integral of u from the first sample's position (x′ = u). The 4-acceleration is the derivative of the u-spline: the one place in
// edm where a is differentiated instead of taken from equations of motion (tracks have none).
// The knots span the whole track; neither ξ_end nor observe_done can extend it (there is nothing to
// integrate), so a track must cover the observer window itself.
// τ at each track sample: τ(t) = ∫ dt/γ, the integral of a cubic spline of 1/γ(t); inv_gamma gets 1/γ.
std::vector<double> track_proper_time(const edm_track& tr, std::vector<double>& inv_gamma) {
  const std::size_t n = tr.n;
  inv_gamma.assign(n, 0.0);
  std::vector<double> tau(n, 0.0);
  for (std::size_t k = 0; k < n; ++k) {
    if (k > 0 && !(tr.t[k] > tr.t[k - 1]))
      throw PhysicsError("EDM-TRJ-022", "track times are not strictly increasing at sample " + std::to_string(k));
    inv_gamma[k] = 1.0 / std::sqrt(1.0 + tr.ux[k] * tr.ux[k] + tr.uy[k] * tr.uy[k] + tr.uz[k] * tr.uz[k]);
  }
  InterpPtr ig(gsl_interp_alloc(gsl_interp_cspline, n));
  AccelPtr acc(gsl_interp_accel_alloc());
  gsl_interp_init(ig.get(), tr.t, inv_gamma.data(), n);
  for (std::size_t k = 1; k < n; ++k)
    tau[k] = tau[k - 1] + gsl_interp_eval_integ(ig.get(), tr.t, inv_gamma.data(), tr.t[k - 1], tr.t[k], acc.get());
  return tau;
}

// A track's splines in τ: the position's (for its first sample) and those of u − u_ref, u_ref the
// first sample's u, so that the steps ∫(u − u_ref) dτ keep the digits of the deviation from a
// straight line (zero for a uniform track) instead of cancelling against u_ref·h.
struct TrackSplines {
  std::vector<double> tau, du[3];
  const double* comp[7] = {};  // t, x, y, z, then u − u_ref
  double u_ref[4] = {0, 0, 0, 0};
  std::vector<InterpPtr> sp;
  AccelPtr acc{gsl_interp_accel_alloc()};

  TrackSplines(const edm_track& tr, std::vector<double> tau_in, double gamma0) : tau(std::move(tau_in)) {
    const double* raw[7] = {tr.t, tr.x, tr.y, tr.z, tr.ux, tr.uy, tr.uz};
    u_ref[0] = gamma0;
    for (int c = 0; c < 7; ++c) comp[c] = raw[c];
    for (int c = 0; c < 3; ++c) {
      u_ref[1 + c] = raw[4 + c][0];
      du[c].resize(tr.n);
      for (std::size_t k = 0; k < tr.n; ++k) du[c][k] = raw[4 + c][k] - u_ref[1 + c];
      comp[4 + c] = du[c].data();
    }
    for (int c = 0; c < 7; ++c) {
      sp.emplace_back(gsl_interp_alloc(gsl_interp_cspline, tr.n));
      gsl_interp_init(sp.back().get(), tau.data(), comp[c], tr.n);
    }
  }
  double eval(int c, double t) const { return gsl_interp_eval(sp[c].get(), tau.data(), comp[c], t, acc.get()); }
  // γ − γ_ref = (|u|² − |u_ref|²)/(γ + γ_ref), formed without cancellation.
  double dgamma(double t) const {
    double num = 0, u2 = 0;
    for (int c = 0; c < 3; ++c) {
      const double d = eval(4 + c, t), u = u_ref[1 + c] + d;
      num += d * (u + u_ref[1 + c]);
      u2 += u * u;
    }
    return num / (std::sqrt(1.0 + u2) + u_ref[0]);
  }
  // Adds ∫_{t0}^{t1} (u − u_ref) dτ to dx: x, y, z exactly on the cubic splines; t by Gauss–Legendre
  // between the track's own samples (γ is smooth only between them).
  void add_step(double t0, double t1, double dx[4]) const {
    for (int c = 0; c < 3; ++c) dx[1 + c] += gsl_interp_eval_integ(sp[4 + c].get(), tau.data(), comp[4 + c], t0, t1, acc.get());
    double a = t0;
    for (auto it = std::upper_bound(tau.begin(), tau.end(), t0); a < t1; ++it) {
      const double b = it == tau.end() ? t1 : std::min(*it, t1);
      dx[0] += gauss_legendre_5(a, b, [&](double t) { return dgamma(t); });
      a = b;
    }
  }
};

Knots resample_track(const Scenario& sc, std::uint64_t i, const SolveOptions& opt) {
  const edm_track tr = sc.track(i);
  if (tr.n < 4) throw PhysicsError("EDM-TRJ-020", "a track needs at least 4 samples");
  for (auto* p : {tr.t, tr.x, tr.y, tr.z, tr.ux, tr.uy, tr.uz})
    if (!p) throw PhysicsError("EDM-TRJ-021", "track has a missing column");
  std::vector<double> inv_gamma;
  std::vector<double> tau_samples = track_proper_time(tr, inv_gamma);  // fills inv_gamma first
  const TrackSplines ts(tr, std::move(tau_samples), 1.0 / inv_gamma[0]);
  const std::vector<double>& tau = ts.tau;
  const double h0 = 1.0 / inv_gamma[0] - sc.laser_direction() * tr.uz[0];
  Knots kn;
  kn.dtau = kTwoPi / h0 / opt.knots_per_period;
  const std::size_t n_knots = std::size_t(std::floor(tau.back() / kn.dtau * (1 + 1e-12))) + 1;
  if (n_knots < 3) throw PhysicsError("EDM-TRJ-023", "track shorter than two knot spacings in proper time");
  for (int c = 0; c < 4; ++c) kn.u_ref[c] = ts.u_ref[c];
  // The position is the first sample's plus the integral of u (x′ = u by construction), kept as the
  // displacement from the straight line of u_ref (Knots::dx): a position spline beside the u-spline
  // disagreed with it, and absolute positions kept ε|x| of rounding, which the quintic turns into
  // acceleration noise ∝ 1/h² (a uniform track: relative L2 2e-2 at 1024 knots per period; found by
  // a tester).
  double x_first[4], dx[4] = {0, 0, 0, 0};
  for (int c = 0; c < 4; ++c) x_first[c] = ts.eval(c, 0.0);
  for (std::size_t j = 0; j < n_knots; ++j) {
    const double tj = std::min(double(j) * kn.dtau, tau.back());
    if (j > 0) ts.add_step(std::min(double(j - 1) * kn.dtau, tau.back()), tj, dx);
    double y[8], a[4], u2 = 0, ua = 0;
    for (int c = 0; c < 4; ++c) y[c] = x_first[c] + ts.u_ref[c] * tj + dx[c];
    for (int c = 0; c < 3; ++c) {
      y[5 + c] = ts.u_ref[1 + c] + ts.eval(4 + c, tj);
      a[1 + c] = gsl_interp_eval_deriv(ts.sp[4 + c].get(), tau.data(), ts.comp[4 + c], tj, ts.acc.get());
      u2 += y[5 + c] * y[5 + c];
      ua += y[5 + c] * a[1 + c];
    }
    y[4] = std::sqrt(1.0 + u2);  // on the mass shell by construction
    a[0] = ua / y[4];            // u·a = 0
    kn.push(y, a);
    kn.dx.insert(kn.dx.end(), dx, dx + 4);
  }
  return kn;
}

void fill_gamma_trace(SplineBatch& b, double dtau_g) { b.gamma = gamma_trace_of(b, dtau_g, 0, b.electrons.size()); }

}  // namespace

GammaTrace gamma_trace_of(const SplineBatch& b, double dtau_g, std::size_t first, std::size_t n) {
  GammaTrace g;
  g.dtau = dtau_g;
  double out[kSplineComponents];
  for (std::size_t e = first; e < first + n && e < b.electrons.size(); ++e) {
    const ElectronSpline& es = b.electrons[e];
    const double span = es.dtau * es.n_intervals;
    const std::size_t npts = std::size_t(std::floor(span / dtau_g * (1 + 1e-12))) + 1;
    if (g.sum.size() < npts) {
      g.sum.resize(npts, 0);
      g.min.resize(npts, INFINITY);
      g.max.resize(npts, -INFINITY);
      g.count.resize(npts, 0);
    }
    for (std::size_t j = 0; j < npts; ++j) {
      b.eval(e, es.tau0 + double(j) * dtau_g, out);
      g.sum[j] += GammaTrace::to_fixed(out[4]);
      g.min[j] = std::min(g.min[j], out[4]);
      g.max[j] = std::max(g.max[j], out[4]);
      g.count[j] += 1;
    }
    const double first_gamma = b.coef[es.offset + 1];  // t′ = u⁰ = γ at the first knot
    b.eval(e, es.tau_end(), out);
    g.drain.emplace_back(es.index, first_gamma - out[4]);
  }
  return g;
}

GammaTrace::Sum GammaTrace::to_fixed(double gamma) {
  if (!(gamma >= 0.0 && gamma < 0x1p63))
    throw PhysicsError("EDM-TRJ-031", "γ = " + std::to_string(gamma) + " outside the range of the γ trace");
  return Sum(gamma * 0x1p64);  // exact scaling by a power of two, then an exact conversion
}

double GammaTrace::to_double(Sum s) { return double(s) * 0x1p-64; }

void GammaTrace::merge(const GammaTrace& o) {
  if (o.count.empty() && o.drain.empty()) return;
  if (count.empty() && drain.empty()) {
    *this = o;
    return;
  }
  if (dtau != o.dtau)
    throw PhysicsError("EDM-TRJ-030", "γ traces on different grids cannot be merged (dtau " +
                                          std::to_string(dtau) + " vs " + std::to_string(o.dtau) + ")");
  const std::size_t n = std::max(count.size(), o.count.size());
  sum.resize(n, 0);
  min.resize(n, INFINITY);
  max.resize(n, -INFINITY);
  count.resize(n, 0);
  for (std::size_t j = 0; j < o.count.size(); ++j) {
    sum[j] += o.sum[j];
    min[j] = std::min(min[j], o.min[j]);
    max[j] = std::max(max[j], o.max[j]);
    count[j] += o.count[j];
  }
  drain.insert(drain.end(), o.drain.begin(), o.drain.end());
}

void SplineBatch::eval(std::size_t e, double tau, double out[kSplineComponents]) const {
  const ElectronSpline& es = electrons.at(e);
  const double span = es.dtau * es.n_intervals;
  const double s = std::clamp(tau - es.tau0, 0.0, span);
  const std::uint32_t j = std::min<std::uint32_t>(es.n_intervals - 1, std::uint32_t(s / es.dtau));
  eval_interval(&coef[es.offset + std::uint64_t(j) * kCoefPerInterval], s - double(j) * es.dtau, out);
}

void SplineBatch::release() {
  std::vector<double>().swap(coef);
  std::vector<ElectronSpline>().swap(electrons);
  gamma = GammaTrace{};
  malloc_trim(0);  // a batch is hundreds of MB: hand the pages back before the next one
}

SplineBatch solve_trajectories(const Scenario& scenario, std::uint64_t first, std::uint64_t count,
                               const SolveOptions& options) {
  // SolveOptions built in code have not been through the key table: the guard asks the table.
  check_key_value("trajectory.knots_per_period", options.knots_per_period, "EDM-CFG-301");
  if (!scenario.has_rhs() && !scenario.has_tracks())
    throw PhysicsError("EDM-TRJ-004", "scenario has neither equations of motion nor tracks");
  // GSL's default handler aborts; core never aborts: failures come back as status codes.
  gsl_set_error_handler_off();

  std::vector<Knots> knots(count);
  std::vector<std::exception_ptr> errors(count);
  std::atomic<std::uint64_t> next{0};
  std::atomic<bool> failed{false};
  auto worker = [&]() {
    for (std::uint64_t k; !failed && (k = next++) < count;) {
      try {
        if (options.stop && options.stop->load(std::memory_order_relaxed)) throw_stopped(first + k);
        knots[k] = scenario.has_rhs() ? integrate_electron(scenario, first + k, options)
                                      : resample_track(scenario, first + k, options);
      } catch (...) {
        errors[k] = std::current_exception();
        failed = true;
      }
    }
  };
  unsigned nt = options.threads ? options.threads : std::max(1u, std::thread::hardware_concurrency());
  nt = unsigned(std::min<std::uint64_t>(nt, std::max<std::uint64_t>(count, 1)));
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < nt; ++t) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
  for (std::uint64_t k = 0; k < count; ++k) {
    if (!errors[k]) continue;
    const std::string who = "electron " + std::to_string(first + k) + ": ";
    try {
      std::rethrow_exception(errors[k]);
    } catch (const Interrupted&) {
      throw;  // a stop request, not a failure of this electron
    } catch (const Error& e) {
      throw PhysicsError(e.id(), who + e.what());
    } catch (const std::exception& e) {
      throw PhysicsError("EDM-TRJ-013", who + e.what());
    }
  }

  // Assemble in index order: results do not depend on the thread count.
  SplineBatch b;
  b.electrons.resize(count);
  std::size_t total = 0;
  for (auto& k : knots) total += (k.size() - 1) * kCoefPerInterval;
  b.coef.reserve(total);
  for (std::uint64_t k = 0; k < count; ++k) {
    ElectronSpline& es = b.electrons[k];
    es.index = first + k;
    es.tau0 = 0;
    es.dtau = knots[k].dtau;
    es.n_intervals = std::uint32_t(knots[k].size() - 1);
    es.offset = b.coef.size();
    es.weight = scenario.weight(first + k);
    const auto c = build_coefficients(knots[k]);
    b.coef.insert(b.coef.end(), c.begin(), c.end());
    Knots().y.swap(knots[k].y);
    Knots().a.swap(knots[k].a);
    Knots().dx.swap(knots[k].dx);
  }
  if (count > 0) {
    double dtau_g = options.gamma_trace_dtau;
    if (!(dtau_g > 0)) dtau_g = b.electrons[0].dtau * options.knots_per_period / 4.0;  // 2π/(4 h0)
    fill_gamma_trace(b, dtau_g);
  }
  return b;
}

void lorentz_rhs(const Laser& laser, const double y[8], double dy[8]) {
  double E[3], B[3];
  laser.field(y, E, B);
  const double g = y[4], ux = y[5], uy = y[6], uz = y[7];
  dy[0] = g;
  dy[1] = ux;
  dy[2] = uy;
  dy[3] = uz;
  // q = −1: du⁰/dτ = −E·u, du/dτ = −(u⁰E + u×B).
  dy[4] = -(E[0] * ux + E[1] * uy + E[2] * uz);
  dy[5] = -(g * E[0] + uy * B[2] - uz * B[1]);
  dy[6] = -(g * E[1] + uz * B[0] - ux * B[2]);
  dy[7] = -(g * E[2] + ux * B[1] - uy * B[0]);
}

namespace {
inline void cross(const double a[3], const double b[3], double c[3]) {
  c[0] = a[1] * b[2] - a[2] * b[1];
  c[1] = a[2] * b[0] - a[0] * b[2];
  c[2] = a[0] * b[1] - a[1] * b[0];
}
inline double dot(const double a[3], const double b[3]) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
}  // namespace

void landau_lifshitz_rhs(const Laser& laser, double tau_rad, const double y[8], double dy[8]) {
  lorentz_rhs(laser, y, dy);
  double E[3], B[3];
  laser.field(y, E, B);
  const double g = y[4];
  const double u[3] = {y[5], y[6], y[7]};
  // Field derivative along the worldline, (u·∂)F, by a central difference over the 4-displacement
  // ±εu. ε is chosen so that the carrier phase moves by at most 1e-4 rad (the phase rate along u
  // is k·u ≤ γ + |u|): truncation ~(1e-4)²/6 ≈ 2e-9 relative, round-off ~1e-16/1e-4 = 1e-12, both
  // far below what matters for a term that is itself τ_R ~ 1e-8 times the Lorentz force.
  const double eps = 1e-4 / (g + std::sqrt(dot(u, u)));
  double xp[4], xm[4], Ep[3], Bp[3], Em[3], Bm[3];
  for (int c = 0; c < 4; ++c) {
    xp[c] = y[c] + eps * y[4 + c];
    xm[c] = y[c] - eps * y[4 + c];
  }
  laser.field(xp, Ep, Bp);
  laser.field(xm, Em, Bm);
  double dE[3], dB[3];  // (u·∂)E, (u·∂)B
  for (int c = 0; c < 3; ++c) {
    dE[c] = (Ep[c] - Em[c]) / (2 * eps);
    dB[c] = (Bp[c] - Bm[c]) / (2 * eps);
  }
  // LL force (Landau & Lifshitz §76) times γ, normalised with q = −1, m = c = 1, written with u:
  //   du/dτ|_rad = τ_R { −[γ(u·∂)E + u×(u·∂)B] + γ E×B + (u×B)×B + (u·E)E − [(γE + u×B)² − (u·E)²] u }
  //   du⁰/dτ|_rad = u·(du/dτ|_rad)/γ            (keeps u·u = 1 exactly)
  double uxdB[3], ExB[3], uxB[3], uxBxB[3], f[3];
  cross(u, dB, uxdB);
  cross(E, B, ExB);
  cross(u, B, uxB);
  cross(uxB, B, uxBxB);
  const double uE = dot(u, E);
  double L[3];
  for (int c = 0; c < 3; ++c) L[c] = g * E[c] + uxB[c];
  const double Q = dot(L, L) - uE * uE;
  for (int c = 0; c < 3; ++c)
    f[c] = tau_rad * (-(g * dE[c] + uxdB[c]) + g * ExB[c] + uxBxB[c] + uE * E[c] - Q * u[c]);
  dy[4] += dot(u, f) / g;
  dy[5] += f[0];
  dy[6] += f[1];
  dy[7] += f[2];
}

}  // namespace edm
