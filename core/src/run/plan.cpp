// Plan the run (the driver's second stage): the memory guard, the run folder, the devices and MPI
// ranks (each rank a contiguous block of the ensemble), the download slabs and the batch size;
// the retarded-time roots' sampling; and the dry run's estimates. Every input problem surfaces here,
// before any device time is spent.
#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <numbers>
#include <string>
#include <thread>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "edm/accumulator.hpp"
#include "edm/checkpoint.hpp"
#include "edm/coverage.hpp"
#include "edm/device_rate.hpp"
#include "edm/error.hpp"
#include "edm/run_files.hpp"
#include "run/stages.hpp"

namespace edm::detail {

std::uint64_t mem_available() {
  std::ifstream f("/proc/meminfo");
  std::string key;
  std::uint64_t kb = 0;
  std::string unit;
  while (f >> key >> kb >> unit)
    if (key == "MemAvailable:") return kb * 1024;
  return 0;
}

namespace {

// The resident set of this process now (VmRSS): the runtime, the plugin and the ensemble's states
// are already there when the plan counts what it will add.
std::uint64_t current_rss() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::stoull(line.substr(6)) * 1024;
  return 0;
}

std::string mib(double bytes) {
  char b[48];
  std::snprintf(b, sizeof b, "%.4g MiB", bytes / double(1 << 20));
  return b;
}

// The host memory the run may use: --max-host-memory, or what this process holds plus what the
// machine has available.
std::uint64_t host_limit(const RunOptions& o, std::uint64_t rss_now) {
  return o.max_host_memory ? o.max_host_memory : rss_now + mem_available();
}

// Host bytes of one electron while its batch is alive: its knots (state and 4-acceleration, 12
// doubles each) while it is solved and its coefficients (kCoefPerInterval doubles per interval)
// are built, both at once at the end of the solve.
double host_bytes_per_electron(const PreparedCell& cell) {
  return cell.budget().max_knots * double(12 + kCoefPerInterval) * double(sizeof(double));
}

// The per-electron and whole-ensemble knot budgets ([trajectory] max_knots, max_total_knots).
void refuse_runaway_knots(const Campaign& campaign, const PreparedCell& cell) {
  const PreparedCell::Budget& b = cell.budget();
  const TrajectorySection& t = campaign.trajectory;
  char msg[600];
  if (b.max_knots > double(t.max_knots)) {
    std::snprintf(msg, sizeof msg,
                  "electron %llu would need %.3g spline knots (%.3g s of proper time at %d knots per "
                  "Doppler-shifted period), over trajectory.max_knots = %lld (%s of splines): the pulse, the "
                  "Lorentz factor or the observer window is out of proportion; check laser.wavelength, "
                  "laser.duration, trajectory.padding, electrons.gamma and [screen] samples",
                  (unsigned long long)b.worst, b.max_knots, b.worst_tau * cell.units().time(),
                  cell.solve_options().knots_per_period, (long long)t.max_knots,
                  mib(b.max_knots * kCoefPerInterval * sizeof(double)).c_str());
    throw ConfigError("EDM-RUN-030", msg);
  }
  if (b.total_knots > double(t.max_total_knots)) {
    std::snprintf(msg, sizeof msg,
                  "the ensemble would need %.3g spline knots in all (%llu electrons, up to %.3g each), over "
                  "trajectory.max_total_knots = %lld; use fewer electrons or raise the limit",
                  b.total_knots, (unsigned long long)cell.electrons(), b.max_knots,
                  (long long)t.max_total_knots);
    throw ConfigError("EDM-RUN-031", msg);
  }
}

// The batches' large vectors (knots, splines) in pages of their own, which go back to the OS when
// the vector is freed, so that the host peak is the memory alive, which the plan counts. glibc
// otherwise raises its mmap threshold after the first large free (up to 32 MiB), and later knot
// and spline vectors come from the malloc arenas (one per solver thread), where a freed block's
// pages stay resident and are reused by whatever comes next: the peak then depended on how the
// blocks of one batch and the next fell into the arenas, changing by over 10 MiB with a batch size
// one electron larger or smaller, or with the scheduling on a loaded machine (tests/test_bounds.cpp).
// Setting the threshold fixes it at glibc's own default (128 KiB) instead of the moving one.
void keep_batches_in_their_own_pages() {
#if defined(__GLIBC__)
  mallopt(M_MMAP_THRESHOLD, 128 * 1024);
#endif
}

}  // namespace

