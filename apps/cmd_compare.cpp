// edm compare RUN_A RUN_B [--tol T] [--json] [--plot FILE.png]: how far run A differs from run B
// (the reference), dataset by dataset (edm/compare.hpp does the reading and the arithmetic; this file
// opens the two folders through their owners, prints the table or the JSON and the verdict, and
// hands the row of largest difference to share/plot/edm_compare_plot.py for the difference plot).
// Exit 0 when the largest relative L2 difference is within --tol, 8 when it is not
// (share/docs/compare.md).

#include <boost/program_options.hpp>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>

#include "commands.hpp"
#include "options.hpp"
#include "edm/compare.hpp"
#include "edm/error.hpp"
#include "edm/run_files.hpp"


namespace po = boost::program_options;

namespace edm::app {
namespace {

// The exit code of a comparison that ran and found differences beyond --tol (errors.md): not an
// error family, so that a script can tell "differs" from "could not compare".
constexpr int kExitDiffers = 8;

struct OpenRun {
  std::optional<FieldFile> field;
  std::unique_ptr<SpectrumFile> spectrum;  // null: the run has no spectrum.h5
};

OpenRun open_run(const std::string& dir) {
  if (!std::filesystem::is_directory(dir)) throw ConfigError("EDM-CLI-021", "edm compare: " + dir + ": no such run folder");
  const RunFolder folder(dir);
  OpenRun r;
  RunFolder::refuse_special(folder.field());
  r.field.emplace(FieldFile::open(folder.field()));
  if (folder.has_spectrum()) {
    RunFolder::refuse_special(folder.spectrum());
    r.spectrum = std::make_unique<SpectrumFile>(SpectrumFile::open(folder.spectrum()));
  }
  return r;
}

std::string g(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

// JSON numbers cannot be inf or NaN: those are written as strings.
std::string json_num(double v) {
  if (!std::isfinite(v)) return std::isnan(v) ? "\"nan\"" : (v > 0 ? "\"inf\"" : "\"-inf\"");
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

std::string json_str(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
      continue;
    }
    out += c;
  }
  return out + "\"";
}

std::string verdict_line(const CompareRow* worst, double tol, bool pass) {
  if (!worst) return "PASS: nothing to compare";
  const std::string what = worst->name + (worst->measure == "value" ? "" : " " + worst->measure);
  return std::string(pass ? "PASS" : "FAIL") + ": largest relative L2 " + g(worst->rel_l2) + " (" + what + ") " +
         (pass ? "≤" : ">") + " --tol " + g(tol);
}

void print_table(const CompareResult& r) {
  std::printf("%-12s %-44s %-10s %12s %12s  %s\n", "file", "dataset", "measure", "rel L2", "max |a-b|", "unit");
  for (const auto& row : r.rows)
    std::printf("%-12s %-44s %-10s %12.3e %12.3e  %s\n", row.file.c_str(), row.name.c_str(), row.measure.c_str(),
                row.rel_l2, row.max_abs, row.unit.c_str());
  for (const auto& s : r.only_a) std::printf("only in A: %s\n", s.c_str());
  for (const auto& s : r.only_b) std::printf("only in B: %s\n", s.c_str());
  for (const auto& s : r.not_compared) std::printf("not compared: %s\n", s.c_str());
}

void print_json(const CompareResult& r, double tol, bool pass, const std::string& verdict) {
  std::cout << "{\"tol\": " << json_num(tol) << ", \"pass\": " << (pass ? "true" : "false")
            << ", \"verdict\": " << json_str(verdict) << ",\n \"rows\": [";
  for (std::size_t i = 0; i < r.rows.size(); ++i) {
    const auto& row = r.rows[i];
    std::cout << (i ? ",\n  " : "\n  ") << "{\"file\": " << json_str(row.file) << ", \"dataset\": " << json_str(row.name)
              << ", \"measure\": " << json_str(row.measure) << ", \"rel_l2\": " << json_num(row.rel_l2)
              << ", \"max_abs\": " << json_num(row.max_abs) << ", \"unit\": " << json_str(row.unit)
              << ", \"elements\": " << row.elements << "}";
  }
  const auto list = [](const std::vector<std::string>& v) {
    std::string s = "[";
    for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + json_str(v[i]);
    return s + "]";
  };
  std::cout << "],\n \"only_a\": " << list(r.only_a) << ", \"only_b\": " << list(r.only_b)
            << ", \"not_compared\": " << list(r.not_compared) << "}\n";
}

// --plot's target: a folder gets compare.png inside it; a file must be named *.png in a folder that
// exists. Checked before anything is compared, so a bad path costs nothing and writes nothing.
std::filesystem::path plot_target(const std::string& arg) {
  const std::filesystem::path p(arg);
  if (std::filesystem::is_directory(p)) return p / "compare.png";
  const std::filesystem::path dir = p.parent_path().empty() ? std::filesystem::path(".") : p.parent_path();
  std::string why;
  if (p.extension() != ".png")
    why = "neither a folder nor a file name ending in .png";
  else if (!std::filesystem::is_directory(dir))
    why = "the folder " + dir.string() + " does not exist";
  if (!why.empty()) throw ConfigError("EDM-CMP-003", "edm compare --plot " + arg + ": " + why);
  return p;
}

// edm_compare_plot.py: EDM_COMPARE_PLOT_SCRIPT, else beside edm_plot.py (build tree or install prefix).
std::filesystem::path find_compare_script() {
  if (const char* p = std::getenv("EDM_COMPARE_PLOT_SCRIPT")) return p;
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  std::string where;
  if (!ec)
    for (const char* rel : {"../../share/plot/edm_compare_plot.py", "../share/edm/plot/edm_compare_plot.py"}) {
      const auto p = exe.parent_path() / rel;
      if (std::filesystem::exists(p)) return std::filesystem::weakly_canonical(p);
      where += " " + p.string();
    }
  throw IoError("EDM-CMP-004", "edm compare --plot: cannot find edm_compare_plot.py (looked at" + where +
                                   "; set EDM_COMPARE_PLOT_SCRIPT)");
}


std::string full(double v) {
  std::ostringstream o;
  o.precision(17);
  o << v;
  return o.str();
}

// The difference plot of the row of largest relative L2 (the script checks nothing edm compare has
// checked: the runs are of one screen). IoError EDM-CMP-005 when the script fails; it leaves no file.
void draw_plot(const std::vector<std::string>& runs, const CompareRow& worst, bool mirror_z,
               const std::filesystem::path& png, const std::string& python, const std::filesystem::path& script) {
  setenv("MPLBACKEND", "Agg", 1);
  std::vector<std::string> argv = {python,        script.string(), runs[0],     runs[1],      png.string(),
                                   "--file",      worst.file,      "--dataset", worst.name,   "--measure",
                                   worst.measure, "--rel-l2",      full(worst.rel_l2)};
  if (mirror_z) argv.push_back("--mirror-z");
  const int rc = spawn_wait(argv, false);
  if (rc != 0)
    throw IoError("EDM-CMP-005", script.string() + " failed (exit " + std::to_string(rc) + ") drawing " + png.string());
  std::cerr << "[compare] plot of " << worst.name << " (" << worst.measure << ") written to " << png.string() << "\n";
}

}  // namespace

int cmd_compare(const Args& args) {
  po::options_description desc("edm compare RUN_A RUN_B (B is the reference: relative to ‖B‖)");
  double tol = 1e-6;
  desc.add_options()("help,h", "this help")(
      "tol", po::value(&tol)->default_value(1e-6, "1e-6"),
      "largest relative L2 difference ‖a−b‖/‖b‖ of any dataset that passes (exit 0; above: FAIL, exit 8)")(
      "json", "print the comparison as JSON (rows, verdict, what only one run has) instead of the table")(
      "mirror-z",
      "B is A's mirror run in z → −z (thomson against inverse_thomson at γ = 1): flat screens, B's at minus A's "
      "distance, B's E_z, B_x, B_y negated; field.h5 only")(
      "plot", po::value<std::string>(),
      "FILE.png (or a folder: FOLDER/compare.png): run A, run B and A−B of the dataset of largest relative L2");
  std::vector<std::string> runs;
  po::variables_map vm;
  if (!parse_command(args, desc, runs, vm)) return 0;
  if (runs.size() != 2)
    throw ConfigError("EDM-CLI-002", "edm compare: give two run folders, RUN_A RUN_B (" + std::to_string(runs.size()) +
                                         " given)");
  if (!std::isfinite(tol) || tol < 0)
    throw ConfigError("EDM-CMP-002", "edm compare --tol " + std::to_string(tol) + ": not a finite number of 0 or more");

  std::filesystem::path png, script;
  std::string python;
  if (vm.count("plot")) {  // the path and the tools first: a refusal writes nothing
    png = plot_target(vm["plot"].as<std::string>());
    script = find_compare_script();
    python = find_python();
  }
  const OpenRun a = open_run(runs[0]), b = open_run(runs[1]);
  const CompareResult r =
      compare_runs(*a.field, *b.field, a.spectrum.get(), b.spectrum.get(), vm.count("mirror-z") > 0);
  const CompareRow* worst = r.largest();
  const bool pass = !worst || worst->rel_l2 <= tol;  // NaN fails
  const std::string verdict = verdict_line(worst, tol, pass);
  if (vm.count("json")) {
    print_json(r, tol, pass, verdict);
  } else {
    std::cout << "A " << runs[0] << "\nB " << runs[1] << " (reference)\n";
    print_table(r);
    std::cout << verdict << "\n";
  }
  std::cout.flush();
  if (!png.empty() && worst) draw_plot(runs, *worst, vm.count("mirror-z") > 0, png, python, script);
  return pass ? 0 : kExitDiffers;
}

}  // namespace edm::app
