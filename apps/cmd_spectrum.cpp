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
#include "edm/run_files.hpp"
#include "edm/spectrum.hpp"

namespace po = boost::program_options;

namespace edm::app {
namespace {

// The on-axis sample (spectrum.hpp nearest_axis_sample: the one edm info names too) and its peak, or
// "no light on axis" where its spectrum is zero (a bin-1 "peak" of nothing was printed before).
void print_on_axis(const SpectrumResult& r) {
  const double w0 = r.laser_omega;
  const std::string where = axis_sample_text(r.axis, !r.angular, r.angular ? 0 : r.x[r.center_ix],
                                             r.angular ? 0 : r.y[r.center_iy]);
  char line[400];
  if (!std::isfinite(r.peak_omega_on_axis)) {
    std::snprintf(line, sizeof line, "  on-axis (%s): no light on axis (its spectrum is zero; Nyquist %.4g ω)\n",
                  where.c_str(), r.nyquist_omega / w0);
  } else {
    std::snprintf(line, sizeof line,
                  "  on-axis peak (%s): %.6g ω  (%.6e rad/s; between bins %.6g ω; bin width %.3g ω, Nyquist %.4g ω; "
                  "window %s)\n",
                  where.c_str(), r.peak_omega_on_axis / w0, r.peak_omega_on_axis, r.peak_omega_on_axis_interp / w0,
                  (r.omega.size() > 1 ? r.omega[1] : 0) / w0, r.nyquist_omega / w0, window_name(r.window));
  }
  std::cout << line;
  if (r.peak_search_from > 0 && std::isfinite(r.peak_omega_on_axis)) {
    std::snprintf(line, sizeof line,
                  "    (looked for from half the line, %.6g ω, up: below it a field that does not vanish at the "
                  "record's ends, such as the electrons' own Coulomb field, peaks at ω → 0)\n",
                  r.peak_search_from / w0);
    std::cout << line;
  }
}

// The photon yield at the line is the unwindowed spectrum's (spectrum.hpp: a window's attenuation of
// a transient pulse is w(t_c)², no fixed gain); with a window, its spectrum divided by w(t_c)² is
// printed beside it as the cross-check.
void print_line_yield(const SpectrumResult& r, const LineYield& y) {
  if (!y.known) return;
  const double w0 = r.laser_omega;
  char line[400];
  std::snprintf(line, sizeof line,
                "  on-axis photon yield at the line ω_1 = %.6g ω: %.4e photons/sr per 0.1 %% BW per shot "
                "(%.4e J·s/rad/sr; unwindowed, whatever --window)\n",
                y.line_omega / w0, y.photons_per_bw, y.d2W);
  std::cout << line;
  // No light at the line (or a window zero at the pulse): no ratio to show.
  if (r.window == Window::None || !(y.d2W > 0) || !std::isfinite(y.d2W_window_corrected)) return;
  std::snprintf(line, sizeof line,
                "    cross-check: the %s-windowed spectrum there, corrected for its gain w² = %.4g at the pulse "
                "(sample %.1f of %zu), gives %.4e J·s/rad/sr (%+.2g %%)\n",
                window_name(r.window), r.window_gain_at_pulse, r.pulse_sample, r.samples, y.d2W_window_corrected,
                100 * (y.d2W_window_corrected / y.d2W - 1));
  std::cout << line;
}

// The unwindowed spectrum is the pulse's only where the record holds it (spectrum.hpp).
void warn_cut_pulse(const SpectrumResult& r) {
  if (!(r.edge_energy_fraction > kEdgeEnergyWarning)) return;
  char line[400];
  std::snprintf(line, sizeof line,
                "warning: %.2g of the on-axis sample's energy lies at the ends of the record (its outer 1/32): the "
                "record cuts the pulse, and the unwindowed spectrum and yield hold the cut's leakage (more "
                "screen.samples would hold it)\n",
                r.edge_energy_fraction);
  std::cerr << line;
}

// Harmonics of the line above Nyquist with non-negligible expected power fold back into the
// analysed band as false lines (spectrum.hpp aliased_harmonics); spectrum.h5 records them too.
void warn_aliases(const SpectrumResult& r) {
  if (r.aliased.empty()) return;
  const double w0 = r.laser_omega;
  std::string list;
  char item[160];
  for (const AliasedHarmonic& a : r.aliased) {
    std::snprintf(item, sizeof item, "%sn=%d (%.4g ω, power ~%.1e of the line's) appears at %.4g ω",
                  list.empty() ? "" : "; ", a.order, a.omega / w0, a.relative_power, a.alias_omega / w0);
    list += item;
  }
  std::snprintf(item, sizeof item, "warning: harmonics of the line ω_1 = %.6g ω lie above the Nyquist frequency %.6g ω"
                " and alias into the spectrum: ",
                r.line_omega / w0, r.nyquist_omega / w0);
  std::cerr << item << list << " (more screen.samples_per_period would resolve them; spectrum.h5 aliased_orders)\n";
}

}  // namespace

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
  print_on_axis(r);
  std::snprintf(line, sizeof line,
                r.angular ? "  energy into the grid's directions: %.6e J  (Σ ∫S·n̂ dt · R² ΔΩ; ∫dI/dω dω of the "
                            "%s-windowed spectrum %.6e J)\n"
                          : "  energy through the screen: %.6e J  (Σ ∫S·n̂ dt · dx dy; ∫dI/dω dω of the "
                            "%s-windowed spectrum %.6e J)\n",
                r.total_energy, window_name(r.window), r.integrated_energy);
  std::cout << line;
  if (!r.harmonic_orders.empty()) {
    std::snprintf(line, sizeof line,
                  "  harmonics of the %s (ω_b = %.6g ω, band ±%.3g ω_b; band energies of the %s-windowed "
                  "spectrum):",
                  harmonic_base_name(r.of), r.base_omega / w0, r.band, window_name(r.window));
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
  print_line_yield(r, on_axis_line_yield(r, products.physics));
  warn_cut_pulse(r);
  if (!products.physics.emission_in_window)
    std::cerr << "warning: the run's window cuts light of the emission at some pixel (run.toml [window] "
                 "emission_in_window = false): the spectrum of field.h5 misses that light; a run with "
                 "window = \"burst\" and [spectra] enabled, or more screen.samples, holds it\n";
  warn_aliases(r);
  print_twisted_summary(std::cout, r, products.twisted);
  std::cout << "  wrote " << RunFolder(dir).spectrum().string() << "\n";
  return 0;
}

}  // namespace edm::app
