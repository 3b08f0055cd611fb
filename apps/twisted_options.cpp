// Twisted-light options and summary for `edm spectrum` / `edm plot` (see twisted_options.hpp).
#include "twisted_options.hpp"

#include <cmath>
#include <cstdio>
#include <sstream>

#include "edm/error.hpp"
#include "edm/run_folder.hpp"

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
  return o;
}

AnalysisProducts analyse_run(const std::filesystem::path& dir, const AnalysisArgs& analysis,
                             const TwistedArgs& twisted) {
  const auto field = dir / "field.h5";
  AnalysisProducts p;
  p.physics = read_run_physics(dir);
  const RunPhysics& phys = p.physics;
  const SpectrumOptions opt = resolve_analysis_options(analysis, phys, field);
  TwistedLightOptions topt = resolve_twisted_options(twisted, analysis);
  // Twisted light is a flat screen's (rings in metres about the normal, L_z through a plane): an
  // angular screen gets its spectra only (share/docs/outputs.md, "edm spectrum of an angular run").
  const FieldFileSummary summary = read_field_summary(field);
  // A field.h5 of another run would be analysed with this run's physics (found by tests/test_hostile).
  check_field_belongs_to_run(dir, summary);
  if (summary.screen_type == "angular") topt.enabled = false;
  if (topt.enabled) check_ring_options(field, topt.rings);
  try {
    p.spectrum = compute_spectrum(field, phys, opt);
  } catch (const ConfigError& e) {
    // The library names the harmonic; on the command line the option it came from is --harmonics.
    if (e.id() == "EDM-SPEC-020") throw ConfigError(e.id(), std::string(e.what()) + " (option --harmonics)");
    throw;
  }
  p.twisted = compute_twisted_light(field, p.spectrum, topt);
  write_spectrum_with_twisted_light(dir / "spectrum.h5", p.spectrum, p.twisted);
  return p;
}

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
  for (std::size_t h = 0; h < t.maps.harmonics(); ++h) {
    if (!(t.band_share[h] >= kNoEnergyFraction)) {
      std::snprintf(line, sizeof line,
                    "  harmonic %d: no energy in its band (%.3g of the spectrum's), not fitted\n",
                    t.maps.order[h], t.band_share[h]);
      out << line;
      continue;
    }
    std::snprintf(line, sizeof line,
                  "  harmonic %d (bin %.6g ω_laser): J_z per photon %.4g ħ; ℓ about the normal:",
                  t.maps.order[h], t.maps.omega_bin[h] / r.laser_omega, o.band_j_per_photon[h]);
    out << line;
    for (std::size_t s = 0; s < 2; ++s) {
      const WindingSummary& w = t.summary[h * 2 + s];
      if (t.rings.radii.empty()) break;
      if (w.accepted == 0) {
        std::snprintf(line, sizeof line, "  σ=%+d refused on every ring", kSigmas[s]);
      } else {
        std::snprintf(line, sizeof line, "  σ=%+d ℓ=%+.4f (winding %+d on %zu/%zu rings%s)", kSigmas[s],
                      w.ell, w.winding, w.accepted, t.rings.radii.size(),
                      w.consistent ? "" : ", rings disagree");
      }
      out << line;
    }
    out << "\n";
    for (std::size_t s = 0; s < 2; ++s)
      for (const RingFit& f : t.fits[h * 2 + s])
        if (f.status != RingStatus::Ok)
          out << "    σ=" << (kSigmas[s] > 0 ? "+1" : "-1") << " " << f.message << "\n";
  }
}

}  // namespace edm::app
