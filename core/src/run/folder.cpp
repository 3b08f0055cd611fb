// The run folder's lock and its leftovers (io/run_lock.hpp): taken by run_campaign before the
// folder's first check and held to the last rename, so one process at a time writes a folder.
#include <vector>

#include "io/run_lock.hpp"
#include "edm/checkpoint.hpp"
#include "edm/run_files.hpp"
#include "run/stages.hpp"

namespace edm::detail {

RunFolderLock lock_run_folder(const RunContext& ctx) {
  RunFolderLock lock = RunFolder(ctx.campaign.run.output).lock();
  if (!lock.stale_record().empty())
    ctx.observer.warning("run folder " + ctx.campaign.run.output + ": took over the lock of " +
                         RunFolderLock::command_in(lock.stale_record()) + ", which ended without releasing it (" +
                         lock.stale_record() + ")");
  return lock;
}

void set_aside_leftovers(const RunContext& ctx, const RunSummary& S, bool keep_field_partial) {
  // edm's temporary names, as an earlier run may have left them: a complete field that lost its
  // manifest (edm told the user to keep it), or a write cut short. Not this run's files, so they
  // are moved aside, never removed or written over.
  const auto ckpt = checkpoint_path(S.folder);
  for (const auto& final_name : {S.field_file, S.manifest_file, ckpt}) {
    if (keep_field_partial && final_name == S.field_file) continue;  // the earlier passes of the checkpoint's run
    const auto file = RunFolder::staging(final_name);
    if (const auto kept = move_aside(file))
      ctx.observer.warning("kept " + file.string() + " from an earlier run: moved aside to " + kept->string());
  }
  // Rank files of an mpirun job killed before its first commit (no checkpoint.h5 names them, so no
  // resume can use them): a fresh run would write over them and remove them at its end.
  if (ctx.options.resume) return;  // a resume's own rank files
  std::error_code ec;
  std::vector<std::filesystem::path> ranks;
  for (const auto& e : std::filesystem::directory_iterator(S.folder, ec))
    if (is_rank_checkpoint_name(e.path().filename().string())) ranks.push_back(e.path());
  for (const auto& file : ranks)
    if (const auto kept = move_aside(file))
      ctx.observer.warning("kept " + file.string() + " from an earlier mpirun job: moved aside to " + kept->string());
}

void set_aside_stale_analysis(const RunContext& ctx, const RunSummary& S) {
  // spectrum.h5 is written after field.h5 (by edm spectrum, or by this run's direct spectra once the
  // field is committed), so one found now belongs to the field that `--overwrite` replaced: left
  // here, edm info would show it and edm plot would plot it as this run's. It is kept, not removed.
  // (Found by tests/test_hostile: a rerun with --overwrite kept the old run's spectrum.)
  const auto spectrum = RunFolder(S.folder).spectrum();
  if (const auto kept = move_aside(spectrum))
    ctx.observer.warning(spectrum.string() + " was the spectrum of the field this run replaced: moved aside to " +
                         kept->string());
  // So were the plots of that field (edm plot writes plots/ only from a committed field): left here,
  // the old run's PNGs sat beside the new field as its own (found by a hostile tester).
  const auto plots = RunFolder(S.folder).plots();
  if (std::filesystem::is_directory(std::filesystem::symlink_status(plots)))
    if (const auto kept = move_aside(plots))
      ctx.observer.warning(plots.string() + " held the plots of the field this run replaced: moved aside to " +
                           kept->string());
}

void remove_checkpoints(const RunSummary& S) {
  // The run is complete: its checkpoints have served (rank 0's checkpoint.h5 and, under mpirun,
  // the other ranks' files, which are this run's too).
  std::error_code ec;
  std::filesystem::remove(checkpoint_path(S.folder), ec);
  for (const auto& e : std::filesystem::directory_iterator(S.folder, ec))
    if (is_rank_checkpoint_name(e.path().filename().string())) std::filesystem::remove(e.path(), ec);
}

}  // namespace edm::detail
