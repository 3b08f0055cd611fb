// The batch loop (the driver's third stage). Batching (electron_batch = B): solve B trajectories,
// enqueue their launches, free their splines, repeat; the device buffers persist, so host memory
// does not grow with N. With batch_overlap the solve of batch k+1 runs while the device works on
// batch k (launches are asynchronous) and a watcher (run/overlap.hpp) records when the device went
// idle, so [timing] trajectories_overlapped is measured. Each batch goes to a list of consumers
// (stages.hpp BatchConsumer): the field accumulator's and, with [spectra] enabled, the direct
// spectra's, which sum it on a worker thread of their own (SpectraShards), so the next solve
// overlaps them too; the loop asks them alike and never branches on which products a run has. On
// one device the launch order is the electron order whatever B is, so a batched run is
// bit-identical to the single pass.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <deque>
#include <optional>
#include <sstream>

#include "edm/checkpoint.hpp"
#include "edm/error.hpp"
#include "field/fnv1a.hpp"
#include "field/tuning.hpp"
#include "run/overlap.hpp"
#include "run/progress.hpp"
#include "run/ranks.hpp"
#include "run/sharded_cubes.hpp"
#include "run/stages.hpp"

namespace edm::detail {
namespace {

// Seconds with an SI prefix and four significant digits ("2.67e-14" is "26.7 fs", never "0.000000 s").
std::string format_time(double seconds) {
  static const struct {
    double scale;
    const char* unit;
  } units[] = {{1, "s"}, {1e-3, "ms"}, {1e-6, "µs"}, {1e-9, "ns"}, {1e-12, "ps"}, {1e-15, "fs"}, {1e-18, "as"}};
  const double a = std::abs(seconds);
  for (const auto& u : units)
    if (a >= u.scale || u.scale == 1e-18) {
      char b[48];
      std::snprintf(b, sizeof b, "%.4g %s", a == 0 ? 0.0 : seconds / u.scale, a == 0 ? "s" : u.unit);
      return b;
    }
  return "";
}

SplineBatch solve_batch(const RunContext& ctx, const PreparedCell& cell, std::uint64_t first,
                        std::uint64_t count) {
  try {
    return cell.solve(first, count, ctx.options.stop);
  } catch (const PhysicsError& e) {
    // The integration runs until the electrons' light has passed the last sample; a window
    // that ends absurdly late turns into a runaway integration, which is a campaign problem.
    if (ctx.campaign.screen.window != ScreenWindow::Auto && e.id() == "EDM-TRJ-011") {
      const Screen& screen = cell.screen();
      const double t_last = screen.t_rel(screen.samples - 1);
      throw ConfigError("EDM-WIN-003",
                        std::string("[screen] t_start / samples: the observer window ends at ") +
                            format_time((t_last + screen.time_offset()) * cell.units().time()) +
                            ", too late for the trajectories to reach (" + e.what() + ")");
    }
    throw;
  }
}

// The light the run's products need, against the window (share/docs/campaign.md, "The burst, and
// windows that miss it"): the field needs the burst (missed or cut at some pixel), the spectra that
// are computed from the window's samples (spectra.method dft or fft, or auto, which may pick them)
// need the whole emission span (`sampled`: RunSummary::spectra_from_samples, the methods the devices
// took, so an auto that took direct is not held to it). Under screen.strict refused (EDM-WIN-011)
// before the batch takes device time; otherwise warned about once, at the end of the loop. A cut
// burst was only recorded outside window = "burst", and a cut emission not looked at: the burst
// window silently truncated a track's dft spectra (relative L2 37 at θ = 2/γ; found by a tester).
std::string floor_text() {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0e", kEmissionEnvelopeFloor);
  return buf;
}
std::string burst_problem(const PreparedCell& cell, const Campaign& campaign, const CoverageReport& cov,
                          bool sampled) {
  const std::uint64_t missed = cov.burst_missed_electrons(), cut = cov.burst_cut_electrons();
  // Times from the window's first sample: absolute lab times of a far screen differ in their last digits.
  const Screen& sc = cell.screen();
  auto at = [&](double t_rel) { return format_time((t_rel - sc.t0_rel) * cell.units().time()); };
  const std::string span = "from sample 0 (t_start), the window ends at " + at(sc.t_rel(sc.samples - 1)) +
                           ", the burst's light spans " + at(cov.burst_first()) + " to " + at(cov.burst_last());
  const bool burst_window = campaign.screen.window == ScreenWindow::Burst;
  if (missed > 0)
    return "the observer window holds none of the burst's light at some pixel for " + std::to_string(missed) +
           " electron(s) (" + span + "); the field there is the electrons' Coulomb field only: use window = \"burst\" "
           "or move [screen] t_start";
  if (cut > 0)
    return "the observer window cuts the burst's light at some pixel for " + std::to_string(cut) + " electron(s) (" +
           span + "): the field misses part of the burst there; " +
           (burst_window ? "raise [screen] samples" : "raise [screen] samples or use window = \"burst\"");
  if (sampled && cov.emission_cut_electrons() > 0)
    return "the observer window cuts the light of the emission (where the envelope is above " +
           floor_text() + " of its peak) at some pixel for " +
           std::to_string(cov.emission_cut_electrons()) +
           " electron(s): the direct spectra of method dft/fft (spectra.method = \"" +
           name(campaign.spectra.method) + "\") are computed from the window's samples and miss that light; " +
           "use window = \"burst\" (which then spans the emission), more [screen] samples, or spectra.method = \"direct\"";
  return "";
}

void refuse_missed_burst(const RunContext& ctx, const PreparedCell& cell, const CoverageReport& cov, bool sampled) {
  if (!ctx.campaign.screen.strict) return;
  const std::string problem = burst_problem(cell, ctx.campaign, cov, sampled);
  if (!problem.empty()) throw PhysicsError("EDM-WIN-011", problem + " (screen.strict = true)");
}

// The batch's host-side products known at once: coverage (refused when clipped, unless allowed)
// and spline bytes. Its γ trace and knots wait in a LaunchedBatch until its launches are done.
void record_batch(const RunContext& ctx, const PreparedCell& cell, const SplineBatch& batch,
                  std::uint64_t count, RunSummary& S) {
  // Coverage is per electron, so batch records concatenate.
  CoverageReport cov =
      check_coverage(cell.screen(), batch, cell.burst(), !cell.solver_scenario().has_tracks());
  for (auto& r : cov.records) S.coverage.records.push_back(r);
  S.coverage.emission_known = S.coverage.emission_known || cov.emission_known;
  refuse_missed_burst(ctx, cell, cov, S.spectra_from_samples);
  if (cov.clipped_electrons() > 0 && !ctx.campaign.screen.allow_clipping) {
    const auto& r = *std::find_if(cov.records.begin(), cov.records.end(),
                                  [](const CoverageRecord& r) { return r.clipped(); });
    const double T = cell.units().time();
    throw PhysicsError("EDM-WIN-001",
                       "the observer window is not covered by electron " + std::to_string(r.electron) +
                           " (margin at start " + format_time(r.margin_start * T) + ", at end " +
                           format_time(r.margin_end * T) +
                           "): use [screen] window = \"auto\", fewer samples, or allow_clipping = true");
  }
  S.spline_bytes_per_electron = std::max<std::uint64_t>(S.spline_bytes_per_electron, batch.bytes() / count);
}

// A batch (or a piece of the first one) whose launches may not all be done: its γ trace and knots
// per launch group of G electrons (the accumulator's launches, FieldAccumulator::queue_groups), so
// that a stop between two launches checkpoints the γ trace of exactly the electrons in the cube.
// Merged into the state once the device has finished the batch (settle).
struct LaunchedBatch {
  std::uint64_t first = 0, count = 0, batch = 0;  // electrons [first, first + count) of batch `batch`
  std::uint64_t group = 1;
  std::vector<GammaTrace> gamma;     // per launch group, in order: their merge is the batch's trace
  std::vector<std::uint64_t> knots;  // per launch group
};

LaunchedBatch launched_batch_record(const SplineBatch& batch, std::uint64_t first, std::uint64_t k,
                                    std::uint64_t group) {
  LaunchedBatch r;
  r.first = first;
  r.count = batch.electrons.size();
  r.batch = k;
  r.group = std::max<std::uint64_t>(1, group);
  for (std::uint64_t g = 0; g < r.count; g += r.group) {
    const std::uint64_t n = std::min(r.group, r.count - g);
    r.gamma.push_back(gamma_trace_of(batch, batch.gamma.dtau, g, n));
    std::uint64_t knots = 0;
    for (std::uint64_t e = g; e < g + n; ++e) knots += batch.electrons[e].n_intervals + 1;
    r.knots.push_back(knots);
  }
  return r;
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

// The electrons already summed, [first, next), as the campaign gives them: FNV-1a of each one's
// initial state (8 doubles) and weight, in electron order. `edm resume` re-reads the data files the
// campaign names (electrons.file, trajectory.file), so an electron list edited since the stop would
// put other electrons where summed ones were; mending electrons not yet summed (a bad track after
// a failed run) stays possible. A track's body after its first state is not in the digest.
// `extend_digest` carries hash `h` of [.., from) over [from, to): FNV-1a is a streaming hash, so
// extending the last checkpoint's hash gives the hash of the whole range.
std::uint64_t extend_digest(const Scenario& sc, std::uint64_t h, std::uint64_t from, std::uint64_t to) {
  for (std::uint64_t i = from; i < to; ++i) {
    double v[9];
    sc.initial_state(i, v);
    v[8] = sc.weight(i);
    h = fnv1a(std::string_view(reinterpret_cast<const char*>(v), sizeof v), h);
  }
  return h;
}

std::uint64_t recorded_digest(std::uint64_t h) { return h == 0 ? 1 : h; }  // 0 means "none recorded"

// The digest of [first, state.next), extended from the last checkpoint's over the electrons summed
// since (all of them again only if `next` went back, which the batch loop never does).
std::uint64_t advance_digest(const RunPlan& plan, BatchState& state) {
  if (state.next < state.digest_to) {
    state.digest = kFnvOffset;
    state.digest_to = plan.first;
  }
  state.digest = extend_digest(*state.scenario, state.digest, state.digest_to, state.next);
  state.digest_to = state.next;
  return recorded_digest(state.digest);
}

// A screen in passes: which pass's cube a checkpoint holds; a later pass's γ trace, coverage and knots
// are the run's (the first pass's), which its own launches repeat.
void record_pass(const BatchState& state, CheckpointState& st) {
  if (state.passes < 2) return;
  st.pass = state.pass;
  st.passes = state.passes;
  st.pass_row0 = state.pass_rows.first;
  st.pass_row1 = state.pass_rows.second;
  if (!state.run_products) return;
  st.gamma = state.run_products->gamma;
  st.coverage = state.run_products->coverage;
  st.knots_total = state.run_products->knots;
}

CheckpointState checkpoint_state(const RunPlan& plan, BatchState& state, ShardedFieldAccumulator& acc,
                                 const RunSummary& S) {
  CheckpointState st;
  // The cube holds electrons [first, next) of this rank: none, and it is all zeros, as are the
  // direct spectra's sums, so the checkpoint carries neither (share/docs/outputs.md, "Checkpoints").
  st.cube = state.next > plan.first;
  st.run_id = S.run_id;
  st.campaign_text = state.campaign_text;
  st.campaign_provenance = state.campaign_provenance;
  st.next_electron = state.next;
  st.batches_done = state.batches_done;
  st.trajectories = S.timing.trajectories;
  st.trajectories_overlapped = S.timing.trajectories_overlapped;
  st.kernel = state.kernel_before + acc.timing().kernel_seconds;
  st.knots_total = S.knots_total;
  st.spline_bytes_per_electron = S.spline_bytes_per_electron;
  st.gamma = state.gamma;
  st.coverage = S.coverage.records;
  st.generation = state.generation + 1;
  st.checkpoint_every = state.checkpoint_every_asked;
  st.input_digest = state.scenario ? advance_digest(plan, state) : 0;
  st.window_t0 = S.screen.t0_rel;
  st.window_dt = S.screen.dt;
  st.tuning = S.tuning;
  if (st.cube)
    for (BatchConsumer* c : state.consumers) c->save(st);  // e.g. every device's direct spectra so far
  record_pass(state, st);
  return st;
}

// Writes this rank's file when `mine`; then every rank learns whether all writes succeeded. A
// failure anywhere fails every rank (with its own error where it happened), so none goes on to
// commit a generation that lacks a rank.
void write_agreed(const Ranks& R, bool mine, const std::filesystem::path& file, const CheckpointState& st,
                  ShardedFieldAccumulator& acc) {
  std::exception_ptr error;
  int failed[1] = {0};
  if (mine) {
    try {
      ShardedCubes cubes(acc);
      write_checkpoint(file, st, cubes);
    } catch (...) {
      error = std::current_exception();
      failed[0] = 1;
    }
  }
  agree_max(R, failed, 1);
  if (error) std::rethrow_exception(error);
  if (failed[0])
    throw IoError("EDM-CKP-041", "another rank could not write its checkpoint of generation " +
                                     std::to_string(st.generation) + "; the previous checkpoint stands");
}

// One checkpoint of every rank, committed together (share/docs/outputs.md, "Checkpoints under
// MPI"): the ranks > 0 write their files of generation G first; when all are durable, rank 0 writes
// checkpoint.h5, whose rename commits G; only then do the ranks > 0 remove their generation G − 1.
// A kill at any moment leaves checkpoint.h5 naming a generation whose every file is there, so a
// resume never mixes generations. Collective: every rank calls it at the same batch boundary.
void save_checkpoint(const RunPlan& plan, BatchState& state, ShardedFieldAccumulator& acc, RunSummary& S) {
  const Ranks& R = plan.ranks;
  CheckpointState st = checkpoint_state(plan, state, acc, S);
  st.ranks = std::uint32_t(R.size);
  if (R.size == 1) {
    ShardedCubes cubes(acc);
    write_checkpoint(state.checkpoint_file, st, cubes);
  } else {
    write_agreed(R, R.rank != 0, rank_checkpoint_path(S.folder, st.generation, R.rank), st, acc);
    write_agreed(R, R.rank == 0, state.checkpoint_file, st, acc);
    if (R.rank != 0 && state.generation > 0) {
      std::error_code ec;
      std::filesystem::remove(rank_checkpoint_path(S.folder, state.generation, R.rank), ec);
    }
  }
  state.generation = st.generation;
  ++S.checkpoints_written;
}

bool stop_requested(const RunContext& ctx) { return ctx.options.stop && ctx.options.stop->load(); }

// A stop request at a batch boundary (after a batch, the last one included, or during a solve,
// whose batch is then not summed). Everything summed so far is resumable, so it is saved, even
// when that is nothing or everything (`edm resume` then only finishes), and the run ends with
// Interrupted (exit 130). The device must be idle. Under mpirun every rank comes here together.
[[noreturn]] void checkpoint_and_stop(const RunContext& ctx, const PreparedCell& cell, const RunPlan& plan,
                                      BatchState& state, ShardedFieldAccumulator& acc, RunSummary& S) {
  save_checkpoint(plan, state, acc, S);
  ctx.observer.phase("checkpoint", state.checkpoint_file.string() + ": " + std::to_string(state.next) + " electrons");
  const std::string pass = state.passes > 1 ? "in pass " + std::to_string(state.pass + 1) + " of " +
                                                  std::to_string(state.passes) + " (rows " + std::to_string(state.pass_rows.first) +
                                                  " to " + std::to_string(state.pass_rows.second - 1) + ") "
                                            : std::string();
  throw Interrupted("EDM-RUN-010", "stopped on request " + pass + "after " + std::to_string(state.next - plan.first) + " of " +
                                       std::to_string(plan.local_electrons()) + " electrons" +
                                       (plan.ranks.size > 1 ? " of this rank" : "") + " (" +
                                       std::to_string(cell.electrons()) + " in all); checkpoint written to " +
                                       state.checkpoint_file.string() + " — continue with `edm resume " +
                                       S.folder.string() + "`");
}

// The checkpoint this rank resumes from: checkpoint.h5 says which generation it commits and for how
// many ranks; rank 0's state is in it, the others' in their files of that generation.
std::filesystem::path resume_file(const RunPlan& plan, BatchState& state, const RunSummary& S) {
  const CheckpointCommit commit = read_checkpoint_commit(state.checkpoint_file);
  if (commit.ranks != std::uint32_t(plan.ranks.size))
    throw ConfigError("EDM-CKP-010", state.checkpoint_file.string() + " was written by " +
                                         std::to_string(commit.ranks) + " process(es); resume it with as many (" +
                                         (commit.ranks > 1 ? "mpirun -n " + std::to_string(commit.ranks) + " "
                                                           : std::string("no mpirun: ")) +
                                         "edm resume), not " + std::to_string(plan.ranks.size));
  state.generation = commit.generation;
  if (plan.ranks.rank == 0) return state.checkpoint_file;
  const auto file = rank_checkpoint_path(S.folder, commit.generation, plan.ranks.rank);
  if (!std::filesystem::exists(file))
    throw IoError("EDM-CKP-040", state.checkpoint_file.string() + " commits generation " +
                                     std::to_string(commit.generation) + ", but rank " +
                                     std::to_string(plan.ranks.rank) + "'s file " + file.string() + " is missing");
  return file;
}

// A resume's check that the electrons the checkpoint has summed are the campaign's still: their
// digest is computed whole here, then carried forward by this process's checkpoints
// (advance_digest). A checkpoint of an older edm records none: the first checkpoint computes it.
void check_input_digest(const RunContext& ctx, const RunPlan& plan, const CheckpointState& st,
                        const std::filesystem::path& file, BatchState& state) {
  if (st.input_digest == 0 || st.next_electron < plan.first) return;
  state.digest = extend_digest(*state.scenario, kFnvOffset, plan.first, st.next_electron);
  state.digest_to = st.next_electron;
  if (recorded_digest(state.digest) == st.input_digest) return;
  const Campaign& c = ctx.campaign;
  const std::string files = c.electrons.distribution == Distribution::List ? "electrons.file = " + c.electrons.file
                            : c.trajectory.file.empty()                     ? std::string("the campaign's electrons")
                                                                            : "trajectory.file = " + c.trajectory.file;
  throw ConfigError("EDM-CKP-071", file.string() + ": the electrons it has summed ([" + std::to_string(plan.first) +
                                       ", " + std::to_string(st.next_electron) + ")) are not those of " + files +
                                       " now: the data changed since the checkpoint; put it back as it was, or start "
                                       "again with edm run --overwrite");
}

// The window the checkpoint's cube was summed on against the one this campaign places now: exactly
// equal (the same computation on the same campaign), or the resume would add its electrons on other
// times than those before the stop. A checkpoint that records none is of an edm before this one,
// whose automatic window was placed otherwise (found in review): refused, never guessed.
void check_resume_window(const CheckpointState& st, const Screen& screen, const std::filesystem::path& file) {
  if (!std::isfinite(st.window_t0) || !std::isfinite(st.window_dt))
    throw IoError("EDM-CKP-085", file.string() + " does not record the observer window its cube was summed on "
                                 "(written by an earlier edm, whose automatic window was placed otherwise): resume "
                                 "it with the edm that wrote it, or start again with edm run --overwrite");
  if (st.window_t0 != screen.t0_rel || st.window_dt != screen.dt) {
    char msg[300];
    std::snprintf(msg, sizeof msg,
                  ": its cube was summed on another observer window (first sample %.17g, spacing %.17g laser units) "
                  "than this campaign places (%.17g, %.17g)",
                  st.window_t0, st.window_dt, screen.t0_rel, screen.dt);
    throw IoError("EDM-CKP-085", file.string() + msg + ": resume it with the edm that wrote it, or start again "
                                                       "with edm run --overwrite");
  }
}

// From electron `from` on, this process sums with `mine` (TuningSpan): spans that summed nothing
// (a process stopped before its first electron) are dropped, and a process like the one before it
// extends that one's span.
void add_tuning_span(std::vector<TuningSpan>& spans, std::uint64_t from, const std::string& mine) {
  while (!spans.empty() && spans.back().first_electron >= from) spans.pop_back();
  if (spans.empty() || spans.back().clblast != mine) spans.push_back({from, mine});
}

}  // namespace

std::string clblast_tuning_of(const RunPlan& plan) {
  std::string out;
  for (std::size_t i = 0; i < plan.devices.size(); ++i)
    out += (i ? "; " : "") + std::to_string(plan.devices[i].index) + ": " + clblast_tuning_record(plan.devices[i]);
  return out;
}

std::string device_list(const RunSummary& S) {
  std::string names;
  for (const auto& d : S.devices) names += (names.empty() ? "" : "; ") + d;
  return names;
}

std::string this_process_clblast(const RunPlan& plan, const RunSummary& S) {
  return S.tuning.empty() ? clblast_tuning_of(plan) : S.tuning.back().clblast;
}

BatchState start_or_resume(const RunContext& ctx, const PreparedCell& cell, const RunPlan& plan, std::uint64_t N,
                           ShardedFieldAccumulator& acc, RunSummary& S) {
  BatchState state;
  state.checkpoint_file = checkpoint_path(S.folder);
  state.next = plan.first;
  state.digest_to = plan.first;
  state.scenario = &cell.plugin_scenario();
  if (ctx.options.resume) {
    const auto file = resume_file(plan, state, S);
    const CheckpointState st = read_checkpoint_state(file);
    check_resume_state(st, N, file);
    if (st.next_electron < plan.first || st.next_electron > plan.end)
      throw IoError("EDM-CKP-042", file.string() + ": next_electron " + std::to_string(st.next_electron) +
                                       " lies outside this rank's electrons [" + std::to_string(plan.first) + ", " +
                                       std::to_string(plan.end) + "]");
    if (!st.cube && st.next_electron != plan.first)
      throw IoError("EDM-CKP-070", file.string() + " holds no cube (cube_saved = 0: no electron done), but its "
                                       "next_electron is " + std::to_string(st.next_electron) + ", not " +
                                       std::to_string(plan.first) + "; the checkpoint is damaged");
    // The electrons summed are the campaign's still (after the checks of the file's own consistency),
    // on the window this campaign places.
    check_input_digest(ctx, plan, st, file, state);
    ShardedCubes cubes(acc);
    state.resumed_sums = load_checkpoint_cube(file, cubes);  // refuses another screen or layout first
    check_resume_window(st, S.screen, file);
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
    // The tuning of the processes before this one: [tuning] must not claim this process's for
    // electrons another summed with other CLBlast parameters (found by tests/test_resume). An older
    // checkpoint's electrons are of an unknown one.
    S.tuning = st.tuning;
    if (S.tuning.empty() && st.next_electron > plan.first) S.tuning.push_back({plan.first, kTuningNotRecorded});
    ctx.observer.phase("resume", "from " + file.string() + ": " + std::to_string(state.next) + " of " +
                                     std::to_string(N) + " electrons already summed");
  }
  // This process's CLBlast parameter sets, as its devices were opened (the accumulators are).
  add_tuning_span(S.tuning, state.next, clblast_tuning_of(plan));
  state.checkpoint_every = ctx.options.checkpoint_every;
  state.checkpoint_every_asked = ctx.options.checkpoint_every;
  std::ostringstream os;
  os << ctx.campaign.to_toml();
  state.campaign_text = os.str();
  state.campaign_provenance = provenance_text(ctx.campaign);  // a resumed campaign's, restored
  return state;
}

namespace {

// The rows per slab of the last batch (0: in one piece): the tuning table's slab count on one
// device in one process, rounded up to whole download slabs where those are smaller, so each
// download piece waits for one slab's launches.
int tail_rows(const RunContext& ctx, const RunPlan& plan, const ShardedFieldAccumulator& acc, const Screen& screen,
              RunSummary& S) {
  S.tail_slabs = 1;
  if (plan.ranks.size != 1 || acc.device_count() != 1 || plan.devices.size() != 1) return 0;
  const int slabs = tail_slabs(ctx.campaign.accumulator.tail_slabs, plan.devices.front(), screen, acc.options());
  if (slabs <= 1) return 0;
  const int per = std::max(1, plan.rows_per_slab);
  int rows = (screen.ny + slabs - 1) / slabs;
  if (per < rows) rows = (rows + per - 1) / per * per;
  S.tail_slabs = (screen.ny + rows - 1) / rows;
  return S.tail_slabs > 1 ? rows : 0;
}

// Why a later pass of a screen in passes is not checkpointed, or "" when it is: its checkpoint would
// lack the first pass's direct spectra sums, which the run still has to write; a potential run's
// field.h5.partial (records /A and /A0) is not one that a resume takes over (FieldWriter::Resume).
std::string later_pass_not_checkpointed(const RunContext& ctx, const PreparedCell& cell) {
  if (ctx.campaign.spectra.enabled)
    return "a later pass of a screen in passes with [spectra] enabled is not checkpointed (its checkpoint would "
           "lack the first pass's spectra sums)";
  if (cell.mode() == Mode::Potential)
    return "a later pass of a screen in passes of a potential run (run.mode = \"potential\") is not checkpointed";
  return "";
}

// A stop request whose state cannot be checkpointed (BatchLoop::stop): the run ends with no field.h5
// (the writer removes its .partial) and the last checkpoint, if any, stands.
[[noreturn]] void throw_unresumable_stop(const RunPlan& plan, const BatchState& state, const RunSummary& S,
                                         const std::string& why) {
  throw Interrupted("EDM-RUN-050",
                    "stopped on request during the field kernels of electrons from " +
                        std::to_string(state.next) + (plan.ranks.size > 1 ? " of this rank" : "") + ": " +
                        why + ", so this state cannot be checkpointed; no field.h5 was written" +
                        (std::filesystem::exists(state.checkpoint_file)
                             ? "; the last checkpoint stands: `edm resume " + S.folder.string() + "`"
                             : "; run it again"));
}

// The field accumulator as the first consumer of every batch: its launches on this process's
// devices (the last batch in slabs of `rows` screen rows when asked), which the batch loop's
// watcher drains and a stop may halt at a launch boundary.
class FieldConsumer final : public BatchConsumer {
 public:
  FieldConsumer(ShardedFieldAccumulator& acc, int rows) : acc_(acc), rows_(rows) {}
  std::string what() const override { return "the field"; }
  void take(const std::shared_ptr<SplineBatch>& batch, bool in_slabs) override {
    if (in_slabs)
      acc_.accumulate_in_slabs(*batch, rows_);
    else
      acc_.accumulate(*batch);
  }

