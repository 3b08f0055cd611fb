// The batch loop (the driver's third stage). Batching (electron_batch = B): solve B trajectories,
// enqueue their launches, free their splines, repeat; the device buffers persist, so host memory
// does not grow with N. With batch_overlap the solve of batch k+1 runs while the device works on
// batch k (launches are asynchronous) and a watcher (run/overlap.hpp) records when the device went
// idle, so [timing] trajectories_overlapped is measured. On one device the launch order is the
// electron order whatever B is, so a batched run is bit-identical to the single pass.
#include <algorithm>
#include <cmath>
#include <sstream>

#include "edm/checkpoint.hpp"
#include "edm/error.hpp"
#include "run/overlap.hpp"
#include "run/sharded_cubes.hpp"
#include "run/stages.hpp"

namespace edm::detail {
namespace {

SplineBatch solve_batch(const RunContext& ctx, const PreparedCell& cell, std::uint64_t first,
                        std::uint64_t count) {
  try {
    return cell.solve(first, count);
  } catch (const PhysicsError& e) {
    // The integration runs until the electrons' light has passed the last sample; a window
    // that ends absurdly late turns into a runaway integration, which is a campaign problem.
    if (ctx.campaign.screen.window != ScreenWindow::Auto && e.id() == "EDM-TRJ-011") {
      const Screen& screen = cell.screen();
      const double t_last = screen.t_rel(screen.samples - 1);
      throw ConfigError("EDM-WIN-003",
                        std::string("[screen] t_start / samples: the observer window ends at ") +
                            std::to_string((t_last + std::abs(screen.z)) * cell.units().time()) +
                            " s, too late for the trajectories to reach (" + e.what() + ")");
    }
    throw;
  }
}

// The batch's host-side products: coverage (refused when clipped, unless allowed), the γ trace,
// spline bytes and knots.
void record_batch(const RunContext& ctx, const PreparedCell& cell, const SplineBatch& batch,
                  std::uint64_t count, BatchState& state, RunSummary& S) {
  // Coverage is per electron, so batch records concatenate.
  CoverageReport cov = check_coverage(cell.screen(), batch);
  for (auto& r : cov.records) S.coverage.records.push_back(r);
  if (cov.clipped_electrons() > 0 && !ctx.campaign.screen.allow_clipping) {
    const auto& r = *std::find_if(cov.records.begin(), cov.records.end(),
                                  [](const CoverageRecord& r) { return r.clipped(); });
    const double T = cell.units().time();
    throw PhysicsError("EDM-WIN-001",
                       "the observer window is not covered by electron " + std::to_string(r.electron) +
                           " (margin at start " + std::to_string(r.margin_start * T) + " s, at end " +
                           std::to_string(r.margin_end * T) +
                           " s): use [screen] window = \"auto\", fewer samples, or allow_clipping = true");
  }
  state.gamma.merge(batch.gamma);
  S.spline_bytes_per_electron = std::max<std::uint64_t>(S.spline_bytes_per_electron, batch.bytes() / count);
  for (const auto& e : batch.electrons) S.knots_total += e.n_intervals + 1;
}

// Automatic checkpoints (K = 0), decided once from the measured rate (not a guess): on for runs
// predicted to take over 10 minutes, about every 5 minutes. `start`, `k0`: where this process began.
void schedule_checkpoints(const RunContext& ctx, BatchState& state, std::uint64_t start, std::uint64_t k0,
                          std::uint64_t k, std::uint64_t done_to, std::uint64_t end) {
  if (state.checkpoint_every != 0 || done_to >= end || k == k0) return;
  const double elapsed = seconds_since(ctx.t_start);
  const double predicted = elapsed / double(done_to - start) * double(end - start);
  if (predicted > 600.0) {
    state.checkpoint_every = std::max<std::int64_t>(1, std::int64_t(300.0 / (elapsed / double(k - k0 + 1))));
    ctx.observer.phase("checkpoint", "run predicted to take " + std::to_string(int(predicted)) +
                                         " s: checkpoint every " + std::to_string(state.checkpoint_every) +
                                         " batches");
  } else {
    state.checkpoint_every = -1;
  }
}

void save_checkpoint(const BatchState& state, ShardedFieldAccumulator& acc, RunSummary& S) {
  CheckpointState st;
  st.run_id = S.run_id;
  st.campaign_text = state.campaign_text;
  st.next_electron = state.next;
  st.batches_done = state.batches_done;
  st.trajectories = S.timing.trajectories;
  st.trajectories_overlapped = S.timing.trajectories_overlapped;
  st.kernel = state.kernel_before + acc.timing().kernel_seconds;
  st.knots_total = S.knots_total;
  st.spline_bytes_per_electron = S.spline_bytes_per_electron;
  st.gamma = state.gamma;
  st.coverage = S.coverage.records;
  ShardedCubes cubes(acc);
  write_checkpoint(state.checkpoint_file, st, cubes);
  ++S.checkpoints_written;
}

}  // namespace

BatchState start_or_resume(const RunContext& ctx, const RunPlan& plan, std::uint64_t N,
                           ShardedFieldAccumulator& acc, RunSummary& S) {
  BatchState state;
  state.checkpoint_file = checkpoint_path(S.folder);
  state.next = plan.first;
  if (ctx.options.resume) {
    if (plan.ranks.size > 1) throw ConfigError("EDM-CKP-010", "edm resume runs in one process (no mpirun)");
    const CheckpointState st = read_checkpoint_state(state.checkpoint_file);
    ShardedCubes cubes(acc);
    load_checkpoint_cube(state.checkpoint_file, cubes);
    S.run_id = st.run_id;
    state.next = st.next_electron;
    state.batches_done = st.batches_done;
    state.gamma = st.gamma;
    state.kernel_before = st.kernel;
    S.coverage.records = st.coverage;
    S.timing.trajectories = st.trajectories;
    S.timing.trajectories_overlapped = st.trajectories_overlapped;
    S.knots_total = st.knots_total;
    S.spline_bytes_per_electron = st.spline_bytes_per_electron;
    S.resumed_from = state.next;
    ctx.observer.phase("resume", "from " + state.checkpoint_file.string() + ": " +
                                     std::to_string(state.next) + " of " + std::to_string(N) +
                                     " electrons already summed");
  }
  // Checkpoints only in one process (MPI ranks would each need their own).
  state.checkpoint_every = plan.ranks.size > 1 ? -1 : ctx.options.checkpoint_every;
  std::ostringstream os;
  os << ctx.campaign.to_toml();
  state.campaign_text = os.str();
  return state;
}

void run_batches(const RunContext& ctx, const PreparedCell& cell, const RunPlan& plan,
                 ShardedFieldAccumulator& acc, BatchState& state, RunSummary& S) {
  const bool overlap = ctx.campaign.accumulator.batch_overlap;
  const std::uint64_t start = state.next, k0 = state.batches_done, B = plan.batch;
  state.t_first_launch = Clock::now();
  bool launched = false;
  // Joined on every way out of this function; what it throws comes back through wait().
  DeviceWatcher watcher;
  Clock::time_point device_idle_at{};
  const auto wait_for_device = [&] {
    if (const auto idle = watcher.wait()) device_idle_at = *idle;
  };
  for (std::uint64_t b0 = start, k = k0; b0 < plan.end; b0 += B, ++k) {
    const std::uint64_t count = std::min(B, plan.end - b0);
    ctx.observer.phase("trajectories", "batch " + std::to_string(k + 1) + "/" + std::to_string(S.batches) +
                                           ": electrons " + std::to_string(b0) + "–" +
                                           std::to_string(b0 + count - 1));
    const auto t0 = Clock::now();
    SplineBatch batch = solve_batch(ctx, cell, b0, count);
    const auto t1 = Clock::now();
    S.timing.trajectories += seconds_between(t0, t1);
    // The device was busy with the previous batch until device_idle_at (measured by the watcher).
    wait_for_device();
    if (k > k0 && overlap)
      S.timing.trajectories_overlapped += std::max(0.0, seconds_between(t0, std::min(t1, device_idle_at)));
    record_batch(ctx, cell, batch, count, state, S);

    if (!launched) {
      state.t_first_launch = Clock::now();
      launched = true;
    }
    acc.accumulate(batch);
    batch.release();  // uploads are complete: the host splines go back to the OS now
    if (overlap)
      watcher.start([&acc] { acc.drain(); });
    else
      acc.drain();
    ctx.observer.batch_done(b0 + count - plan.first, plan.local_electrons(), seconds_since(ctx.t_start));

    // Checkpoints: every K batches, and on a stop request (then leave cleanly).
    state.next = b0 + count;
    state.batches_done = k + 1;
    const bool stop = ctx.options.stop && ctx.options.stop->load();
    schedule_checkpoints(ctx, state, start, k0, k, state.next, plan.end);
    const std::int64_t K = state.checkpoint_every;
    if (state.next < plan.end && (stop || (K > 0 && (k + 1) % std::uint64_t(K) == 0))) {
      wait_for_device();
      save_checkpoint(state, acc, S);
      ctx.observer.phase("checkpoint",
                         state.checkpoint_file.string() + ": " + std::to_string(state.next) + " electrons");
      if (stop)
        throw Interrupted("EDM-RUN-010", "stopped on request after " + std::to_string(state.next) + " of " +
                                             std::to_string(cell.electrons()) +
                                             " electrons; checkpoint written to " +
                                             state.checkpoint_file.string() +
                                             " — continue with `edm resume " + S.folder.string() + "`");
    }
  }
  wait_for_device();
  S.checkpoint_every = std::max<std::int64_t>(state.checkpoint_every, 0);
}

}  // namespace edm::detail
