// edm run CAMPAIGN.toml [--set section.key=value]... : one cell, end to end. Also accepts a run
// folder's run.toml (replays its [campaign]). Precedence: command line > environment > file > default.
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>

#include <boost/program_options.hpp>

#include "commands.hpp"
#include "console_observer.hpp"
#include "options.hpp"
#include "edm/campaign.hpp"
#include "edm/error.hpp"
#include "edm/launch.hpp"
#include "edm/plugins.hpp"
#include "edm/run.hpp"

namespace po = boost::program_options;

namespace edm::app {

// SIGINT/SIGTERM ask the run to stop: within one knot of the trajectory solve, or after the batch
// on the device (the last one and a single pass too), the driver writes a checkpoint and returns
// Interrupted (exit 130), so `edm resume` can continue; during the download it leaves no field.h5
// (share/docs/errors.md, "Stops"). A second signal kills at once.
namespace {
std::atomic<bool> g_stop{false};
extern "C" void on_stop_signal(int sig) {
  if (g_stop.exchange(true)) {
    std::signal(sig, SIG_DFL);
    std::raise(sig);
  }
}
}  // namespace

const std::atomic<bool>* install_stop_handlers() {
  std::signal(SIGINT, on_stop_signal);
  std::signal(SIGTERM, on_stop_signal);
  return &g_stop;
}

// --max-host-memory in MiB: a positive finite number of at most 2^40 MiB (1 EiB), in bytes.
std::uint64_t host_memory_option(const po::variables_map& vm) {
  if (!vm.count("max-host-memory")) return 0;
  const std::string text = vm["max-host-memory"].as<std::string>();
  char* end = nullptr;
  const double mib = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !(mib >= 1 && mib <= 0x1p40))
    throw ConfigError("EDM-CLI-006",
                      "--max-host-memory " + text + ": the host limit must be a number of MiB from 1 to 2^40");
  return std::uint64_t(mib * double(1 << 20));
}

// `edm run --dry-run`: the resolved configuration key by key with each value's origin, then the
// plan: cell, devices, memories, passes (with the splines kept or solved again), sharding, time.
int print_dry_run(const std::string& campaign_file, const Campaign& campaign, const RunSummary& s) {
  // The resolved configuration, key by key, with where each value came from.
  std::cout << "dry run of " << campaign_file << " (nothing is run or written)\n\n";
  const toml::table eff = campaign.to_toml();
  for (const auto& [section, node] : eff) {
    const auto* t = node.as_table();
    if (!t) continue;
    std::cout << "[" << section.str() << "]\n";
    for (const auto& [key, value] : *t) {
      const std::string full = std::string(section.str()) + "." + std::string(key.str());
      const auto it = campaign.origins.find(full);
      std::ostringstream v;
      value.visit([&v](auto&& n) { v << n; });
      std::cout << "  " << key.str() << " = " << v.str();
      if (it != campaign.origins.end()) std::cout << "   # " << origin_name(it->second);
      std::cout << "\n";
    }
  }
  const double gib = 1024.0 * 1024 * 1024;
  std::cout << "\ncell:    " << s.electrons << " electrons x " << s.screen.nx << " x " << s.screen.ny
            << " pixels x " << s.screen.samples << " samples = " << double(s.slots) << " slots\n";
  std::cout << "devices: ";
  for (std::size_t i = 0; i < s.devices.size(); ++i) std::cout << (i ? "; " : "") << s.devices[i];
  std::cout << "\nmemory:  device buffers " << double(s.device_buffer_bytes) / gib << " GiB per device; host ≈ "
            << s.host_estimate_bytes / gib << " GiB (electron_batch " << (s.electron_batch ? s.electron_batch : s.electrons)
            << " x " << double(s.spline_bytes_per_electron) / 1e6 << " MB of splines per electron, or the download staging)\n";
  std::cout << "passes:  " << s.passes << (s.passes > 1 ? " (the screen in tiles of up to " : " (the whole screen; ")
            << (s.passes > 1 ? std::to_string(s.pass_rows) + " rows in turn: the device buffers above are one pass's)"
                             : std::string("it fits the devices)"))
            << "\nsharding: " << s.sharding << " (" << s.sharding_reason << ")\n";
  std::cout << "knots:   " << s.knots.knots_per_period << " per period";
  if (s.knots.automatic)
    std::cout << " (auto: estimated relative field error " << s.knots.estimate() << " <= tolerance "
              << s.knots.tolerance << ", from " << s.knots.pilots.size() << " pilot electrons at K against 2K)";
  std::cout << "\n";
  if (s.passes > 1) {
    // Both memories of a screen in passes: the device's per pass (above), the host's peak with the kept splines.
    std::cout << "splines: " << (s.pass_splines == "kept" ? "kept on the host between passes" : "solved again in every pass")
              << " (" << s.pass_splines_reason << ")\n";
    std::cout << "memory:  device " << double(s.device_buffer_bytes) / gib << " GiB per device in each pass; host ≈ "
              << s.host_estimate_bytes / gib << " GiB"
              << (s.pass_splines == "kept" ? " with the kept splines" : "")
              << " (what the run adds to the process: a batch, the staging" << (s.pass_splines == "kept" ? ", the kept splines" : "")
              << ")\n";
    if (s.pass_splines != "kept")
      std::cout << "time:    ≈ " << s.pass_resolve_estimate << " s solving the trajectories again in passes 2 to "
                << s.passes << " (electron 0's solve, over the host's threads)\n";
  }
  if (s.time_estimate > 0)
    std::cout << "time:    ≈ " << s.time_estimate + s.pass_resolve_estimate << " s of field kernels"
              << (s.pass_resolve_estimate > 0 ? " and re-solves" : "")
              << " (the rate `edm bench` measured on this device and kernel)\n";
  else
    std::cout << "time:    unknown — run `edm bench CAMPAIGN.toml` once on this device (this campaign, so that its "
                 "kernel path is measured) to measure its rate\n";
  return 0;
}

