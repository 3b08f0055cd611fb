// The run-folder lock (edm/run_lock.hpp, public for edm plot) and what goes with it inside core:
// the command name its records carry, and the rule that edm never deletes or overwrites a file it
// did not create in this run, so leftovers under edm's temporary names are moved aside with a
// timestamp (move_aside), never removed.
#pragma once
#include <filesystem>
#include <optional>
#include <string>

#include "edm/run_lock.hpp"

namespace edm {

// The command of this process, as the lock records it ("pid … on host … since … by edm spectrum")
// and as a refusal names it; declared for the app in edm/run.hpp (set_command_name).
void set_command_name(std::string name);

// If `file` exists, renames it to "<file>.<UTC yyyymmddThhmmssZ>" (with a counter if that name is
// taken too) and returns the new name; nothing when there was no file. IoError EDM-RUN-044 when the
// rename fails: the file is then left where it was, and the caller must not write over it.
std::optional<std::filesystem::path> move_aside(const std::filesystem::path& file);

}  // namespace edm