 private:
  ShardedFieldAccumulator& acc_;
  int rows_;
};

// A batch shared by its consumers: the last one to drop it hands its splines back to the OS
// (SplineBatch::release), the loop as it launches the next, or a consumer still summing it.
std::shared_ptr<SplineBatch> shared_batch(SplineBatch&& batch) {
  return std::shared_ptr<SplineBatch>(new SplineBatch(std::move(batch)), [](SplineBatch* b) {
    b->release();
    delete b;
  });
}

// A later pass's batch from the splines kept on the host (KeptSplines::serve), instead of its solve.
std::optional<SplineBatch> kept_batch(const BatchState& state, std::uint64_t b0, std::uint64_t count) {
  if (!state.kept || !state.kept->complete()) return std::nullopt;
  return state.kept->serve(b0, count);
}

// One batch: solve, record, launch (with overlap, the device drains it on the watcher's thread).
// False when the solve was stopped on request (nothing of the batch is summed then), or a stop
// request halted the launches of the batch before (FieldAccumulator::stopped).
struct BatchLoop {
  const RunContext& ctx;
  const PreparedCell& cell;
  const RunPlan& plan;
  ShardedFieldAccumulator& acc;
  BatchState& state;
  RunSummary& S;
  ProgressMeter progress;  // finished device work, reported while waiting for it
  bool overlap = false, launched = false;
  int tail_rows = 0;  // > 0: the last batch is launched in slabs of this many rows
  // Joined on every way out of run_batches; what it throws comes back through wait().
  DeviceWatcher watcher;
  Clock::time_point device_idle_at{};
  std::deque<LaunchedBatch> in_flight;  // launched, not yet settled (oldest first)
  // Every batch goes to each of these in turn: the field's first, then state.consumers.
  std::vector<BatchConsumer*> consumers;
  std::uint64_t handed = 0;  // electrons handed to the consumers by this process
  // Ranks that shard pixels each need every electron: they share the solves (each rank a slice of
  // the batch, the splines all-gathered) in every batch that all of them start at one electron
  // (`shared_now`, decided at the loop: after a resume the ranks may stand at different electrons).
  bool sharing = false, shared_now = false;