void refuse_oversized_cube(const Campaign& campaign, const RunOptions& options) {
  const Screen bare = make_screen(campaign.screen, Normalization::from_wavelength(campaign.laser.wavelength));
  // A cube larger than a device runs in tiles of rows in turn (plan_passes): refused here only
  // when not even one row fits.
  for (const auto& d : select_devices(campaign.accumulator.devices, value_origin(campaign, "accumulator.devices")))
    check_device_memory(d, screen_tile(bare, 0, 1), campaign.run.mode);
  // The ensemble's states are held three times before any solve (the plugin's, the initial and the
  // extended starts, 8 doubles each), plus the plugin's own draw: refuse a count the host cannot
  // hold before the plugin allocates it.
  if (campaign.electrons.distribution == Distribution::List) return;  // bounded by the file
  const double need = double(campaign.electrons.count) * 4.0 * 8.0 * sizeof(double);
  const std::uint64_t rss = current_rss();
  const double limit = double(host_limit(options, rss));
  if (double(rss) + need > limit)
    throw ConfigError("EDM-RUN-033", "electrons.count = " + std::to_string(campaign.electrons.count) +
                                         ": the ensemble's states alone need " + mib(need) + " of host memory, " +
                                         "with " + mib(double(rss)) + " in use over the limit of " + mib(limit) +
                                         (options.max_host_memory ? " (--max-host-memory)" : " (this machine)"));
}

void claim_run_folder(const RunContext& ctx, RunSummary& S) {
  const RunOptions& options = ctx.options;
  S.folder = ctx.campaign.run.output;
  S.field_file = RunFolder(S.folder).field();
  S.manifest_file = RunFolder(S.folder).manifest();
  // Looked up with error codes: a name too long or a parent that is a file is an I/O error naming
  // the path, not an exception from the file system library.
  const auto exists = [&](const std::filesystem::path& p) {
    std::error_code ec;
    const auto st = std::filesystem::status(p, ec);
    if (ec && ec != std::errc::no_such_file_or_directory && ec != std::errc::not_a_directory)
      throw IoError("EDM-IO-093", "[run] output " + p.string() + ": " + ec.message());
    if (ec == std::errc::not_a_directory)
      throw IoError("EDM-IO-093", "[run] output " + S.folder.string() + ": a parent of it is a file, not a folder");
    return std::filesystem::exists(st);
  };
  // A resume carries on a checkpoint. One beside complete results is an interrupted --overwrite,
  // which leaves the previous results in place until its own commit renames over them (issue 30:
  // such a folder could never be resumed, and resume takes no --overwrite).
  const bool continues_checkpoint = options.resume && exists(checkpoint_path(S.folder));
  if (!options.dry_run && !options.overwrite && !continues_checkpoint &&
      (exists(S.field_file) || exists(S.manifest_file) ||
       (!options.resume && exists(checkpoint_path(S.folder)))))
    throw ConfigError("EDM-RUN-001",
                      "run folder " + S.folder.string() +
                          " already holds results (or a checkpoint: `edm resume` it); pass --overwrite or "
                          "choose another [run] output");
  // The run's own files are renamed over these names at the end: refused before any work.
  if (!options.dry_run) RunFolder(S.folder).refuse_non_regular_targets();
}

RunPlan plan_devices_and_ranks(const RunContext& ctx, std::uint64_t N, RunSummary& S) {
  const auto& spec = ctx.campaign.accumulator.devices;
  RunPlan plan;
  plan.devices = select_devices(spec, value_origin(ctx.campaign, "accumulator.devices"));
  for (const auto& d : plan.devices)
    S.devices.push_back(std::to_string(d.index) + ": " + d.name + " (" + d.platform + ")");
  ctx.observer.phase("devices", device_list(S));

  // Ranks (MPI builds under mpirun): electrons, seeds and trajectories are global, so the blocks
  // do not change what is computed, only where.
  plan.ranks = current_ranks();
  S.rank = plan.ranks.rank;
  S.ranks = plan.ranks.size;
  plan.first = N * std::uint64_t(plan.ranks.rank) / std::uint64_t(plan.ranks.size);
  plan.end = N * std::uint64_t(plan.ranks.rank + 1) / std::uint64_t(plan.ranks.size);
  if (plan.ranks.size > 1 && spec == "auto") {
    // One node, several ranks: spread them over the FP64 devices present.
    const auto every = select_devices("all");
    plan.devices = {every[std::size_t(plan.ranks.rank) % every.size()]};
  }
  share_among_ranks(ctx, S.screen.ny, N, plan);  // by pixels every rank takes every electron (ranks.hpp)
  return plan;
}

