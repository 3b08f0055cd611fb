// The run driver's stages (internal), in the order run_campaign (run.cpp) calls them:
//   prepare  PreparedCell (prepare.cpp): scenario, units, screen, window, extended starts
//   plan     plan.cpp: memory guard, run folder, devices and ranks, slabs, batch size, dry run
//   batches  batches.cpp: start or resume, the batch loop with overlap, checkpoints
//   finish   finish.cpp: reduce and download in slabs into field.h5, commit (rename), manifest
// Each stage reads the RunContext and what the stages before it produced, and fills its part of
// the RunSummary.
#pragma once
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "edm/checkpoint.hpp"
#include "edm/error.hpp"
#include "edm/run.hpp"
#include "edm/sharded.hpp"
#include "edm/spectra.hpp"
#include "edm/writer.hpp"
#include "io/run_lock.hpp"
#include "run/ranks.hpp"

namespace edm::detail {

using Clock = std::chrono::steady_clock;
inline double seconds_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}
inline double seconds_since(Clock::time_point t0) { return seconds_between(t0, Clock::now()); }

// What every stage reads: the run's inputs and its start.
struct RunContext {
  const Campaign& campaign;
  const RunOptions& options;
  RunObserver& observer;
  Clock::time_point t_start;
};

// ---- the run folder (folder.cpp) -----------------------------------------------------------------

// The run folder's exclusive lock (created with the folder when missing); ConfigError EDM-RUN-040
// naming the holder when another process writes there. A stale lock is taken over with a warning.
RunFolderLock lock_run_folder(const RunContext& ctx);
// Moves aside (with a timestamp) what earlier runs left under this run's temporary names;
// field.h5.partial stays with `keep_field_partial` (edm resume of a later pass: it holds the passes before).
void set_aside_leftovers(const RunContext& ctx, const RunSummary& summary, bool keep_field_partial = false);
// Once this run's field.h5 is in place: moves aside (with a timestamp) a spectrum.h5 and a plots/
// already in the folder, which are the analysis of a field this run has replaced.
void set_aside_stale_analysis(const RunContext& ctx, const RunSummary& summary);
// After the manifest: removes the run's checkpoints (every rank's).
void remove_checkpoints(const RunSummary& summary);

// ---- prepare (prepare.cpp; PreparedCell in run.hpp) ----------------------------------------------

// The prepared cell's part of the RunSummary: electrons, screen, slots, and the knots per period
// the solves use ("auto" resolved, with its estimates).
void summarize_cell(const PreparedCell& cell, RunSummary& summary);

// ---- plan (plan.cpp) -----------------------------------------------------------------------------

// The first batch of a process is solved and launched in pieces of kFirstPiece, 2 kFirstPiece, …
// electrons (the last piece takes the rest), so that the device starts after the solve of a few
// electrons instead of a whole batch's (share/docs/design.md, performance model).
inline constexpr std::uint64_t kFirstPiece = 64;

struct RunPlan {
  Ranks ranks;
  RankShare share;                   // how the ranks share the work (pixels: every electron, a tile each)
  std::vector<DeviceInfo> devices;   // this rank's devices
  std::uint64_t first = 0, end = 0;  // this rank's electrons [first, end)
  std::uint64_t batch = 1;           // B, electrons per batch
  Sharding sharding = Sharding::Electrons;  // how this process's devices share the work (resolved)
  int rows_per_slab = 1;             // screen rows per download slab
  std::uint64_t slab_bytes = 0;
  std::uint64_t local_electrons() const { return end - first; }
};