  // The consumer whose batch a stop cannot cut at a launch boundary (it sums whole batches), if any.
  const BatchConsumer* whole_batch_consumer() const {
    for (const BatchConsumer* c : consumers)
      if (!c->halts_at_launches()) return c;
    return nullptr;
  }
  // Whether a consumer's device work is counted apart from the field's (and may run past it).
  bool trailing() const {
    return std::any_of(consumers.begin(), consumers.end(), [](const BatchConsumer* c) { return c->trails_field(); });
  }
  // The electrons finished by every trailing consumer (progress).
  std::uint64_t trailing_completed() const {
    std::uint64_t n = UINT64_MAX;
    for (BatchConsumer* c : consumers)
      if (c->trails_field()) n = std::min(n, c->electrons_completed());
    return n;
  }
  // When the last of the device work on the batch before went idle: the field's drain (measured by
  // the watcher) or a consumer's own work, whichever came later.
  Clock::time_point busy_until() const {
    Clock::time_point t = device_idle_at;
    for (const BatchConsumer* c : consumers) t = std::max(t, c->idle_at());
    return t;
  }

  // Waits for the watcher's drain; when it ran to the end (no stop halted it), every batch
  // launched is done and settles.
  void wait_for_device() {
    if (const auto idle = progress.wait(watcher, acc)) device_idle_at = *idle;
    if (!acc.stopped() && !watcher.outstanding()) settle(UINT64_MAX);
  }

