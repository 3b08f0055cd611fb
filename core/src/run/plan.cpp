// Plan the run (the driver's second stage): the memory guard, the run folder, the devices and MPI
// ranks (each rank a contiguous block of the ensemble), the download slabs and the batch size;
// and the dry run's estimates. Every input problem surfaces here, before any device time is spent.
#include <algorithm>
#include <fstream>
#include <string>

#include "edm/accumulator.hpp"
#include "edm/checkpoint.hpp"
#include "edm/device_rate.hpp"
#include "edm/error.hpp"
#include "run/stages.hpp"

namespace edm::detail {
namespace {

std::uint64_t mem_available() {
  std::ifstream f("/proc/meminfo");
  std::string key;
  std::uint64_t kb = 0;
  std::string unit;
  while (f >> key >> kb >> unit)
    if (key == "MemAvailable:") return kb * 1024;
  return 0;
}

}  // namespace

void refuse_oversized_cube(const Campaign& campaign) {
  const Screen bare = make_screen(campaign.screen, Normalization::from_wavelength(campaign.laser.wavelength));
  for (const auto& d : select_devices(campaign.accumulator.devices))
    check_device_memory(d, bare, campaign.run.mode);
}

void claim_run_folder(const RunContext& ctx, RunSummary& S) {
  const RunOptions& options = ctx.options;
  S.folder = ctx.campaign.run.output;
  S.field_file = S.folder / "field.h5";
  S.manifest_file = S.folder / "run.toml";
  if (!options.dry_run && !options.overwrite &&
      (std::filesystem::exists(S.field_file) || std::filesystem::exists(S.manifest_file) ||
       (!options.resume && std::filesystem::exists(checkpoint_path(S.folder)))))
    throw ConfigError("EDM-RUN-001",
                      "run folder " + S.folder.string() +
                          " already holds results (or a checkpoint: `edm resume` it); pass --overwrite or "
                          "choose another [run] output");
}

RunPlan plan_devices_and_ranks(const RunContext& ctx, std::uint64_t N, RunSummary& S) {
  const auto& spec = ctx.campaign.accumulator.devices;
  RunPlan plan;
  plan.devices = select_devices(spec);
  for (const auto& d : plan.devices)
    S.devices.push_back(std::to_string(d.index) + ": " + d.name + " (" + d.platform + ")");
  std::string names;
  for (const auto& d : S.devices) names += (names.empty() ? "" : "; ") + d;
  ctx.observer.phase("devices", names);

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
  return plan;
}

void plan_batches(const RunContext& ctx, const PreparedCell& cell, RunPlan& plan, RunSummary& S) {
  const Screen& screen = cell.screen();
  const std::uint64_t N = cell.electrons();
  const std::uint64_t row_bytes = std::uint64_t(screen.nx) * screen.samples * sizeof(double);
  plan.rows_per_slab = int(std::clamp<std::uint64_t>((64ull << 20) / row_bytes, 1, std::uint64_t(screen.ny)));
  plan.slab_bytes = row_bytes * std::uint64_t(plan.rows_per_slab);

  // "auto" measures one electron's spline bytes and fits B into the host budget.
  const std::int64_t asked = ctx.campaign.accumulator.electron_batch;
  std::uint64_t B = asked > 0 ? std::uint64_t(asked) : N;
  if (asked < 0) {
    SplineBatch probe = cell.solve(0, 1);
    const double bpe = double(probe.bytes()) * 1.25;
    const std::uint64_t avail =
        ctx.options.max_host_memory ? ctx.options.max_host_memory : mem_available() / 2;
    const std::uint64_t budget = avail > 2 * plan.slab_bytes ? avail - 2 * plan.slab_bytes : avail / 2;
    B = std::clamp<std::uint64_t>(std::uint64_t(double(budget) / std::max(bpe, 1.0)), 1, N);
    ctx.observer.phase("batch", "electron_batch = auto → " + std::to_string(B) + " (host budget " +
                                    std::to_string(budget >> 20) + " MiB)");
  }
  plan.batch = std::max<std::uint64_t>(1, std::min(B, N));
  S.electron_batch = asked == 0 ? 0 : plan.batch;
  const std::uint64_t n_local = plan.local_electrons();
  S.batches = n_local ? (n_local + plan.batch - 1) / plan.batch : 0;
}

void estimate_dry_run(const PreparedCell& cell, const RunPlan& plan, RunSummary& S) {
  // The batch's splines or the download staging, whichever is larger.
  SplineBatch one = cell.solve(0, 1);
  S.spline_bytes_per_electron = one.bytes();
  S.host_estimate_bytes = std::max(double(plan.batch) * double(one.bytes()), 2.0 * double(plan.slab_bytes));
  double rate = 0;
  for (const auto& d : plan.devices) rate += cached_device_rate(d);
  S.time_estimate =
      rate > 0 ? double(plan.local_electrons()) * double(cell.screen().slots_per_electron()) / rate : 0;
}

}  // namespace edm::detail
