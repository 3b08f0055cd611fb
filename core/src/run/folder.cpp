// The run folder's lock and its leftovers (io/run_lock.hpp): taken by run_campaign before the
// folder's first check and held to the last rename, so one process at a time writes a folder. And
// `edm resume` of a field kept after a failed final rename: the pair put in place (adopt_kept_field).
#include <cstdint>
#include <vector>

#include <toml++/toml.h>

#include "edm/field_file.hpp"
#include "edm/launch.hpp"
#include "io/h5.hpp"
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

namespace edm {

namespace {

namespace fs = std::filesystem;

bool regular(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(fs::symlink_status(p, ec));
}

// Why the kept pair cannot be put in place ("" when it can): the field must carry edm_complete (the
// writer's last act before its rename), open as a whole field.h5, and be the one the manifest names
// ([field_file]: run id and size).
std::string kept_pair_problem(const RunFolder& run, const fs::path& field, const fs::path& manifest) {
  if (run.has_field() || run.has_manifest())
    return "the folder holds field.h5 or run.toml already (a later run's); move the kept files away";
  if (!regular(field) || !regular(manifest))
    return "field.h5.partial and run.toml.partial must both be regular files";
  try {
    const h5::Handle f = h5::open_file(field);
    const auto complete = h5::attr_double(f.get(), "edm_complete");
    if (!complete || *complete != 1.0)
      return "field.h5.partial has no edm_complete attribute: its write was cut off before the end";
    const std::string id = FieldFile::open(field).summary().run_id;
    const toml::table m = toml::parse_file(manifest.string());
    const auto named = m["field_file"]["run_id"].value<std::string>();
    const auto bytes = m["field_file"]["bytes"].value<std::int64_t>();
    if (!named || !bytes) return "run.toml.partial has no [field_file] run_id and bytes";
    if (*named != id)
      return "run.toml.partial names the field of run " + *named + ", field.h5.partial is run " + id + "'s";
    std::error_code ec;
    const auto size = fs::file_size(field, ec);
    if (ec || std::int64_t(size) != *bytes)
      return "field.h5.partial holds " + std::to_string(size) + " bytes, run.toml.partial recorded " +
             std::to_string(*bytes);
  } catch (const Error& e) {
    return std::string(e.id()) + ": " + e.what();
  } catch (const toml::parse_error& e) {
    return "run.toml.partial does not parse: " + std::string(e.description());
  }
  return "";
}

}  // namespace

bool adopt_kept_field(const fs::path& folder) {
  const RunFolder run(folder);
  const fs::path field = RunFolder::staging(run.field()), manifest = RunFolder::staging(run.manifest());
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(manifest, ec))) return false;  // no kept pair: resume the checkpoint
  const RunFolderLock lock = run.lock();
  const std::string why = kept_pair_problem(run, field, manifest);
  if (!why.empty())
    throw IoError("EDM-RUN-085", folder.string() + ": the field kept after a failed rename cannot be adopted (" +
                                     why + "). To resume from the checkpoint instead (or run again), move "
                                     "run.toml.partial away");
  // The field first, as the run commits: a run.toml is never in place without its field.h5.
  fs::rename(field, run.field(), ec);
  if (!ec) {
    fs::rename(manifest, run.manifest(), ec);
    if (ec) {
      std::error_code back;
      fs::rename(run.field(), field, back);
    }
  }
  if (ec)
    throw IoError("EDM-RUN-086", folder.string() + ": cannot put the kept field.h5.partial and run.toml.partial in "
                                     "place (" + ec.message() + "): the cause of the failed rename is still there");
  // The run is complete: its checkpoints have served, as at the end of a run.
  RunSummary done;
  done.folder = folder;
  detail::remove_checkpoints(done);
  return true;
}

}  // namespace edm
