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
#include <cstdio>
#include <fstream>
#include <numbers>
#include <optional>
#include <random>
#include <sstream>
#include <thread>

#include "edm/accumulator.hpp"
#include "edm/checkpoint.hpp"
#include "edm/device.hpp"
#include "edm/device_rate.hpp"
#include "edm/error.hpp"
#include "edm/flops.hpp"
#include "edm/laser.hpp"
#include "edm/manifest.hpp"
#include "edm/trajectory.hpp"
#include "edm/writer.hpp"
#include "edm/sharded.hpp"
#include "run/ranks.hpp"
#include "run/sharded_cubes.hpp"

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

struct PreparedCell::Impl {
  std::unique_ptr<Scenario> plugin_scenario;
  ExtendedStart ext;
  std::optional<Scenario> extended;
  Normalization units;
  Screen screen;
  Mode mode = Mode::Total;
  std::uint64_t n = 0;
  SolveOptions solve;
};

PreparedCell::PreparedCell(const Campaign& campaign, const PluginRegistry& plugins)
    : impl_(std::make_unique<Impl>()) {
  auto& I = *impl_;
  const Plugin& plugin = plugins.get(campaign.run.scenario);
  I.plugin_scenario = std::make_unique<Scenario>(plugin, campaign);
  const Scenario& scenario = *I.plugin_scenario;
  I.units = Normalization::from_wavelength(campaign.laser.wavelength);
  I.screen = make_screen(campaign.screen, I.units);
  I.mode = campaign.run.mode == "split" ? Mode::Split : Mode::Total;
  I.n = scenario.electron_count();
  if (I.n == 0) throw ConfigError("EDM-RUN-002", "[electrons] the scenario produced no electrons");
  Screen& screen = I.screen;
  const auto N = I.n;

  // Window. The initial states are known before any solve, so the window is fixed first: auto
  // centres it on the first light, at the pixel nearest an electron, of the electrons meeting the
  // envelope peak, so the interaction is in view whatever the Doppler compression (Thomson from
  // rest or inverse Thomson). Each electron is then started early enough, along its free straight
  // line, that its light reaches even the farthest corner before sample 0 (the corner-anchored
  // coverage condition holds by construction), and integrated until its light reaches every pixel
  // after the last sample.
  std::vector<std::array<double, 8>> init(N);
  for (std::uint64_t i = 0; i < N; ++i) scenario.initial_state(i, init[i].data());
  if (campaign.screen.window == "auto") {
    // The event where each electron, on its free straight line, meets the envelope peak (ξ = 0):
    // the window is centred on the first arrival of that light on the screen.
    const int sdir = scenario.laser_direction();
    double first = INFINITY;
    for (const auto& y : init) {
      const double xi = y[0] - sdir * y[3], h = y[4] - sdir * y[7];
      double ev[8];
      for (int c = 0; c < 8; ++c) ev[c] = y[c];
      for (int c = 0; c < 4; ++c) ev[c] -= xi / h * y[4 + c];
      first = std::min(first, screen.earliest_arrival_rel(ev));
    }
    screen.t0_rel = first - 0.5 * screen.dt * (screen.samples - 1);
  } else {
    screen.t0_rel = campaign.screen.t_start / I.units.time() - std::abs(screen.z);
  }
  I.ext = ExtendedStart{I.plugin_scenario.get(), init};
  if (!scenario.has_tracks()) {
    double max_shift = 0;
    for (std::uint64_t i = 0; i < N; ++i) {
      auto& y = I.ext.start[i];
      const double d = backward_shift(screen, y.data(), screen.t0_rel);
      // A window opening far before the interaction needs a long free flight, stored knot by knot:
      // refuse one that would cost more than 1e8 knots (38 GB) for a single electron.
      const double h = y[4] - scenario.laser_direction() * y[7];
      const double knots = d / (2.0 * std::numbers::pi / h / campaign.trajectory.knots_per_period);
      if (knots > 1e8) {
        char msg[400];
        std::snprintf(msg, sizeof msg,
                      "[screen] t_start / samples: the observer window opens so early that electron %llu "
                      "would need %.3g extra knots (%.3g s of proper time) of free flight before the "
                      "interaction; choose a later t_start, fewer samples or window = \"auto\"",
                      (unsigned long long)i, knots, d * I.units.time());
        throw ConfigError("EDM-WIN-002", msg);
      }
      for (int c = 0; c < 4; ++c) y[c] -= d * y[4 + c];
      max_shift = std::max(max_shift, d);
    }
    edm_scenario_v1 table = extended_table(I.ext);
    table.tau_max += max_shift;
    I.extended.emplace(table);
  }

  const double t_last = screen.t_rel(screen.samples - 1);
  I.solve.knots_per_period = campaign.trajectory.knots_per_period;
  // One γ-trace grid for the whole ensemble (from electron 0), so batches and ranks merge exactly.
  {
    const auto& y0 = init[0];
    const double h0 = y0[4] - scenario.laser_direction() * y0[7];
    I.solve.gamma_trace_dtau = 2.0 * std::numbers::pi / (4.0 * h0);
  }
  I.solve.rtol = campaign.trajectory.rtol;
  I.solve.atol = campaign.trajectory.atol;
  const Screen* sp = &I.screen;
  I.solve.observe_done = [sp, t_last](const double y[8]) { return sp->earliest_arrival_rel(y) > t_last; };
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
SplineBatch PreparedCell::solve(std::uint64_t first, std::uint64_t count) const {
  return solve_trajectories(solver_scenario(), first, count, impl_->solve);
}

KernelOptions kernel_options(const AccumulatorSection& a) {
  KernelOptions k;
  k.newton_iters = a.newton_iters;
  k.coef_reuse = a.coef_reuse;
  k.sample_chunks = a.sample_chunks;
  k.work_group = a.work_group;
  k.electron_group = a.electron_group;
  k.tile_width = a.tile_width;
  k.pixel_order = parse_pixel_order(a.pixel_order);
  return k;
}

RunSummary run_campaign(const Campaign& campaign, const PluginRegistry& plugins,
                        const RunOptions& options, RunObserver& obs) {
  const auto t_start = Clock::now();
  RunSummary S;
  S.run_id = make_run_id();

  // 0. The memory guard first: a cube the devices cannot hold is refused before anything else.
  {
    const Screen bare = make_screen(campaign.screen, Normalization::from_wavelength(campaign.laser.wavelength));
    for (const auto& d : select_devices(campaign.accumulator.devices))
      check_device_memory(d, bare, campaign.run.mode == "split" ? Mode::Split : Mode::Total);
  }
  // 1.–3. Scenario, units, screen, window, solver options (PreparedCell): every input problem
  // surfaces before any device time is spent.
  PreparedCell cell(campaign, plugins);
  const Scenario& scenario = cell.plugin_scenario();
  const Scenario& solver_scenario = cell.solver_scenario();
  const Normalization units = cell.units();
  const Screen& screen = cell.screen();
  const Mode mode = cell.mode();
  const std::uint64_t N = cell.electrons();
  const SolveOptions& solve = cell.solve_options();
  const double t_last = screen.t_rel(screen.samples - 1);
  S.electrons = N;
  S.screen = screen;
  S.slots = N * screen.slots_per_electron();

  S.folder = campaign.run.output;
  S.field_file = S.folder / "field.h5";
  S.manifest_file = S.folder / "run.toml";
  if (!options.dry_run && !options.overwrite &&
      (std::filesystem::exists(S.field_file) || std::filesystem::exists(S.manifest_file) ||
       (!options.resume && std::filesystem::exists(checkpoint_path(S.folder)))))
    throw ConfigError("EDM-RUN-001", "run folder " + S.folder.string() +
                                         " already holds results (or a checkpoint: `edm resume` it); pass --overwrite or "
                                         "choose another [run] output");

  const auto infos = select_devices(campaign.accumulator.devices);
  for (const auto& d : infos)
    S.devices.push_back(std::to_string(d.index) + ": " + d.name + " (" + d.platform + ")");
  {
    std::string names;
    for (const auto& d : S.devices) names += (names.empty() ? "" : "; ") + d;
    obs.phase("devices", names);
  }

  const KernelOptions kopt = kernel_options(campaign.accumulator);

  // 4. Ranks (MPI builds under mpirun): each rank takes a contiguous block of the ensemble.
  // Electrons, seeds and trajectories are global, so they do not depend on the rank count.
  const Ranks ranks = current_ranks();
  S.rank = ranks.rank;
  S.ranks = ranks.size;
  const std::uint64_t r_first = N * std::uint64_t(ranks.rank) / std::uint64_t(ranks.size);
  const std::uint64_t r_end = N * std::uint64_t(ranks.rank + 1) / std::uint64_t(ranks.size);
  const std::uint64_t N_local = r_end - r_first;

  // 5. Accumulators first: the memory guard (buffers must fit each device's global memory and
  // maximum allocation) runs in their constructors, before any trajectory is solved.
  std::vector<DeviceInfo> mine = infos;
  if (ranks.size > 1 && campaign.accumulator.devices == "auto") {
    // One node, several ranks: spread them over the FP64 devices present.
    const auto every = select_devices("all");
    mine = {every[std::size_t(ranks.rank) % every.size()]};
  }
  ShardedFieldAccumulator acc(mine, screen, mode, kopt);
  S.device_buffer_bytes = acc.device_buffer_bytes();
  const std::uint64_t row_bytes = std::uint64_t(screen.nx) * screen.samples * sizeof(double);
  const int rows_per_slab = int(std::clamp<std::uint64_t>((64ull << 20) / row_bytes, 1, std::uint64_t(screen.ny)));
  const std::uint64_t slab_bytes = row_bytes * std::uint64_t(rows_per_slab);

  // 6. Batch size. "auto" measures one electron's spline bytes and fits B into the host budget.
  std::uint64_t B = campaign.accumulator.electron_batch > 0 ? std::uint64_t(campaign.accumulator.electron_batch) : N;
  if (campaign.accumulator.electron_batch < 0) {
    SplineBatch probe = cell.solve(0, 1);
    const double bpe = double(probe.bytes()) * 1.25;
    const std::uint64_t avail = options.max_host_memory ? options.max_host_memory : mem_available() / 2;
    const std::uint64_t budget = avail > 2 * slab_bytes ? avail - 2 * slab_bytes : avail / 2;
    B = std::clamp<std::uint64_t>(std::uint64_t(double(budget) / std::max(bpe, 1.0)), 1, N);
    obs.phase("batch", "electron_batch = auto → " + std::to_string(B) + " (host budget " +
                           std::to_string(budget >> 20) + " MiB)");
  }
  B = std::max<std::uint64_t>(1, std::min(B, N));
  S.electron_batch = campaign.accumulator.electron_batch == 0 ? 0 : B;
  S.batches = N_local ? (N_local + B - 1) / B : 0;
  if (options.dry_run) {
    // Host estimate from one solved trajectory (CPU only; nothing runs on the device, nothing is
    // written): the batch's splines or the download staging, whichever is larger.
    SplineBatch one = cell.solve(0, 1);
    S.spline_bytes_per_electron = one.bytes();
    S.host_estimate_bytes = std::max(double(B) * double(one.bytes()), 2.0 * double(slab_bytes));
    double rate = 0;
    for (const auto& d : mine) rate += cached_device_rate(d);
    S.time_estimate = rate > 0 ? double(N_local) * double(screen.slots_per_electron()) / rate : 0;
    return S;
  }

  // Resume: the cube, the γ trace, coverage and timings so far come back from the checkpoint.
  const auto ckpt_file = checkpoint_path(S.folder);
  GammaTrace gamma;
  std::uint64_t start = r_first, k0 = 0;
  if (options.resume) {
    if (ranks.size > 1) throw ConfigError("EDM-CKP-010", "edm resume runs in one process (no mpirun)");
    const CheckpointState st = read_checkpoint_state(ckpt_file);
    check_resume_state(st, N, ckpt_file);
    ShardedCubes cubes(acc);
    load_checkpoint_cube(ckpt_file, cubes);
    S.run_id = st.run_id;
    start = st.next_electron;
    k0 = st.batches_done;
    gamma = st.gamma;
    S.coverage.records = st.coverage;
    S.timing.trajectories = st.trajectories;
    S.timing.trajectories_overlapped = st.trajectories_overlapped;
    S.knots_total = st.knots_total;
    S.spline_bytes_per_electron = st.spline_bytes_per_electron;
    S.resumed_from = start;
    obs.phase("resume", "from " + ckpt_file.string() + ": " + std::to_string(start) + " of " +
                            std::to_string(N) + " electrons already summed");
  }
  double kernel_before = options.resume ? read_checkpoint_state(ckpt_file).kernel : 0.0;
  // Checkpoints only in one process (MPI ranks would each need their own).
  std::int64_t K = ranks.size > 1 ? -1 : options.checkpoint_every;
  const std::string campaign_text = [&] {
    std::ostringstream os;
    os << campaign.to_toml();
    return os.str();
  }();
  auto save_checkpoint = [&](std::uint64_t next, std::uint64_t batches_done) {
    CheckpointState st;
    st.run_id = S.run_id;
    st.campaign_text = campaign_text;
    st.next_electron = next;
    st.batches_done = batches_done;
    st.trajectories = S.timing.trajectories;
    st.trajectories_overlapped = S.timing.trajectories_overlapped;
    st.kernel = kernel_before + acc.timing().kernel_seconds;
    st.knots_total = S.knots_total;
    st.spline_bytes_per_electron = S.spline_bytes_per_electron;
    st.gamma = gamma;
    st.coverage = S.coverage.records;
    ShardedCubes cubes(acc);
    write_checkpoint(ckpt_file, st, cubes);
    ++S.checkpoints_written;
  };

  std::optional<FieldWriter> writer;
  if (ranks.rank == 0) {
    // Not the throwing overload: a filesystem_error would reach the app as an "internal error"
    // (exit 1); an output below a regular file or in a read-only place is an I/O error naming the path.
    std::error_code ec;
    std::filesystem::create_directories(S.folder, ec);
    if (ec) throw IoError("EDM-IO-030", "cannot create the run folder " + S.folder.string() + ": " + ec.message());
    writer.emplace(S.field_file, screen, units, FieldFileInfo{S.run_id, EDM_VERSION, campaign.run.scenario, N, mode});
  }

  // 7. The batch loop.
  Clock::time_point t_first_launch = Clock::now();
  bool launched = false;
  std::thread watcher;
  Clock::time_point device_idle_at{};
  auto wait_watcher = [&] {
    if (watcher.joinable()) watcher.join();
  };
  for (std::uint64_t b0 = start, k = k0; b0 < r_end; b0 += B, ++k) {
    const std::uint64_t count = std::min(B, r_end - b0);
    obs.phase("trajectories", "batch " + std::to_string(k + 1) + "/" + std::to_string(S.batches) +
                                  ": electrons " + std::to_string(b0) + "–" + std::to_string(b0 + count - 1));
    const auto t0 = Clock::now();
    SplineBatch batch;
    try {
      batch = cell.solve(b0, count);
    } catch (const PhysicsError& e) {
      // The integration runs until the electrons' light has passed the last sample; a window
      // that ends absurdly late turns into a runaway integration, which is a campaign problem.
      if (campaign.screen.window != "auto" && e.id() == "EDM-TRJ-011")
        throw ConfigError("EDM-WIN-003", std::string("[screen] t_start / samples: the observer window ends at ") +
                                             std::to_string((t_last + std::abs(screen.z)) * units.time()) +
                                             " s, too late for the trajectories to reach (" + e.what() + ")");
      throw;
    }
    const auto t1 = Clock::now();
    S.timing.trajectories += seconds_between(t0, t1);
    // The device was busy with the previous batch until device_idle_at (measured by the watcher).
    wait_watcher();
    if (k > k0 && campaign.accumulator.batch_overlap)
      S.timing.trajectories_overlapped += std::max(0.0, seconds_between(t0, std::min(t1, device_idle_at)));

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
    acc.accumulate(batch);
    batch.release();  // uploads are complete: the host splines go back to the OS now
    if (campaign.accumulator.batch_overlap) {
      watcher = std::thread([&acc, &device_idle_at] {
        acc.drain();
        device_idle_at = Clock::now();
      });
    } else {
      acc.drain();
    }
    obs.batch_done(b0 + count - r_first, N_local, seconds_since(t_start));

    // Checkpoints: every K batches, and on a stop request (then leave cleanly).
    const bool stop = options.stop && options.stop->load();
    if (K == 0 && b0 + count < r_end) {
      // Automatic: decide once from the measured rate (not a guess): on for runs predicted to
      // take over 10 minutes, about every 5 minutes.
      const double elapsed = seconds_since(t_start);
      const double done = double(b0 + count - start);
      const double predicted = elapsed / done * double(r_end - start);
      if (k > k0 && predicted > 600.0) {
        K = std::max<std::int64_t>(1, std::int64_t(300.0 / (elapsed / double(k - k0 + 1))));
        obs.phase("checkpoint", "run predicted to take " + std::to_string(int(predicted)) +
                                    " s: checkpoint every " + std::to_string(K) + " batches");
      } else if (k > k0) {
        K = -1;
      }
    }
    if (b0 + count < r_end && (stop || (K > 0 && (k + 1) % std::uint64_t(K) == 0))) {
      wait_watcher();
      save_checkpoint(b0 + count, k + 1);
      obs.phase("checkpoint", ckpt_file.string() + ": " + std::to_string(b0 + count) + " electrons");
      if (stop)
        throw Interrupted("EDM-RUN-010", "stopped on request after " + std::to_string(b0 + count) + " of " +
                                             std::to_string(N) + " electrons; checkpoint written to " +
                                             ckpt_file.string() + " — continue with `edm resume " +
                                             S.folder.string() + "`");
    }
  }
  wait_watcher();
  S.checkpoint_every = std::max<std::int64_t>(K, 0);

  // 8. Finish: reduce across devices (CLBlast), download in slabs; across ranks each slab is
  // reduced to rank 0 (never a second whole cube anywhere), which writes it into field.h5.
  obs.phase("download", "");
  std::vector<double> reduced;
  double write_seconds = 0;
  acc.finish(
      [&](int b, int c, int y0, int y1, const double* d) {
        const auto tw = Clock::now();
        const std::size_t n = std::size_t(y1 - y0) * std::size_t(screen.nx) * std::size_t(screen.samples);
        if (ranks.size > 1) {
          if (ranks.rank == 0) reduced.resize(n);
          reduce_slab_to_root(d, ranks.rank == 0 ? reduced.data() : nullptr, n);
          if (ranks.rank == 0) writer->write_slab(b, c, y0, y1, reduced.data());
        } else {
          writer->write_slab(b, c, y0, y1, d);
        }
        write_seconds += seconds_since(tw);
      },
      rows_per_slab);
  S.timing.field = seconds_since(t_first_launch);
  S.timing.kernel = kernel_before + acc.timing().kernel_seconds;
  S.timing.reduce = acc.reduce_seconds();
  S.host_peak_rss = host_peak_rss();

  // Host-side products fold exactly across ranks: γ trace (sums, extrema), coverage records.
  RankTimings per_rank = gather_rank_results(ranks, gamma, S);
  if (ranks.rank != 0) return S;

  writer->write_gamma_trace(gamma, units);
  writer->set_attribute("window_clipped_electrons", double(S.coverage.clipped_electrons()));
  const auto tc = Clock::now();
  writer->commit();
  S.timing.write = write_seconds + seconds_since(tc);  // HDF5 writes of the slabs (+ MPI reduce) and commit
  S.timing.total = seconds_since(t_start);
  S.host_estimate_bytes = double(B) * double(S.spline_bytes_per_electron) + double(slab_bytes);

  ManifestExtras x;
  x.a0_effective = make_laser(campaign.laser, units, scenario.laser_direction())->a0();
  for (std::size_t i = 0; i < S.devices.size(); ++i) x.device_names += (i ? "; " : "") + S.devices[i];
  x.sample_chunks = acc.options().sample_chunks;
  x.work_group = acc.options().work_group;
  x.electron_group = acc.options().electron_group;
  // FLOPs counted from the kernel source; the peak is the cached FMA-probe measurement of the
  // devices used (`edm devices --probe`), so peak_fraction_field is left out until one exists.
  x.flop_per_slot = flop_per_slot(acc.options(), mode);
  for (const auto& d : mine) {
    const double p = cached_device_value(d, "peak");
    if (p <= 0) {
      x.fp64_peak = 0;
      break;
    }
    x.fp64_peak += p;
  }
  x.fp64_peak *= ranks.size;  // every rank uses the same kind of devices
  x.tile_width = acc.options().tile_width;
  x.pixel_order = pixel_order_name(acc.options().pixel_order);
  x.fast_recip = acc.options().fast_recip > 0;
  x.interleave = acc.options().interleave > 0;
  x.nv_seed = acc.options().nv_seed > 0;
  x.ranks = ranks.size;
  x.rank_timings = per_rank;
  try {
    write_manifest(S.manifest_file, make_manifest(campaign, S, units, x));
  } catch (const IoError& e) {
    // A field.h5 without its run.toml looks like a finished run (and makes the next run ask for
    // --overwrite), so nothing may stay under the final name; the complete field goes back to
    // field.h5.partial rather than being deleted, so a full disk does not throw the result away.
    // (Found by tests/test_bad_inputs: a disk with room for field.h5 but not for run.toml.)
    auto partial = S.field_file;
    partial += ".partial";
    std::error_code ec;
    std::filesystem::rename(S.field_file, partial, ec);
    throw IoError(e.id(), std::string(e.what()) +
                              (ec ? "; " + S.field_file.string() + " is complete but has no manifest"
                                  : "; the complete field was kept as " + partial.string()));
  }
  std::error_code ec;
  std::filesystem::remove(ckpt_file, ec);  // the run is complete: the checkpoint has served
  return S;
}

}  // namespace edm
