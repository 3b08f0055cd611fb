// One cell, end to end (the data flow of share/docs/developing.md): campaign → scenario plugin →
// window → batches of trajectories (GSL, all cores) → accumulator (OpenCL, persistent buffers) →
// finish (slabs) → field.h5 + run.toml. Core never prints: progress goes to a RunObserver the app
// supplies.
#pragma once
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "edm/accumulator.hpp"
#include "edm/campaign.hpp"
#include "edm/plugins.hpp"
#include "edm/run_summary.hpp"
#include "edm/screen.hpp"
#include "edm/trajectory.hpp"
#include "edm/units.hpp"

namespace edm {

// The command this process is ("edm spectrum"), which the run folder's lock records and its
// refusal (EDM-RUN-040) names, for the holder and the refused alike; edm's main sets it once,
// before any lock is taken. Unset: "a program using libedm". (core/src/io/run_lock.cpp)
void set_command_name(std::string name);

struct RunOptions {
  bool overwrite = false;        // replace an existing run folder's results
  bool dry_run = false;          // validate, estimate, run nothing
  std::uint64_t max_host_memory = 0;  // bytes for electron_batch = auto (0 = half of MemAvailable)
  // Checkpoint every K batches (RUN/checkpoint.h5); 0 = automatic (on, about every 5 minutes, when
  // the measured rate predicts a run longer than 10 minutes); −1 = never.
  std::int64_t checkpoint_every = 0;
  // A stop request, polled inside the trajectory solve (every knot), after every batch (the last
  // one too, and single-pass runs) and between download slabs. In the batch loop the driver writes
  // a checkpoint and throws Interrupted (exit 130); during the download it leaves no field.h5. The
  // app sets it from SIGINT/SIGTERM (core installs no signal handlers).
  const std::atomic<bool>* stop = nullptr;
  bool resume = false;           // continue from RUN/checkpoint.h5 (edm resume)
  double progress_interval = 0.5;  // s between progress reports while the device works
  // Warnings of the front end (a replay with changed inputs): given to the observer and kept in
  // run.toml [warnings] like the run's own.
  std::vector<std::string> warnings;
};

// Progress of the batch loop, counted from finished device work: electrons whose field launches
// have completed on the device, not electrons enqueued.
struct RunProgress {
  std::uint64_t done = 0;     // electrons of this rank in the cube (those of the checkpoint included)
  std::uint64_t total = 0;    // electrons of this rank
  std::uint64_t resumed = 0;  // of `done`, those summed before this process (edm resume)
  double elapsed = 0;         // s since this process started the run
  // s still to go at this process's rate (its finished electrons over the time since its batch loop
  // began: the solves and the kernels together); NaN until this process has finished any, 0 at the end.
  double eta = 0.0 / 0.0;
  // [spectra]: of total − done, the electrons whose field is finished and whose direct spectra are
  // still computing (0 without spectra).
  std::uint64_t spectra_behind = 0;
};

// Progress callbacks (all optional). Called from the driving thread.
struct RunObserver {
  virtual ~RunObserver() = default;
  virtual void phase(const std::string& /*name*/, const std::string& /*detail*/) {}
  // While the device works and after each batch (RunProgress). By default it calls batch_done.
  virtual void progress(const RunProgress& p) { batch_done(p.done, p.total, p.elapsed); }
  virtual void batch_done(std::uint64_t /*electrons_done*/, std::uint64_t /*electrons_total*/,
                          double /*elapsed_s*/) {}
  virtual void warning(const std::string& /*message*/) {}
};

// A cell ready to solve: the plugin's scenario, the screen with its window fixed, and each
// electron started early enough (along its free straight line) that its light covers every pixel
// over the window; solve() integrates until the light has passed the last sample. Shared by
// `edm run` and `edm bench`.
class PreparedCell {
 public:
  PreparedCell(const Campaign& campaign, const PluginRegistry& plugins);
  ~PreparedCell();
  PreparedCell(const PreparedCell&) = delete;
  PreparedCell& operator=(const PreparedCell&) = delete;

  const Scenario& plugin_scenario() const;
  const Scenario& solver_scenario() const;  // with the extended starts
  const Normalization& units() const;
  const Screen& screen() const;
  Mode mode() const;
  std::uint64_t electrons() const;
  const SolveOptions& solve_options() const;
  // trajectory.knots_per_period as the solves use it: "auto" chosen here from pilot electrons.
  const KnotsChoice& knots() const;
  // The rms distance of the electrons' starts from the screen's axis (x = y = 0), normalised.
  double transverse_rms() const;
  SplineBatch solve(std::uint64_t first, std::uint64_t count) const;
  // The same, ending with Interrupted (EDM-TRJ-040) within one knot interval once *stop is set.
  SplineBatch solve(std::uint64_t first, std::uint64_t count, const std::atomic<bool>* stop) const;
  // The solve's budget, predicted before any solve from each electron's free straight line: the
  // knots it will store (the proper time until both the pulse's end, ξ = ξ_end, and the observer
  // window's last light are passed, over the knot spacing 2π/(h·knots_per_period)), capped by the
  // scenario's tau_max (beyond it the solve stops with EDM-TRJ-011). The plan refuses a runaway
  // from these numbers (run/plan.cpp).
  struct Budget {
    double max_knots = 0;    // the largest per-electron prediction
    double total_knots = 0;  // summed over the ensemble
    std::uint64_t worst = 0; // the electron with the largest prediction
    double worst_tau = 0;    // its proper time (normalised)
  };
  const Budget& budget() const;
  // The burst whose light the window should hold (coverage.hpp; share/docs/campaign.md, "The
  // observer window"), checked on every solved electron.
  const BurstSpec& burst() const;
  // What preparing found worth telling (window = "burst" with too few samples); the driver passes
  // them to RunObserver::warning.
  const std::vector<std::string>& warnings() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

RunSummary run_campaign(const Campaign& campaign, const PluginRegistry& plugins,
                        const RunOptions& options, RunObserver& observer);

// The kernel tunables of a campaign's [accumulator] (0 = chosen from the device).
KernelOptions kernel_options(const AccumulatorSection& accumulator);

// Host peak resident set size (VmHWM) of this process, bytes.
std::uint64_t host_peak_rss();
// A fresh run id: UTC time + random suffix.
std::string make_run_id();

}  // namespace edm
