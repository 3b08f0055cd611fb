// What a finished (or dry) run reports: the record the driver (run.hpp) fills and the manifest
// (manifest.hpp) and the MPI gather (run/ranks.hpp) read. A plain record with no behaviour, so
// that neither of those needs the driver's header.
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include <toml++/toml.h>

#include "edm/coverage.hpp"
#include "edm/screen.hpp"

namespace edm {

// Per-rank timings of an MPI run (index = rank).
struct RankTimings {
  std::vector<double> trajectories, field, kernel;
  std::vector<double> electrons;
  std::vector<double> host_peak_rss;  // bytes, each rank's (run.toml [ranks]; empty with one rank)
  // How the ranks shared the trajectory solves (run.toml [ranks] solves): "shared" (pixel sharding:
  // each rank a slice of every batch, the splines all-gathered) or "own" (electron sharding: each
  // rank its own block); and the electrons each rank solved itself in this process, in rank order.
  std::string solves;
  std::vector<double> solved;
  // Each rank's devices ("; "-joined names) and CLBlast record, in rank order (rank 0 only; empty
  // with one rank): ranks on other nodes may have other devices.
  std::vector<std::string> devices, clblast;
};

struct RunTiming {
  double total = 0, trajectories = 0, trajectories_overlapped = 0, field = 0, kernel = 0,
         reduce = 0, write = 0;
  // The spline uploads of this process's devices (AccumulatorTiming): seconds and bytes.
  double upload = 0, upload_bytes = 0;
};

// The CLBlast parameter sets (edm::clblast_tuning_record of each device, "0: CLBlast default; 1: …")
// of the processes that summed a run's electrons, from `first_electron` on (share/docs/outputs.md,
// [tuning]): one span while every process used the same, more when a run was stopped and resumed
// with EDM_CLBLAST_TUNING toggled. Carried through the checkpoints.
struct TuningSpan {
  std::uint64_t first_electron = 0;
  std::string clblast;
};
// The span a checkpoint of an edm before the record stands for: what it summed with is not known.
inline constexpr const char* kTuningNotRecorded = "not recorded (a checkpoint of an older edm)";

// trajectory.knots_per_period as the run solved with it: the integer given, or the one "auto" chose
// (run/prepare.cpp; share/docs/campaign.md) with the a-posteriori estimates that chose it.
struct KnotsChoice {
  int knots_per_period = 0;
  bool automatic = false;  // "auto"
  double tolerance = 0;    // trajectory.tolerance (auto only)
  // Per step tried, in order: K and the estimated relative field error of K (its pilots' field at K
  // against 2K, the worst pilot); the last one met the tolerance and is the one chosen.
  std::vector<std::pair<int, double>> estimates;
  std::vector<std::uint64_t> pilots;  // the pilot electrons
  double estimate() const { return estimates.empty() ? 0.0 : estimates.back().second; }
};

struct RunSummary {
  std::filesystem::path folder, field_file, manifest_file;
  std::string run_id;
  int rank = 0, ranks = 1;  // MPI: only rank 0 writes files and holds the gathered totals
  std::uint64_t electrons = 0, batches = 0, electron_batch = 0;
  int tail_slabs = 1;  // effective: slabs of rows the last batch was launched in (1 = one piece)
  // How this process's devices shared the work (accumulator.sharding resolved: "pixels" or
  // "electrons") and why (the key, one device, the ranks, or the cost model with its numbers).
  std::string sharding = "electrons", sharding_reason;
  // The screen in tiles of rows run in turn when its cube does not fit the devices at once: the
  // number of passes and the rows of the tallest (passes = 1: the whole screen at once).
  int passes = 1, pass_rows = 0;
  // Passes > 1: whether the later passes launch the first pass's splines kept on the host ("kept")
  // or solve every electron again ("re-solved"), why, and the kept splines' bytes (predicted at the
  // plan, measured after the run); the host budget the plan left for them. The dry run's prediction
  // of the re-solves' seconds (0 when kept).
  std::string pass_splines, pass_splines_reason;
  std::uint64_t pass_splines_bytes = 0;
  double pass_splines_budget = 0, pass_resolve_estimate = 0;
  std::uint64_t slots = 0;
  Screen screen;
  CoverageReport coverage;
  RunTiming timing;
  std::uint64_t host_peak_rss = 0, spline_bytes_per_electron = 0, device_buffer_bytes = 0;
  std::uint64_t knots_total = 0;
  std::uint64_t electrons_solved = 0;  // solved by this process itself (not gathered from other ranks)
  KnotsChoice knots;  // trajectory.knots_per_period as solved ("auto" resolved)
  std::vector<std::string> devices;
  double host_estimate_bytes = 0;
  std::uint64_t checkpoints_written = 0;
  std::int64_t checkpoint_every = 0;   // effective (batches), 0 = none
  std::uint64_t resumed_from = 0;      // electrons already in the cube when this process started
  std::vector<TuningSpan> tuning;      // this rank's processes so far, this one last (TuningSpan)
  // The retarded-time roots' sampling (coverage.hpp) and whether it meets accumulator.newton_iters.
  RootSampling root_sampling;
  bool roots_converged = true;
  // The run's direct spectra are computed from the window's samples (a device took the dft or fft
  // method), so they need the emission span's light in the window (coverage.hpp).
  bool spectra_from_samples = false;
  // [spectra] enabled (run.toml [spectra]): the method that sums on this process's devices ("auto"
  // resolved; "0: dft; 1: fft" where they differ), what chose it (run/spectra_stage.cpp
  // open_spectra), and the cost model's estimates on its first device, device seconds per electron.
  std::string spectra_method, spectra_chosen_by;
  double spectra_cost_direct = 0, spectra_cost_fft = 0, spectra_cost_dft = 0;
  double time_estimate = 0;            // s, dry run: from the device's measured peak, if known
  // What this process's run told its RunObserver::warning, in order: run.toml [warnings], which
  // edm sweep reads back into the campaign table (a warned field is recorded "done (suspect)").
  std::vector<std::string> warnings;
  // run.toml [telemetry] as the device sampler left it (run/telemetry.cpp): the tool's statistics or
  // why nothing was sampled, and the field kernel's registers where the build log gives them. Empty:
  // no section (a dry run).
  toml::table telemetry;
};

}  // namespace edm