// The memory guard, first of all: a cube the selected devices cannot hold is refused before
// anything else is done.
// The ensemble's states are refused there too when they cannot fit the host limit.
void refuse_oversized_cube(const Campaign& campaign, const RunOptions& options);
// Sets the output paths of the summary; refuses a folder that holds results (or a checkpoint that
// `edm run` would lose) unless the options allow it.
void claim_run_folder(const RunContext& ctx, RunSummary& summary);
// The host's available memory (/proc/meminfo MemAvailable, bytes; 0 when unknown).
std::uint64_t mem_available();
// The devices (reported to the observer), the MPI ranks and this rank's block of the ensemble.
RunPlan plan_devices_and_ranks(const RunContext& ctx, std::uint64_t electrons, RunSummary& summary);
// accumulator.sharding resolved for this process's devices (plan.sharding; run.toml [config]
// sharding and sharding_reason): one device or several MPI ranks shard by electrons; "auto" by the
// cost model (share/docs/design.md, "Several devices: pixels or electrons"). Returns plan.sharding.
Sharding plan_sharding(const RunContext& ctx, const PreparedCell& cell, RunPlan& plan, RunSummary& summary);
// The passes of a screen whose cube does not fit the devices at once (share/docs/design.md, "Screens
// larger than the devices"): rows [first, second) of each pass, in order; one pass, the whole
// screen, when it fits. A pass holds as many rows as every device holds beside a batch's splines
// (by pixels: that many per device). ConfigError EDM-TILE-004 when not one row fits. Sets
// summary.passes and pass_rows.
std::vector<std::pair<int, int>> plan_passes(const RunContext& ctx, const PreparedCell& cell, RunPlan& plan,
                                             RunSummary& summary);
// How the MPI ranks share the work (ranks.hpp choose_rank_share, from accumulator.sharding): by pixels
// every rank takes every electron ([first, end) = the ensemble) on its tile of rows. Before the
// accumulators are built: EDM-MPI-001 / EDM-MPI-005 refuse before any work, and a run folder that
// some rank does not see, EDM-MPI-002 (check_shared_folder; not in a dry run). run/ranks.cpp.
// Called by plan_devices_and_ranks, once the ranks are known.
void share_among_ranks(const RunContext& ctx, int ny, std::uint64_t electrons, RunPlan& plan);
// The screen this rank's accumulator covers: its tile by pixels, else the whole screen.
Screen rank_screen(const PreparedCell& cell, const RunPlan& plan);
// The download slabs and the batch size B ("auto": from one solved electron and the host budget).
void plan_batches(const RunContext& ctx, const PreparedCell& cell, RunPlan& plan, RunSummary& summary);
// A screen in passes (summary.passes > 1): whether the first pass's splines are kept on the host for
// the later passes (when the ensemble's splines, predicted from the knot budget, fit the host budget
// left after the batches' needs) or solved again in every pass; summary.pass_splines, _reason,
// _bytes and _budget. Returns the bytes the kept splines may take (0: re-solved). After plan_batches.
std::uint64_t plan_pass_splines(const RunContext& ctx, const PreparedCell& cell, const RunPlan& plan,
                                RunSummary& summary);
// The host memory the plan counts (bytes): the limit, what is fixed whatever the batch, and what
// each electron of a batch adds (predicted from PreparedCell::budget, never from a solve).
struct HostMemory {
  double limit = 0, fixed = 0, per_electron = 0;
};
HostMemory host_memory(const RunContext& ctx, const PreparedCell& cell, const RunPlan& plan,
                       const RunSummary& summary);
// EDM-RUN-032 when the planned batch does not fit the limit, with the numbers.
void refuse_host_overflow(const RunContext& ctx, const PreparedCell& cell, const RunPlan& plan,
                          const HostMemory& memory);
// The retarded-time roots' sampling (coverage.hpp, RootSampling) on the solved splines of electron
// 0, of the initial state with the shortest observed period and of the one meeting the strongest
// field (at most three solves): below the threshold of the campaign's accumulator.newton_iters a
// warning, or under screen.strict the error EDM-WIN-020; recorded in summary.root_sampling and
// summary.roots_converged for run.toml's [window]. A pilot that cannot be solved, or a stop, leaves
// no verdict: the batch loop meets the same and reports it. Returns the spline bytes of electron 0
// (the first pilot), 0 when it was not solved.
std::uint64_t check_root_sampling(const RunContext& ctx, const PreparedCell& cell, RunSummary& summary);
// Dry run: the host and time estimates from electron 0's splines: `probe_bytes` when
// check_root_sampling solved it, else solved here (nothing runs on a device), and the rate `edm
// bench` measured on the kernel path of each of acc's devices (none if one was never measured). A
// stop request is honoured either way (Interrupted).
void estimate_dry_run(const RunContext& ctx, const PreparedCell& cell, const RunPlan& plan,
                      const ShardedFieldAccumulator& acc, RunSummary& summary, std::uint64_t probe_bytes);
