// `edm`: the command line. Dispatches to a subcommand; turns every failure into one message with a
// stable id and the family's exit code (core never prints and never exits; this file does), and
// points at `edm explain ID`, which prints the id's meaning and what to do from the registry.
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <cstring>
#include <iostream>
#include <map>
#include <string>

#include <boost/program_options/errors.hpp>

#include "commands.hpp"
#include "edm/error.hpp"
#include "edm/plugins.hpp"
#include "edm/run.hpp"

#ifdef EDM_WITH_MPI
#include <mpi.h>
#endif

namespace {

// Under mpirun (an MPI build), ranks are initialised here, in the app; core only asks whether MPI is
// running. A failing rank aborts the whole job, so no rank waits forever in a collective.
struct MpiSession {
  bool active = false;
  MpiSession(int* argc, char*** argv) {
#ifdef EDM_WITH_MPI
    if (std::getenv("OMPI_COMM_WORLD_SIZE") || std::getenv("PMI_SIZE") || std::getenv("PMIX_RANK")) {
      // The plugins are probed in forked children; forking after MPI_Init is unsafe with some
      // transports, so every verdict is taken now and the commands' discover() forks no more.
      edm::PluginRegistry::probe_search_path();
      MPI_Init(argc, argv);
      active = true;
    }
#else
    (void)argc;
    (void)argv;
#endif
  }
  int size() const {
    int n = 1;
#ifdef EDM_WITH_MPI
    if (active) MPI_Comm_size(MPI_COMM_WORLD, &n);
#endif
    return n;
  }
  int fail(int code) const {
#ifdef EDM_WITH_MPI
    if (active && size() > 1) MPI_Abort(MPI_COMM_WORLD, code);
#endif
    return code;
  }
  ~MpiSession() {
#ifdef EDM_WITH_MPI
    if (active) MPI_Finalize();
#endif
  }
};

struct Command {
  int (*fn)(const edm::app::Args&);
  const char* summary;
};

const std::map<std::string, Command>& commands() {
  static const std::map<std::string, Command> table = {
      {"run", {edm::app::cmd_run, "run a campaign: trajectories, fields, field.h5 + run.toml"}},
      {"bench", {edm::app::cmd_bench, "time the field kernel on the benchmark cell: slots/s, % of FP64 peak"}},
      {"resume", {edm::app::cmd_resume, "continue an interrupted run from RUN/checkpoint.h5"}},
      {"devices", {edm::app::cmd_devices, "list OpenCL devices (FP64, memory, peak)"}},
      {"plugins", {edm::app::cmd_plugins, "list scenario plugins, their models and load failures"}},
      {"schema", {edm::app::cmd_schema, "print every campaign key with type, unit, default, meaning"}},
      {"spectrum", {edm::app::cmd_spectrum, "spectra, fluence, harmonic maps of a run folder → spectrum.h5"}},
      {"plot", {edm::app::cmd_plot, "PNG plots of a run folder into RUN/plots/"}},
      {"info", {edm::app::cmd_info, "summarise a run folder: config, timings, window, energy, files"}},
      {"sweep", {edm::app::cmd_sweep, "the cells of a campaign's [sweep] into OUTPUT/<label>/ (in turn, per device, SLURM)"}},
      {"campaign", {edm::app::cmd_campaign, "a sweep's table: status, collect into one HDF5 file"}},
      {"compare", {edm::app::cmd_compare, "differences of two runs of one screen per dataset, a verdict against --tol"}},
      {"gauge", {edm::app::cmd_gauge, "the Lorenz gauge of three potential runs on planes Z - h, Z, Z + h"}},
      {"explain", {edm::app::cmd_explain, "what an error id means and what to do (no id: list them all)"}},
  };
  return table;
}

void usage(std::ostream& os) {
  os << "usage: edm <command> [options]   (edm <command> --help for its options)\n\ncommands:\n";
  for (const auto& [name, c] : commands()) os << "  " << name << std::string(10 - name.size(), ' ') << c.summary << "\n";
  os << "\nErrors print a stable id, e.g. edm: error [EDM-CFG-006]; edm explain ID says what to do.\n"
        "Exit codes: 0 success, 2 input, 3 device, 4 I/O, 5 plugin, 6 physics, 7 sweep cells failed, 8 compare differs, 130 stopped, 1 other.\n";
}

// The one error message: "edm: error [ID]: what" and, for a registered id, where to read more.
// Internal failures say "internal error" instead, so that a test can tell them from the known ones.
// `detail` follows the first line (a kernel's build log).
int report(const edm::Error& e, const char* kind = "error", const std::string& detail = "") {
  std::cerr << "edm: " << kind << " [" << e.id() << "]: " << e.what() << "\n" << detail;
  if (edm::find_error_id(e.id())) std::cerr << "  (edm explain " << e.id() << ": what it means and what to do)\n";
  return e.exit_code();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h")) {
    usage(argc < 2 ? std::cerr : std::cout);
    return argc < 2 ? 2 : 0;
  }
  if (!std::strcmp(argv[1], "--version")) {
    std::cout << "edm " << EDM_VERSION << "\n";
    return 0;
  }
  auto it = commands().find(argv[1]);
  if (it == commands().end()) {
    const int code = report(edm::ConfigError("EDM-CLI-004", std::string("unknown command '") + argv[1] + "'"));
    usage(std::cerr);
    return code;
  }
  // SIGINT interrupts every command. A shell without job control starts a background command with
  // SIGINT ignored, and edm spectrum and edm plot (with the plot's Python, which inherits it) kept
  // that: `kill -INT` and an interrupt of the process group did nothing (found by a hostile tester).
  // edm run, resume and sweep then install their stop handlers; the other commands write their
  // files under temporary names renamed when whole, so an interrupt leaves what was there before.
  std::signal(SIGINT, SIG_DFL);
  MpiSession mpi(&argc, &argv);
  edm::app::Args args(argv + 2, argv + argc);
  // The run folder's lock records which command holds it, and a refusal names both (EDM-RUN-040).
  edm::set_command_name(std::string("edm ") + argv[1]);
  try {
    return it->second.fn(args);
  } catch (const edm::BuildError& e) {
    return mpi.fail(report(e, "error", "  options: " + e.options() + "\n  build log:\n" + e.log() + "\n"));
  } catch (const edm::Error& e) {
    return mpi.fail(report(e));
  } catch (const std::filesystem::filesystem_error& e) {
    // A file-system call that no stage checked itself: an I/O error naming the path, never "internal".
    const std::string path = e.path1().string();
    return mpi.fail(report(edm::IoError("EDM-IO-094", (path.empty() ? std::string() : path + ": ") +
                                                         e.code().message())));
  } catch (const boost::program_options::error& e) {
    return mpi.fail(report(edm::ConfigError("EDM-CLI-001", std::string("edm ") + argv[1] + ": " + e.what())));
  } catch (const std::exception& e) {
    return mpi.fail(report(edm::Error("EDM-INT-001", e.what()), "internal error"));
  }
}