namespace {
// The cost model of accumulator.sharding = "auto", in seconds per byte (BENCHMARKS.md, "Pixel
// sharding" and "The cost model on GPUs"): by electrons, each device beyond the first sends its whole
// cube through host staging into device 0's and adds it there (ShardedFieldAccumulator::finish); by
// pixels, each device beyond the first takes every batch's splines too (upload and light front).
// PoCL on this machine: the reduce 0.63-0.89 s for a 201 MB cube; the upload not resolved below
// 0.1 s for 88 MB (an upper bound), and on a CPU device the copies take the cores the kernels use.
constexpr double kReduceSecondsPerCubeByteCpu = 3.5e-9;
constexpr double kUploadSecondsPerSplineByteCpu = 1.0e-9;
// GPUs: the reduce 2.51 s for the 12.9 GB cube on two H200s; the upload 2.36 GB of splines in
// 0.27-0.30 s on one H200 and 2.95 GB in 0.55-0.62 s on one H100 (run.toml [timing] upload /
// upload_bytes): the slower card's figure. A GPU copies on its own engine
// while its kernels run: with accumulator.batch_overlap (and batches: electron_batch ≠ 0) only the
// uploads before the first launch are exposed, the first batch's first piece (kFirstPiece).
constexpr double kReduceSecondsPerCubeByteGpu = 2.0e-10;
constexpr double kUploadSecondsPerSplineByteGpu = 2.0e-10;

// The two costs for D devices (seconds), and the kernel work that pixel tiles repeat (the rows the
// equal-height tiles hold twice), as a fraction of the screen.
struct ShardingCosts {
  double reduce = 0, upload = 0, repeated_rows = 0;
  bool gpu = false, hidden = false;  // GPU constants; uploads after the first batch hidden by overlap
};
ShardingCosts sharding_costs(const RunContext& ctx, const PreparedCell& cell, const RunPlan& plan, double cube_bytes) {
  ShardingCosts c;
  const std::size_t D = plan.devices.size();
  c.gpu = std::all_of(plan.devices.begin(), plan.devices.end(), [](const DeviceInfo& d) { return d.type == "GPU"; });
  c.hidden = c.gpu && ctx.campaign.accumulator.batch_overlap && ctx.campaign.accumulator.electron_batch != 0;
  const double per_electron = cell.budget().max_knots * double(kCoefPerInterval) * sizeof(double);
  const double N = double(cell.electrons());
  const double exposed = c.hidden ? std::min(N, double(kFirstPiece)) : N;
  c.reduce = double(D - 1) * cube_bytes * (c.gpu ? kReduceSecondsPerCubeByteGpu : kReduceSecondsPerCubeByteCpu);
  c.upload = double(D - 1) * exposed * per_electron *
             (c.gpu ? kUploadSecondsPerSplineByteGpu : kUploadSecondsPerSplineByteCpu);
  const int ny = cell.screen().ny, h = (ny + int(D) - 1) / int(D);
  c.repeated_rows = double(h * int(D) - ny) / double(ny);
  return c;
}
}  // namespace

