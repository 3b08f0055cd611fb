// `edm`: the command line. Dispatches to a subcommand; turns edm::Error into a message with its
// stable id and the family's exit code (core never prints and never exits; this file does).
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>

#include <boost/program_options/errors.hpp>

#include "commands.hpp"
#include "edm/error.hpp"

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
  };
  return table;
}

void usage(std::ostream& os) {
  os << "usage: edm <command> [options]   (edm <command> --help for its options)\n\ncommands:\n";
  for (const auto& [name, c] : commands()) os << "  " << name << std::string(10 - name.size(), ' ') << c.summary << "\n";
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
    std::cerr << "edm: unknown command '" << argv[1] << "'\n";
    usage(std::cerr);
    return 2;
  }
  MpiSession mpi(&argc, &argv);
  edm::app::Args args(argv + 2, argv + argc);
  try {
    return it->second.fn(args);
  } catch (const edm::BuildError& e) {
    std::cerr << "edm: error [" << e.id() << "]: " << e.what() << "\n  options: " << e.options()
              << "\n  build log:\n" << e.log() << "\n";
    return mpi.fail(e.exit_code());
  } catch (const edm::Error& e) {
    std::cerr << "edm: error [" << e.id() << "]: " << e.what() << "\n";
    return mpi.fail(e.exit_code());
  } catch (const boost::program_options::error& e) {
    std::cerr << "edm " << argv[1] << ": " << e.what() << "\n";
    return mpi.fail(2);
  } catch (const std::exception& e) {
    std::cerr << "edm: internal error: " << e.what() << "\n";
    return mpi.fail(1);
  }
}
