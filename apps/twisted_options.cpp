// Twisted-light options and summary for `edm spectrum` / `edm plot` (see twisted_options.hpp).
#include "twisted_options.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "edm/error.hpp"
#include "edm/run_files.hpp"
#include "edm/run_folder.hpp"
#include "edm/run_manifest.hpp"
#include "edm/run_lock.hpp"
#include "edm/spectrum_file.hpp"

namespace po = boost::program_options;

namespace edm::app {
namespace {

// "a,b,c" → numbers; throws ConfigError `id` naming `option` and the bad entry.
std::vector<double> parse_numbers(const std::string& text, const char* option, const char* id) {
  std::vector<double> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    std::size_t used = 0;
    double v = 0;
    try {
      v = std::stod(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != item.size() || !std::isfinite(v))
      throw ConfigError(id, std::string(option) + ": '" + item + "' is not a number (in metres)");
    out.push_back(v);
  }
  if (out.empty()) throw ConfigError(id, std::string(option) + ": empty list");
  return out;
}

}  // namespace

void add_twisted_options(po::options_description& desc, TwistedArgs& a) {
  desc.add_options()("ring-centre", po::value(&a.ring_centre),
                     "X,Y (m): centre of the rings for the topological charge (default: the axis, 0,0)")(
      "ring-radii", po::value(&a.ring_radii),
      "r1,r2,... (m): ring radii (default: 4 radii up to the largest ring on the screen)")(
      "ring-points", po::value(&a.ring_points), "samples per ring (default: a quarter pixel apart)")(
      "ring-floor", po::value(&a.ring_floor)->default_value(1e-3, "1e-3"),
      "amplitude floor of a ring sample, relative to the harmonic map's peak")(
      "ring-min-fraction", po::value(&a.ring_min_fraction)->default_value(0.95, "0.95"),
      "fraction of a ring above the floor that a fit needs")(
      "ring-max-residual", po::value(&a.ring_max_residual)->default_value(0.5, "0.5"),
      "rms phase residual (rad) above which a ring is left out of the headline ℓ")(
      "harmonic-bin", po::value(&a.harmonic_bin)->default_value("peak"),
      "bin of each complex harmonic map: peak (of the band's screen-integrated spectrum) | nominal (n·ω_b)")(
      "no-oam", po::bool_switch(&a.no_oam),
      "skip the complex harmonic maps, angular momentum and ring fits (spectrum only)");
}

TwistedLightOptions resolve_twisted_options(const TwistedArgs& a, const AnalysisArgs& analysis) {
  TwistedLightOptions o;
  o.enabled = !a.no_oam;
  o.bin = parse_harmonic_bin(a.harmonic_bin);
  o.harmonics_explicit = !analysis.harmonics.empty();
  o.threads = analysis.threads;
  if (!a.ring_centre.empty()) {
    const auto c = parse_numbers(a.ring_centre, "--ring-centre", "EDM-CLI-030");
    if (c.size() != 2)
      throw ConfigError("EDM-CLI-030", "--ring-centre: expected X,Y in metres (got '" + a.ring_centre + "')");
    o.rings.centre_given = true;
    o.rings.centre_x = c[0];
    o.rings.centre_y = c[1];
  }
  if (!a.ring_radii.empty()) o.rings.radii = parse_numbers(a.ring_radii, "--ring-radii", "EDM-CLI-031");
  // A negative count was read as a huge unsigned one and ended in bad_alloc (EDM-INT-001); a huge one
  // did too (found by tests/test_hostile). 2^20 samples a ring is far beyond any screen's pixels.
  constexpr long long kMaxRingPoints = 1ll << 20;
  if (a.ring_points < 0 || a.ring_points > kMaxRingPoints)
    throw ConfigError("EDM-CLI-040", "--ring-points " + std::to_string(a.ring_points) +
                                         ": out of range (0 for a quarter pixel apart, else 8 to " +
                                         std::to_string(kMaxRingPoints) + ")");
  o.rings.points = std::size_t(a.ring_points);
  o.rings.floor = a.ring_floor;
  o.rings.min_fraction = a.ring_min_fraction;
  o.rings.max_residual = a.ring_max_residual;
  return o;
}

AnalysisProducts analyse_run(const std::filesystem::path& dir, const AnalysisArgs& analysis,
                             const TwistedArgs& twisted) {
  // Each file of the folder is opened once, by its owner, and handed down (share/docs/developing.md,
  // "The io owners"): run.toml by RunManifest, field.h5 by FieldFile, spectrum.h5 by SpectrumWriter.
  const RunFolder run(dir);
  const RunManifest manifest = RunManifest::read(run);
  AnalysisProducts p;
  p.physics = read_run_physics(manifest);
  const RunPhysics& phys = p.physics;
  const FieldFile field = FieldFile::open(run.field());
  const SpectrumOptions opt = resolve_analysis_options(analysis, phys, field);
  TwistedLightOptions topt = resolve_twisted_options(twisted, analysis);
  topt.knots_per_period = manifest.knots_per_period();
  topt.physics = phys;
  // A field.h5 of another run would be analysed with this run's physics (found by tests/test_hostile).
  check_field_belongs_to_run(manifest, field);
  // Twisted light is a flat screen's (rings in metres about the normal, L_z through a plane): an
  // angular screen gets its spectra only (share/docs/outputs.md, "edm spectrum of an angular run").
  if (field.geometry().angular) topt.enabled = false;
  if (topt.enabled) check_ring_options(field, topt.rings);
  try {
    p.spectrum = compute_spectrum(field, phys, opt);
  } catch (const ConfigError& e) {
    // The library names the harmonic; on the command line the option it came from is --harmonics.
    if (e.id() == "EDM-SPEC-020") throw ConfigError(e.id(), std::string(e.what()) + " (option --harmonics)");
    throw;
  }
  p.twisted = compute_twisted_light(field, p.spectrum, topt);
  // One writer of the folder at a time (share/docs/outputs.md, "One run per folder"): two edm
  // spectrum of one folder removed and renamed each other's staging file (found by tests/test_hostile).
  // A run or another analysis writing the folder makes this one ConfigError EDM-RUN-040, naming it.
  const RunFolderLock lock = run.lock();
  SpectrumWriter out = SpectrumWriter::open(run.spectrum(), SpectrumPart::Analysis);
  write_spectrum_with_twisted_light(out, p.spectrum, p.twisted);
  out.commit();
  p.spectrum_file = run.spectrum();
  return p;
}

namespace {

// "+4 on 2, +3 on 1" for the windings of the rings that passed the amplitude and residual cuts.
std::string list_windings(const std::vector<int>& windings) {
  std::vector<std::pair<int, std::size_t>> counts;
  for (int w : windings) {
    auto it = std::find_if(counts.begin(), counts.end(), [&](const auto& c) { return c.first == w; });
    if (it == counts.end()) counts.push_back({w, 1});
    else ++it->second;
  }
  std::string out;
  char buf[64];
  for (const auto& [w, n] : counts) {
    std::snprintf(buf, sizeof buf, "%s%+d on %zu", out.empty() ? "" : ", ", w, n);
    out += buf;
  }
  return out;
}

// "; 1 below the noise floor; 1 with residual above 0.5 rad; 1 refused" for the rings left out.
std::string left_out(const WindingSummary& w, std::size_t rings, double max_residual) {
  std::string out;
  char buf[96];
  auto add = [&](std::size_t n, const char* what) {
    if (n == 0) return;
    std::snprintf(buf, sizeof buf, "; %zu %s", n, what);
    out += buf;
  };
  add(w.below_noise, "below the noise floor");
  char residual[64];
  std::snprintf(residual, sizeof residual, "with phase residual above %.3g rad", max_residual);
  add(w.residual, residual);
  add(rings - w.accepted, "refused");
  return out;
}

// One component's headline: ℓ over the rings that pass, or why there is none.
std::string headline(const WindingSummary& w, int sigma, std::size_t rings, double max_residual) {
  char line[320];
  const std::string rest = left_out(w, rings, max_residual);
  if (w.passed > 0) {
    std::string other;
    if (w.other_winding > 0) other = "; " + std::to_string(w.other_winding) + " with another winding";
    std::snprintf(line, sizeof line, "  σ=%+d ℓ=%+.3f ± %.3f (winding %+d on %zu of %zu rings%s%s)", sigma, w.ell,
                  w.ell_spread, w.winding, w.passed, rings, other.c_str(), rest.c_str());
  } else if (!w.windings.empty()) {
    std::snprintf(line, sizeof line, "  σ=%+d no common winding (%s%s)", sigma, list_windings(w.windings).c_str(),
                  rest.c_str());
  } else {
    std::snprintf(line, sizeof line, "  σ=%+d no ℓ: no ring of %zu passes (%s)", sigma, rings,
                  rest.empty() ? "" : rest.c_str() + 2);
  }
  return line;
}

// A band whose peak is not where its harmonic's line can be on this screen: no J_z, no ℓ.
std::string no_line(const SpectrumResult& r, const TwistedLightResult& t, std::size_t h) {
  char line[400];
  const double peak = t.band_peak_omega[h];
  std::snprintf(line, sizeof line,
                "  harmonic %d: no line in its band (%.3g of the spectrum's): its peak at %.6g ω_laser lies "
                "outside %.6g–%.6g ω_laser, where harmonic %d can peak on this screen; it holds another "
                "line's tail or leakage, so no J_z or ℓ is given\n",
                t.maps.order[h], t.band_share[h], peak / r.laser_omega, t.line_omega_min[h] / r.laser_omega,
                t.line_omega_max[h] / r.laser_omega, t.maps.order[h]);
  return line;
}

// The J_z per photon of the harmonic's photons and the flux book through the screen; when
// they disagree, the screen cuts the light and the book is not the photons' J (observables.hpp).
std::string angular_momentum(const ScreenObservables& o, std::size_t h) {
  char line[400];
  if (o.screen_cut[h])
    std::snprintf(line, sizeof line,
                  "J_z per photon %.4g ħ (orbital %.4g + spin %.4g); through the screen %.4g ħ per "
                  "photon: the screen cuts the light (the spin at its edge; or the band's phase or light is "
                  "not clean), not the photons' J",
                  o.photon_j_per_photon[h], o.photon_j_orbital[h], o.photon_j_spin[h], o.band_j_per_photon[h]);
  else
    std::snprintf(line, sizeof line,
                  "J_z per photon %.4g ħ (orbital %.4g + spin %.4g; through the screen %.4g ħ)",
                  o.photon_j_per_photon[h], o.photon_j_orbital[h], o.photon_j_spin[h], o.band_j_per_photon[h]);
  std::string text = line;
  if (o.photon_j_suspect[h]) {
    std::snprintf(line, sizeof line,
                  "; SUSPECT: its ring fits say %.4g ħ per photon (Σ w_σ(ℓ+σ)): the band holds other light, such as "
                  "a stronger line's leakage, or a phase that turns fast between pixels",
                  o.rings_j[h]);
    text += line;
  }
  return text;
}

}  // namespace

void print_twisted_summary(std::ostream& out, const SpectrumResult& r, const TwistedLightResult& t) {
  if (!t.enabled) return;
  const auto& o = t.observables;
  char line[320];
  std::snprintf(line, sizeof line,
                "  angular momentum through the screen (about the axis, fields %s): L_z = %.6e J·s "
                "(bins %.6e J·s); energy from the bins %.6e J\n",
                o.lz_field.c_str(), o.lz_time, o.lz_bins, o.energy_bins);
  out << line;
  if (t.rings.radii.empty() && t.maps.harmonics())
    out << "  topological charge: no ring fits on this screen (it is less than 4 pixels across)\n";
  else if (t.maps.harmonics()) {
    const std::string knots = t.knots_per_period > 0 ? std::to_string(t.knots_per_period) + " knots per period"
                                                     : "no knots recorded: the round-off of field.h5";
    std::snprintf(line, sizeof line,
                  "  ℓ from the rings above the noise floor %.3g V·s (%.3g of the strongest map, %s) with phase "
                  "residual ≤ %.3g rad and the winding most of them share\n",
                  t.noise_floor, kNoiseMargin * t.cube_relative_error, knots.c_str(), t.max_residual);
    out << line;
  }
  for (std::size_t h = 0; h < t.maps.harmonics(); ++h) {
    if (!(t.band_share[h] >= kNoEnergyFraction)) {
      std::snprintf(line, sizeof line,
                    "  harmonic %d: no energy in its band (%.3g of the spectrum's), not fitted\n",
                    t.maps.order[h], t.band_share[h]);
      out << line;
      continue;
    }
    if (t.line[h] == HarmonicLine::NoLine) {
      out << no_line(r, t, h);
      continue;
    }
    std::snprintf(line, sizeof line, "  harmonic %d (bin %.6g ω_laser): ", t.maps.order[h],
                  t.maps.omega_bin[h] / r.laser_omega);
    out << line << angular_momentum(o, h) << "; ℓ about the normal:";
    for (std::size_t s = 0; s < 2 && !t.rings.radii.empty(); ++s)
      out << headline(t.summary[h * 2 + s], kSigmas[s], t.rings.radii.size(), t.max_residual);
    out << "\n";
    for (std::size_t s = 0; s < 2; ++s)
      for (const RingFit& f : t.fits[h * 2 + s])
        for (const std::string* m : {&f.message, &f.cut_message})
          if (!m->empty()) out << "    σ=" << (kSigmas[s] > 0 ? "+1" : "-1") << " " << *m << "\n";
  }
}

}  // namespace edm::app