Sharding plan_sharding(const RunContext& ctx, const PreparedCell& cell, RunPlan& plan, RunSummary& S) {
  const Sharding asked = ctx.campaign.accumulator.sharding;
  const std::size_t D = plan.devices.size();
  const auto set = [&](Sharding by, std::string why) {
    plan.sharding = by;
    S.sharding = name(by);
    S.sharding_reason = std::move(why);
    return by;
  };
  if (D < 2) return set(Sharding::Electrons, "one device");
  if (plan.ranks.size > 1)
    return set(Sharding::Electrons, "several MPI ranks: each rank's devices share its block of electrons");
  if (asked == Sharding::Pixels && D > std::size_t(cell.screen().ny))
    split_rows(cell.screen().ny, int(D), "accumulator.sharding = \"pixels\" over " + std::to_string(D) +
                                             " devices (accumulator.devices)");  // throws EDM-TILE-002
  if (asked != Sharding::Auto) return set(asked, "accumulator.sharding");
  if (D > std::size_t(cell.screen().ny))
    return set(Sharding::Electrons, "auto: more devices than screen rows (screen.ny)");
  const double cube = 3.0 * double(cell.screen().slots_per_electron()) * sizeof(double) * bucket_count(cell.mode());
  const ShardingCosts c = sharding_costs(ctx, cell, plan, cube);
  char why[480];
  std::snprintf(why, sizeof why,
                "auto: reduce %.3g s (%zu cubes of %s) against spline uploads %.3g s (every batch to %zu devices%s) "
                "and %.3g of the rows computed twice, by the %s constants of the cost model",
                c.reduce, D - 1, mib(cube).c_str(), c.upload, D,
                c.hidden ? "; after the first piece, hidden behind the kernels by batch_overlap" : "", c.repeated_rows,
                c.gpu ? "GPU" : "CPU");
  // Repeated rows cost kernel time, which the model does not know before the run: pixel sharding
  // is taken when it saves transfer time and repeats at most a tenth of the rows.
  return set(c.upload < c.reduce && c.repeated_rows <= 0.1 ? Sharding::Pixels : Sharding::Electrons, why);
}

namespace {
// The screen rows whose cube one device holds (each bucket within the allowed allocation, all of
// them within its allowed global memory) beside `reserve` bytes of splines, whose single buffer
// `batch` must fit the device's max allocation too; 0 when not one row fits.
std::uint64_t rows_that_fit(const DeviceInfo& d, const Screen& screen, Mode mode, double reserve, double batch) {
  if (batch > double(d.max_allocation)) return 0;
  const double row = 3.0 * double(screen.nx) * double(screen.samples) * sizeof(double);
  const double by_allocation = std::floor(double(allowed_allocation(d)) / row);
  const double by_memory = std::floor((double(allowed_global_memory(d)) - reserve) / (row * bucket_count(mode)));
  return std::uint64_t(std::max(0.0, std::min(by_allocation, by_memory)));
}
}  // namespace

std::vector<std::pair<int, int>> plan_passes(const RunContext& ctx, const PreparedCell& cell, RunPlan& plan,
                                             RunSummary& S) {
  // The rows this process computes: its rank's tile when MPI ranks shard pixels, else the screen.
  const Screen screen = rank_screen(cell, plan);
  const auto& a = ctx.campaign.accumulator;
  // Beside the tile, the device holds a batch's splines (two with batch_overlap: the next one is
  // uploaded ahead), predicted from the knot budget; "auto" batches are at least one electron.
  const double batch = a.electron_batch > 0 ? double(a.electron_batch) : a.electron_batch == 0 ? double(cell.electrons()) : 1.0;
  const double splines = batch * cell.budget().max_knots * kCoefPerInterval * sizeof(double);
  const double reserve = (a.batch_overlap ? 2.0 : 1.0) * splines;
  std::uint64_t fit = UINT64_MAX;
  for (const auto& d : plan.devices) {
    const std::uint64_t f = rows_that_fit(d, screen, cell.mode(), reserve, splines);
    if (f == 0) {
      char msg[600];
      std::snprintf(msg, sizeof msg,
                    "device %d (%s): not one screen row's cube (%s, screen.nx = %d, screen.samples = %d) fits beside "
                    "one batch's splines (%s for accumulator.electron_batch = %.0f) within its memory and allowed "
                    "allocation, so the screen cannot run in tiles; lower accumulator.electron_batch, screen.samples "
                    "or screen.nx",
                    d.index, d.name.c_str(), mib(3.0 * screen.nx * screen.samples * 8.0 * bucket_count(cell.mode())).c_str(),
                    screen.nx, screen.samples, mib(splines).c_str(), batch);
      throw ConfigError("EDM-TILE-004", msg);
    }
    fit = std::min(fit, f);
  }
  const std::uint64_t per_pass = fit * (plan.sharding == Sharding::Pixels ? plan.devices.size() : 1);
  int passes = per_pass >= std::uint64_t(screen.ny) ? 1 : int((std::uint64_t(screen.ny) + per_pass - 1) / per_pass);
  // Every rank makes as many passes as the rank with the most: each pass ends in the ranks' writes in
  // turn (a collective), so uneven counts would leave a rank waiting for ever. A rank with fewer rows
  // than passes repeats its last row (computed again, written again with the same values).
  agree_max(plan.ranks, &passes, 1);
  auto out = split_rows(screen.ny, std::min(passes, screen.ny), "the screen's passes");
  while (int(out.size()) < passes) out.push_back(out.back());
  for (auto& [y0, y1] : out) y0 += screen.row0, y1 += screen.row0;  // in the whole screen's rows
  S.passes = passes;
  S.pass_rows = out.front().second - out.front().first;
  if (passes > 1)
    ctx.observer.phase("passes", std::to_string(passes) + " passes of up to " + std::to_string(S.pass_rows) +
                                     " rows: the cube does not fit the devices at once");
  return out;
}

