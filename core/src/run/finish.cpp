// Finish the run (the driver's last stage): reduce across devices (CLBlast) and download in slabs;
// across ranks each slab is reduced to rank 0 (never a second whole cube anywhere), which writes it
// into field.h5.partial, adds the γ trace, renames the file into place and writes run.toml.
#include <algorithm>
#include <optional>
#include <string>

#include "edm/checkpoint.hpp"
#include "edm/device.hpp"
#include "edm/device_rate.hpp"
#include "edm/error.hpp"
#include "edm/flops.hpp"
#include "edm/laser.hpp"
#include "edm/manifest.hpp"
#include "edm/run_files.hpp"
#include "run/ranks.hpp"
#include "run/stages.hpp"

namespace edm::detail {
namespace {

// A stop request during the download or the write: the cube has been reduced across devices, so it
// is no longer resumable from here; the run ends with nothing under field.h5 (the writer removes its
// own .partial) and the last checkpoint, if one was written, still stands.
void throw_if_stopped(const RunContext& ctx, const RunSummary& S, const char* phase) {
  if (!ctx.options.stop || !ctx.options.stop->load()) return;
  const auto ckpt = checkpoint_path(S.folder);
  throw Interrupted("EDM-RUN-043", std::string("stopped on request during the ") + phase + "; no field.h5 was written" +
                                       (std::filesystem::exists(ckpt)
                                            ? "; the last checkpoint stands: `edm resume " + S.folder.string() + "`"
                                            : ""));
}

}  // namespace

void open_field_file(const RunContext& ctx, const PreparedCell& cell, const RunPlan& plan,
                     std::optional<FieldWriter>& writer, RunSummary& S) {
  if (plan.ranks.rank != 0) return;
  // Not the throwing overload: a filesystem_error would reach the app as an "internal error"
  // (exit 1); an output below a regular file or in a read-only place is an I/O error naming the path.
  std::error_code ec;
  std::filesystem::create_directories(S.folder, ec);
  if (ec)
    throw IoError("EDM-RUN-003", "cannot create the run folder " + S.folder.string() + ": " + ec.message());
  writer.emplace(
      S.field_file, cell.screen(), cell.units(),
      FieldFileInfo{S.run_id, EDM_VERSION, ctx.campaign.run.scenario, cell.electrons(), cell.mode()});
}

namespace {

// Pixel sharding over ranks: each rank downloads its tile and writes its own rows of field.h5.partial,
// one rank at a time in rank order (serial HDF5; FieldWriter's hand-over, share/docs/design.md "Ranks
// that write their own rows"): rank 0 into the file it created, the others through a joined writer.
// No rank holds more than its tile. Rank 0 takes the file back for the γ trace and the commit.
double write_own_rows(const RunContext& ctx, const PreparedCell& cell, const RunPlan& plan,
                      ShardedFieldAccumulator& acc, FieldWriter* writer, RunSummary& S) {
  const Ranks& ranks = plan.ranks;
  double write_seconds = 0;
  const auto turn = [&] {
    std::optional<FieldWriter> joined;
    if (ranks.rank > 0) joined.emplace(FieldWriter::Join{}, S.field_file, cell.screen(), cell.units(), cell.mode());
    FieldWriter& w = joined ? *joined : *writer;
    try {
      acc.finish(
          [&](int b, int c, int y0, int y1, const double* d) {
            throw_if_stopped(ctx, S, "download");
            const auto tw = Clock::now();
            w.write_slab(b, c, y0, y1, d);
            write_seconds += seconds_since(tw);
          },
          plan.rows_per_slab);
    } catch (const Interrupted& e) {
      if (e.id() == "EDM-RUN-051") throw_if_stopped(ctx, S, "field kernels of the last batch (launched slab by slab)");
      throw;
    }
    const auto tc = Clock::now();
    if (joined) joined->release();
    else writer->close_for_others();
    write_seconds += seconds_since(tc);
  };
  const auto [y0, y1] = plan.share.mine(ranks);
  in_rank_order(ranks, turn,
                "rows " + std::to_string(y0) + " to " + std::to_string(y1 - 1) + " of " + S.field_file.string() + ".partial");
  if (writer) writer->reopen();
  return write_seconds;
}

}  // namespace

double download_field(const RunContext& ctx, const PreparedCell& cell, const RunPlan& plan,
                      ShardedFieldAccumulator& acc, const BatchState& state, FieldWriter* writer,
                      RunSummary& S) {
  ctx.observer.phase("download", "");
  const Screen& screen = cell.screen();
  const Ranks& ranks = plan.ranks;
  std::vector<double> reduced;
  double write_seconds = 0;
  if (plan.share.pixels) {
    write_seconds = write_own_rows(ctx, cell, plan, acc, writer, S);
  } else {
  try {
  acc.finish(
      [&](int b, int c, int y0, int y1, const double* d) {
        throw_if_stopped(ctx, S, "download");
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
      plan.rows_per_slab);
  } catch (const Interrupted& e) {
    // A stop during the last batch's kernels launched slab by slab (FieldAccumulator): as during the download.
    if (e.id() == "EDM-RUN-051") throw_if_stopped(ctx, S, "field kernels of the last batch (launched slab by slab)");
    throw;
  }
  }
  S.timing.field = seconds_since(state.t_first_launch);
  S.timing.kernel = state.kernel_before + acc.timing().kernel_seconds;
  S.timing.reduce = acc.reduce_seconds();
  // Uploads are this process's since it started (a resumed run's own; not carried by checkpoints).
  S.timing.upload = acc.timing().upload_seconds;
  S.timing.upload_bytes = double(acc.timing().upload_bytes);
  S.host_peak_rss = host_peak_rss();
  return write_seconds;
}

namespace {

// The error of a field whose final rename failed (EDM-IO-163), between commit_field_file and the
// manifest, which throws it once run.toml.partial is written (the driver's stages share no other
// state for it; one run at a time per thread).
std::optional<IoError>& kept_field() {
  thread_local std::optional<IoError> e;
  return e;
}

// Rank 0, after the field's final rename failed: run.toml as the run would have written it, kept as
// run.toml.partial beside the complete field.h5.partial; then the rename's error, saying so. A
// manifest that cannot be written leaves the field alone (the checkpoint, if any, still resumes).
[[noreturn]] void keep_manifest_beside_field(const std::filesystem::path& manifest_file, const toml::table& manifest) {
  const IoError e = *kept_field();
  kept_field().reset();
  const auto kept = RunFolder::staging(manifest_file);
  // An --overwrite's folder holds the previous run's run.toml, which stays as it is (with its
  // field.h5) until a run commits: no manifest is kept then, and resume takes the checkpoint.
  std::error_code there;
  if (std::filesystem::exists(std::filesystem::symlink_status(manifest_file, there))) throw e;
  try {
    write_manifest(manifest_file, manifest);  // run.toml names itself in its first line
  } catch (const IoError&) {
    throw e;
  }
  std::error_code ec;
  std::filesystem::rename(manifest_file, kept, ec);
  if (ec) {
    std::filesystem::remove(manifest_file, ec);  // never run.toml without its field.h5
    throw e;
  }
  throw IoError(e.id(), std::string(e.what()) + "; its run.toml is kept as " + kept.string() +
                            ": once the cause is fixed, `edm resume " + manifest_file.parent_path().string() +
                            "` puts both in place without computing again");
}

}  // namespace

void commit_field_file(const RunContext& ctx, const PreparedCell& cell, const RunPlan& plan,
                       const GammaTrace& gamma, double write_seconds, FieldWriter& writer, RunSummary& S) {
  throw_if_stopped(ctx, S, "write");
  writer.write_gamma_trace(gamma, cell.units());
  writer.set_attribute("window_clipped_electrons", double(S.coverage.clipped_electrons()));
  const auto tc = Clock::now();
  kept_field().reset();
  try {
    writer.commit();
  } catch (const IoError& e) {
    // The rename failed (EDM-IO-163) and the whole field stays as field.h5.partial: the run goes on
    // to its manifest, which write_run_manifest keeps as run.toml.partial beside it, so that `edm
    // resume` can put the pair in place without computing anything again.
    if (std::string(e.id()) != "EDM-IO-163") throw;
    kept_field() = e;
  }
  set_aside_stale_analysis(ctx, S);
  S.timing.write = write_seconds + seconds_since(tc);  // HDF5 writes of the slabs (+ MPI reduce) and commit
  S.timing.total = seconds_since(ctx.t_start);
  S.host_estimate_bytes = double(plan.batch) * double(S.spline_bytes_per_electron) + double(plan.slab_bytes);
}

namespace {

// One value for all ranks when they agree ("mine"), else "rank 0: … | rank 1: …" (a rank's own
// value may hold "; " between its devices).
std::string per_rank_text(const std::vector<std::string>& all, const std::string& mine) {
  if (all.size() < 2 || std::all_of(all.begin(), all.end(), [&](const std::string& v) { return v == all[0]; }))
    return mine;
  std::string out;
  for (std::size_t r = 0; r < all.size(); ++r) out += (r ? " | " : "") + ("rank " + std::to_string(r) + ": ") + all[r];
  return out;
}

ManifestExtras manifest_extras(const RunContext& ctx, const PreparedCell& cell, const RunPlan& plan,
                               const ShardedFieldAccumulator& acc, const RankTimings& per_rank,
                               const RunSummary& S) {
  ManifestExtras x;
  x.a0_effective =
      make_laser(ctx.campaign.laser, cell.units(), cell.plugin_scenario().laser_direction())->a0();
  // This process's, as its devices were opened (start_or_resume); [tuning] lists the earlier ones'
  // too when they differ (S.tuning). Under mpirun, every rank's where they differ from rank 0's.
  x.device_names = per_rank_text(per_rank.devices, device_list(S));
  x.clblast_tuning = per_rank_text(per_rank.clblast, this_process_clblast(plan, S));
  const KernelOptions& k = acc.options();
  x.sample_chunks = k.sample_chunks;
  x.work_group = k.work_group;
  x.electron_group = k.electron_group;
  // FLOPs counted from the kernel source; the peak is the cached FMA-probe measurement of the
  // devices used (`edm devices --probe`), so peak_fraction_field is left out until one exists.
  x.flop_per_slot = flop_per_slot(k, cell.mode());
  for (const auto& d : plan.devices) {
    const double p = cached_device_value(d, kPeakValue);
    if (p <= 0) {
      x.fp64_peak = 0;
      break;
    }
    x.fp64_peak += p;
  }
  x.fp64_peak *= plan.ranks.size;  // every rank uses the same kind of devices
  x.tile_width = k.tile_width;
  x.pixel_order = pixel_order_name(k.pixel_order);
  x.fast_recip = k.fast_recip > 0;
  x.interleave = k.interleave > 0;
  x.simd = k.simd > 0 ? k.simd : 0;
  x.nv_seed = k.nv_seed > 0;
  x.ranks = plan.ranks.size;
  x.rank_timings = per_rank;
  x.rank_sharding = plan.share.pixels ? "pixels" : "electrons";
  x.rank_sharding_reason = plan.share.reason;
  x.rank_rows = plan.share.rows;
  x.kinematics = initial_kinematics(cell.plugin_scenario());
  x.inputs = input_files(ctx.campaign);  // [inputs]: what a replay compares its files with
  return x;
}

}  // namespace

void write_run_manifest(const RunContext& ctx, const PreparedCell& cell, const RunPlan& plan,
                        const ShardedFieldAccumulator& acc, const RankTimings& per_rank,
                        const RunSummary& S) {
  ManifestExtras x = manifest_extras(ctx, cell, plan, acc, per_rank, S);
  // field.h5 and run.toml are committed as a pair: the manifest names the field file it belongs to.
  std::error_code size_ec;
  const bool kept = kept_field().has_value();
  x.field_bytes = std::filesystem::file_size(kept ? RunFolder::staging(S.field_file) : S.field_file, size_ec);
  if (size_ec) x.field_bytes = 0;
  if (kept) keep_manifest_beside_field(S.manifest_file, make_manifest(ctx.campaign, S, cell.units(), x));
  try {
    write_manifest(S.manifest_file, make_manifest(ctx.campaign, S, cell.units(), x));
  } catch (const IoError& e) {
    keep_field_as_partial(S, e);
  }
}

void keep_field_as_partial(const RunSummary& S, const IoError& e) {
  if (kept_field()) {  // the field never reached field.h5: its rename's error is the cause to report
    const IoError kept = *kept_field();
    kept_field().reset();
    throw kept;
  }
  // A field.h5 without its run.toml looks like a finished run (and makes the next run ask for
  // --overwrite), so nothing may stay under the final name; the complete field goes back to
  // field.h5.partial rather than being deleted, so a full disk does not throw the result away.
  // (Found by tests/test_bad_inputs: a disk with room for field.h5 but not for run.toml; and by a
  // hostile tester: room for field.h5 but not for the direct spectra's spectrum.h5.)
  const bool kept = move_field_to_partial(S);
  throw IoError(e.id(), std::string(e.what()) +
                            (kept ? "; the complete field was kept as " + RunFolder::staging(S.field_file).string()
                                  : "; " + S.field_file.string() + " is complete but has no manifest"));
}

bool move_field_to_partial(const RunSummary& S) {
  const auto partial = RunFolder::staging(S.field_file);
  std::error_code ec;
  std::filesystem::rename(S.field_file, partial, ec);
  return !ec;
}

}  // namespace edm::detail