// The state where the free straight line of y reaches the light-front phase ξ = t − s z = target
// (prepare.cpp; the pilots of check_root_sampling use it too).
void free_at_phase(const double y[8], int sdir, double target, double out[8]);

// ---- batches (batches.cpp) -----------------------------------------------------------------------

// A product summed from every batch's splines, as the batch loop sees it: the field accumulator's
// (batches.cpp) and, with [spectra] enabled, the direct spectra's (SpectraShards, below). The loop
// hands every batch to each consumer in turn and asks them alike at its boundaries (stop,
// checkpoint, progress, the end), so it never branches on which products a run has.
class BatchConsumer {
 public:
  virtual ~BatchConsumer() = default;
  // What it sums, for messages ("the direct spectra").
  virtual std::string what() const = 0;
  // Takes the batch (`in_slabs`: the last batch, launched in slabs of screen rows where the
  // consumer can). When it returns the batch may be dropped by the caller: a consumer that still
  // needs the splines holds its own reference, and the last reference releases them.
  virtual void take(const std::shared_ptr<SplineBatch>& batch, bool in_slabs) = 0;
  // The batches taken so far are done with on the host; rethrows what its work threw.
  virtual void wait() {}
  // When its device work last went idle (after wait(); the epoch when it is measured elsewhere).
  virtual Clock::time_point idle_at() const { return {}; }
  // Whether a stop request may halt its launches at a launch boundary (the field's); a consumer
  // that sums whole batches keeps the loop from halting any, so a stop comes at a batch's end.
  virtual bool halts_at_launches() const { return true; }
  // Whether its device work is counted apart from the field's launches (and may run past them):
  // progress then waits for its electrons_completed().
  virtual bool trails_field() const { return false; }
  virtual std::uint64_t electrons_completed() { return 0; }
  // Its part of a checkpoint of electrons done (the field's cube is written by the checkpoint).
  virtual void save(CheckpointState& /*st*/) {}
};


class KeptSplines;

// The run's host-side products, of every electron, from the first pass of a screen in passes (the
// later passes launch the same electrons and do not change them): what a later pass's checkpoint
// saves as its γ trace, coverage and knots, and what a resume into a later pass commits.
struct PassProducts {
  GammaTrace gamma;
  std::vector<CoverageRecord> coverage;
  std::uint64_t knots = 0;
};

// What the batch loop carries from batch to batch (and a checkpoint saves with the cubes).
struct BatchState {
  GammaTrace gamma;
  std::uint64_t next = 0;  // the first electron not yet summed
  std::uint64_t batches_done = 0;
  double kernel_before = 0;            // kernel seconds before a resume
  std::int64_t checkpoint_every = -1;  // K: batches per checkpoint, 0 = decide from the rate, −1 = none
  std::int64_t checkpoint_every_asked = 0;  // K as the command asked it (saved: edm resume keeps it)
  std::string campaign_text;           // the effective campaign, saved with every checkpoint
  std::string campaign_provenance;     // and where its keys came from (provenance_text)
  std::filesystem::path checkpoint_file;  // checkpoint.h5 (under mpirun: rank 0's, the commit)
  std::uint64_t generation = 0;           // checkpoints of this run so far (their files' names under mpirun)
  Clock::time_point t_first_launch;
  // The products beside the field that take every batch too ([spectra] enabled: SpectraShards).
  std::vector<BatchConsumer*> consumers;
  const Scenario* scenario = nullptr;  // the campaign's electrons (the summed ones' digest: CheckpointState)
  // The checkpoint's input_digest carried forward: FNV-1a (a streaming hash) of the electrons
  // [first, digest_to) before its 0 → 1 mapping, so that a checkpoint hashes only the electrons
  // summed since the last one instead of all of them again (batches.cpp, advance_digest).
  std::uint64_t digest = 0xcbf29ce484222325ULL;  // the FNV-1a offset basis: no electron yet
  std::uint64_t digest_to = 0;
  bool resumed_sums = false;  // resumed from a checkpoint holding cubes and spectra sums (not one of no electron done)
  bool later_pass = false;    // a pass after the first of a screen in tiles (its checkpoints: PassProducts)
  // A later pass launches these splines instead of solving (KeptSplines::serve), when they hold it all.
  KeptSplines* kept = nullptr;
  // A screen in passes: this pass (0: the first) of `passes`, on rows [first, second) of the screen,
  // as its checkpoints record them; a later pass's checkpoints carry the run's products, not its own.
  std::uint32_t pass = 0, passes = 1;
  std::pair<int, int> pass_rows{0, 0};
  std::shared_ptr<const PassProducts> run_products;
};