  // The launched batches' γ traces and knots into the state, of the electrons before `k` (a launch
  // boundary; UINT64_MAX: all). False when `k` is not a boundary of the launch groups recorded.
  bool settle(std::uint64_t k) {
    for (; !in_flight.empty(); in_flight.pop_front()) {
      const LaunchedBatch& r = in_flight.front();
      if (k <= r.first) {  // none of this batch and the rest: a resume starts this batch
        state.next = r.first;
        state.batches_done = r.batch;
        break;
      }
      const std::uint64_t n = std::min(r.count, k - r.first);
      if (n % r.group != 0 && n != r.count) return false;
      for (std::size_t g = 0; g * r.group < n; ++g) {
        state.gamma.merge(r.gamma[g]);
        S.knots_total += r.knots[g];
      }
      if (n < r.count) {
        state.next = k;
        state.batches_done = r.batch;  // this batch is not done: a resume starts it at k
        in_flight.clear();
        return true;
      }
    }
    in_flight.clear();  // nothing of the rest is in the cube
    return true;
  }

  // A stop request: the launches already enqueued finish (the bounded queue: a fraction of a
  // second), those pending are never enqueued, then the state of the last launch boundary is
  // checkpointed and the run ends (Interrupted, exit 130). Where the cube holds no prefix of the
  // electrons (a batch in slabs, a batch split over devices) or the direct spectra hold more,
  // nothing is saved (EDM-RUN-050; share/docs/errors.md, "Stops").
  [[noreturn]] void stop() {
    wait_for_device();
    acc.drain();  // a batch in slabs: its launches left are not enqueued either
    std::string why;
    // A later pass's checkpoint holds its own cube (the passes before it are in field.h5.partial).
    if (const std::string no = later_pass_not_checkpointed(ctx, cell); state.later_pass && !no.empty())
      throw_unresumable_stop(plan, state, S, no);
    if (acc.stopped()) {
      const auto k = acc.stopped_at();
      if (!k)
        why = acc.device_count() > 1
                  ? "the devices' blocks of the batch were cut at different electrons"
                  : "the last batch was launched slab by slab, and its slabs hold different electrons";
      else if (const BatchConsumer* whole = whole_batch_consumer(); whole && *k < state.next)
        why = whole->what() + " already hold the whole batch";
      else if (!settle(*k))
        why = "the launch groups do not match the batch's records";
      else
        S.coverage.records.erase(std::remove_if(S.coverage.records.begin(), S.coverage.records.end(),
                                                [&](const CoverageRecord& r) { return r.electron >= *k; }),
                                 S.coverage.records.end());
    } else {
      settle(UINT64_MAX);
    }
    int failed[1] = {!why.empty()};
    agree_max(plan.ranks, failed, 1);
    if (failed[0]) {
      if (why.empty()) why = "another rank's state cannot be checkpointed";
      throw_unresumable_stop(plan, state, S, why);
    }
    checkpoint_and_stop(ctx, cell, plan, state, acc, S);
  }

