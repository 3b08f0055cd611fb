// Prepare the cell (the run driver's first stage, shared with `edm bench`): the plugin's scenario,
// the screen with its observer window fixed from the initial states (window = "burst": from the
// burst's predicted light, share/docs/campaign.md), and each electron started
// early enough, along its free straight line, that its light reaches even the farthest corner
// before sample 0 (the corner-anchored coverage condition holds by construction); the solver
// integrates until its light has passed every pixel after the last sample.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numbers>
#include <optional>

#include "edm/accumulator.hpp"
#include "edm/error.hpp"
#include "edm/laser.hpp"
#include "edm/run.hpp"
#include "run/ranks.hpp"
#include "run/stages.hpp"

namespace edm {
namespace {

// The scenario's electrons, each started earlier along its free straight line (the scenario's initial
// state lies before the pulse, where the motion is uniform up to a field of exp(−padding²)), so
// that light from its first knot reaches every pixel before sample 0. The wrapper forwards every
// other call to the plugin's table unchanged.
struct ExtendedStart {
  const Scenario* inner = nullptr;
  std::vector<std::array<double, 8>> start;
};

edm_scenario_v1 extended_table(ExtendedStart& ext) {
  edm_scenario_v1 t = ext.inner->raw();
  t.self = &ext;
  t.destroy = [](void*) {};  // the wrapper owns nothing; the plugin's scenario outlives it
  t.electron_count = [](const void* self) {
    return static_cast<std::uint64_t>(static_cast<const ExtendedStart*>(self)->start.size());
  };
  t.initial_state = [](const void* self, uint64_t i, double y[8], char*, size_t) {
    const auto& st = static_cast<const ExtendedStart*>(self)->start[i];
    std::copy(st.begin(), st.end(), y);
    return 0;
  };
  t.rhs = [](const void* self, double tau, const double y[8], double dy[8]) {
    const auto& raw = static_cast<const ExtendedStart*>(self)->inner->raw();
    return raw.rhs(raw.self, tau, y, dy);
  };
  t.laser_field = [](const void* self, const double x4[4], double E[3], double B[3]) {
    const auto& raw = static_cast<const ExtendedStart*>(self)->inner->raw();
    raw.laser_field(raw.self, x4, E, B);
  };
  t.track = nullptr;
  if (t.weight)  // the plugin's weights, asked of the plugin's own scenario
    t.weight = [](const void* self, uint64_t i) {
      const auto& raw = static_cast<const ExtendedStart*>(self)->inner->raw();
      return raw.weight(raw.self, i);
    };
  return t;
}

// Proper time Δ ≥ 0 to go back along the straight line of state y so that its light reaches the
// farthest pixel no later than t0_rel. The latest arrival decreases monotonically going back
// (a time-like worldline), so doubling then bisection finds it.
double backward_shift(const Screen& screen, const double y[8], double t0_rel) {
  auto shifted = [&](double d, double out[8]) {
    for (int c = 0; c < 8; ++c) out[c] = y[c];
    for (int c = 0; c < 4; ++c) out[c] = y[c] - d * y[4 + c];
  };
  double tmp[8];
  if (screen.latest_arrival_rel(y) <= t0_rel) return 0.0;
  double hi = 1.0;
  for (int i = 0; i < 200; ++i, hi *= 2) {
    shifted(hi, tmp);
    if (screen.latest_arrival_rel(tmp) <= t0_rel) break;
  }
  double lo = 0;
  for (int i = 0; i < 100 && hi - lo > 1e-9 * hi; ++i) {
    const double mid = 0.5 * (lo + hi);
    shifted(mid, tmp);
    (screen.latest_arrival_rel(tmp) <= t0_rel ? hi : lo) = mid;
  }
  return hi * (1 + 1e-12) + 1e-9;  // land strictly inside the covered side
}

}  // namespace

// The state where the free straight line of y reaches the light-front phase ξ = t − s z = target.
void detail::free_at_phase(const double y[8], int sdir, double target, double out[8]) {
  const double xi = y[0] - sdir * y[3], h = y[4] - sdir * y[7];
  for (int c = 0; c < 8; ++c) out[c] = y[c];
  for (int c = 0; c < 4; ++c) out[c] += (target - xi) / h * y[4 + c];
}
using detail::free_at_phase;

namespace {

// Before "auto" has chosen (the window's pilot solves, the guard on the extended starts) the
// default's knots stand in: neither depends on the resolution beyond a knot spacing.
int provisional_knots(const Campaign& campaign) {
  const int k = campaign.trajectory.knots_per_period;
  return k > 0 ? k : TrajectorySection{}.knots_per_period;
}

// The burst (coverage.hpp): |ξ| ≤ τ0, where the envelope exp(−(ξ/τ0)^(2p)) is at least 1/e (for
// every order p); a constant envelope has no duration, so there it is the whole pulse the scenario
// integrates, |ξ| ≤ ξ_end. The emission span: where the envelope ≥ kEmissionEnvelopeFloor
// (envelope_reach: a flat top's is τ0 (−ln floor)^(1/(2p)), not the gaussian's), within the span the
// scenario integrates (the whole pulse for a constant envelope).
BurstSpec burst_spec(const Campaign& campaign, const Scenario& scenario, const Normalization& units) {
  BurstSpec b;
  b.direction = scenario.laser_direction();
  const bool finite = campaign.laser.envelope != Envelope::Constant;
  const double tau0 = campaign.laser.duration / units.time();
  const double w = finite ? tau0 : scenario.xi_end();
  b.xi_lo = -w;
  b.xi_hi = w;
  const double reach = envelope_reach(tau0, envelope_order(campaign.laser), -std::log(kEmissionEnvelopeFloor));
  const double e = finite ? std::min(reach, scenario.xi_end()) : scenario.xi_end();
  b.emit_lo = -std::max(e, w);
  b.emit_hi = std::max(e, w);
  return b;
}

// The span window = "burst" is placed on: the burst, or the emission span when the run's spectra are
// computed from the window's samples (they need all of its light, not the 1/e part).
BurstSpec window_span(const Campaign& campaign, const BurstSpec& burst) {
  if (!(campaign.spectra.enabled && campaign.spectra.method != SpectraMethod::Direct)) return burst;
  BurstSpec b = burst;
  b.xi_lo = burst.emit_lo;
  b.xi_hi = burst.emit_hi;
  return b;
}

// The burst's light over the screen (screen-relative): its first arrival (nearest pixel, burst
// start) and last (farthest corner, burst end) over the ensemble.
struct BurstLight {
  double first = INFINITY, last = -INFINITY;
  std::uint64_t first_electron = 0, last_electron = 0;
};

// Predicted from the free straight lines, then corrected by solving the two extreme electrons (the
// pulse delays or stretches the burst's light: a ponderomotive push along z changes t − s z at the
// screen; the solve sees it, the free line does not). The solve goes to ξ_end only: the window is not
// known yet. What the prediction misses is caught on every solved electron (check_coverage).
BurstLight predict_burst_light(const Campaign& campaign, const Scenario& scenario, const Screen& screen,
                               const BurstSpec& burst, const std::vector<std::array<double, 8>>& init) {
  BurstLight free;
  for (std::uint64_t i = 0; i < init.size(); ++i) {
    double ys[8], ye[8];
    free_at_phase(init[i].data(), burst.direction, burst.xi_lo, ys);
    free_at_phase(init[i].data(), burst.direction, burst.xi_hi, ye);
    if (const double a = screen.earliest_arrival_rel(ys); a < free.first) {
      free.first = a;
      free.first_electron = i;
    }
    if (const double a = screen.latest_arrival_rel(ye); a > free.last) {
      free.last = a;
      free.last_electron = i;
    }
  }
  BurstLight light = free;
  SolveOptions pilot;
  pilot.knots_per_period = provisional_knots(campaign);
  pilot.rtol = campaign.trajectory.rtol;
  pilot.atol = campaign.trajectory.atol;
  for (const std::uint64_t i : {free.first_electron, free.last_electron}) {
    const SplineBatch b = solve_trajectories(scenario, i, 1, pilot);
    double ys[8], ye[8];
    if (b.electrons.empty() || !burst_states(b, b.electrons[0], burst, ys, ye)) continue;
    double fs[8], fe[8];
    free_at_phase(init[i].data(), burst.direction, burst.xi_lo, fs);
    free_at_phase(init[i].data(), burst.direction, burst.xi_hi, fe);
    // The shift the pulse gives this electron's burst light, applied to the ensemble's extremes
    // (the wider of the two pilots' shifts wins: the window only grows).
    light.first = std::min(light.first, free.first + screen.earliest_arrival_rel(ys) - screen.earliest_arrival_rel(fs));
    light.last = std::max(light.last, free.last + screen.latest_arrival_rel(ye) - screen.latest_arrival_rel(fe));
  }
  return light;
}

// The lead before the burst's first light and the tail after its last: 5 % of the burst's span on
// the screen, at least 16 samples.
double burst_margin(const Screen& screen, const BurstLight& light) {
  return std::max(16.0 * screen.dt, 0.05 * (light.last - light.first));
}

// window = "burst": sample 0 a lead before the burst's first light, and samples = "auto" as many as
// reach the burst's last light plus the tail. A given `samples` is checked against that: too few is
// a warning naming the count that suffices, or under screen.strict the error EDM-WIN-010.
double burst_window_start(const Campaign& campaign, Screen& screen, const Normalization& units,
                          const BurstLight& light, std::vector<std::string>& warnings) {
  const double margin = burst_margin(screen, light);
  const double t0 = light.first - margin;
  const double needed = std::ceil((light.last + margin - t0) / screen.dt) + 1;
  const double T = units.time();
  char msg[480];
  if (campaign.screen.samples == -1) {
    if (!(needed <= double(std::numeric_limits<int>::max()))) {
      std::snprintf(msg, sizeof msg,
                    "[screen] samples = \"auto\": the burst's light lasts %.4g fs on the screen, %.3g samples of "
                    "dt = %.4g fs; choose fewer samples_per_period or a fixed samples",
                    (light.last - light.first) * T * 1e15, needed, screen.dt * T * 1e15);
      throw ConfigError("EDM-WIN-012", msg);
    }
    screen.samples = int(needed);
  } else if (double(screen.samples) < needed) {
    std::snprintf(msg, sizeof msg,
                  "[screen] samples = %d: the burst window (window = \"burst\") ends %.4g fs after sample 0, "
                  "before the burst's last light at %.4g fs plus its tail of %.4g fs; samples = %.0f (or \"auto\") "
                  "covers it",
                  screen.samples, (screen.samples - 1) * screen.dt * T * 1e15, (light.last - t0) * T * 1e15,
                  margin * T * 1e15, needed);
    if (campaign.screen.strict) throw ConfigError("EDM-WIN-010", std::string(msg) + " (screen.strict = true)");
    warnings.push_back(msg);
  }
  return t0;
}

// The window's first sample (screen-relative). Auto: centred on the burst's light over the whole
// screen, the midpoint of its first arrival (nearest pixel or direction) and its last (farthest
// corner), as predict_burst_light gives them for the whole ensemble, so the interaction is in view
// whatever the Doppler compression (Thomson from rest or inverse Thomson) and a window longer than
// that span holds all of it; a shorter one starts a lead before the first light. Centring on the
// first light alone put a far-field screen's pulse at sample 1458 of 2048: the directions' spread of
// n̂·r made the first light early (found by a tester).
// Explicit: [screen] t_start. Burst: burst_window_start.
double window_start(const Campaign& campaign, const Scenario& scenario, Screen& screen,
                    const Normalization& units, const std::vector<std::array<double, 8>>& init,
                    const BurstSpec& burst, std::vector<std::string>& warnings) {
  if (campaign.screen.window == ScreenWindow::Explicit)
    return campaign.screen.t_start / units.time() - screen.time_offset();
  if (campaign.screen.window == ScreenWindow::Burst)
    return burst_window_start(campaign, screen, units,
                              predict_burst_light(campaign, scenario, screen, window_span(campaign, burst), init),
                              warnings);
  const BurstLight light = predict_burst_light(campaign, scenario, screen, burst, init);
  const double length = screen.dt * (screen.samples - 1);
  if (light.last - light.first <= length) return 0.5 * (light.first + light.last) - 0.5 * length;
  // Shorter than the burst's light over the screen: no placement holds all of it (the run warns that
  // the window cuts it). Centred, it could hold none of it at any pixel (a 64-sample window on a
  // screen whose corners see the light long after its centre); from a lead before the first light it
  // holds the beginning at the nearest pixels, as the first-light placement before it did.
  return light.first - std::min(burst_margin(screen, light), 0.1 * length);
}

// Moves every start of `ext` back along its straight line until its light reaches every pixel
// before sample 0; returns the largest shift (proper time), by which the runaway guard grows.
double extend_starts(ExtendedStart& ext, const Campaign& campaign, const Screen& screen,
                     const Normalization& units) {
  const Scenario& scenario = *ext.inner;
  double max_shift = 0;
  for (std::uint64_t i = 0; i < ext.start.size(); ++i) {
    auto& y = ext.start[i];
    const double d = backward_shift(screen, y.data(), screen.t0_rel);
    // A window opening far before the interaction needs a long free flight, stored knot by knot:
    // refuse one that would cost more than 1e8 knots (38 GB) for a single electron.
    const double h = y[4] - scenario.laser_direction() * y[7];
    const double knots = d / (2.0 * std::numbers::pi / h / provisional_knots(campaign));
    if (knots > 1e8) {
      char msg[400];
      std::snprintf(msg, sizeof msg,
                    "[screen] t_start / samples: the observer window opens so early that electron %llu "
                    "would need %.3g extra knots (%.3g s of proper time) of free flight before the "
                    "interaction; choose a later t_start, fewer samples or window = \"auto\"",
                    (unsigned long long)i, knots, d * units.time());
      throw ConfigError("EDM-WIN-002", msg);
    }
    for (int c = 0; c < 4; ++c) y[c] -= d * y[4 + c];
    max_shift = std::max(max_shift, d);
  }
  return max_shift;
}

// Proper time along the free straight line of state y until its light has left every pixel after
// the window's last sample (the solver's observe_done condition). The earliest arrival grows along
// a time-like worldline, so doubling then bisection finds it; past 2^200 it is reported as such.
double forward_span(const Screen& screen, const double y[8], double t_last) {
  auto moved = [&](double d, double out[8]) {
    for (int c = 0; c < 8; ++c) out[c] = y[c];
    for (int c = 0; c < 4; ++c) out[c] = y[c] + d * y[4 + c];
  };
  double tmp[8];
  if (screen.earliest_arrival_rel(y) > t_last) return 0.0;
  double hi = 1.0;
  for (int i = 0; i < 200; ++i, hi *= 2) {
    moved(hi, tmp);
    if (screen.earliest_arrival_rel(tmp) > t_last) break;
  }
  double lo = 0;
  for (int i = 0; i < 60 && hi - lo > 1e-6 * hi; ++i) {
    const double mid = 0.5 * (lo + hi);
    moved(mid, tmp);
    (screen.earliest_arrival_rel(tmp) > t_last ? hi : lo) = mid;
  }
  return hi;
}

// The knots each electron's solve will store, from its (extended) start on its free straight line:
// the light-front phase ξ = t − s z grows at the constant rate h = γ − s uᶻ on that line, so the
// pulse is passed after (ξ_end − ξ)/h; the window's light after forward_span (not at infinity, where
// the solve ends with the pulse: PreparedCell's constructor). The larger of the two
// (capped by tau_max) over the knot spacing, plus the three knots the solver adds at the end.
PreparedCell::Budget predict_budget(const Scenario& scenario, const std::vector<std::array<double, 8>>& start,
                                    const Screen& screen, int knots_per_period, double tau_max) {
  PreparedCell::Budget b;
  const int s = scenario.laser_direction();
  const double t_last = screen.t_rel(screen.samples - 1);
  for (std::uint64_t i = 0; i < start.size(); ++i) {
    const auto& y = start[i];
    const double h = y[4] - s * y[7];
    if (!(h > 0)) continue;  // the solver refuses it with EDM-TRJ-010
    const double tau_xi = std::max(0.0, (scenario.xi_end() - (y[0] - s * y[3])) / h);
    const double tau_window = screen.far_field() ? 0.0 : forward_span(screen, y.data(), t_last);
    const double tau = std::min(std::max(tau_xi, tau_window), tau_max);
    const double knots = tau * h * knots_per_period / (2.0 * std::numbers::pi) + 3.0;
    b.total_knots += knots;
    if (knots > b.max_knots) {
      b.max_knots = knots;
      b.worst = i;
      b.worst_tau = tau;
    }
  }
  return b;
}

// ---- trajectory.knots_per_period = "auto" (share/docs/campaign.md) --------------------------------
// The fewest knots per period K of 8, 16, … 2048 whose a-posteriori estimate meets
// trajectory.tolerance: pilot electrons solved at K and at 2K, their fields on a few pixels by the
// host reference (field/host_reference.cpp, which shares no code with the kernel), the relative L2
// of the difference. The quintic's field error falls ~16× per doubling, so the difference is the
// error of K to a few per cent, and the run takes K itself (2K would be ~16× better than asked for
// at twice the solve and the kernel's cost).

constexpr int kAutoFirst = 8, kAutoLast = 2048;  // 2048 against 4096, the key's largest
constexpr int kPilotSamples = 256;               // samples of the pilot screen, spread over the window
// The estimate stopped falling: this many doublings in a row, each less than 2× better (a resolved
// quintic gains ~16×), is the splines' rounding floor, and further knots cannot meet the tolerance.
constexpr int kStalledSteps = 2;

// The pilots: the first and the last electron, the one of largest initial γ (the largest energy
// of a spread) and the one nearest the laser axis (the strongest field of a focused pulse).
std::vector<std::uint64_t> auto_pilots(const std::vector<std::array<double, 8>>& init) {
  std::uint64_t hot = 0, near = 0;
  for (std::uint64_t i = 1; i < init.size(); ++i) {
    if (init[i][4] > init[hot][4]) hot = i;
    const double r2 = init[i][1] * init[i][1] + init[i][2] * init[i][2];
    if (r2 < init[near][1] * init[near][1] + init[near][2] * init[near][2]) near = i;
  }
  std::vector<std::uint64_t> p{0, init.size() - 1, hot, near};
  std::sort(p.begin(), p.end());
  p.erase(std::unique(p.begin(), p.end()), p.end());
  return p;
}

// The screen the pilots' fields are computed on: its corners, edge midpoints and centre (up to
// 3 × 3), and at most kPilotSamples samples over the same window.
Screen pilot_screen(const Screen& full) {
  auto pick = [](int n) {
    std::vector<int> v{0};
    if (n > 2) v.push_back((n - 1) / 2);
    if (n > 1) v.push_back(n - 1);
    return v;
  };
  const std::vector<int> xs = pick(full.nx), ys = pick(full.full_ny());
  Screen p = full;
  p.nx = int(xs.size());
  p.ny = int(ys.size());
  p.row0 = p.rows_total = 0;
  if (full.angular()) {
    p.directions.clear();
    for (const int iy : ys)
      for (const int ix : xs) p.directions.push_back(full.directions[std::size_t(iy) * full.nx + ix]);
  }
  static_assert(kPilotSamples > 1);
  if (full.samples > kPilotSamples) {
    p.samples = kPilotSamples;
    p.dt = full.dt * double(full.samples - 1) / double(kPilotSamples - 1);
  }
  return p;
}

// The relative L2 difference of E between a pilot's field at K (coarse) and at 2K (fine); 0 where
// its light misses the pilot screen, +inf where a field is not finite.
double field_difference(const Screen& s, const std::vector<double>& coarse, const std::vector<double>& fine) {
  const std::size_t n = 3 * s.pixels() * std::size_t(s.samples);  // bucket 0: E
  double d2 = 0, f2 = 0;
  for (std::size_t i = 0; i < n; ++i) {
    d2 += (coarse[i] - fine[i]) * (coarse[i] - fine[i]);
    f2 += fine[i] * fine[i];
  }
  if (!std::isfinite(d2) || !std::isfinite(f2)) return INFINITY;
  return f2 > 0 ? std::sqrt(d2 / f2) : 0.0;
}

// EDM-CFG-302: no K of the ladder meets the tolerance; `why` says where the ladder stopped.
[[noreturn]] void refuse_auto_knots(const KnotsChoice& k, const std::string& why) {
  std::string tried, pilots;
  char item[64];
  for (const auto& [K, e] : k.estimates) {
    std::snprintf(item, sizeof item, "%s%d: %.2g", tried.empty() ? "" : ", ", K, e);
    tried += item;
  }
  for (const std::uint64_t p : k.pilots) pilots += (pilots.empty() ? "" : ", ") + std::to_string(p);
  char msg[300];
  std::snprintf(msg, sizeof msg, "trajectory.knots_per_period = \"auto\" cannot meet trajectory.tolerance = %.3g: ",
                k.tolerance);
  throw ConfigError("EDM-CFG-302", msg + why + " (estimates on pilot electrons " + pilots + ", knots per period: " +
                                       (tried.empty() ? "none" : tried) +
                                       "); raise trajectory.tolerance or give knots_per_period as an integer");
}

// What the ladder needs of the prepared cell.
struct AutoKnotsInput {
  const Campaign& campaign;
  const Scenario& plugin;  // its laser direction and ξ_end, for the knot budget
  const Scenario& solver;  // with the extended starts
  SolveOptions solve;      // the run's solve options (knots_per_period set per step)
  const Screen& screen;
  const std::vector<std::array<double, 8>>& init;   // the scenario's initial states (the pilots' choice)
  const std::vector<std::array<double, 8>>& start;  // the extended starts (empty: tracks)
  double tau_max = 0;
};

// One pilot's field on the pilot screen at K knots per period; refused before the solve when the
// pilot would store more than trajectory.max_knots at K.
std::vector<double> pilot_field(const AutoKnotsInput& in, const Screen& ps, std::uint64_t pilot, int K,
                                const KnotsChoice& k) {
  if (!in.start.empty()) {
    const auto b = predict_budget(in.plugin, {in.start[pilot]}, in.screen, K, in.tau_max);
    if (b.max_knots > double(in.campaign.trajectory.max_knots)) {
      char why[200];
      std::snprintf(why, sizeof why, "at %d knots per period pilot electron %llu would store %.3g knots, over "
                    "trajectory.max_knots = %lld", K, (unsigned long long)pilot, b.max_knots,
                    (long long)in.campaign.trajectory.max_knots);
      refuse_auto_knots(k, why);
    }
  }
  SolveOptions opt = in.solve;
  opt.knots_per_period = K;
  return host_reference_field(ps, Mode::Total, solve_trajectories(in.solver, pilot, 1, opt));
}

// The ladder: K = 8, 16, … until the worst pilot's estimate meets the tolerance (the fields at 2K
// are kept as the next step's coarse ones: one solve and one host field per pilot and step).
KnotsChoice choose_knots(const AutoKnotsInput& in) {
  KnotsChoice k;
  k.automatic = true;
  k.tolerance = in.campaign.trajectory.tolerance;
  k.pilots = auto_pilots(in.init);
  const Screen ps = pilot_screen(in.screen);
  std::vector<std::vector<double>> coarse;
  for (const std::uint64_t p : k.pilots) coarse.push_back(pilot_field(in, ps, p, kAutoFirst, k));
  int stalled = 0;
  for (int K = kAutoFirst; K <= kAutoLast; K *= 2) {
    double worst = 0;
    for (std::size_t i = 0; i < k.pilots.size(); ++i) {
      std::vector<double> fine = pilot_field(in, ps, k.pilots[i], 2 * K, k);
      worst = std::max(worst, field_difference(ps, coarse[i], fine));
      coarse[i] = std::move(fine);
    }
    const double before = k.estimates.empty() ? INFINITY : k.estimates.back().second;
    k.estimates.emplace_back(K, worst);
    if (worst <= k.tolerance) {
      k.knots_per_period = K;
      return k;
    }
    stalled = worst > 0.5 * before ? stalled + 1 : 0;
    if (stalled == kStalledSteps) {
      char why[160];
      std::snprintf(why, sizeof why, "the estimate stopped falling near %.2g (the splines' floor for this campaign)",
                    std::min(worst, before));
      refuse_auto_knots(k, why);
    }
  }
  refuse_auto_knots(k, "2048 knots per period, against 4096 (the key's largest), is the finest pair");
}

}  // namespace

struct PreparedCell::Impl {
  std::unique_ptr<Scenario> plugin_scenario;
  ExtendedStart ext;
  std::optional<Scenario> extended;
  Normalization units;
  Screen screen;
  Mode mode = Mode::Total;
  std::uint64_t n = 0;
  SolveOptions solve;
  Budget budget;
  KnotsChoice knots;
  BurstSpec burst;
  std::vector<std::string> warnings;
  double transverse_rms = 0;
};

PreparedCell::PreparedCell(const Campaign& campaign, const PluginRegistry& plugins)
    : impl_(std::make_unique<Impl>()) {
  auto& I = *impl_;
  I.plugin_scenario = std::make_unique<Scenario>(plugins.get(campaign.run.scenario), campaign);
  const Scenario& scenario = *I.plugin_scenario;
  I.units = Normalization::from_wavelength(campaign.laser.wavelength);
  I.screen = make_screen(campaign.screen, I.units);
  I.mode = campaign.run.mode;
  I.n = scenario.electron_count();
  if (I.n == 0) throw ConfigError("EDM-RUN-002", "[electrons] the scenario produced no electrons");

  // The initial states are known before any solve, so the window is fixed first; tracks carry
  // their own start and end, so only integrated trajectories are extended.
  std::vector<std::array<double, 8>> init(I.n);
  for (std::uint64_t i = 0; i < I.n; ++i) scenario.initial_state(i, init[i].data());
  I.burst = burst_spec(campaign, scenario, I.units);
  I.screen.t0_rel = window_start(campaign, scenario, I.screen, I.units, init, I.burst, I.warnings);
  double r2 = 0;
  for (const auto& y : init) r2 += y[1] * y[1] + y[2] * y[2];
  I.transverse_rms = std::sqrt(r2 / double(I.n));
  I.ext = ExtendedStart{I.plugin_scenario.get(), init};
  // At infinity (an angular screen at distance "infinity") a free electron's light is zero: R·E
  // keeps only the acceleration term. So the free flight before the scenario's start and after the
  // pulse's end adds nothing to the far field, and a trajectory spans the interaction alone; the
  // window's samples outside its light stay zero, exactly (check_coverage counts them covered).
  // On a flat screen or a sphere at finite distance the free electron's own (velocity) field is
  // there, so every trajectory is extended until its light covers the whole window.
  const bool far = I.screen.far_field();
  double tau_max = 0;
  if (!scenario.has_tracks()) {
    const double max_shift = far ? 0.0 : extend_starts(I.ext, campaign, I.screen, I.units);
    edm_scenario_v1 table = extended_table(I.ext);
    table.tau_max += max_shift;
    tau_max = table.tau_max;
    I.extended.emplace(table);
  }

  // One γ-trace grid for the whole ensemble (from electron 0), so batches and ranks merge exactly.
  const double h0 = init[0][4] - scenario.laser_direction() * init[0][7];
  // Fine enough to catch γ's peak within a period (trajectory.gamma_trace_points; test_bounds checks
  // the maximum against the exact one at a0 = 50).
  I.solve.gamma_trace_dtau = 2.0 * std::numbers::pi / (double(campaign.trajectory.gamma_trace_points) * h0);
  I.solve.rtol = campaign.trajectory.rtol;
  I.solve.atol = campaign.trajectory.atol;
  const Screen* sp = &I.screen;
  const double t_last = I.screen.t_rel(I.screen.samples - 1);
  if (!far) I.solve.observe_done = [sp, t_last](const double y[8]) { return sp->earliest_arrival_rel(y) > t_last; };

  I.knots.knots_per_period = campaign.trajectory.knots_per_period;
  const std::vector<std::array<double, 8>> no_starts;  // tracks: no extended starts, no knot budget
  if (campaign.trajectory.knots_per_period == -1) {  // "auto"
    I.knots = choose_knots({campaign, scenario, solver_scenario(), I.solve, I.screen, init,
                            scenario.has_tracks() ? no_starts : I.ext.start, tau_max});
    // Under mpirun every rank chose from its own pilot solves; on other CPUs (another libm path) an
    // estimate next to the tolerance could tip one rank to another K, and the ranks' splines would
    // differ. Every rank takes the finest choice, which meets the tolerance too (the estimate falls
    // with K), so the ranks solve the same splines.
    const auto [lo, hi] = agree_range(current_ranks(), std::uint64_t(I.knots.knots_per_period));
    if (lo != hi) I.knots.knots_per_period = int(hi);
  }
  I.solve.knots_per_period = I.knots.knots_per_period;
  if (!scenario.has_tracks())
    I.budget = predict_budget(scenario, I.ext.start, I.screen, I.knots.knots_per_period, tau_max);
}

void detail::summarize_cell(const PreparedCell& cell, RunSummary& S) {
  S.electrons = cell.electrons();
  S.screen = cell.screen();
  S.knots = cell.knots();
  S.slots = cell.electrons() * cell.screen().slots_per_electron();
}

PreparedCell::~PreparedCell() = default;
const Scenario& PreparedCell::plugin_scenario() const { return *impl_->plugin_scenario; }
const Scenario& PreparedCell::solver_scenario() const {
  return impl_->extended ? *impl_->extended : *impl_->plugin_scenario;
}
const Normalization& PreparedCell::units() const { return impl_->units; }
const Screen& PreparedCell::screen() const { return impl_->screen; }
Mode PreparedCell::mode() const { return impl_->mode; }
std::uint64_t PreparedCell::electrons() const { return impl_->n; }
const SolveOptions& PreparedCell::solve_options() const { return impl_->solve; }
const KnotsChoice& PreparedCell::knots() const { return impl_->knots; }
double PreparedCell::transverse_rms() const { return impl_->transverse_rms; }
SplineBatch PreparedCell::solve(std::uint64_t first, std::uint64_t count, const std::atomic<bool>* stop) const {
  SolveOptions options = impl_->solve;
  options.stop = stop;
  SplineBatch batch = solve_trajectories(solver_scenario(), first, count, options);
  check_clear_of_screen(impl_->screen, batch, impl_->units);  // before any device time is spent on it
  return batch;
}
const PreparedCell::Budget& PreparedCell::budget() const { return impl_->budget; }
const BurstSpec& PreparedCell::burst() const { return impl_->burst; }
const std::vector<std::string>& PreparedCell::warnings() const { return impl_->warnings; }
SplineBatch PreparedCell::solve(std::uint64_t first, std::uint64_t count) const { return solve(first, count, nullptr); }

}  // namespace edm
