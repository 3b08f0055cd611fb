// The subcommands of `edm`. Each parses its own options (Boost.Program_options) and calls libedm;
// each returns the process exit code. Errors are thrown as edm::Error and reported by main.
#pragma once
#include <atomic>
#include <string>
#include <vector>

namespace edm::app {

using Args = std::vector<std::string>;  // the arguments after the subcommand name

int cmd_run(const Args& args);
int cmd_bench(const Args& args);
int cmd_resume(const Args& args);

// Installs the SIGINT/SIGTERM handlers of a run and returns the flag they set.
const std::atomic<bool>* install_stop_handlers();
int cmd_devices(const Args& args);
int cmd_plugins(const Args& args);
int cmd_schema(const Args& args);
int cmd_spectrum(const Args& args);
int cmd_plot(const Args& args);
int cmd_info(const Args& args);
int cmd_explain(const Args& args);

}  // namespace edm::app
