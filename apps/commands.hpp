// The subcommands of `edm`. Each parses its own options (Boost.Program_options) and calls libedm;
// each returns the process exit code. Errors are thrown as edm::Error and reported by main.
#pragma once
#include <atomic>
#include <filesystem>
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
int cmd_sweep(const Args& args);
int cmd_campaign(const Args& args);
// edm compare RUN_A RUN_B: 0 within --tol, 8 beyond it (cmd_compare.cpp).
int cmd_compare(const Args& args);
// edm gauge RUN_A RUN_B RUN_C: the Lorenz-gauge check of three potential runs (cmd_gauge.cpp).
int cmd_gauge(const Args& args);
// `edm plot OUTPUT` on a campaign folder (campaign.toml, no run.toml): a result against a sweep axis.
bool is_campaign_folder(const std::filesystem::path& dir);
int plot_campaign(const Args& args);
// The interpreter both plot commands run their script with: EDM_PYTHON, python3 or /usr/bin/python3,
// the first that imports numpy, h5py and matplotlib (a pyenv shim may lack them); IoError
// EDM-PLOT-002 naming what to install when none does (cmd_plot.cpp).
std::string find_python();
// Both plot commands write their PNGs into FOLDER/plots/, which must be a folder of its own or absent:
// a symbolic link there (to the user's other folder) had its PNGs replaced in the target. IoError
// EDM-PLOT-004 naming the path for a link or anything else that is not a folder (cmd_plot.cpp).
void refuse_plots_not_a_folder(const std::filesystem::path& folder);

}  // namespace edm::app
