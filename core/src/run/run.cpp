// The run driver: one cell from a validated campaign to field.h5 + run.toml, in the stages of
// run/stages.hpp — prepare the cell, plan the run, the batch loop, finish (share/docs/developing.md
// draws the data flow). This file is the order of the stages and nothing else.
#include "edm/run.hpp"

#include <ctime>
#include <fstream>
#include <random>
#include <sstream>

#include "edm/checkpoint.hpp"
#include "edm/error.hpp"
#include "run/stages.hpp"
#include "run/telemetry.hpp"

namespace edm {

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

namespace {

// The caller's observer, with every warning also kept in the RunSummary (run.toml [warnings]): the
// console said "the field is then wrong", and nothing in the folder did (issue 29).
struct WarningRecorder final : RunObserver {
  RunObserver& inner;
  std::vector<std::string>& kept;
  // `given`: the front end's warnings (RunOptions::warnings), said and kept first.
  WarningRecorder(RunObserver& o, std::vector<std::string>& k, const std::vector<std::string>& given)
      : inner(o), kept(k) {
    for (const auto& w : given) warning(w);
  }
  void phase(const std::string& name, const std::string& detail) override { inner.phase(name, detail); }
  void progress(const RunProgress& p) override { inner.progress(p); }
  void batch_done(std::uint64_t d, std::uint64_t t, double e) override { inner.batch_done(d, t, e); }
  void warning(const std::string& message) override {
    kept.push_back(message);
    inner.warning(message);
  }
};

// The kernel options, the sharding and the passes planned, the accumulators of the first pass on
// this process's devices (and their buffer size in the summary); edm resume of a later pass's
// checkpoint (`pass0`, its index): that pass's.
ShardedFieldAccumulator first_pass_accumulator(const detail::RunContext& ctx, const PreparedCell& cell,
                                               detail::RunPlan& plan, KernelOptions& kernel,
                                               std::vector<std::pair<int, int>>& passes, std::uint32_t& pass0,
                                               RunSummary& S) {
  kernel = kernel_options(ctx.campaign.accumulator);
  kernel.ensemble_radius = cell.transverse_rms();  // for the automatic pixel order
  detail::plan_sharding(ctx, cell, plan, S);
  passes = detail::plan_passes(ctx, cell, plan, S);
  pass0 = detail::resumed_pass(ctx, plan, passes, S);
  ShardedFieldAccumulator acc(plan.devices, screen_tile(cell.screen(), passes[pass0].first, passes[pass0].second),
                              cell.mode(), kernel, plan.sharding);
  S.device_buffer_bytes = acc.device_buffer_bytes();
  return acc;
}

// Whether `edm resume` continues a checkpoint of a later pass of a screen in passes: field.h5.partial
// then holds the passes before it and is no leftover. A checkpoint that cannot be read is reported
// later, in start_or_resume's words.
bool resumes_later_pass(const RunOptions& options, const RunSummary& S) {
  if (!options.resume) return false;
  try {
    return read_checkpoint_state(checkpoint_path(S.folder)).pass > 0;
  } catch (const Error&) {
    return false;
  }
}

// Rank 0's field.h5.partial: created, or, resuming a later pass (`pass0` > 0), taken over from the
// stopped run, whose passes before it are there; kept then whatever happens, for its checkpoint.
void open_or_continue_field_file(const detail::RunContext& ctx, const PreparedCell& cell, const detail::RunPlan& plan,
                                 std::uint32_t pass0, std::optional<FieldWriter>& writer, RunSummary& S) {
  if (pass0 == 0) return detail::open_field_file(ctx, cell, plan, writer, S);
  if (plan.ranks.rank != 0) return;
  writer.emplace(FieldWriter::Resume{}, S.field_file, cell.screen(), cell.units(), cell.mode(), S.run_id);
  writer->keep_partial();
}

// The passes as the batch loop starts: planned, the one run first, the bytes the kept splines may take.
struct PassStart {
  const std::vector<std::pair<int, int>>& passes;
  std::uint32_t pass0 = 0;
  std::uint64_t kept_limit = 0;
};

// The batch loop's state, started or resumed (a resumed later pass's beside the run's products), with
// the direct spectra (their sums resumed) and the splines kept for the later passes as consumers
// beside the field's. A pass resumed midway holds too few splines to keep: the pass after it solves
// and keeps them then (run_later_passes).
detail::BatchState start_batches(const detail::RunContext& ctx, const PreparedCell& cell, const detail::RunPlan& plan,
                                 ShardedFieldAccumulator& acc, const PassStart& p,
                                 std::optional<detail::SpectraShards>& spectra,
                                 std::optional<detail::KeptSplines>& kept, RunSummary& S) {
  detail::BatchState state = detail::start_or_resume(ctx, cell, plan, cell.electrons(), acc, S);
  detail::enter_pass(state, S, p.pass0, p.passes);
  if (spectra) state.consumers.push_back(&*spectra);  // beside the field, every batch
  if (p.kept_limit > 0) kept.emplace(plan.first, plan.end, p.kept_limit);
  if (kept && state.next == plan.first) state.consumers.push_back(&*kept);
  // A checkpoint of no electron done holds no spectra sums: the fresh (zero) ones stand.
  if (spectra && state.resumed_sums) detail::resume_spectra(plan, state, S, *spectra);
  return state;
}

// After the batches of the pass run first: its rows into field.h5.partial (rank 0's `writer`), then
// the later passes'; the seconds spent writing.
double write_passes(const detail::RunContext& ctx, const PreparedCell& cell, const detail::RunPlan& plan,
                    const KernelOptions& kernel, ShardedFieldAccumulator& acc, detail::BatchState& state,
                    const PassStart& p, FieldWriter* writer, detail::KeptSplines* kept, RunSummary& S) {
  detail::leave_later_pass(state, S);  // a resumed later pass: the run's γ trace, coverage and knots back
  const double seconds = detail::download_field(ctx, cell, plan, acc, state, writer, S);
  return seconds + detail::run_later_passes(ctx, cell, plan, kernel, {p.passes, p.pass0 + 1, writer, kept}, state, S);
}

}  // namespace

KernelOptions kernel_options(const AccumulatorSection& a) {
  KernelOptions k;
  k.kernel = a.kernel;
  k.substeps = a.substeps;
  k.newton_iters = a.newton_iters;
  k.coef_reuse = a.coef_reuse;
  k.sample_chunks = a.sample_chunks;
  k.work_group = a.work_group;
  k.electron_group = a.electron_group;
  k.tile_width = a.tile_width;
  k.pixel_order = a.pixel_order;
  k.max_registers = a.max_registers;
  k.state_local = a.state_local;
  k.fast_recip = a.fast_recip;
  k.nv_seed = a.nv_seed;
  k.interleave = a.interleave;
  k.simd = a.simd;
  return k;
}

RunSummary run_campaign(const Campaign& campaign, const PluginRegistry& plugins, const RunOptions& options,
                        RunObserver& observer) {
  using namespace detail;
  RunSummary S;
  WarningRecorder recorder(observer, S.warnings, options.warnings);
  const RunContext ctx{campaign, options, recorder, Clock::now()};
  S.run_id = make_run_id();

  // Under mpirun the ranks first agree that they run one campaign (keys and data files): first,
  // because any check below could pass on one rank and stop another, and nothing is written yet.
  agree_on_campaign(current_ranks(), campaign,
                    {options.dry_run, options.overwrite, options.resume, options.checkpoint_every});
  // Prepare and plan: every input problem surfaces before any device time is spent.
  refuse_oversized_cube(campaign, options);
  PreparedCell cell(campaign, plugins);
  for (const auto& w : cell.warnings()) recorder.warning(w);
  summarize_cell(cell, S);
  // One writer per folder, held from its first check to the last rename (it is released when this
  // function returns or throws). Rank 0 holds it for the whole mpirun job.
  RunFolderLock lock;
  if (!options.dry_run && current_ranks().rank == 0) lock = lock_run_folder(ctx);
  claim_run_folder(ctx, S);
  if (lock.held()) set_aside_leftovers(ctx, S, resumes_later_pass(options, S));
  RunPlan plan = plan_devices_and_ranks(ctx, cell.electrons(), S);
  // The accumulators before any trajectory is solved: their constructors check that the buffers
  // fit each device and build the kernel.
  KernelOptions kernel;
  std::vector<std::pair<int, int>> passes;  // one, the whole screen, unless its cube does not fit
  std::uint32_t pass0 = 0;                  // the pass run first: 0, or a resumed later pass's
  ShardedFieldAccumulator acc = first_pass_accumulator(ctx, cell, plan, kernel, passes, pass0, S);
  plan_batches(ctx, cell, plan, S);
  const std::uint64_t kept_limit = plan_pass_splines(ctx, cell, plan, S);  // passes: keep the splines or re-solve
  const std::uint64_t probe_bytes = check_root_sampling(ctx, cell, S);
  if (options.dry_run) {
    estimate_dry_run(ctx, cell, plan, acc, S, probe_bytes);
    return S;
  }

  // Device telemetry while the batches and the download run (rank 0; run.toml [telemetry]).
  const auto telemetry = plan.ranks.rank == 0 ? std::make_unique<TelemetrySampler>() : nullptr;
  // The batch loop. On any error the writer's destructor removes field.h5.partial; a checkpoint
  // already written stays for `edm resume`.
  std::optional<SpectraShards> spectra = open_spectra(ctx, cell, plan, S);
  S.spectra_from_samples = spectra && spectra->any_sampled();
  std::optional<KeptSplines> kept;
  BatchState state = start_batches(ctx, cell, plan, acc, {passes, pass0, kept_limit}, spectra, kept, S);
  std::optional<FieldWriter> writer;
  open_or_continue_field_file(ctx, cell, plan, pass0, writer, S);
  run_batches(ctx, cell, plan, acc, state, S);

  // Finish: the field into field.h5 (rank 0), the host-side products folded across ranks exactly
  // (γ trace: sums and extrema; coverage records), then the manifest.
  const double write_seconds = write_passes(ctx, cell, plan, kernel, acc, state, {passes, pass0, kept_limit},
                                            writer ? &*writer : nullptr, kept ? &*kept : nullptr, S);
  if (telemetry) record_telemetry(*telemetry, acc, S);
  RankTimings per_rank = gather_rank_results(plan.ranks, state.gamma, S, plan.share.pixels);
  if (plan.ranks.size > 1) {  // run.toml names every rank's devices and CLBlast sets, not rank 0's alone
    per_rank.devices = gather_strings(plan.ranks, device_list(S));
    per_rank.clblast = gather_strings(plan.ranks, this_process_clblast(plan, S));
  }
  // The direct spectra of every device and rank, folded in a fixed order on rank 0 (collective).
  std::optional<SpectraSums> spectra_sums;
  if (spectra) spectra_sums = spectra->reduce(plan.ranks);
  if (plan.ranks.rank != 0) return S;
  commit_field_file(ctx, cell, plan, state.gamma, write_seconds, *writer, S);
  if (spectra_sums) {
    try {
      write_spectra(ctx, cell, std::move(*spectra_sums), S);
    } catch (const IoError& e) {
      keep_field_as_partial(S, e);  // field.h5 and run.toml stay a pair
    } catch (...) {
      move_field_to_partial(S);  // any other failure too (EDM-IO-105 is an Error, bad_alloc none)
      throw;
    }
  }
  write_run_manifest(ctx, cell, plan, acc, per_rank, S);
  remove_checkpoints(S);
  return S;
}

}  // namespace edm
