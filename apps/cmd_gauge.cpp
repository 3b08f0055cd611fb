// edm gauge RUN_A RUN_B RUN_C [--tol T] [--patch ix0:ix1,iy0:iy1,k0:k1]: the Lorenz-gauge check of
// the four-potential of three runs of run.mode = "potential" on the planes Z − h, Z, Z + h
// (edm/lorenz_gauge.hpp does the reading and the arithmetic; share/docs/potential.md). Prints the
// residual |∂_μA^μ| / Σ|terms| at the middle plane and the terms; exit 0 within --tol, else
// EDM-GAUGE-001 (exit 6).
#include <boost/program_options.hpp>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <optional>

#include "commands.hpp"
#include "options.hpp"
#include "edm/error.hpp"
#include "edm/lorenz_gauge.hpp"
#include "edm/run_files.hpp"

namespace po = boost::program_options;

namespace edm::app {
namespace {

FieldFile open_field(const std::string& dir) {
  if (!std::filesystem::is_directory(dir)) throw ConfigError("EDM-CLI-021", "edm gauge: " + dir + ": no such run folder");
  const RunFolder folder(dir);
  RunFolder::refuse_special(folder.field());
  return FieldFile::open(folder.field());
}

// "ix0:ix1,iy0:iy1,k0:k1" (half-open ranges of the middle plane's pixels and samples).
GaugePatch parse_patch(const std::string& text) {
  GaugePatch p;
  unsigned long v[6];
  int used = 0;
  if (std::sscanf(text.c_str(), "%lu:%lu,%lu:%lu,%lu:%lu%n", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &used) != 6 ||
      used != int(text.size()) || v[0] >= v[1] || v[2] >= v[3] || v[4] >= v[5])
    throw ConfigError("EDM-GAUGE-005", "edm gauge --patch " + text +
                                           ": not ix0:ix1,iy0:iy1,k0:k1 with each range non-empty (e.g. 2:10,2:8,5:60)");
  p.ix0 = v[0], p.ix1 = v[1], p.iy0 = v[2], p.iy1 = v[3], p.k0 = v[4], p.k1 = v[5];
  return p;
}

}  // namespace

int cmd_gauge(const Args& args) {
  po::options_description desc("edm gauge RUN_A RUN_B RUN_C (potential runs on the planes Z - h, Z, Z + h, any order)");
  double tol = 1e-3;
  std::string patch;
  desc.add_options()("help,h", "this help")(
      "tol", po::value(&tol)->default_value(1e-3, "1e-3"),
      "largest residual |d_mu A^mu| / sum |terms| that passes (exit 0; above: EDM-GAUGE-001, exit 6)")(
      "patch", po::value(&patch), "ix0:ix1,iy0:iy1,k0:k1: the middle plane's pixels and samples checked (default: "
                                  "every interior point)");
  std::vector<std::string> runs;
  po::variables_map vm;
  if (!parse_command(args, desc, runs, vm)) return 0;
  if (runs.size() != 3)
    throw ConfigError("EDM-GAUGE-004", "edm gauge: give three run folders of run.mode = \"potential\" (" +
                                           std::to_string(runs.size()) + " given)");
  check_lorenz_gauge(GaugeResult{}, tol);  // --tol itself (EDM-GAUGE-003) before any file is read
  const GaugePatch p = patch.empty() ? GaugePatch{} : parse_patch(patch);
  const FieldFile a = open_field(runs[0]), b = open_field(runs[1]), c = open_field(runs[2]);
  const GaugeResult r = lorenz_gauge(a, b, c, p);
  std::printf("Lorenz gauge at the middle plane (h = %.6g m), %zu points: pixels x [%zu, %zu), y [%zu, %zu), samples [%zu, %zu)\n",
              r.h, r.points, r.patch.ix0, r.patch.ix1, r.patch.iy0, r.patch.iy1, r.patch.k0, r.patch.k1);
  std::printf("terms RMS (V s/m^2): (1/c) dA0/dt %.6e  dAx/dx %.6e  dAy/dy %.6e  dAz/dz %.6e\n", r.term_rms[0],
              r.term_rms[1], r.term_rms[2], r.term_rms[3]);
  std::printf("divergence RMS %.6e V s/m^2; residual |d_mu A^mu| / sum |terms| = %.6e (--tol %.3g)\n", r.divergence_rms,
              r.residual, tol);
  check_lorenz_gauge(r, tol);  // EDM-GAUGE-001 (exit 6) beyond --tol
  std::printf("PASS\n");
  return 0;
}

}  // namespace edm::app
