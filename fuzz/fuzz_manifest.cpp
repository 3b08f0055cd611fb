// libFuzzer target: bytes → temporary RUN/run.toml → the manifest readers: is_manifest and
// campaign_text_from_manifest (the replay of `edm run RUN/run.toml`), read_run_physics (`edm
// spectrum`) and inspect_run_folder (`edm info`). Bad manifests must be refused with an
// edm::Error; any other exception, a crash or UB is a bug. A replayed campaign is what `edm run`
// parses next: its text must be TOML again (edm run parses it unguarded for the scenario), and a
// campaign that parses must replay to the same effective campaign, as in fuzz_campaign.
#include <toml++/toml.h>

#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include "edm/campaign.hpp"
#include "edm/error.hpp"
#include "edm/manifest.hpp"
#include "edm/run_files.hpp"
#include "edm/run_folder.hpp"
#include "edm/spectrum.hpp"
#include "fuzz_input_file.hpp"
#include "fuzz_plugin_keys.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static edm::fuzz::InputFile file(".run", "run.toml");
  const std::string& path = file.write(data, size);
  try {
    (void)edm::read_run_physics(edm::RunFolder(file.folder()));
  } catch (const edm::Error&) {
  }
  try {
    (void)edm::inspect_run_folder(file.folder());
  } catch (const edm::Error&) {
  }
  if (!edm::is_manifest(path)) return 0;
  std::string text;
  try {
    text = edm::campaign_text_from_manifest(path);
  } catch (const edm::Error&) {
    return 0;
  }
  // Not in a try: a toml::parse_error here is a bug (`edm run` would report an internal error).
  const toml::table again = toml::parse(text, std::string_view("replay.toml"));
  if (!again["run"]["scenario"].is_string()) __builtin_trap();
  edm::Campaign c;
  try {
    c = edm::parse_campaign(text, "run.toml [campaign]", {}, edm::fuzz::plugin_keys(), false);
  } catch (const edm::Error&) {
    return 0;
  }
  if (c.electrons.distribution == edm::Distribution::List || c.trajectory.model == edm::TrajectoryModel::Tracks) return 0;  // paths: see fuzz_campaign
  std::ostringstream os, os2;
  os << c.to_toml();
  const edm::Campaign replay = edm::parse_campaign(os.str(), "replay.toml", {}, edm::fuzz::plugin_keys(), false);
  os2 << replay.to_toml();
  if (os.str() != os2.str()) __builtin_trap();
  return 0;
}
