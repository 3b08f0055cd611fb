// The run driver: one cell from a validated campaign to field.h5 + run.toml (DESIGN §1, §4).
// Batching (electron_batch = B): solve B trajectories, enqueue their launches, free their splines,
// repeat; the device buffers persist, so host memory does not grow with N. With batch_overlap the
// solve of batch k+1 runs while the device works on batch k (launches are asynchronous); a watcher
// thread records when the device went idle, so [timing] trajectories_overlapped is measured, not
// guessed. On one device the launch order is the electron order whatever B is, so a batched run is
// bit-identical to the single pass.
#include "edm/run.hpp"

#include <malloc.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <fstream>
#include <optional>
#include <random>
#include <sstream>
#include <thread>

#include "edm/accumulator.hpp"
#include "edm/device.hpp"
#include "edm/error.hpp"
#include "edm/laser.hpp"
#include "edm/manifest.hpp"
#include "edm/trajectory.hpp"
#include "edm/writer.hpp"

namespace edm {
namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}
double seconds_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

std::uint64_t mem_available() {
  std::ifstream f("/proc/meminfo");
  std::string key;
  std::uint64_t kb = 0;
  std::string unit;
  while (f >> key >> kb >> unit)
    if (key == "MemAvailable:") return kb * 1024;
  return 0;
}

// Electrons [first, first + count) of a solved batch as a batch of their own (multi-device shards).
SplineBatch slice(const SplineBatch& b, std::size_t first, std::size_t count) {
  SplineBatch out;
  if (count == 0) return out;
  const std::uint64_t begin = b.electrons[first].offset;
  const auto& last = b.electrons[first + count - 1];
  const std::uint64_t end = last.offset + std::uint64_t(last.n_intervals) * kCoefPerInterval;
  out.coef.assign(b.coef.begin() + begin, b.coef.begin() + end);
  for (std::size_t i = first; i < first + count; ++i) {
    ElectronSpline e = b.electrons[i];
    e.offset -= begin;
    out.electrons.push_back(e);
  }
  return out;
}

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
    return static_cast<const ExtendedStart*>(self)->start.size() + 0ul;
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

std::uint64_t host_peak_rss() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::stoull(line.substr(6)) * 1024;
  return 0;
}

std::string make_run_id() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%dT%H%M%SZ", std::gmtime(&t));
  std::random_device rd;
  std::ostringstream os;
  os << buf << "-" << std::hex << (rd() & 0xffffff);
  return os.str();
}