// The splines of every batch of a pass, kept on the host for the passes after it (plan_pass_splines):
// a consumer beside the field's that holds each batch's shared splines, in order, while they fit
// `limit` bytes; past it, it drops them all and the later passes solve again. A later pass's batch
// loop asks serve() for each batch before solving it: the same electrons in the same batches and
// pieces, so its launches are those of a re-solved pass and the cube is bit-identical.
class KeptSplines final : public BatchConsumer {
 public:
  KeptSplines(std::uint64_t first, std::uint64_t end, std::uint64_t limit) : first_(first), end_(end), limit_(limit) {}
  std::string what() const override { return "the splines kept for the later passes"; }
  void take(const std::shared_ptr<SplineBatch>& batch, bool in_slabs) override;
  // Electrons [first, end) in order, within the limit: the later passes may launch them.
  bool complete() const { return !dropped_ && next_ == end_; }
  // Starts collecting again (a pass that starts at the first electron while incomplete).
  void restart() {
    batches_.clear();
    next_ = first_;
    bytes_ = 0;
  }
  // The kept batch of electrons [b0, b0 + count): a copy, or the batch itself (then dropped here) on
  // the last pass (`last`); none when no kept batch is that one.
  std::optional<SplineBatch> serve(std::uint64_t b0, std::uint64_t count);
  void set_last(bool last) { last_ = last; }
  std::uint64_t bytes() const { return bytes_; }
  std::uint64_t peak_bytes() const { return peak_; }
  // Why it dropped its batches (empty: it did not).
  const std::string& dropped() const { return why_; }

 private:
  struct Kept {
    std::uint64_t first = 0, count = 0;
    std::shared_ptr<SplineBatch> batch;
  };
  std::vector<Kept> batches_;
  std::uint64_t first_, end_, limit_, next_ = 0, bytes_ = 0, peak_ = 0;
  bool dropped_ = false, last_ = false;
  std::string why_;
};

// The CLBlast parameter sets of this process's devices, as [tuning] clblast records them
// ("0: CLBlast default; 1: …", in the order of plan.devices).
std::string clblast_tuning_of(const RunPlan& plan);
// This process's devices as run.toml names them ("0: NAME (PLATFORM); 1: …"), and its CLBlast sets
// (as it opened its devices, or as a resumed run's last process recorded them).
std::string device_list(const RunSummary& S);
std::string this_process_clblast(const RunPlan& plan, const RunSummary& S);
// A fresh start at this rank's first electron, or (edm resume) the cube, γ trace, coverage and
// timings so far from the checkpoint.
BatchState start_or_resume(const RunContext& ctx, const PreparedCell& cell, const RunPlan& plan, std::uint64_t electrons,
                           ShardedFieldAccumulator& acc, RunSummary& summary);
// Solve, accumulate and release batch after batch; with batch_overlap the solve of the next batch
// runs while the device works on this one. Checkpoints on schedule and on a stop request (then
// Interrupted). Every error leaves with the devices idle and no thread running.
void run_batches(const RunContext& ctx, const PreparedCell& cell, const RunPlan& plan,
                 ShardedFieldAccumulator& acc, BatchState& state, RunSummary& summary);

