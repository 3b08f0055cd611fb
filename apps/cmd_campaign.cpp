// edm campaign status OUTPUT | edm campaign collect OUTPUT [-o FILE]: the campaign table of a sweep
// (share/docs/sweeps.md) printed, or gathered into one HDF5 table; and `edm plot OUTPUT` on a
// campaign folder, which draws a result against a sweep axis (share/plot/edm_campaign_plot.py).
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <sstream>

#include <boost/program_options.hpp>

#include "commands.hpp"
#include "options.hpp"
#include "edm/error.hpp"
#include "edm/run_files.hpp"
#include "edm/schema.hpp"
#include "edm/sweep.hpp"


namespace po = boost::program_options;
namespace fs = std::filesystem;

namespace edm::app {
namespace {

std::string fmt(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

// The table is streamed twice (the count for the heading, then the rows), never held whole: a
// campaign of 10⁶ cells is read in the memory of one row.
int status(const fs::path& output) {
  std::map<std::string, std::string> meta;
  std::uint64_t cells = 0;
  for_each_campaign_row(output, [&](CellRecord&&) { ++cells; }, &meta);
  std::map<std::string, int> counts;
  const auto field = [&](const char* k) {
    const auto it = meta.find(k);
    return it == meta.end() ? std::string("?") : it->second;
  };
  std::cout << "campaign " << output.string() << " (" << field("file") << ", " << field("mode") << ", " << cells
            << " cells)\n";
  for_each_campaign_row(output, [&](CellRecord&& c) {
    ++counts[cell_state_word(c)];
    std::cout << "  " << c.label << "  " << cell_state_word(c);
    // A cell whose process was killed (SIGKILL, a lost node) stays "running" in its state file;
    // the claim it held (an flock) went with the process, so one that can be taken is stale.
    if (c.state == CellState::Running && CellClaim::unclaimed(output, c.label))
      std::cout << " (stale: no process holds it; the next edm sweep runs it again)";
    if (c.wall_s) std::cout << "  " << fmt(*c.wall_s) << " s";
    for (const auto& [k, v] : c.results) std::cout << "  " << k << "=" << fmt(v);
    if (c.state == CellState::Done && !c.results.empty() && !c.results.count("peak_omega_on_axis"))
      std::cout << "  peak_omega_on_axis=none (no on-axis peak)";
    if (!c.warnings.empty()) std::cout << "  " << c.warnings.size() << " warning(s)";
    if (!c.error.empty()) std::cout << "  [" << c.error << "]";
    std::cout << "\n";
    // Why its field is wrong: the reasons its run.toml gives (a done cell's, or a strict failure's).
    for (const auto& why : c.suspect) std::cout << "      suspect: " << why << "\n";
  });
  std::cout << "total:";
  for (const char* s : {"done", "done (suspect)", "running", "pending", "failed"})
    std::cout << " " << counts[s] << " " << s;
  std::cout << "\n";
  return 0;
}


fs::path campaign_plot_script() {
  std::error_code ec;
  const auto dir = fs::read_symlink("/proc/self/exe", ec).parent_path();
  for (const fs::path p : {dir / "../../share/plot/edm_campaign_plot.py", dir / "../share/edm/plot/edm_campaign_plot.py"})
    if (fs::exists(p)) return fs::weakly_canonical(p);
  throw IoError("EDM-SWP-028", "cannot find edm_campaign_plot.py beside " + dir.string());
}

// "laser a0 (peak normalised amplitude eE0/(m c ω))" or "screen distance (observer distance) [m]":
// a sweep axis as the key table (edm schema) names it, for the plot's axis label; "" for a key the
// core table does not hold (a scenario's own key keeps its name).
std::string axis_label(const std::string& key) {
  for (const KeySpec& k : core_schema()) {
    if (k.section + "." + k.key != key) continue;
    std::string meaning = k.meaning.substr(0, std::min(k.meaning.find(" ("), k.meaning.find(';')));
    std::string label = k.section + " " + k.key + " (" + meaning + ")";
    if (!k.unit.empty()) label += " [" + k.unit + "]";
    return label;
  }
  return "";
}

}  // namespace

bool is_campaign_folder(const fs::path& dir) {
  return fs::exists(table_path(dir)) && !RunFolder(dir).has_manifest();
}

int plot_campaign(const Args& args) {
  po::options_description desc("edm plot OUTPUT [--against KEY] [--result NAME]...  (a campaign folder)");
  std::string output, against;
  std::vector<std::string> results;
  desc.add_options()("help,h", "this help")("against", po::value(&against), "the sweep axis (default: the first)")(
      "result", po::value(&results)->composing(), "a result column (default: all)");
  po::variables_map vm;
  if (!parse_command(args, desc, "output", output, vm)) return 0;
  const CampaignTable table = read_campaign_table(output);  // a clear error before Python starts
  refuse_plots_not_a_folder(output);
  // The interpreter as `edm plot RUN` finds it: one without h5py failed inside the script with a
  // traceback (exit 4, EDM-SWP-029) instead of EDM-PLOT-002's list of packages to install.
  std::vector<std::string> argv{find_python(), campaign_plot_script().string(), output};
  if (!against.empty()) argv.insert(argv.end(), {"--against", against});
  for (const auto& r : results) argv.insert(argv.end(), {"--result", r});
  // Each axis's label from the key table, which the script has no other way to read.
  const auto axes = table.meta.find("axes");
  std::istringstream keys(axes == table.meta.end() ? std::string() : axes->second);
  for (std::string k; std::getline(keys, k, ',');)
    if (const std::string l = axis_label(k); !l.empty()) argv.insert(argv.end(), {"--label", k + "=" + l});
  setenv("MPLBACKEND", "Agg", 1);
  const int rc = spawn_wait(argv, false);
  if (rc == 2) throw ConfigError("EDM-SWP-025", "edm plot " + output + ": no such axis or result (see the message above)");
  if (rc != 0) throw IoError("EDM-SWP-029", "edm_campaign_plot.py failed (exit " + std::to_string(rc) + ") on " + output);
  return 0;
}

int cmd_campaign(const Args& args) {
  po::options_description desc("edm campaign status|collect OUTPUT [options]");
  std::string what, output, file;
  desc.add_options()("help,h", "this help")("what", po::value(&what), "status | collect")(
      "output", po::value(&output), "the campaign folder")("file,o", po::value(&file),
                                                           "collect: the HDF5 file (default OUTPUT/campaign.h5)");
  po::positional_options_description pos;
  pos.add("what", 1).add("output", 1);
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(desc).positional(pos).run(), vm);
  po::notify(vm);
  if (vm.count("help")) {
    std::cout << desc << "\n";
    return 0;
  }
  if (what.empty() || output.empty())
    throw ConfigError("EDM-CLI-002", "edm campaign: give status or collect, and the campaign folder");
  if (what == "status") return status(output);
  if (what == "collect") {
    const fs::path f = file.empty() ? fs::path(output) / "campaign.h5" : fs::path(file);
    const std::size_t n = collect_campaign(output, f);
    std::cout << "edm campaign collect: " << n << " cells into " << f.string() << "\n";
    return 0;
  }
  throw ConfigError("EDM-SWP-027", "edm campaign: unknown action '" + what + "' (status, collect)");
}

}  // namespace edm::app