  // Solves a batch (or a piece), stopped on request: nothing of it is summed then. Shared among the
  // ranks: the seconds are this rank's solve of its slice and the gather.
  std::optional<SplineBatch> solve(std::uint64_t b0, std::uint64_t count) {
    if (auto kept = kept_batch(state, b0, count)) return kept;  // a later pass: the first pass's splines
    const auto t0 = Clock::now();
    std::optional<SplineBatch> batch = shared_now ? solve_shared(b0, count) : solve_here(b0, count);
    if (batch) S.timing.trajectories += seconds_since(t0);
    return batch;
  }

  std::optional<SplineBatch> solve_here(std::uint64_t b0, std::uint64_t count) {
    try {
      SplineBatch batch = solve_batch(ctx, cell, b0, count);
      S.electrons_solved += count;
      return batch;
    } catch (const Interrupted&) {
      return std::nullopt;
    }
  }

  // This rank's slice of the batch, then every rank's gathered (share/docs/design.md, "Ranks shard
  // pixels"): a collective every rank reaches, with an empty slice too. The ranks agree on a failure
  // or a stop before the gather, so none waits in it for a rank that has left.
  std::optional<SplineBatch> solve_shared(std::uint64_t b0, std::uint64_t count) {
    const auto [s0, s1] = solve_slice(plan.ranks, b0, count);
    SolveOutcome outcome;
    outcome.slice = s1 > s0 ? "electrons " + std::to_string(s0) + "–" + std::to_string(s1 - 1) : "no electron";
    SplineBatch mine;
    try {
      if (s1 > s0) mine = solve_batch(ctx, cell, s0, s1 - s0);
    } catch (const Interrupted&) {
      outcome.stopped = true;
    } catch (...) {
      outcome.error = std::current_exception();
    }
    if (agree_on_solves(plan.ranks, outcome)) return std::nullopt;
    S.electrons_solved += s1 - s0;
    return all_gather_batch(plan.ranks, std::move(mine));
  }