// A screen whose cube does not fit the devices at once (plan_passes): the passes after the one
// run_campaign ran and wrote (passes[from], …), each on accumulators of its tile of rows, its batches
// launched from `kept` when it holds every electron (plan_pass_splines), else solved again from the
// start (and kept then, if `kept` is given), downloaded and written into `writer` (rank 0's) before
// the next pass allocates; the file is flushed and closed after each pass. The coverage and knots stay
// the run's (`run`'s γ trace and the summary's, as the first pass left them). A stop, or
// checkpoint_every, checkpoints the pass (its cube, with `run`'s campaign, cadence and generations
// carried on); the writer then keeps field.h5.partial for edm resume. Without [spectra]: with them a
// later pass is not checkpointed (its checkpoint would lack the first pass's sums).
// Records summary.pass_splines as it went. Returns the seconds spent writing.
struct LaterPasses {
  const std::vector<std::pair<int, int>>& passes;
  std::size_t from = 1;
  FieldWriter* writer = nullptr;
  KeptSplines* kept = nullptr;
};
double run_later_passes(const RunContext& ctx, const PreparedCell& cell, const RunPlan& plan,
                        const KernelOptions& kernel, const LaterPasses& later, BatchState& run, RunSummary& summary);
// edm resume of a screen in passes: the pass of this rank's checkpoint (0 when it is the first, or
// the run is not resumed), read before the accumulators are built; EDM-CKP-087 when its passes are
// not those planned now.
std::uint32_t resumed_pass(const RunContext& ctx, const RunPlan& plan, const std::vector<std::pair<int, int>>& passes,
                           const RunSummary& summary);
// The batch state of pass `p` of `passes` (its checkpoints record it). For a later pass (p > 0,
// after start_or_resume of its checkpoint) the run's γ trace, coverage and knots are taken out of
// `state` and `summary` into state.run_products, and the pass sums a γ trace of its own.
void enter_pass(BatchState& state, RunSummary& summary, std::uint32_t p, const std::vector<std::pair<int, int>>& passes);
// After a later pass's batches: the run's γ trace, coverage and knots back into `state` and `summary`.
void leave_later_pass(BatchState& state, RunSummary& summary);

// ---- finish (finish.cpp) -------------------------------------------------------------------------

// Rank 0 creates the run folder and field.h5.partial in `writer` (the other ranks write nothing).
void open_field_file(const RunContext& ctx, const PreparedCell& cell, const RunPlan& plan,
                     std::optional<FieldWriter>& writer, RunSummary& summary);
// Reduces across devices, downloads in slabs, reduces each slab across ranks to rank 0, which writes
// it; fills the field, kernel and reduce timings. Returns the seconds spent writing the slabs.
double download_field(const RunContext& ctx, const PreparedCell& cell, const RunPlan& plan,
                      ShardedFieldAccumulator& acc, const BatchState& state, FieldWriter* writer,
                      RunSummary& summary);
// Rank 0: the γ trace and attributes into field.h5, then the rename to field.h5.
void commit_field_file(const RunContext& ctx, const PreparedCell& cell, const RunPlan& plan,
                       const GammaTrace& gamma, double write_seconds, FieldWriter& writer,
                       RunSummary& summary);
// Rank 0, after field.h5 is committed and something that must come with it (spectrum.h5, run.toml)
// could not be written: field.h5 goes back to field.h5.partial (a field without its manifest would
// look like a finished run) and e is thrown again, saying where the complete field was kept.
[[noreturn]] void keep_field_as_partial(const RunSummary& summary, const IoError& e);
// The rename of keep_field_as_partial alone (for a failure that is rethrown as it is); false when
// it failed.
bool move_field_to_partial(const RunSummary& summary);
// Rank 0: run.toml. If it cannot be written, keep_field_as_partial.
void write_run_manifest(const RunContext& ctx, const PreparedCell& cell, const RunPlan& plan,
                        const ShardedFieldAccumulator& acc, const RankTimings& per_rank,
                        const RunSummary& summary);

// ---- direct spectra (spectra_stage.cpp) ----------------------------------------------------------