void plan_batches(const RunContext& ctx, const PreparedCell& cell, RunPlan& plan, RunSummary& S) {
  const Screen& screen = cell.screen();
  const std::uint64_t N = cell.electrons();
  const std::uint64_t row_bytes = std::uint64_t(screen.nx) * screen.samples * sizeof(double);
  plan.rows_per_slab = int(std::clamp<std::uint64_t>((64ull << 20) / row_bytes, 1, std::uint64_t(screen.ny)));
  plan.slab_bytes = row_bytes * std::uint64_t(plan.rows_per_slab);

  // Runaways are refused before anything is solved, from the predicted knots.
  refuse_runaway_knots(ctx.campaign, cell);
  keep_batches_in_their_own_pages();
  const HostMemory m = host_memory(ctx, cell, plan, S);

  // "auto" fits B into the host budget from the predicted bytes per electron.
  const std::int64_t asked = ctx.campaign.accumulator.electron_batch;
  std::uint64_t B = asked > 0 ? std::uint64_t(asked) : N;
  if (asked < 0) {
    const double avail = ctx.options.max_host_memory ? m.limit : m.fixed + (m.limit - m.fixed) / 2;
    const double budget = std::max(0.0, avail - m.fixed);
    const double alive = ctx.campaign.accumulator.batch_overlap ? 2.0 : 1.0;
    B = std::clamp<std::uint64_t>(std::uint64_t(budget / std::max(alive * m.per_electron, 1.0)), 1, N);
    ctx.observer.phase("batch", "electron_batch = auto → " + std::to_string(B) + " (host budget " +
                                    mib(budget) + ")");
  }
  plan.batch = std::max<std::uint64_t>(1, std::min(B, N));
  S.electron_batch = asked == 0 ? 0 : plan.batch;
  const std::uint64_t n_local = plan.local_electrons();
  S.batches = n_local ? (n_local + plan.batch - 1) / plan.batch : 0;
  refuse_host_overflow(ctx, cell, plan, m);
}

HostMemory host_memory(const RunContext& ctx, const PreparedCell& cell, const RunPlan& plan,
                       const RunSummary& S) {
  HostMemory m;
  const std::uint64_t rss = current_rss();
  m.limit = double(host_limit(ctx.options, rss));
  // Fixed: what is resident now, the download staging (two pinned slabs and the writer's scaled
  // copy) and, on a CPU device (its buffers are host memory), the field cube.
  bool cpu = false;
  for (const auto& d : plan.devices) cpu = cpu || d.type == "CPU";
  m.fixed = double(rss) + 3.0 * double(plan.slab_bytes) + (cpu ? double(S.device_buffer_bytes) : 0.0);
  // Per electron of a batch: its knots and coefficients; a CPU device's copy of the uploaded
  // splines.
  const double spline = cell.budget().max_knots * double(kCoefPerInterval) * double(sizeof(double));
  m.per_electron = host_bytes_per_electron(cell) + (cpu ? spline : 0.0);
  return m;
}

