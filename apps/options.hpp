// Command-line helpers shared by the subcommands: `--set section.key=value` (repeatable) and the
// options of the key table's flag column into campaign Overrides. The shape is checked here, where
// the option's text is at hand; the key and the value are checked against the key table by core
// (load_campaign), which names the option too.
#pragma once
#include <cstdint>
#include <string>

#include <boost/program_options.hpp>
#include <vector>

#include "edm/campaign.hpp"

namespace edm::app {

// Each entry is "section.key=value" (the value may contain '='); throws ConfigError EDM-CFG-010
// naming the bad option.
std::vector<Override> parse_set_options(const std::vector<std::string>& sets);

// The options that the key table gives a key (its flag column: --output/-o, --device/--devices,
// --electron-batch), each described by its key's meaning.
void add_key_flags(boost::program_options::options_description& desc);
// The overrides those options give, in table order. Append them after the --set overrides: among
// command-line values the last wins, so a flag beats a --set of the same key.
std::vector<Override> key_flag_overrides(const boost::program_options::variables_map& vm);

// --checkpoint-every of edm run, resume and sweep: K >= 1 (every K batches), 0 (automatic: on for
// runs predicted over 10 minutes) or -1 (never), as their help and share/docs/outputs.md say. Any
// other value (-2 and below used to mean "never" silently) throws ConfigError EDM-CLI-050 naming
// the command, the flag and the value.
void check_checkpoint_every(const char* command, std::int64_t every);

// Parses a subcommand's arguments: the options in `desc` plus, when `name` is given, one positional
// argument stored in `positional` (registered as option `name`). Prints `desc` and returns false
// on --help.
bool parse_command(const std::vector<std::string>& args, const boost::program_options::options_description& desc,
                   const char* name, std::string& positional, boost::program_options::variables_map& vm);
// The same with any number of positional arguments, all stored in `positionals` (edm compare's two
// run folders, edm gauge's three); the caller checks how many it got.
bool parse_command(const std::vector<std::string>& args, const boost::program_options::options_description& desc,
                   std::vector<std::string>& positionals, boost::program_options::variables_map& vm);

// Runs argv (PATH lookup) and returns its exit status (127 when it cannot start, 128 + the signal
// when one ended it); quiet sends its stdout and stderr to /dev/null. edm plot, edm compare --plot
// and edm campaign collect's plots start their Python scripts through it.
int spawn_wait(const std::vector<std::string>& argv, bool quiet);

}  // namespace edm::app
