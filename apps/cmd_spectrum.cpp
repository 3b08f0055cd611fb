// edm spectrum RUN [--window hann|blackman-harris|none] [--harmonics 1,3,5] [--of laser|line]:
// spectral analysis of a run folder (edm/spectrum.hpp) into RUN/spectrum.h5; prints the on-axis
// peak in units of the laser ω and the energy through the screen.
#include <boost/program_options.hpp>
#include <cmath>
#include <cstdio>
#include <iostream>

#include "analysis_options.hpp"
#include "commands.hpp"
#include "options.hpp"
#include "twisted_options.hpp"
#include "edm/error.hpp"
#include "edm/photon_yield.hpp"
#include "edm/spectrum.hpp"

namespace po = boost::program_options;

namespace edm::app {

int cmd_spectrum(const Args& args) {
  po::options_description desc("edm spectrum RUN [options]");
  AnalysisArgs a;
  std::string run;
  desc.add_options()("help,h", "this help")("quiet,q", "print nothing but errors");
  add_analysis_options(desc, a);
  TwistedArgs ta;  // issue 14: complex harmonic maps, angular momentum, ring fits
  add_twisted_options(desc, ta);
  po::variables_map vm;
  if (!parse_command(args, desc, "run", run, vm)) return 0;  // --help
  if (run.empty()) throw ConfigError("EDM-CLI-002", "edm spectrum: no run folder given");
  const std::filesystem::path dir(run);
  if (!std::filesystem::is_directory(dir)) throw ConfigError("EDM-CLI-021", run + ": no such run folder");

  const AnalysisProducts products = analyse_run(dir, a, ta);  // spectrum + twisted light, one spectrum.h5
  const SpectrumResult& r = products.spectrum;
  if (vm.count("quiet")) return 0;

  const double w0 = r.laser_omega;
  char line[256];
  std::cout << "edm spectrum " << run << ": " << r.nx << "x" << r.ny << (r.angular ? " directions x " : " pixels x ")
            << r.samples << " samples, window " << window_name(r.window) << ", field " << r.field_used << " ("
            << r.mode << " mode)";
  if (r.angular) std::cout << ", angular screen " << (r.far_field ? "at infinity" : "on a sphere");
  std::cout << "\n";
  std::snprintf(
      line, sizeof line,
      "  on-axis peak (%s ix=%zu, iy=%zu): %.6g ω  (%.6e rad/s; between bins %.6g ω; bin width %.3g ω, "
      "Nyquist %.4g ω)\n",
      r.angular ? "direction nearest the axis," : "pixel", r.center_ix, r.center_iy, r.peak_omega_on_axis / w0,
      r.peak_omega_on_axis, r.peak_omega_on_axis_interp / w0, (r.omega.size() > 1 ? r.omega[1] : 0) / w0,
      r.nyquist_omega / w0);
  std::cout << line;
  std::snprintf(line, sizeof line,
                r.angular ? "  energy into the grid's directions: %.6e J  (Σ ∫S·n̂ dt · R² ΔΩ; ∫dI/dω dω of the "
                            "%s-windowed spectrum %.6e J)\n"
                          : "  energy through the screen: %.6e J  (Σ ∫S·n̂ dt · dx dy; ∫dI/dω dω of the "
                            "%s-windowed spectrum %.6e J)\n",
                r.total_energy, window_name(r.window), r.integrated_energy);
  std::cout << line;
  if (!r.harmonic_orders.empty()) {
    std::snprintf(line, sizeof line,
                  "  harmonics of the %s (ω_b = %.6g ω, band ±%.3g ω_b):", harmonic_base_name(r.of),
                  r.base_omega / w0, r.band);
    std::cout << line;
    const std::size_t npix = r.nx * r.ny;
    for (std::size_t h = 0; h < r.harmonic_orders.size(); ++h) {
      double e = 0;  // band energy on the screen: Σ map · ΔΩ
      for (std::size_t p = 0; p < npix; ++p) e += r.harmonic_maps[h * npix + p] * r.solid_angle[p];
      std::snprintf(line, sizeof line, " n=%d %.4e J", r.harmonic_orders[h], e);
      std::cout << line;
    }
    std::cout << "\n";
  }
  // Default orders of a base whose first band already lies above Nyquist: none, said (it was silent).
  if (r.harmonic_orders.empty() && r.base_omega > 0 && (1 + r.band) * r.base_omega > r.nyquist_omega) {
    std::snprintf(line, sizeof line,
                  "  no harmonic maps: the %s's first band (ω_b = %.6g ω, to %.6g ω) lies above the Nyquist "
                  "frequency %.6g ω of the samples, and the on-axis peak may be an alias of the line (more "
                  "screen.samples_per_period would resolve it)\n",
                  harmonic_base_name(r.of), r.base_omega / w0, (1 + r.band) * r.base_omega / w0, r.nyquist_omega / w0);
    std::cerr << "warning:" << line + 1;
  }
  if (const LineYield y = on_axis_line_yield(r, products.physics); y.known) {
    std::snprintf(line, sizeof line,
                  "  on-axis photon yield at the line ω_1 = %.6g ω: %.4e photons/sr per 0.1 %% BW per shot "
                  "(%.4e J·s/rad/sr, %s window)\n",
                  y.line_omega / w0, y.photons_per_bw, y.d2W, window_name(r.window));
    std::cout << line;
  }
  print_twisted_summary(std::cout, r, products.twisted);
  std::cout << "  wrote " << (dir / "spectrum.h5").string() << "\n";
  return 0;
}

}  // namespace edm::app