void refuse_host_overflow(const RunContext& ctx, const PreparedCell& cell, const RunPlan& plan,
                          const HostMemory& m) {
  // With overlap and more than one batch, the next batch is solved while this one is on the device.
  const bool overlap = ctx.campaign.accumulator.batch_overlap && plan.batch < plan.local_electrons();
  const double batches_alive = overlap ? 2.0 : 1.0;
  const double need = m.fixed + batches_alive * double(plan.batch) * m.per_electron;
  if (need <= m.limit) return;
  char msg[700];
  std::snprintf(msg, sizeof msg,
                "the run would need about %s of host memory (%s in use and staging, %llu electrons per batch "
                "at %s each, up to %.3g knots per electron), over the limit of %s%s; set "
                "accumulator.electron_batch (or \"auto\"), fewer electrons or samples, or raise the limit",
                mib(need).c_str(), mib(m.fixed).c_str(), (unsigned long long)plan.batch,
                mib(m.per_electron * batches_alive).c_str(), cell.budget().max_knots, mib(m.limit).c_str(),
                ctx.options.max_host_memory ? " (--max-host-memory)" : " (this machine)");
  throw ConfigError("EDM-RUN-032", msg);
}

std::uint64_t plan_pass_splines(const RunContext& ctx, const PreparedCell& cell, const RunPlan& plan,
                                RunSummary& S) {
  S.pass_splines.clear();
  S.pass_splines_reason.clear();
  S.pass_splines_bytes = 0;
  S.pass_splines_budget = 0;
  if (S.passes <= 1) return 0;
  // What refuse_host_overflow counts for the batches comes first: the kept splines take what is left.
  const HostMemory m = host_memory(ctx, cell, plan, S);
  const bool overlap = ctx.campaign.accumulator.batch_overlap && plan.batch < plan.local_electrons();
  const double batches = (overlap ? 2.0 : 1.0) * double(plan.batch) * m.per_electron;
  const double left = std::max(0.0, m.limit - m.fixed - batches);
  // Every electron of this rank, at the knot budget's bound (the kept batches are measured as they come).
  const double splines = double(plan.local_electrons()) *
                         (cell.budget().max_knots * double(kCoefPerInterval) * sizeof(double) + sizeof(ElectronSpline));
  S.pass_splines_bytes = std::uint64_t(splines);
  S.pass_splines_budget = left;
  const bool keep = splines <= left;
  char why[500];
  std::snprintf(why, sizeof why,
                "the splines of %llu electrons (%s at up to %.3g knots each) %s the host budget left beside the "
                "batches (%s of the limit of %s%s)",
                (unsigned long long)plan.local_electrons(), mib(splines).c_str(), cell.budget().max_knots,
                keep ? "fit" : "do not fit", mib(left).c_str(), mib(m.limit).c_str(),
                ctx.options.max_host_memory ? ", --max-host-memory" : ", this machine");
  S.pass_splines = keep ? "kept" : "re-solved";
  S.pass_splines_reason = why;
  ctx.observer.phase("passes", std::string(keep ? "splines kept on the host between passes: " : "splines solved again in "
                                                                                               "every pass: ") + why);
  return keep ? std::uint64_t(left) : 0;
}