// [spectra] on this rank's devices (share/docs/outputs.md "Direct spectra"): one SpectraAccumulator
// per device, every batch split over them in the contiguous blocks the field's shards use, so each
// device sums its electrons in electron order. reduce() folds the shards in a fixed order (device
// order on each rank, then rank order on rank 0), so the result is deterministic.
//
// A batch's spectra are summed on a worker thread of their own, which holds the batch's splines
// until then: the fft and dft methods keep the host busy for as long as the device sums the batch
// (one electron's series at a time), and the batch loop solves the next batch meanwhile. One batch
// at a time, in batch order, so the sums are those of the single pass. Every other call waits for
// the worker first and rethrows what it threw.
class SpectraShards final : public BatchConsumer {
 public:
  SpectraShards(std::vector<SpectraAccumulator> accs, std::size_t directions, std::size_t frequencies)
      : accs_(std::move(accs)), directions_(directions), frequencies_(frequencies), worker_(std::make_unique<Worker>()) {}
  std::string what() const override { return "the direct spectra"; }
  // Waits for the batch before, then sums `batch` on the worker (which drops its reference when
  // done). The spectra have no slabs: `in_slabs` changes nothing.
  void take(const std::shared_ptr<SplineBatch>& batch, bool in_slabs) override;
  // The worker's batch summed; rethrows what it threw.
  void wait() override;
  // When the worker last finished a batch (after wait(); the epoch before any): the device's spectra
  // work ran until about then, for [timing] trajectories_overlapped.
  Clock::time_point idle_at() const override { return idle_at_; }
  // A batch is summed whole (on the worker), so the field's launches are not halted by a stop.
  bool halts_at_launches() const override { return false; }
  bool trails_field() const override { return true; }
  // Electrons whose kernels completed, by this process (progress): waits for the worker's piece in
  // hand at most, and rethrows what the worker threw.
  std::uint64_t electrons_completed() override;
  // Every device's sums so far into the checkpoint (snapshot).
  void save(CheckpointState& st) override;
  std::size_t device_count() const { return accs_.size(); }
  // Whether a device sums from the window's samples (the dft or fft method).
  bool any_sampled() const {
    for (const auto& a : accs_)
      if (a.method() != SpectraMethod::Direct) return true;
    return false;
  }
  std::size_t directions() const { return directions_; }
  std::size_t frequencies() const { return frequencies_; }
  // Every device's sums so far (checkpoints); they keep accumulating.
  std::vector<SpectraSums> snapshot();
  // Before any batch: every device's sums from a checkpoint (device order).
  void restore(const std::vector<SpectraSums>& sums);
  // Collective (every rank calls it): the sums of every device of every rank, folded in device
  // order, then rank order, on rank 0 (the result elsewhere is this rank's own fold).
  SpectraSums reduce(const Ranks& ranks);

 private:
  struct Worker {
    std::mutex busy;              // held by the worker while it hands a piece of its batch over
    std::future<void> pending;    // the batch on the worker (its destructor waits for it)
    Clock::time_point done_at{};  // set by the worker as its batch ends
  };
  std::vector<SpectraAccumulator> accs_;
  std::size_t directions_ = 0, frequencies_ = 0;
  Clock::time_point idle_at_{};
  std::unique_ptr<Worker> worker_;  // last: destroyed (its batch waited for) before the accumulators
};

// The accumulators of [spectra] on this rank's devices (none when disabled), each built by the
// factory of the spectra methods with the campaign's spectra.method, or for "auto" the cost
// model's pick (direct where the window's samples would alias harmonics); the methods, what chose
// them and the cost model's numbers into `summary` (run.toml [spectra]) and the phase "spectra".
// edm resume: each
// device's with the method its checkpointed sums were made with (the record, "auto" resolved), so
// a resume continues the same sums; ConfigError EDM-CKP-081 naming spectra.method and both methods
// when the campaign asks explicitly for another. A checkpoint without the record (an older edm) is
// resumed as the campaign resolves now, with a warning.
std::optional<SpectraShards> open_spectra(const RunContext& ctx, const PreparedCell& cell, const RunPlan& plan,
                                          RunSummary& summary);
// edm resume: every device's sums from this rank's checkpoint (the file start_or_resume read);
// IoError naming the file and dataset when it lacks them or holds another grid.
void resume_spectra(const RunPlan& plan, const BatchState& state, const RunSummary& S, SpectraShards& spectra);
// Rank 0, after field.h5: the reduced sums into spectrum.h5's /direct group.
void write_spectra(const RunContext& ctx, const PreparedCell& cell, SpectraSums sums, const RunSummary& S);

}  // namespace edm::detail