int cmd_run(const Args& args) {
  po::options_description desc("edm run CAMPAIGN.toml [options]");
  std::vector<std::string> sets;
  std::string campaign_file;
  std::int64_t checkpoint_every = 0;
  desc.add_options()("help,h", "this help")(
      "set", po::value(&sets)->composing(), "override a campaign key: section.key=value (repeatable)");
  add_key_flags(desc);  // --output/-o, --device/--devices, --electron-batch: the key table's flags
  desc.add_options()("overwrite", "replace results already in the run folder")(
      "dry-run", "validate and estimate, run nothing")(
      "max-host-memory", po::value<std::string>(), "host memory limit, MiB: bounds the run's peak and sizes electron_batch = auto")(
      "checkpoint-every", po::value(&checkpoint_every),
      "write RUN/checkpoint.h5 every K >= 1 batches (default 0: automatic for runs predicted > 10 min; -1: never)")(
      "allow-changed-inputs", "replaying RUN/run.toml: run even where a data file changed since the run (a warning in the new run.toml) instead of refusing (EDM-RUN-072)")(
      "sweep-cell", "one cell of a sweep's file, its values given with --set: skip [sweep] (edm sweep --ranks-per-cell)")(
      "quiet,q", "no progress output")("verbose,v", "more progress output");
  po::variables_map vm;
  if (!parse_command(args, desc, "campaign", campaign_file, vm)) return 0;  // --help
  if (campaign_file.empty()) throw ConfigError("EDM-CLI-002", "edm run: no campaign file given");
  check_checkpoint_every("run", checkpoint_every);
  auto overrides = parse_set_options(sets);
  for (auto& o : key_flag_overrides(vm)) overrides.push_back(std::move(o));
  // A campaign file or a run's run.toml (replayed), with only its scenario's plugin opened (another
  // plugin on the path cannot crash this run): edm/launch.hpp, the steps edm.run in Python takes too.
  const LoadedCampaign loaded = load_campaign_for_run(campaign_file, overrides, vm.count("allow-changed-inputs") > 0,
                                                     vm.count("sweep-cell") > 0);
  const Campaign& campaign = loaded.campaign;
  const PluginRegistry& registry = loaded.plugins;
  // A broken copy of the scenario's plugin ahead of the one that loaded (it crashed in its probe)
  // would otherwise go unseen until it is the only one left.
  for (const auto& f : loaded.skipped)
    std::cerr << "warning: skipped " << f.path.string() << " (its .scenario file names '" << campaign.run.scenario
              << "'): " << f.reason << "\n";

  RunOptions ro;
  ro.overwrite = vm.count("overwrite") > 0;
  ro.dry_run = vm.count("dry-run") > 0;
  ro.max_host_memory = host_memory_option(vm);
  ro.checkpoint_every = checkpoint_every;
  ro.warnings = loaded.warnings;  // said on the console and kept in run.toml [warnings]
  ro.stop = install_stop_handlers();
  // Under mpirun only rank 0 reports progress.
  const char* mpi_rank = std::getenv("OMPI_COMM_WORLD_RANK");
  if (!mpi_rank) mpi_rank = std::getenv("PMI_RANK");
  const bool other_rank = mpi_rank && std::string(mpi_rank) != "0";
  ConsoleObserver obs(vm.count("quiet") > 0 || other_rank, vm.count("verbose") > 0);
  const RunSummary s = run_campaign(campaign, registry, ro, obs);
  obs.end_line();
  if (ro.dry_run) return print_dry_run(campaign_file, campaign, s);
  if (!vm.count("quiet") && s.rank == 0) {
    std::cout << "edm run " << s.run_id << ": " << s.electrons << " electrons in " << s.batches << " batch(es), "
              << s.timing.total << " s (trajectories " << s.timing.trajectories << " s, field " << s.timing.field
              << " s)\n"
              << "  field:    " << s.field_file.string() << "\n"
              << "  manifest: " << s.manifest_file.string() << "\n";
    if (s.coverage.clipped_electrons())
      std::cout << "  window: " << s.coverage.clipped_electrons() << " clipped electrons, "
                << s.coverage.dropped_slots() << " dropped slots\n";
  }
  return 0;
}

}  // namespace edm::app