void estimate_dry_run(const RunContext& ctx, const PreparedCell& cell, const RunPlan& plan,
                      const ShardedFieldAccumulator& acc, RunSummary& S, std::uint64_t probe_bytes) {
  // The batch's splines or the download staging, whichever is larger. The probe solve honours a
  // stop request (Interrupted, exit 130) like every solve; electron 0 solved already as the first
  // root-sampling pilot is not solved again, and a stop request since is honoured here.
  // Passes that solve every electron again: the probe's solve is timed (electron 0 again if a pilot
  // solved it) for the re-solves' time.
  const bool resolves = S.passes > 1 && S.pass_splines == "re-solved";
  double solve_seconds = 0;
  if (probe_bytes == 0 || resolves) {
    const auto t0 = Clock::now();
    probe_bytes = cell.solve(0, 1, ctx.options.stop).bytes();
    solve_seconds = seconds_since(t0);
  } else if (ctx.options.stop && ctx.options.stop->load()) {
    throw Interrupted("EDM-RUN-060", "the dry run was stopped on request before its estimates");
  }
  S.spline_bytes_per_electron = probe_bytes;
  S.host_estimate_bytes = std::max(double(plan.batch) * double(probe_bytes), 2.0 * double(plan.slab_bytes));
  // The kept splines stay beside the batches from the first pass to the last.
  if (S.pass_splines == "kept") S.host_estimate_bytes += double(S.pass_splines_bytes);
  // A batch is solved on every hardware thread, one electron per thread.
  const double threads = std::max(1u, std::thread::hardware_concurrency());
  S.pass_resolve_estimate =
      resolves ? solve_seconds * double(plan.local_electrons()) * double(S.passes - 1) / threads : 0.0;
  // Each device at the rate `edm bench` measured on the kernel path this run takes there (its
  // effective options: the lanes or the scalar kernel), none when that path was never measured.
  double rate = 0;
  for (std::size_t i = 0; i < acc.device_count(); ++i) {
    const double r = cached_kernel_rate(plan.devices[i], acc.device_accumulator(i).options(), cell.screen(), cell.mode());
    if (!(r > 0)) {
      rate = 0;
      break;
    }
    rate += r;
  }
  S.time_estimate =
      rate > 0 ? double(plan.local_electrons()) * double(cell.screen().slots_per_electron()) / rate : 0;
}

namespace {
// The laser's field amplitude where the free straight line of y meets the pulse's peak (ξ = 0):
// |E| there and a quarter period later (a carrier at its node at one is at its crest at the other).
double peak_field(const Scenario& sc, const double y[8]) {
  const int s = sc.laser_direction();
  double e2 = 0;
  for (const double target : {0.0, 0.5 * std::numbers::pi}) {
    double x[8], E[3], B[3];
    free_at_phase(y, s, target, x);
    sc.laser_field(x, E, B);  // the position x[0..3]
    e2 += E[0] * E[0] + E[1] * E[1] + E[2] * E[2];
  }
  return std::sqrt(e2);
}

// The initial states the pilots are chosen among: all of an ensemble of up to kPilotCandidates,
// else kPilotCandidates of them evenly spread over the indices (⌊j N / K⌋), so that choosing costs
// the same whatever N. The pilots look for where the sampling is likely coarsest: a check before
// device time, not a bound over every electron, for which near-extreme states serve as well.
constexpr std::uint64_t kPilotCandidates = 4096;

// The pilots of check_root_sampling: electron 0, the candidate initial state whose observed period
// is the shortest over the screen's corners, edge centres and centre (min_period_ratio), and the one
// that meets the strongest field (the Doppler factor's modulation, which Q measures, grows with it).
std::vector<std::uint64_t> root_sampling_pilots(const PreparedCell& cell) {
  const Scenario& sc = cell.solver_scenario();
  const int s = sc.laser_direction();
  const std::uint64_t N = cell.electrons(), K = std::min(N, kPilotCandidates);
  std::uint64_t shortest = 0, strongest = 0;
  double lowest = INFINITY, highest = -1;
  for (std::uint64_t j = 0; j < K; ++j) {
    // ⌊j N / K⌋ without overflow: j ⌊N / K⌋ + ⌊j (N mod K) / K⌋ (N ≤ K: every index).
    const std::uint64_t i = j * (N / K) + j * (N % K) / K;
    double y[8];
    sc.initial_state(i, y);
    if (const double r = min_period_ratio(cell.screen(), y, s); r < lowest) {
      lowest = r;
      shortest = i;
    }
    if (const double e = peak_field(sc, y); e > highest) {
      highest = e;
      strongest = i;
    }
  }
  std::vector<std::uint64_t> pilots{0};
  for (const std::uint64_t i : {shortest, strongest})
    if (std::find(pilots.begin(), pilots.end(), i) == pilots.end()) pilots.push_back(i);
  return pilots;
}

std::string root_sampling_message(const Campaign& campaign, const PreparedCell& cell, const RootSampling& r) {
  const int iters = campaign.accumulator.newton_iters;
  const bool far = cell.screen().far_field();
  const double need = min_samples_per_doppler_efold(iters, far);
  const int enough = newton_iters_needed(r.samples_per_doppler_efold, far);
  const int spp = campaign.screen.samples_per_period;
  const double spp_needed = std::ceil(double(spp) * need / r.samples_per_doppler_efold);
  char where[160];
  if (cell.screen().angular()) {
    const auto& n = cell.screen().directions[std::size_t(r.iy) * cell.screen().nx + r.ix].n;
    std::snprintf(where, sizeof where, "direction (%d, %d), n = (%.4g, %.4g, %.4g)", r.ix, r.iy, n[0], n[1], n[2]);
  } else {
    std::snprintf(where, sizeof where, "pixel (%d, %d)", r.ix, r.iy);
  }
  const std::string fix = enough > 0 ? "accumulator.newton_iters = " + std::to_string(enough) + " or "
                                     : std::string();
  char msg[900];
  std::snprintf(msg, sizeof msg,
                "accumulator.newton_iters = %d: the observer samples too coarsely for %d Newton step(s) to converge "
                "the retarded times: P = %.3g samples per Doppler-shifted laser period, Q = %.3g samples per "
                "e-folding of the Doppler factor (at %s, electron %llu), below the Q = %.3g that %d step(s) need; "
                "the field is then wrong by more than the spline's error without a word from the kernel "
                "(share/docs/campaign.md, \"accumulator.newton_iters\"): set %sscreen.samples_per_period >= %.0f",
                iters, iters, r.samples_per_period, r.samples_per_doppler_efold, where,
                (unsigned long long)r.electron, need, iters, fix.c_str(), spp_needed);
  return msg;
}
}  // namespace

