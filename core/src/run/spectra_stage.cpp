// The direct spectra in the run (share/docs/outputs.md "Direct spectra"): with [spectra] enabled,
// a SpectraAccumulator on each of this rank's devices takes its share of every batch's splines
// beside the field accumulator; checkpoints carry every device's sums (io/checkpoint.cpp, group
// /spectra); at the end the shards are folded in a fixed order on rank 0, which writes spectrum.h5's
// /direct group after field.h5 is committed. The directions are the angular screen's grid, or a
// flat screen's pixels seen from the origin.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "edm/checkpoint.hpp"
#include "edm/coverage.hpp"
#include "edm/directions.hpp"
#include "edm/error.hpp"
#include "edm/form_factor.hpp"
#include "edm/photon_units.hpp"
#include "edm/plugins.hpp"
#include "edm/run_files.hpp"
#include "edm/spectrum_file.hpp"
#include "edm/sharded.hpp"
#include "run/ranks.hpp"
#include "run/stages.hpp"

namespace edm::detail {

// The directions of the run's screen, index iy·nx + ix: an angular screen's grid, as make_screen
// built it once (Screen::directions), or a flat screen's pixels seen from the origin (a flat Screen
// holds no directions: its spectra's are these). The screen alone decides; the section is the one
// it was made from.
std::vector<std::array<double, 3>> screen_directions(const ScreenSection& /*section*/, const Screen& screen) {
  std::vector<std::array<double, 3>> n;
  n.reserve(std::size_t(screen.pixels()));
  if (screen.angular()) {
    for (const DirectionCell& c : screen.directions) n.push_back(c.n);
    return n;
  }
  for (int iy = 0; iy < screen.ny; ++iy)
    for (int ix = 0; ix < screen.nx; ++ix) {
      const double x = screen.pixel_x(ix), y = screen.pixel_y(iy), z = screen.z;
      const double r = std::sqrt(x * x + y * y + z * z);
      n.push_back({x / r, y / r, z / r});
    }
  return n;
}

namespace {

// Electrons handed to an accumulator at a time by the worker, which holds the lock for one piece
// only, so a progress poll waits for a piece at most. A multiple of the defaults of
// SpectraOptions::electron_group (16, the direct method's launch) and fft_group (4, the fft and dft
// methods' reduction), so their launches stay whole; the sums do not depend on the pieces (each
// electron is added in electron order, whatever the batch: share/docs/outputs.md).
constexpr std::size_t kWorkerPiece = 16;

// The batch over the devices in the field's split (ShardedFieldAccumulator::accumulate), so a
// device's electrons are the same for both products; each device's block in pieces, in order.
void sum_batch(SpectraAccumulator* accs, std::size_t D, const SplineBatch& batch, std::mutex& busy) {
  const std::size_t n = batch.electrons.size();
  for (std::size_t d = 0; d < D; ++d) {
    const std::size_t lo = n * d / D, hi = n * (d + 1) / D;
    for (std::size_t first = lo; first < hi; first += kWorkerPiece) {
      const SplineBatch piece = slice_batch(batch, first, std::min(kWorkerPiece, hi - first));
      const std::lock_guard<std::mutex> lock(busy);
      accs[d].accumulate(piece);
    }
  }
}

}  // namespace

void SpectraShards::wait() {
  if (!worker_->pending.valid()) return;
  worker_->pending.get();
  idle_at_ = worker_->done_at;  // written before the future became ready
}

void SpectraShards::take(const std::shared_ptr<SplineBatch>& batch, bool /*in_slabs*/) {
  wait();
  // The accumulators' storage, not `this`: the vector's elements stay where they are.
  SpectraAccumulator* accs = accs_.data();
  const std::size_t D = accs_.size();
  Worker* w = worker_.get();
  w->pending = std::async(std::launch::async, [accs, D, w, b = batch]() mutable {
    sum_batch(accs, D, *b, w->busy);
    b.reset();  // the last reference releases the splines (the batch loop's deleter)
    w->done_at = Clock::now();
  });
}

std::uint64_t SpectraShards::electrons_completed() {
  if (worker_->pending.valid() &&
      worker_->pending.wait_for(std::chrono::seconds(0)) == std::future_status::ready)
    wait();  // done: rethrows what it threw
  const std::lock_guard<std::mutex> lock(worker_->busy);  // between two pieces of the worker
  std::uint64_t n = 0;
  for (auto& a : accs_) n += a.electrons_completed();
  return n;
}

void SpectraShards::save(CheckpointState& st) { st.spectra = snapshot(); }

std::vector<SpectraSums> SpectraShards::snapshot() {
  wait();
  std::vector<SpectraSums> out;
  for (auto& a : accs_) out.push_back(a.snapshot());
  return out;
}

void SpectraShards::restore(const std::vector<SpectraSums>& sums) {
  wait();
  for (std::size_t d = 0; d < accs_.size(); ++d) accs_[d].restore(sums.at(d));
}

namespace {

// The doubles of one shard's sums as they travel between ranks: coherent, incoherent, then the
// counters (electrons and launches are below 2⁵³, exact as doubles).
constexpr std::size_t kCounters = 4;
std::vector<double> flatten(const SpectraSums& s) {
  std::vector<double> v(s.coherent);
  v.insert(v.end(), s.incoherent.begin(), s.incoherent.end());
  v.insert(v.end(), {double(s.electrons), double(s.launches), s.weight_sum, s.kernel_seconds});
  return v;
}

// `into` += the shard at `v` (flatten's layout): one addition per value, so folding the shards
// in a fixed order gives the same bits every time.
void add_shard(SpectraSums& into, const double* v) {
  const std::size_t nc = into.coherent.size(), ni = into.incoherent.size();
  for (std::size_t i = 0; i < nc; ++i) into.coherent[i] += v[i];
  for (std::size_t i = 0; i < ni; ++i) into.incoherent[i] += v[nc + i];
  into.electrons += std::uint64_t(v[nc + ni]);
  into.launches += std::uint64_t(v[nc + ni + 1]);
  into.weight_sum += v[nc + ni + 2];
  into.kernel_seconds += v[nc + ni + 3];
}

}  // namespace

SpectraSums SpectraShards::reduce(const Ranks& ranks) {
  wait();
  // This rank's devices in device order: the first device's sums as they are (one device in one
  // process: exactly the single accumulator's sums), the others added to them.
  SpectraSums mine = accs_[0].finish();
  for (std::size_t d = 1; d < accs_.size(); ++d) {
    const SpectraSums s = accs_[d].finish();
    add_shard(mine, flatten(s).data());
  }
  if (ranks.size == 1) return mine;
  // Then the ranks in rank order on rank 0 (gathered, not MPI_Reduce: its order is the library's).
  const std::vector<double> all = gather_to_root(ranks, flatten(mine));
  if (ranks.rank != 0) return mine;
  const std::size_t per = mine.coherent.size() + mine.incoherent.size() + kCounters;
  SpectraSums total = mine;  // rank 0's own fold (rank 0 is first in rank order)
  for (int r = 1; r < ranks.size; ++r) add_shard(total, all.data() + std::size_t(r) * per);
  return total;
}

namespace {

// At infinity every trajectory spans the interaction alone (run/prepare.cpp), so an electron's
// series covers the arrivals from its start to the pulse's end: electron 0's, on its free straight
// line (the pulse's own deflection left out: an estimate for the cost model, never for the sums),
// over every direction, with the dft method's 2 samples each side. −1 off the far field.
double predicted_series_samples(const PreparedCell& cell) {
  const Screen& screen = cell.screen();
  if (!screen.far_field() || cell.solver_scenario().has_tracks() || !(screen.dt > 0)) return -1;
  const Scenario& sc = cell.solver_scenario();
  double y0[8], y1[8];
  sc.initial_state(0, y0);
  free_at_phase(y0, sc.laser_direction(), sc.xi_end(), y1);
  const double span = screen.latest_arrival_rel(y1) - screen.earliest_arrival_rel(y0);
  return std::clamp(span / screen.dt + 5.0, 1.0, double(screen.samples));
}

}  // namespace

namespace {

// The checkpoint this rank resumes from (start_or_resume reads it, and refuses a missing one):
// rank 0's checkpoint.h5, another rank's file of the generation checkpoint.h5 commits.
std::filesystem::path resume_file_of(const RunPlan& plan, const RunSummary& S) {
  const auto commit_file = checkpoint_path(S.folder);
  if (plan.ranks.rank == 0) return commit_file;
  return rank_checkpoint_path(S.folder, read_checkpoint_commit(commit_file).generation, plan.ranks.rank);
}

// Whether this rank resumes sums from a checkpoint that can hold direct-spectra sums: a checkpoint
// of electrons done (one of none holds no sums), for this rank and device count. A checkpoint of
// another process or device count is left to start_or_resume, which refuses it by name
// (EDM-CKP-010, EDM-CKP-040, EDM-CKP-002).
bool recorded_spectra(const RunContext& ctx, const RunPlan& plan, const RunSummary& S) {
  if (!ctx.options.resume || !std::filesystem::exists(checkpoint_path(S.folder))) return false;
  if (read_checkpoint_commit(checkpoint_path(S.folder)).ranks != std::uint32_t(plan.ranks.size)) return false;
  const auto file = resume_file_of(plan, S);
  if (!std::filesystem::exists(file)) return false;
  const CheckpointState st = read_checkpoint_state(file);
  return st.cube && st.devices == plan.devices.size();
}

// edm resume: the method each device continues with, from the checkpoint's record (empty: a fresh
// run, a checkpoint of no electron done, or one without the record). The sums of two methods
// differ in their last bits (and more, where a method is less accurate on a grid), so a resume
// that let "auto" resolve again, on other devices or with another edm's cost model, summed the
// electrons after the stop with another method than those before it (found by tests/test_spectra_dft).
std::vector<SpectraMethod> resumed_methods(const RunContext& ctx, const RunPlan& plan, const RunSummary& S) {
  const auto file = resume_file_of(plan, S);
  const std::vector<SpectraMethod> methods = read_checkpoint_spectra_methods(file, plan.devices.size());
  const SpectraMethod asked = ctx.campaign.spectra.method;
  for (std::size_t d = 0; d < methods.size(); ++d)
    if (asked != SpectraMethod::Auto && methods[d] != asked)
      throw ConfigError("EDM-CKP-081",
                        "spectra.method = \"" + std::string(name(asked)) + "\" in the campaign, but the direct spectra of " +
                            file.string() + " were summed with the " + name(methods[d]) + " method (device " +
                            std::to_string(d) + "): resuming would add the electrons after the stop with another method "
                            "than those before it; resume with spectra.method = \"" + name(methods[d]) +
                            "\" (or \"auto\", which continues with it), or start the run again");
  return methods;
}

// Spectra computed from the window's samples (the dft and fft methods) hold the alias of every
// harmonic above the samples' Nyquist frequency: P samples per Doppler-shifted period resolve the
// orders n ≤ P/2 (P the smallest over the pilots' pixels, check_root_sampling). The fundamental's
// alias is EDM-WIN-021; a harmonic with non-negligible power (significant_harmonics) above it was
// not looked at: at a0 = 0.3 and 512 samples per period the 5th folded onto the line, 2.3e-3 off at
// its peak (found by a tester). "" when no such harmonic, else why, for `method`.
std::string aliased_harmonics(const RunContext& ctx, SpectraMethod method, const RunSummary& S) {
  const RootSampling& r = S.root_sampling;
  if (method == SpectraMethod::Direct || !r.known() || r.samples_per_period < 2.0) return "";  // < 2: EDM-WIN-021
  const int resolved = int(std::floor(r.samples_per_period / 2.0));
  const int significant = significant_harmonics(ctx.campaign.laser.a0);
  if (significant <= resolved) return "";
  char msg[700];
  std::snprintf(msg, sizeof msg,
                "spectra.method = \"%s\" computes the direct spectra from the window's samples, which resolve the "
                "line's harmonics up to order %d (P = %.3g samples per Doppler-shifted laser period, electron %llu), "
                "but at a0 = %.3g harmonics up to order %d carry power above %.0e of the fundamental's: those above "
                "order %d fold back into the spectra as aliases; set screen.samples_per_period >= %.0f, or "
                "spectra.method = \"direct\" (computed from the trajectories, no aliasing)",
                name(method), resolved, r.samples_per_period, (unsigned long long)r.electron, ctx.campaign.laser.a0,
                significant, kHarmonicPowerFloor, resolved,
                std::ceil(2.0 * significant * double(ctx.campaign.screen.samples_per_period) / r.samples_per_period));
  return msg;
}

// A method the campaign names that would alias: warned about, or EDM-WIN-022 under screen.strict.
// (spectra.method = "auto" never picks one: open_spectra takes direct then.)
void refuse_aliased_harmonics(const RunContext& ctx, const std::vector<SpectraAccumulator>& accs, const RunSummary& S) {
  for (const auto& a : accs) {
    const std::string msg = aliased_harmonics(ctx, a.method(), S);
    if (msg.empty()) continue;
    if (ctx.campaign.screen.strict) throw PhysicsError("EDM-WIN-022", msg + " (screen.strict = true)");
    ctx.observer.warning(msg);
    return;
  }
}

// The sums of every device (coherent amplitudes, incoherent sums: 8 doubles per direction and
// frequency), and the fold of them on rank 0, against the host's available memory before anything
// is allocated: spectra.count = 1e6 on a 401² screen is 10 TB (EDM-SPEC-070, with the numbers).
void refuse_oversized_spectra(const RunContext& ctx, const PreparedCell& cell, const RunPlan& plan) {
  const double bytes = double(cell.screen().pixels()) * double(ctx.campaign.spectra.count) * 8.0 * sizeof(double) *
                       double(plan.devices.size() + 1);
  const std::uint64_t avail = mem_available();
  if (avail == 0 || bytes <= double(avail)) return;
  char msg[500];
  std::snprintf(msg, sizeof msg,
                "[spectra] count = %lld on %d × %d directions: the direct spectra's sums need about %.3g GiB "
                "(8 doubles per direction and frequency, on %zu device(s) and their fold), more than the %.3g GiB "
                "this host has available; choose fewer frequencies (spectra.count) or directions",
                (long long)ctx.campaign.spectra.count, cell.screen().nx, cell.screen().ny, bytes / 1073741824.0,
                plan.devices.size(), double(avail) / 1073741824.0);
  throw ConfigError("EDM-SPEC-070", msg);
}

// The methods the factory built on this process's devices, what chose them and the cost model's
// estimates on the first device: reported as the phase "spectra" and recorded for run.toml [spectra].
void record_choice(const RunContext& ctx, const std::vector<SpectraAccumulator>& accs, const std::string& chosen_by,
                   RunSummary& S) {
  std::string each;
  bool differ = false;
  for (std::size_t d = 0; d < accs.size(); ++d) {
    differ = differ || accs[d].method() != accs.front().method();
    each += (d ? "; " : "") + std::to_string(d) + ": " + name(accs[d].method());
  }
  const SpectraCost& c = accs.front().choice().cost;
  S.spectra_method = differ ? each : name(accs.front().method());
  S.spectra_chosen_by = chosen_by;
  S.spectra_cost_direct = c.direct;
  S.spectra_cost_fft = c.fft;
  S.spectra_cost_dft = c.dft;
  char costs[160];
  std::snprintf(costs, sizeof costs, "cost model, device seconds per electron: direct %.3g, fft %.3g, dft %.3g",
                c.direct, c.fft, c.dft);
  ctx.observer.phase("spectra", "method " + S.spectra_method + ", chosen by the " + chosen_by + " (" + costs + ")");
}

}  // namespace

std::optional<SpectraShards> open_spectra(const RunContext& ctx, const PreparedCell& cell, const RunPlan& plan,
                                          RunSummary& S) {
  const SpectraSection& sec = ctx.campaign.spectra;
  if (!sec.enabled) return std::nullopt;
  refuse_oversized_spectra(ctx, cell, plan);
  SpectraGrid grid;
  const double wl = cell.units().omega;
  for (double w : spectra_frequencies(sec, wl)) grid.omega.push_back(w / wl);
  grid.directions = screen_directions(ctx.campaign.screen, cell.screen());
  if (cell.screen().far_field()) grid.far_screen = cell.screen();  // the fft method's series
  SpectraOptions o;
  o.nodes = sec.nodes;
  o.phase = sec.phase;
  o.method = sec.method;
  std::string chosen_by = sec.method == SpectraMethod::Auto ? "cost model" : "campaign";
  if (o.method == SpectraMethod::Auto && !aliased_harmonics(ctx, SpectraMethod::Dft, S).empty()) {
    o.method = SpectraMethod::Direct;  // the cost model's pick would alias: accuracy first
    // record_choice's phase says so.
    chosen_by = "aliasing rule (spectra.method = \"auto\" takes the direct method: the window's samples would "
                "alias harmonics of the line into the dft and fft spectra)";
  }
  o.series_samples = predicted_series_samples(cell);
  const bool summed = recorded_spectra(ctx, plan, S);
  const std::vector<SpectraMethod> methods = summed ? resumed_methods(ctx, plan, S) : std::vector<SpectraMethod>{};
  if (!methods.empty()) chosen_by = "checkpoint (the method its sums were made with)";
  // The factory (SpectraAccumulator, field/spectra_method.hpp) builds the method asked, or for
  // "auto" the cost model's pick on each device.
  std::vector<SpectraAccumulator> accs;
  for (std::size_t d = 0; d < plan.devices.size(); ++d) {
    if (!methods.empty()) o.method = methods[d];
    accs.emplace_back(open_device(plan.devices[d]), grid, o);
  }
  refuse_aliased_harmonics(ctx, accs, S);
  record_choice(ctx, accs, chosen_by, S);
  if (summed && methods.empty())
    ctx.observer.warning(resume_file_of(plan, S).string() + " does not record the method of its direct spectra "
                         "(written by an older edm): they are continued with " + name(accs.front().method()) +
                         ", the method spectra.method = \"" + name(sec.method) +
                         "\" resolves to now; if that is not the method that summed them before the stop, "
                         "spectrum.h5's /direct mixes two methods' sums");
  return SpectraShards(std::move(accs), grid.directions.size(), grid.omega.size());
}

void resume_spectra(const RunPlan& plan, const BatchState& state, const RunSummary& S, SpectraShards& spectra) {
  // The file start_or_resume read: rank 0's checkpoint.h5, another rank's file of the generation
  // it commits.
  const auto file = plan.ranks.rank == 0 ? state.checkpoint_file
                                         : rank_checkpoint_path(S.folder, state.generation, plan.ranks.rank);
  spectra.restore(load_checkpoint_spectra(file, spectra.device_count(), spectra.directions(), spectra.frequencies()));
}

// electrons.form_factor_sigma_z / _r: each macro-particle stands for a Gaussian bunch, so the
// coherent amplitude of every (direction, ω) is multiplied by F(ω, n̂) (edm/form_factor.hpp,
// share/docs/ensembles.md), and the coherent d²W/dωdΩ by F². The incoherent sum is unchanged.
static void apply_form_factor(const RunContext& ctx, const PreparedCell& cell, const SpectraFileInfo& info,
                              SpectraSums& sums) {
  const ElectronsSection& el = ctx.campaign.electrons;
  if (!(el.form_factor_sigma_z > 0 || el.form_factor_sigma_r > 0) || sums.coherent.empty()) return;
  const EnsembleKinematics k = initial_kinematics(cell.plugin_scenario());
  const GaussianBunch bunch =
      laser_driven_bunch(el.form_factor_sigma_z, el.form_factor_sigma_r, k.gamma_mean, k.light_front_h, k.laser_direction);
  const std::size_t nw = info.omega.size();
  for (std::size_t d = 0; d < info.directions.size(); ++d)
    for (std::size_t w = 0; w < nw; ++w) {
      const double F = gaussian_form_factor(info.omega[w], info.directions[d].data(), bunch);
      for (std::size_t i = 0; i < 6; ++i) sums.coherent[(d * nw + w) * 6 + i] *= F;
    }
}

void write_spectra(const RunContext& ctx, const PreparedCell& cell, SpectraSums sums, const RunSummary& S) {
  SpectraFileInfo info;
  const double wl = cell.units().omega;
  info.omega = spectra_frequencies(ctx.campaign.spectra, wl);
  info.directions = screen_directions(ctx.campaign.screen, cell.screen());
  info.direction_shape = {std::size_t(cell.screen().ny), std::size_t(cell.screen().nx)};
  if (ctx.campaign.screen.type == ScreenType::Angular)
    for (const DirectionCell& c : direction_cells(make_direction_grid(ctx.campaign.screen)))
      info.solid_angle.push_back(c.solid_angle);
  info.laser_omega = wl;
  info.section = ctx.campaign.spectra;
  info.run_id = S.run_id;
  info.edm_version = EDM_VERSION;
  apply_form_factor(ctx, cell, info, sums);
  SpectrumWriter out = SpectrumWriter::open(RunFolder(S.folder).spectrum(), SpectrumPart::Direct);
  write_direct_spectra(out, info, sums);
  out.commit();
}

}  // namespace edm::detail