  // The electrons this rank takes in the batch starting at `b0` (`count` of them as it stands), and
  // whether the ranks share its solve. Ranks sharding pixels that stand at one electron share it;
  // after a resume from a stop that halted the ranks' launches at different electrons, a rank behind
  // the foremost solves alone up to it (at most a batch at a time) while the others take none, so
  // that from then on they stand together again. A collective for ranks that share solves.
  std::uint64_t align(std::uint64_t b0, std::uint64_t count) {
    shared_now = false;
    if (!sharing) return count;
    const auto [lo, hi] = agree_range(plan.ranks, b0);
    shared_now = lo == hi && count > 0;
    return b0 < hi ? std::min(count, hi - b0) : lo == hi ? count : 0;
  }

  // The γ traces per launch group, formed while the device still works on the batch before.
  LaunchedBatch records_of(const SplineBatch& batch, std::uint64_t b0, std::uint64_t k) const {
    return launched_batch_record(batch, b0, k, std::uint64_t(acc.options().electron_group));
  }

  // The batch's launches after its record (the device idle or halted before: wait_for_device).
  void launch(SplineBatch& batch, LaunchedBatch record, bool in_slabs) {
    record_batch(ctx, cell, batch, batch.electrons.size(), S);
    in_flight.push_back(std::move(record));
    if (!launched) {
      state.t_first_launch = Clock::now();
      launched = true;
    }
    // The field's uploads are complete when its take() returns: the host splines go back to the OS
    // as the shared batch is dropped here, or once a consumer on a worker (the spectra's, which
    // waits for the batch before first) has summed them.
    const std::uint64_t n = batch.electrons.size();
    const std::shared_ptr<SplineBatch> shared = shared_batch(std::move(batch));
    for (BatchConsumer* c : consumers) c->take(shared, in_slabs);
    handed += n;
  }

  // The first batch in pieces (kFirstPiece): each piece is launched as soon as it is solved, the
  // device working on the earlier ones (drained on the watcher's thread) meanwhile. Stopped during
  // a piece: the pieces before it are summed.
  bool run_in_pieces(std::uint64_t b0, std::uint64_t count, std::uint64_t k) {
    std::uint64_t done = 0;
    for (std::uint64_t piece = kFirstPiece; done < count; piece *= 2) {
      const std::uint64_t n = count - done < 2 * piece ? count - done : piece;
      auto batch = solve(b0 + done, n);
      if (!batch) return false;
      acc.upload_ahead(*batch);
      LaunchedBatch record = records_of(*batch, b0 + done, k);
      wait_for_device();
      if (acc.stopped()) return false;
      launch(*batch, std::move(record), false);
      done += n;
      state.next = b0 + done;
      if (done < count) watcher.start([this] { acc.drain(); });
    }
    return true;
  }

  bool run_one(std::uint64_t b0, std::uint64_t count, std::uint64_t k, std::uint64_t k0) {
    ctx.observer.phase("trajectories", "batch " + std::to_string(k + 1) + "/" + std::to_string(S.batches) +
                                           ": electrons " + std::to_string(b0) + "–" +
                                           std::to_string(b0 + count - 1));
    const bool last_in_slabs = tail_rows > 0 && k > k0 && b0 + count == plan.end;
    // Ranks that share the solves gather whole batches: their first batch is not cut into pieces.
    if (k == k0 && overlap && !sharing && b0 + count < plan.end && count >= 4 * kFirstPiece) {
      if (!run_in_pieces(b0, count, k)) return false;
      return launched_batch(b0, count, k, false);
    }
    const auto t0 = Clock::now();
    auto batch = solve(b0, count);
    if (!batch) return false;
    const auto t1 = Clock::now();
    // The splines travel while the device still works on the previous batch.
    acc.upload_ahead(*batch);
    LaunchedBatch record = records_of(*batch, b0, k);
    // The device was busy with the previous batch until device_idle_at (measured by the watcher).
    wait_for_device();
    if (acc.stopped()) return false;
    launch(*batch, std::move(record), last_in_slabs);
    if (k > k0 && overlap) {
      // The device was busy until the field's batch before drained, or until a consumer's worker
      // finished it (launch waited for that), whichever came later.
      S.timing.trajectories_overlapped += std::max(0.0, seconds_between(t0, std::min(t1, busy_until())));
    }
    return launched_batch(b0, count, k, last_in_slabs);
  }

