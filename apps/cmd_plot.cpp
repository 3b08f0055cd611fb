// edm plot RUN: PNGs of a run into RUN/plots/ by share/plot/edm_plot.py (matplotlib, Agg). Computes
// spectrum.h5 first when it is missing, holds no time-domain spectrum (only the run's /direct), or was
// computed with other --window, --harmonics or --of than given (same options as `edm spectrum`; the
// script compares them with the file's attributes), finds the script next to
// the executable (build tree or install prefix) and an interpreter that can import numpy, h5py and
// matplotlib (EDM_PYTHON, python3, /usr/bin/python3 — a pyenv shim may lack them). Holds the run
// folder's lock from its first look at spectrum.h5 until the plots are in place (share/docs/outputs.md,
// "One run per folder").
#include <fcntl.h>
#include <unistd.h>

#include <boost/program_options.hpp>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <sstream>

#include "analysis_options.hpp"
#include "commands.hpp"
#include "options.hpp"
#include "twisted_options.hpp"
#include "edm/error.hpp"
#include "edm/run_files.hpp"
#include "edm/run_folder.hpp"
#include "edm/run_manifest.hpp"
#include "edm/run_lock.hpp"
#include "edm/spectrum.hpp"


namespace po = boost::program_options;

namespace edm::app {
namespace {

std::filesystem::path find_script() {
  if (const char* p = std::getenv("EDM_PLOT_SCRIPT")) return p;
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  std::vector<std::filesystem::path> tried;
  if (!ec) {
    const auto dir = exe.parent_path();
    tried.push_back(dir / "../../share/plot/edm_plot.py");   // build tree: build/apps/edm
    tried.push_back(dir / "../share/edm/plot/edm_plot.py");  // installed: <prefix>/bin/edm
  }
  for (const auto& p : tried)
    if (std::filesystem::exists(p)) return std::filesystem::weakly_canonical(p);
  std::string where;
  for (const auto& p : tried) where += " " + p.string();
  throw IoError("EDM-PLOT-001", "cannot find edm_plot.py (looked at" + where + "; set EDM_PLOT_SCRIPT)");
}

// Why the spectrum.h5 in the folder is not this run's ("" when it is, or when it cannot tell): its
// time-domain spectrum carries the run id of the field it came from (found by tests/test_hostile: a
// spectrum of another run was plotted as this one's). A damaged spectrum.h5 is left to the script,
// as before; one of another format is refused here (EDM-IO-160), never plotted or written over.
std::string stale_spectrum(const std::filesystem::path& dir) {
  const auto file = RunFolder(dir).spectrum();
  if (!std::filesystem::exists(file)) return "";
  const std::string field_id = FieldFile::open(RunFolder(dir).field()).summary().run_id;
  std::optional<SpectrumSummary> s;
  try {
    s = SpectrumFile::open(file).summary();
  } catch (const IoError& e) {
    if (e.id() == "EDM-IO-160") throw;
    return "";
  }
  if (!s || s->run_id.empty() || field_id.empty() || s->run_id == field_id) return "";
  return file.string() + " is the spectrum of another run (" + s->run_id + ", field.h5's is " + field_id + ")";
}

// A double as the script reads it back, to the last bit (std::to_string keeps 6 decimals).
std::string omega_arg(double v) {
  std::ostringstream o;
  o.precision(17);
  o << v;
  return o.str();
}

// The spectrum options given on the command line (not defaulted), as the script's --check-spectrum
// takes them: only those the user asked for are compared with spectrum.h5.
std::vector<std::string> explicit_spectrum_options(const po::variables_map& vm) {
  std::vector<std::string> out;
  for (const char* name : {"window", "harmonics", "of"})
    if (vm.count(name) && !vm[name].defaulted()) {
      out.push_back(std::string("--") + name);
      out.push_back(vm[name].as<std::string>());
    }
  return out;
}

// Whether spectrum.h5 must be computed again before plotting: missing, asked for (--respectrum),
// another run's, only the run's /direct, or computed with other options than the command line gives
// (edm_plot.py --check-spectrum: exit 3 with the reason on stderr). A file the script cannot read
// is left to the plot, which names what is wrong with it.
bool spectrum_needed(const std::filesystem::path& dir, const po::variables_map& vm, const std::string& python,
                     const std::filesystem::path& script) {
  const std::string stale = stale_spectrum(dir);
  if (!stale.empty()) std::cerr << "[plot] " << stale << ": computing it again\n";
  if (vm.count("respectrum") || !stale.empty() || !RunFolder(dir).has_spectrum()) return true;
  std::vector<std::string> check = {python, script.string(), "--check-spectrum", dir.string()};
  for (auto& o : explicit_spectrum_options(vm)) check.push_back(std::move(o));
  return spawn_wait(check, false) == 3;
}

}  // namespace

std::string find_python() {
  std::vector<std::string> candidates;
  if (const char* p = std::getenv("EDM_PYTHON")) candidates.push_back(p);
  candidates.push_back("python3");
  candidates.push_back("/usr/bin/python3");
  for (const auto& py : candidates)
    if (spawn_wait({py, "-c", "import numpy, h5py, matplotlib"}, true) == 0) return py;
  std::string list;
  for (const auto& c : candidates) list += " " + c;
  throw IoError("EDM-PLOT-002",
                "no Python interpreter that can import numpy, h5py and matplotlib (tried" + list +
                    "; install python3-numpy python3-h5py python3-matplotlib or set EDM_PYTHON)");
}

void refuse_plots_not_a_folder(const std::filesystem::path& folder) {
  const auto plots = folder / "plots";
  std::error_code ec;
  const auto st = std::filesystem::symlink_status(plots, ec);
  if (ec || st.type() == std::filesystem::file_type::not_found || st.type() == std::filesystem::file_type::directory)
    return;
  const bool link = st.type() == std::filesystem::file_type::symlink;
  throw IoError("EDM-PLOT-004", plots.string() + (link ? " is a symbolic link" : " is not a folder") +
                                    ": edm plot writes its PNGs only into a plots/ folder of the run's own (and "
                                    "never through a link, which put them into the folder it points to); it is "
                                    "left as it is: move it away, then plot again");
}

int cmd_plot(const Args& args) {
  if (!args.empty() && args[0].rfind("-", 0) != 0 && is_campaign_folder(args[0])) return plot_campaign(args);
  po::options_description desc(
      "edm plot RUN [options]  (spectrum options apply when spectrum.h5 is computed: when it is missing, holds only "
      "/direct, or was computed with another --window, --harmonics or --of than given here)");
  AnalysisArgs a;
  std::string run;
  double direct_omega = 0;
  desc.add_options()("help,h", "this help")("respectrum", "recompute spectrum.h5 even if it exists")(
      "direct-omega", po::value(&direct_omega),
      "ω (in units of the laser's) of the /direct photon maps (default: the line, else the on-axis peak)");
  add_analysis_options(desc, a);
  TwistedArgs ta;  // issue 14: complex harmonic maps, angular momentum, ring fits
  add_twisted_options(desc, ta);
  po::variables_map vm;
  if (!parse_command(args, desc, "run", run, vm)) return 0;  // --help
  if (run.empty()) throw ConfigError("EDM-CLI-002", "edm plot: no run folder given");
  const std::string omega_text = omega_arg(direct_omega);
  if (vm.count("direct-omega") && !(direct_omega > 0 && std::isfinite(direct_omega)))
    throw ConfigError("EDM-PLOT-005",
                      "edm plot --direct-omega " + omega_text + ": must be a finite ω > 0 in units of the laser's");
  const std::filesystem::path dir(run);
  if (!std::filesystem::is_directory(dir)) throw ConfigError("EDM-CLI-021", run + ": no such run folder");
  refuse_special_run_files(dir);  // the script would block on a FIFO for ever (found by tests/test_hostile)
  // run.toml must be a manifest edm run wrote (as edm info requires): an empty one was plotted as a
  // run, its spectrum.h5 and field.h5 matched against a run id that was not there.
  (void)RunManifest::read(RunFolder(dir));
  if (!RunFolder(dir).has_field())
    throw IoError("EDM-IO-010", RunFolder(dir).field().string() + ": no such file");

  refuse_plots_not_a_folder(dir);
  // Find the tools before spending time on the spectrum.
  const auto script = find_script();
  const auto python = find_python();

  // The folder's lock, before spectrum.h5 is looked at: plot used to take it only inside the
  // spectrum's writer, so with a valid spectrum.h5 it wrote plots/ while an edm run or edm spectrum
  // of the folder replaced field.h5 and spectrum.h5 under it, and its plots mixed two runs (found by
  // tests/test_hostile). Another writer of the folder makes this ConfigError EDM-RUN-040, naming it;
  // the spectrum computed below is written under this lock (a nested acquire).
  RunFolderLock lock = RunFolderLock::acquire(dir);
  setenv("MPLBACKEND", "Agg", 1);  // never try a display (the check below imports matplotlib too)
  if (spectrum_needed(dir, vm, python, script)) {
    std::cerr << "[plot] computing " << RunFolder(dir).spectrum().string() << "\n";
    analyse_run(dir, a, ta);
  }
  // The plot script trusts the file's shapes: a damaged field.h5 is refused here (exit 4), as by info.
  (void)FieldFile::open(RunFolder(dir).field());
  // The script shares the lock: if this process is killed while the script writes plots/, the
  // folder stays locked until the script has exited too.
  lock.share_with_children();
  std::vector<std::string> argv = {python, script.string(), dir.string()};
  if (vm.count("direct-omega")) argv.insert(argv.end(), {"--direct-omega", omega_text});
  const int rc = spawn_wait(argv, false);
  if (rc != 0)
    throw IoError("EDM-PLOT-003", script.string() + " failed (exit " + std::to_string(rc) + ") on " + run);
  return 0;
}

}  // namespace edm::app
