// Command-line helpers shared by the subcommands: `--set section.key=value` (repeatable) into
// campaign Overrides. The shape is checked here, where the option's text is at hand; the key and
// the value are checked against the schema by core (load_campaign), which names the option too.
#pragma once
#include <string>
#include <vector>

#include "edm/campaign.hpp"

namespace edm::app {

// Each entry is "section.key=value" (the value may contain '='); throws ConfigError EDM-CFG-010
// naming the bad option.
std::vector<Override> parse_set_options(const std::vector<std::string>& sets);

}  // namespace edm::app
