// What a front end (the edm command, the Python module) does before run_campaign: a campaign file,
// a replayed run.toml, campaign text or a run folder's checkpoint becomes a validated Campaign with
// its scenario's plugin loaded. One place, so that `edm run`, `edm resume` and `edm.run()` in Python
// read a campaign the same way and refuse the same input with the same EDM id.
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "edm/campaign.hpp"
#include "edm/manifest.hpp"
#include "edm/plugins.hpp"

namespace edm {

struct LoadedCampaign {
  Campaign campaign;
  PluginRegistry plugins;  // holds the campaign's scenario plugin (only that one is opened)
  // Broken copies of the scenario's plugin skipped on the search path (a front end warns about them).
  std::vector<PluginFailure> skipped;
  std::string source;  // the file, or the name the text was given, for messages
  // load_campaign_to_resume: the checkpoint cadence the run was started with (RunOptions::checkpoint_every).
  std::int64_t checkpoint_every = 0;
  // A replay's data files that changed since the run (allowed by --allow-changed-inputs): one
  // message each, for RunOptions::warnings (the new run.toml's [warnings]).
  std::vector<std::string> warnings;
};

// A campaign file, or a run folder's run.toml (its [campaign] replays the run), with overrides
// (command line > environment > file > default). Errors are those of check_campaign_file,
// load_campaign and PluginRegistry::get.
// A replay digests every data file again (electrons.file, trajectory.file) and compares it with
// run.toml [inputs]: a file at the recorded path whose digest differs is ConfigError EDM-RUN-072
// naming the key, the file and both digests, or, with allow_changed_inputs, a warning in
// LoadedCampaign::warnings. An input named by another path than the run's (an override) is a change
// on purpose and not compared; an unreadable one is left to the stage that reads it.
// With `sweep_cell`, a [sweep] table in the file is skipped (one cell of a sweep, its axes' values
// among the overrides: what `edm sweep --ranks-per-cell` starts under mpirun), not EDM-SWP-012.
LoadedCampaign load_campaign_for_run(const std::filesystem::path& file, const std::vector<Override>& overrides,
                                     bool allow_changed_inputs = false, bool sweep_cell = false);
// That comparison: `recorded` ([inputs] of `manifest`) against `now` (input_files of the replayed
// campaign). Throws EDM-RUN-072 for the first changed file, or returns one warning each when allowed.
std::vector<std::string> compare_replay_inputs(const std::vector<InputFile>& recorded,
                                               const std::vector<InputFile>& now, const std::string& manifest,
                                               bool allow_changed_inputs);
// The same from campaign text (Python's dict and keyword form); `name` stands for the file in messages.
LoadedCampaign parse_campaign_for_run(std::string_view text, const std::string& name,
                                      const std::vector<Override>& overrides);
// The [run] scenario of campaign text with the overrides applied ("" when it names none).
std::string scenario_of(std::string_view text, const std::vector<Override>& overrides);
// `edm resume FOLDER`: the campaign stored in FOLDER's checkpoint, its output moved to FOLDER and its
// keys' provenance restored. ConfigError EDM-CKP-005 when FOLDER holds no checkpoint.
LoadedCampaign load_campaign_to_resume(const std::filesystem::path& folder);
// `edm resume FOLDER` after a failed final rename (EDM-IO-163), which keeps the finished field as
// field.h5.partial and its run.toml as run.toml.partial: when both are there, the field carries its
// completion attribute and is the one the manifest names, they are renamed into place (nothing is
// computed, no checkpoint needed; the checkpoints are removed as at a run's end) and true returned.
// False when FOLDER holds no run.toml.partial. IoError EDM-RUN-085 when the pair is not whole or not
// one run's, EDM-RUN-086 when the renames fail again.
bool adopt_kept_field(const std::filesystem::path& folder);

}  // namespace edm