RunSummary run_campaign(const Campaign& campaign, const PluginRegistry& plugins,
                        const RunOptions& options, RunObserver& obs) {
  const auto t_start = Clock::now();
  RunSummary S;
  S.run_id = make_run_id();

  // 1. Scenario, units, screen — every input problem surfaces before any device time is spent.
  const Plugin& plugin = plugins.get(campaign.run.scenario);
  Scenario plugin_scenario(plugin, campaign);
  const Scenario& scenario = plugin_scenario;
  const Normalization units = Normalization::from_wavelength(campaign.laser.wavelength);
  Screen screen = make_screen(campaign.screen, units);
  const Mode mode = campaign.run.mode == "split" ? Mode::Split : Mode::Total;
  const std::uint64_t N = scenario.electron_count();
  if (N == 0) throw ConfigError("EDM-RUN-002", "[electrons] the scenario produced no electrons");
  S.electrons = N;

  S.folder = campaign.run.output;
  S.field_file = S.folder / "field.h5";
  S.manifest_file = S.folder / "run.toml";
  if (!options.dry_run && !options.overwrite &&
      (std::filesystem::exists(S.field_file) || std::filesystem::exists(S.manifest_file)))
    throw ConfigError("EDM-RUN-001", "run folder " + S.folder.string() +
                                         " already holds results; pass --overwrite or choose another "
                                         "[run] output");

  // 2. Devices.
  obs.phase("devices", campaign.accumulator.devices);
  const auto infos = select_devices(campaign.accumulator.devices);
  for (const auto& d : infos)
    S.devices.push_back(std::to_string(d.index) + ": " + d.name + " (" + d.platform + ")");

  // 3. Window. The initial states are known before any solve, so the window is fixed first:
  // auto puts sample 0 at the first light of the ensemble's initial states on the screen (the
  // pixel nearest an electron), so the window opens just before the interaction's light arrives.
  // Each electron is then started early enough, along its free straight line, that its light
  // reaches even the farthest corner before sample 0 (the corner-anchored coverage condition holds
  // by construction), and integrated until its light reaches every pixel after the last sample.
  std::vector<std::array<double, 8>> init(N);
  for (std::uint64_t i = 0; i < N; ++i) scenario.initial_state(i, init[i].data());
  if (campaign.screen.window == "auto") {
    double first = INFINITY;
    for (const auto& y : init) first = std::min(first, screen.earliest_arrival_rel(y.data()));
    screen.t0_rel = first;
  } else {
    screen.t0_rel = campaign.screen.t_start / units.time() - std::abs(screen.z);
  }
  ExtendedStart ext{&plugin_scenario, init};
  std::optional<Scenario> extended;
  if (!plugin_scenario.has_tracks()) {
    double max_shift = 0;
    for (auto& y : ext.start) {
      const double d = backward_shift(screen, y.data(), screen.t0_rel);
      for (int c = 0; c < 4; ++c) y[c] -= d * y[4 + c];
      max_shift = std::max(max_shift, d);
    }
    edm_scenario_v1 table = extended_table(ext);
    table.tau_max += max_shift;
    extended.emplace(table);
  }
  const Scenario& solver_scenario = extended ? *extended : plugin_scenario;
  S.screen = screen;
  S.slots = N * screen.slots_per_electron();
  const double t_last = screen.t_rel(screen.samples - 1);

  SolveOptions solve;
  solve.knots_per_period = campaign.trajectory.knots_per_period;
  solve.rtol = campaign.trajectory.rtol;
  solve.atol = campaign.trajectory.atol;
  solve.observe_done = [&screen, t_last](const double y[8]) {
    return screen.earliest_arrival_rel(y) > t_last;
  };

  KernelOptions kopt;
  kopt.newton_iters = campaign.accumulator.newton_iters;
  kopt.coef_reuse = campaign.accumulator.coef_reuse;
  kopt.sample_chunks = campaign.accumulator.sample_chunks;
  kopt.work_group = campaign.accumulator.work_group;

  // 4. Batch size. "auto" measures one electron's spline bytes and fits B into the host budget.
  std::uint64_t B = campaign.accumulator.electron_batch > 0 ? std::uint64_t(campaign.accumulator.electron_batch) : N;
  if (campaign.accumulator.electron_batch < 0) {
    SplineBatch probe = solve_trajectories(solver_scenario, 0, 1, solve);
    const double bpe = double(probe.bytes()) * 1.25;
    const std::uint64_t budget = options.max_host_memory ? options.max_host_memory : mem_available() / 2;
    B = std::clamp<std::uint64_t>(std::uint64_t(double(budget) / std::max(bpe, 1.0)), 1, N);
    obs.phase("batch", "electron_batch = auto → " + std::to_string(B) + " (budget " +
                           std::to_string(budget >> 20) + " MiB)");
  }
  B = std::min(B, N);
  S.electron_batch = campaign.accumulator.electron_batch == 0 ? 0 : B;
  S.batches = (N + B - 1) / B;

  // 5. Accumulators (the memory guard runs in their constructors: buffers must fit each device).
  std::vector<FieldAccumulator> accs;
  for (const auto& info : infos) accs.emplace_back(open_device(info), screen, mode, kopt);
  S.device_buffer_bytes = accs.front().device_buffer_bytes();
  const std::uint64_t slab_bytes = std::uint64_t(screen.nx) * screen.samples * sizeof(double) * 64;
  if (options.dry_run) {
    S.host_estimate_bytes = double(slab_bytes);
    return S;
  }

  std::filesystem::create_directories(S.folder);
  FieldFileInfo finfo{S.run_id, EDM_VERSION, campaign.run.scenario, N, mode};
  FieldWriter writer(S.field_file, screen, units, finfo);

  // 6. The batch loop.
  GammaTrace gamma;
  Clock::time_point t_first_launch{};
  bool launched = false;
  std::thread watcher;
  Clock::time_point device_idle_at{};
  auto wait_watcher = [&] {
    if (watcher.joinable()) watcher.join();
  };
  for (std::uint64_t b0 = 0, k = 0; b0 < N; b0 += B, ++k) {
    const std::uint64_t count = std::min(B, N - b0);
    obs.phase("trajectories", "batch " + std::to_string(k + 1) + "/" + std::to_string(S.batches) +
                                  ": electrons " + std::to_string(b0) + "–" + std::to_string(b0 + count - 1));
    const auto t0 = Clock::now();
    SplineBatch batch = solve_trajectories(solver_scenario, b0, count, solve);
    const auto t1 = Clock::now();
    S.timing.trajectories += seconds_between(t0, t1);
    // The device was busy with the previous batch until device_idle_at (measured by the watcher).
    wait_watcher();
    if (k > 0 && campaign.accumulator.batch_overlap)
      S.timing.trajectories_overlapped +=
          std::max(0.0, seconds_between(t0, std::min(t1, device_idle_at)));

    // Coverage is per electron, so batch records concatenate (DESIGN §2).
    CoverageReport cov = check_coverage(screen, batch);
    for (auto& r : cov.records) S.coverage.records.push_back(r);
    if (cov.clipped_electrons() > 0 && !campaign.screen.allow_clipping) {
      const auto& r = *std::find_if(cov.records.begin(), cov.records.end(),
                                    [](const CoverageRecord& r) { return r.clipped(); });
      throw PhysicsError("EDM-WIN-001",
                         "the observer window is not covered by electron " + std::to_string(r.electron) +
                             " (margin at start " + std::to_string(r.margin_start * units.time()) +
                             " s, at end " + std::to_string(r.margin_end * units.time()) +
                             " s): use [screen] window = \"auto\", fewer samples, or allow_clipping = true");
    }
    gamma.merge(batch.gamma);
    S.spline_bytes_per_electron = std::max<std::uint64_t>(S.spline_bytes_per_electron, batch.bytes() / count);
    for (const auto& e : batch.electrons) S.knots_total += e.n_intervals + 1;

    if (!launched) {
      t_first_launch = Clock::now();
      launched = true;
    }
    if (accs.size() == 1) {
      accs[0].accumulate(batch);
    } else {
      // Shard the batch over the devices in contiguous blocks of electrons.
      const std::size_t D = accs.size();
      for (std::size_t d = 0; d < D; ++d) {
        const std::size_t lo = count * d / D, hi = count * (d + 1) / D;
        if (hi > lo) accs[d].accumulate(slice(batch, lo, hi - lo));
      }
    }
    batch.release();  // uploads are complete: the host splines go back to the OS now
    if (campaign.accumulator.batch_overlap) {
      watcher = std::thread([&accs, &device_idle_at] {
        for (auto& a : accs) a.drain();
        device_idle_at = Clock::now();
      });
    } else {
      for (auto& a : accs) a.drain();
    }
    obs.batch_done(b0 + count, N, seconds_since(t_start));
  }
  wait_watcher();

  // 7. Finish: drain, reduce across devices, download in slabs straight into field.h5.
  obs.phase("download", "");
  if (accs.size() == 1) {
    accs[0].finish([&](int b, int c, int y0, int y1, const double* d) { writer.write_slab(b, c, y0, y1, d); });
  } else {
    // Host-side reduction slab by slab: device d's slab is summed into device 0's in a fixed order.
    const auto tr0 = Clock::now();
    std::vector<std::vector<double>> partial;
    std::vector<std::array<int, 4>> keys;
    for (std::size_t d = 1; d < accs.size(); ++d) {
      std::size_t n = 0;
      accs[d].finish([&](int b, int c, int y0, int y1, const double* data) {
        const std::size_t len = std::size_t(y1 - y0) * screen.nx * screen.samples;
        if (d == 1) {
          partial.emplace_back(data, data + len);
          keys.push_back({b, c, y0, y1});
        } else {
          for (std::size_t i = 0; i < len; ++i) partial[n][i] += data[i];
        }
        ++n;
      });
    }
    std::size_t n = 0;
    accs[0].finish([&](int b, int c, int y0, int y1, const double* data) {
      const std::size_t len = std::size_t(y1 - y0) * screen.nx * screen.samples;
      std::vector<double> sum(data, data + len);
      for (std::size_t i = 0; i < len; ++i) sum[i] += partial[n][i];
      writer.write_slab(b, c, y0, y1, sum.data());
      ++n;
    });
    S.timing.reduce = seconds_since(tr0);
  }
  S.timing.field = seconds_since(t_first_launch);
  for (auto& a : accs) S.timing.kernel += a.timing().kernel_seconds;

  writer.write_gamma_trace(gamma, units);
  writer.set_attribute("window_clipped_electrons", double(S.coverage.clipped_electrons()));
  writer.commit();
  S.timing.total = seconds_since(t_start);
  S.host_peak_rss = host_peak_rss();
  S.host_estimate_bytes = double(B) * double(S.spline_bytes_per_electron) + double(slab_bytes);

  ManifestExtras x;
  x.a0_effective = make_laser(campaign.laser, units, scenario.laser_direction())->a0();
  for (std::size_t i = 0; i < S.devices.size(); ++i) x.device_names += (i ? "; " : "") + S.devices[i];
  x.sample_chunks = accs.front().options().sample_chunks;
  x.work_group = accs.front().options().work_group;
  write_manifest(S.manifest_file, make_manifest(campaign, S, units, x));
  return S;
}

}  // namespace edm