  // After a batch's launches: the device drains it on the watcher's thread (without overlap, and
  // after the last batch, the driving thread waits for it at once, reporting the finished work
  // meanwhile), unless it was launched in slabs, whose downloads (finish) wait for each slab's
  // launches instead.
  bool launched_batch(std::uint64_t b0, std::uint64_t count, std::uint64_t k, bool in_slabs) {
    state.next = b0 + count;
    state.batches_done = k + 1;
    if (!in_slabs) {
      watcher.start([this] { acc.drain(); });
      if (!overlap || state.next >= plan.end) wait_for_device();
    }
    // Without overlap one batch is alive at a time (the plan's host budget): the consumers' too.
    if (!overlap)
      for (BatchConsumer* c : consumers) c->wait();
    return true;
  }
};

}  // namespace

void run_batches(const RunContext& ctx, const PreparedCell& cell, const RunPlan& plan,
                 ShardedFieldAccumulator& acc, BatchState& state, RunSummary& S) {
  BatchLoop loop{
      ctx, cell, plan, acc, state, S, ProgressMeter(ctx, plan.local_electrons(), state.next - plan.first)};
  loop.overlap = ctx.campaign.accumulator.batch_overlap;
  loop.tail_rows = tail_rows(ctx, plan, acc, cell.screen(), S);
  loop.sharing = plan.share.pixels && plan.ranks.size > 1;
  FieldConsumer field(acc, loop.tail_rows);
  loop.consumers.push_back(&field);
  loop.consumers.insert(loop.consumers.end(), state.consumers.begin(), state.consumers.end());
  if (loop.trailing()) loop.progress.spectra_completed = [&loop] { return loop.trailing_completed(); };
  // A stop halts the field's launches at a launch boundary, and the checkpoint then holds the
  // electrons before it. A consumer that sums whole batches (the direct spectra) keeps them from
  // being halted: the stop comes at the batch's end, and stays resumable (share/docs/errors.md, "Stops").
  if (!loop.whole_batch_consumer()) acc.set_stop(ctx.options.stop);
  const std::uint64_t start = state.next, k0 = state.batches_done, B = plan.batch;
  state.t_first_launch = Clock::now();
  // Under mpirun the ranks decide together at every batch boundary (stop, checkpoint, go on), so
  // every rank goes round this loop as often as the rank with the most batches left.
  for (std::uint64_t k = k0;; ++k) {
    const std::uint64_t b0 = state.next;
    const std::uint64_t count = loop.align(b0, b0 < plan.end ? std::min(B, plan.end - b0) : 0);
    if (count == 0 && plan.ranks.size == 1) break;
    const bool solved = count == 0 || loop.run_one(b0, count, k, k0);
    // Checkpoints: every K batches; and on a stop request after any batch (the last one too: a
    // single-pass run has only that one), during a solve or during the kernels (the launches
    // halted), then leave cleanly.
    if (count > 0 && solved) schedule_checkpoints(ctx, state, start, k0, k, state.next, plan.end);
    const std::int64_t K = state.checkpoint_every;
    int flags[3] = {!solved || stop_requested(ctx),
                    count > 0 && state.next < plan.end && K > 0 && (k + 1) % std::uint64_t(K) == 0,
                    state.next < plan.end};
    agree_max(plan.ranks, flags, 3);
    if (flags[0]) loop.stop();
    if (flags[1]) {
      loop.wait_for_device();
      int halted[1] = {acc.stopped()};  // the stop request came while the device finished the batch
      agree_max(plan.ranks, halted, 1);
      if (halted[0]) loop.stop();
      save_checkpoint(plan, state, acc, S);
      ctx.observer.phase("checkpoint",
                         state.checkpoint_file.string() + ": " + std::to_string(state.next) + " electrons");
    }
    if (!flags[2]) break;
  }
  loop.wait_for_device();
  // The launches were waited for before the loop's last decision, so no stop can have halted them
  // since; a last batch in slabs is completed by finish() (or a stop there ends the run).
  if (acc.stopped())
    throw_unresumable_stop(plan, state, S, "the launches were halted after the last decision");
  loop.settle(UINT64_MAX);  // a last batch in slabs: finish() completes it (or a stop there ends the run)
  if (loop.trailing()) {
    loop.progress.wait_spectra(acc, loop.handed);
    // A stop request while a trailing consumer (the spectra) finished: everything launched is summed, so it is saved
    // (edm resume then only finishes) through the same stop path as the loop's, which refuses what
    // cannot be checkpointed (a last batch in slabs whose slabs the stop left unsent). Every rank
    // comes here once.
    int stop[1] = {stop_requested(ctx)};
    agree_max(plan.ranks, stop, 1);
    if (stop[0]) loop.stop();
  }
  S.checkpoint_every = std::max<std::int64_t>(state.checkpoint_every, 0);
  const std::string burst = burst_problem(cell, ctx.campaign, S.coverage, S.spectra_from_samples);
  if (!burst.empty()) ctx.observer.warning(burst);
}

void KeptSplines::take(const std::shared_ptr<SplineBatch>& batch, bool /*in_slabs*/) {
  if (dropped_) return;
  const std::uint64_t n = batch->electrons.size();
  if (bytes_ + batch->bytes() > limit_) {
    // The knot budget predicted less than the solves made: the later passes solve again.
    why_ = "the kept splines reached " + std::to_string(bytes_ + batch->bytes()) + " bytes at electron " +
           std::to_string(next_ + n) + ", over the host budget of " + std::to_string(limit_) + " bytes left for them";
    dropped_ = true;
    batches_.clear();
    bytes_ = 0;
    return;
  }
  batches_.push_back({next_, n, batch});
  next_ += n;
  bytes_ += batch->bytes();
  peak_ = std::max(peak_, bytes_);
}

std::optional<SplineBatch> KeptSplines::serve(std::uint64_t b0, std::uint64_t count) {
  const auto it = std::find_if(batches_.begin(), batches_.end(), [&](const Kept& k) { return k.first == b0; });
  if (it == batches_.end() || it->count != count) return std::nullopt;
  if (!last_) return *it->batch;  // a copy: the passes after this one launch it too
  // The last pass: the batch leaves the host as it is launched (the launch's shared batch releases it).
  SplineBatch out = std::move(*it->batch);
  bytes_ -= std::min(bytes_, out.bytes());
  it->batch.reset();
  return out;
}

namespace {
// run.toml's record of the later passes' splines, once they ran: re-solved when the kept batches
// were dropped on the way (the knot budget predicted less), with the bytes they reached.
void record_pass_splines(const KeptSplines* kept, RunSummary& S) {
  if (!kept || S.pass_splines != "kept") return;
  if (!kept->dropped().empty()) {
    S.pass_splines = "re-solved";
    S.pass_splines_reason = kept->dropped();
  }
  S.pass_splines_bytes = kept->peak_bytes();
}
}  // namespace

std::uint32_t resumed_pass(const RunContext& ctx, const RunPlan& plan, const std::vector<std::pair<int, int>>& passes,
                           const RunSummary& S) {
  if (!ctx.options.resume) return 0;
  BatchState probe;
  probe.checkpoint_file = checkpoint_path(S.folder);
  const auto file = resume_file(plan, probe, S);
  const CheckpointState st = read_checkpoint_state(file);
  if (st.passes < 2) return 0;  // the first pass (or a checkpoint of an edm before passes were recorded)
  const std::pair<int, int> rows{st.pass_row0, st.pass_row1};
  if (st.passes != passes.size() || passes[st.pass] != rows)
    throw IoError("EDM-CKP-087", file.string() + " is of pass " + std::to_string(st.pass + 1) + " of " +
                                     std::to_string(st.passes) + " (rows " + std::to_string(rows.first) + " to " +
                                     std::to_string(rows.second - 1) + "), but this run plans " +
                                     std::to_string(passes.size()) + " pass(es) of other rows on these devices: "
                                     "resume with the stopped run's devices and environment (accumulator.devices, "
                                     "EDM_MAX_DEVICE_ALLOCATION, EDM_MAX_DEVICE_MEMORY), or start again with edm run "
                                     "--overwrite");
  return st.pass;
}

void enter_pass(BatchState& state, RunSummary& S, std::uint32_t p, const std::vector<std::pair<int, int>>& passes) {
  if (passes.size() < 2) return;
  state.pass = p;
  state.passes = std::uint32_t(passes.size());
  state.pass_rows = passes[p];
  if (p == 0) return;
  auto run = std::make_shared<PassProducts>();
  run->gamma = std::move(state.gamma);
  run->coverage = S.coverage.records;
  run->knots = S.knots_total;
  state.gamma = GammaTrace{};
  state.run_products = std::move(run);
  state.later_pass = true;
}

void leave_later_pass(BatchState& state, RunSummary& S) {
  if (!state.run_products) return;
  state.gamma = state.run_products->gamma;
  S.coverage.records = state.run_products->coverage;
  S.knots_total = state.run_products->knots;
}

namespace {
// Pass p's batch state: a fresh start at this rank's first electron, with the run's campaign,
// checkpoint cadence (as the first pass resolved it) and generations carried on from `run`.
BatchState later_pass_state(const PreparedCell& cell, const RunPlan& plan, const BatchState& run, bool checkpointed,
                            std::shared_ptr<const PassProducts> products, std::uint32_t p,
                            const std::vector<std::pair<int, int>>& passes) {
  BatchState state;
  state.checkpoint_file = run.checkpoint_file;
  state.next = state.digest_to = plan.first;
  state.scenario = &cell.plugin_scenario();
  state.campaign_text = run.campaign_text;
  state.campaign_provenance = run.campaign_provenance;
  state.checkpoint_every_asked = run.checkpoint_every_asked;
  state.checkpoint_every = checkpointed ? run.checkpoint_every : -1;
  state.generation = run.generation;
  state.later_pass = true;
  state.pass = p;
  state.passes = std::uint32_t(passes.size());
  state.pass_rows = passes[p];
  state.run_products = std::move(products);
  return state;
}
}  // namespace

double run_later_passes(const RunContext& ctx, const PreparedCell& cell, const RunPlan& plan,
                        const KernelOptions& kernel, const LaterPasses& L, BatchState& run, RunSummary& S) {
  double write_seconds = 0;
  KeptSplines* kept = L.kept;
  // The host-side products are the run's: every pass launches the same electrons again.
  const auto products = std::make_shared<const PassProducts>(PassProducts{run.gamma, S.coverage.records, S.knots_total});
  // download_field records one pass's kernel and field seconds: run.toml [timing] sums the passes.
  double kernel_seconds = S.timing.kernel, field_seconds = S.timing.field;
  double upload_seconds = S.timing.upload, upload_bytes = S.timing.upload_bytes;
  for (std::size_t p = L.from; p < L.passes.size(); ++p) {
    const auto [y0, y1] = L.passes[p];
    ctx.observer.phase("pass", std::to_string(p + 1) + " of " + std::to_string(L.passes.size()) + ": rows " +
                                   std::to_string(y0) + " to " + std::to_string(y1 - 1) +
                                   (kept && kept->complete() ? " (splines kept on the host)" : ""));
    // The rows of the passes before are on disk before this pass may checkpoint (a resume reads them).
    const bool checkpointed = later_pass_not_checkpointed(ctx, cell).empty();
    if (L.writer && checkpointed) {
      L.writer->close_for_others();
      L.writer->reopen();
    }
    // The pass before has been finished (its buffers released) before this one allocates.
    ShardedFieldAccumulator acc(plan.devices, screen_tile(cell.screen(), y0, y1), cell.mode(), kernel, plan.sharding);
    BatchState state = later_pass_state(cell, plan, run, checkpointed, products, std::uint32_t(p), L.passes);
    // Ranks that share the solves must agree: a rank whose kept splines were dropped (its own host
    // budget) solves again, and then every rank takes part in those solves' gathers.
    int solve_again[1] = {!(kept && kept->complete())};
    agree_max(plan.ranks, solve_again, 1);
    if (!solve_again[0]) {
      kept->set_last(p + 1 == L.passes.size());
      state.kept = kept;  // the batch loop launches them instead of solving
    } else if (kept && kept->dropped().empty() && p + 1 < L.passes.size()) {
      kept->restart();  // this pass solves every electron: the passes after it launch its splines
      state.consumers.push_back(kept);
      S.pass_splines_reason += "; pass " + std::to_string(p + 1) + " solved them again (the pass before began midway)";
    }
    // Once this pass has checkpointed, field.h5.partial belongs to that checkpoint: kept whatever follows.
    const std::uint64_t before = state.generation;
    const auto keep_rows = [&] {
      run.generation = state.generation;
      if (L.writer && state.generation > before) L.writer->keep_partial();
    };
    try {
      run_batches(ctx, cell, plan, acc, state, S);
      keep_rows();
    } catch (...) {
      keep_rows();
      throw;
    }
    S.coverage.records = products->coverage;
    S.knots_total = products->knots;
    write_seconds += download_field(ctx, cell, plan, acc, state, L.writer, S);  // this pass's rows, written now
    kernel_seconds += S.timing.kernel;
    field_seconds += S.timing.field;
    upload_seconds += S.timing.upload;
    upload_bytes += S.timing.upload_bytes;
  }
  record_pass_splines(kept, S);
  S.timing.kernel = kernel_seconds;
  S.timing.field = field_seconds;
  S.timing.upload = upload_seconds;
  S.timing.upload_bytes = upload_bytes;
  return write_seconds;
}

}  // namespace edm::detail