std::uint64_t check_root_sampling(const RunContext& ctx, const PreparedCell& cell, RunSummary& S) {
  RootSampling r;
  std::uint64_t electron0_bytes = 0;  // the first pilot is electron 0 (root_sampling_pilots)
  for (const std::uint64_t i : root_sampling_pilots(cell)) {
    try {
      const SplineBatch b = cell.solve(i, 1, ctx.options.stop);
      if (i == 0) electron0_bytes = b.bytes();
      r.merge(root_sampling(cell.screen(), b, cell.burst(), 2.0 * std::numbers::pi));
    } catch (const PhysicsError&) {
      return electron0_bytes;  // the batch loop's solve of the same electron reports it in its own words (EDM-WIN-003, …)
    } catch (const Interrupted&) {
      return electron0_bytes;  // the stop stays requested: the first batch's solve turns it into a checkpoint
    }
  }
  S.root_sampling = r;
  // Fewer than 2 samples per Doppler-shifted laser period: the fundamental lies above the samples'
  // Nyquist frequency, so the sampled field and every spectrum of it hold its alias (a γ = 12 run
  // gave an on-axis peak of 452 ω for the 572 ω line, without a word: found by a hostile tester).
  if (r.known() && r.samples_per_period < 2.0) {
    const int spp = ctx.campaign.screen.samples_per_period;
    char msg[600];
    std::snprintf(msg, sizeof msg,
                  "screen.samples_per_period = %d: P = %.3g samples per Doppler-shifted laser period (electron %llu), "
                  "below 2: the emitted fundamental lies above the Nyquist frequency of the samples, so field.h5 "
                  "and every spectrum of it show its alias, not the line: set screen.samples_per_period >= %.0f",
                  spp, r.samples_per_period, (unsigned long long)r.electron,
                  std::ceil(2.0 * double(spp) / r.samples_per_period));
    if (ctx.campaign.screen.strict) throw PhysicsError("EDM-WIN-021", std::string(msg) + " (screen.strict = true)");
    ctx.observer.warning(msg);
  }
  const int iters = ctx.campaign.accumulator.newton_iters;
  S.roots_converged = !r.known() || r.samples_per_doppler_efold >= min_samples_per_doppler_efold(iters, cell.screen().far_field());
  if (S.roots_converged) return electron0_bytes;
  const std::string msg = root_sampling_message(ctx.campaign, cell, r);
  if (ctx.campaign.screen.strict) throw PhysicsError("EDM-WIN-020", msg + " (screen.strict = true)");
  ctx.observer.warning(msg);
  return electron0_bytes;
}

}  // namespace edm::detail
