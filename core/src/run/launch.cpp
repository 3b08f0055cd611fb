// From a campaign file, a replayed manifest, campaign text or a checkpoint to a validated Campaign
// with its plugin (edm/launch.hpp): the steps `edm run`, `edm resume` and the Python module share.
#include "edm/launch.hpp"

#include <toml++/toml.h>

#include "edm/checkpoint.hpp"
#include "edm/error.hpp"
#include "edm/manifest.hpp"
#include "edm/run_manifest.hpp"
#include "run/ranks.hpp"

namespace edm {

std::string scenario_of(std::string_view text, const std::vector<Override>& overrides) {
  for (auto it = overrides.rbegin(); it != overrides.rend(); ++it)
    if (it->key == "run.scenario") {
      // An override holds the value as typed, read as the key table reads it (values.hpp from_text):
      // between double quotes, as it is; else the bare word.
      const std::string& v = it->value;
      return v.size() >= 2 && v.front() == '"' && v.back() == '"' ? v.substr(1, v.size() - 2) : v;
    }
  try {
    return toml::parse(text)["run"]["scenario"].value_or(std::string());
  } catch (const toml::parse_error&) {
    return "";  // parse_campaign reports the syntax error with its line and column
  }
}

namespace {
LoadedCampaign with_plugin(const std::string& scenario, const std::string& source) {
  LoadedCampaign l{{}, PluginRegistry::discover(scenario), {}, source};
  l.skipped = l.plugins.failures_of(scenario);
  return l;
}
}  // namespace

std::vector<std::string> compare_replay_inputs(const std::vector<InputFile>& recorded,
                                               const std::vector<InputFile>& now, const std::string& manifest,
                                               bool allow_changed_inputs) {
  std::vector<std::string> warnings;
  for (const InputFile& was : recorded)
    for (const InputFile& is : now) {
      // Another path is an override on purpose; an unreadable file is reported where it is read.
      if (is.key != was.key || is.path != was.path || is.digest.rfind("unreadable", 0) == 0) continue;
      if (is.digest == was.digest && is.bytes == was.bytes) continue;
      const std::string what = is.key + " '" + is.path + "' is now " + is.digest + ", " + std::to_string(is.bytes) +
                               " bytes; the run of " + manifest + " read " + was.digest + ", " +
                               std::to_string(was.bytes) + " bytes ([inputs])";
      if (!allow_changed_inputs)
        throw ConfigError("EDM-RUN-072", what + ": the file changed since the run, and the replay would not be "
                                                "the run it names; replay with the file the run read, or add "
                                                "--allow-changed-inputs to run on this one");
      warnings.push_back("replay with a changed input (--allow-changed-inputs): " + what);
    }
  return warnings;
}

LoadedCampaign load_campaign_for_run(const std::filesystem::path& file, const std::vector<Override>& overrides,
                                     bool allow_changed_inputs, bool sweep_cell) {
  // Before anything opens it (is_manifest reads it): a FIFO would block, a directory would not be refused.
  check_campaign_file(file);
  if (is_manifest(file)) {
    // Replay: the manifest's [campaign] is the whole effective campaign.
    const std::string text = campaign_text_from_manifest(file);
    LoadedCampaign l = parse_campaign_for_run(text, file.string() + " [campaign]", overrides);
    // The run's data files as it read them ([inputs]): the file parsed a moment ago parses again.
    const auto recorded = RunManifest::inputs_of(toml::parse_file(file.string()), file);
    l.warnings = compare_replay_inputs(recorded, input_files(l.campaign), file.string(), allow_changed_inputs);
    return l;
  }
  const std::string scenario = peek_scenario(file, overrides);
  LoadedCampaign l = with_plugin(scenario, file.string());
  l.campaign = load_campaign(file, overrides, l.plugins.get(scenario).keys(), true, sweep_cell);
  return l;
}

LoadedCampaign parse_campaign_for_run(std::string_view text, const std::string& name,
                                      const std::vector<Override>& overrides) {
  const std::string scenario = scenario_of(text, overrides);
  LoadedCampaign l = with_plugin(scenario, name);
  l.campaign = parse_campaign(text, name, overrides, l.plugins.get(scenario).keys());
  return l;
}

LoadedCampaign load_campaign_to_resume(const std::filesystem::path& folder) {
  const auto file = checkpoint_path(folder);
  if (!std::filesystem::exists(file))
    throw ConfigError("EDM-CKP-005", folder.string() + ": no checkpoint.h5 here (nothing to resume)");
  const CheckpointState st = read_checkpoint_state(file);
  const std::string scenario = scenario_of(st.campaign_text, {});
  LoadedCampaign l = with_plugin(scenario, file.string());
  // The stored campaign is the effective one; the folder is where it lives now (it may have moved).
  // A quoted override is a string taken as it is between the quotes (as `--set run.output="…"`).
  l.campaign = parse_campaign(st.campaign_text, file.string() + " [campaign]",
                              {{"run.output", "\"" + folder.string() + "\"", Origin::CommandLine}}, l.plugins.get(scenario).keys(),
                              false);
  // Where its keys came from in the run that was started, and its file (run.toml's provenance).
  if (!st.campaign_provenance.empty()) restore_provenance(l.campaign, st.campaign_provenance, file.string());
  l.checkpoint_every = st.checkpoint_every;
  return l;
}

}  // namespace edm
