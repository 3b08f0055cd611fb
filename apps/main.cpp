// `edm`: the command line. Dispatches to a subcommand; turns edm::Error into a message with its
// stable id and the family's exit code (core never prints and never exits; this file does).
#include <cstring>
#include <iostream>
#include <map>

#include <boost/program_options/errors.hpp>

#include "commands.hpp"
#include "edm/error.hpp"

namespace {

struct Command {
  int (*fn)(const edm::app::Args&);
  const char* summary;
};

const std::map<std::string, Command>& commands() {
  static const std::map<std::string, Command> table = {
      {"run", {edm::app::cmd_run, "run a campaign: trajectories, fields, field.h5 + run.toml"}},
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
  edm::app::Args args(argv + 2, argv + argc);
  try {
    return it->second.fn(args);
  } catch (const edm::BuildError& e) {
    std::cerr << "edm: error [" << e.id() << "]: " << e.what() << "\n  options: " << e.options()
              << "\n  build log:\n" << e.log() << "\n";
    return e.exit_code();
  } catch (const edm::Error& e) {
    std::cerr << "edm: error [" << e.id() << "]: " << e.what() << "\n";
    return e.exit_code();
  } catch (const boost::program_options::error& e) {
    std::cerr << "edm " << argv[1] << ": " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "edm: internal error: " << e.what() << "\n";
    return 1;
  }
}
