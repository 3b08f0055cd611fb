// libFuzzer target: campaign TOML text → edm::parse_campaign. Lines starting with "#set " (TOML
// comments, so the file still parses) become --set overrides, which reaches the text parser too.
// edm::Error is the contract for bad input; any other exception, a crash or UB is a bug, so it is
// left to escape (libFuzzer reports an uncaught exception as a crash). A campaign that parses must
// replay: its to_toml() is parsed again and must give the same effective campaign.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "edm/campaign.hpp"
#include "edm/error.hpp"
#include "edm/schema.hpp"
#include "fuzz_plugin_keys.hpp"

namespace {

std::vector<edm::Override> overrides_in(std::string_view text) {
  std::vector<edm::Override> out;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    if (line.substr(0, 5) == "#set ") {
      const std::string_view kv = line.substr(5);
      const std::size_t eq = kv.find('=');
      if (eq != std::string_view::npos)
        out.push_back({std::string(kv.substr(0, eq)), std::string(kv.substr(eq + 1)), edm::Origin::CommandLine});
    }
    pos = end + 1;
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  edm::Campaign c;
  try {
    // read_environment = false: the result must depend on the input alone.
    c = edm::parse_campaign(text, "fuzz.toml", overrides_in(text), edm::fuzz::plugin_keys(), false);
  } catch (const edm::Error&) {
    return 0;  // refused with a message: the contract
  }
  // Replay: a data file path is rewritten relative to the campaign's folder, so skip campaigns
  // that name one (the check is about values and types, not the file system).
  if (c.electrons.distribution == edm::Distribution::List || c.trajectory.model == edm::TrajectoryModel::Tracks) return 0;
  std::ostringstream os;
  os << c.to_toml();
  // Not in a try: the replay of an accepted campaign must be accepted too (an edm::Error here is a bug).
  edm::Campaign again = edm::parse_campaign(os.str(), "replay.toml", {}, edm::fuzz::plugin_keys(), false);
  std::ostringstream os2;
  os2 << again.to_toml();
  if (os.str() != os2.str()) __builtin_trap();  // the replay changed the effective campaign
  return 0;
}
