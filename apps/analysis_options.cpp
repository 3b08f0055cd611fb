// Shared option parsing for `edm spectrum` and `edm plot` (see analysis_options.hpp).
#include "analysis_options.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "edm/error.hpp"
#include "edm/field_file.hpp"

namespace po = boost::program_options;

namespace edm::app {
namespace {

// The ranges of the campaign keys these options stand in for (electrons.gamma 1..1e6, laser.a0
// 0..1e4, core/src/config/keys.cpp): --gamma 1e300 squared to inf in the line ω(1+β)²γ² and wrote
// inf/NaN maps with exit 0 (issue 29).
constexpr double kMaxGamma = 1e6, kMaxA0 = 1e4;

std::string text(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

void check_gamma_option(double g) {
  if (!(std::isfinite(g) && g >= 1 && g <= kMaxGamma))
    throw ConfigError("EDM-SPEC-022", "--gamma " + text(g) + ": not a Lorentz factor in [1, " + text(kMaxGamma) +
                                          "] (finite; the range of electrons.gamma)");
}

void check_a0_option(double a0) {
  if (!(std::isfinite(a0) && a0 >= 0 && a0 <= kMaxA0))
    throw ConfigError("EDM-CLI-041", "--a0 " + text(a0) + ": must be a finite number in [0, " + text(kMaxA0) +
                                         "] (the range of laser.a0)");
}

}  // namespace

void add_analysis_options(po::options_description& desc, AnalysisArgs& a) {
  desc.add_options()("window", po::value(&a.window)->default_value("hann"),
                     "FFT window: hann | blackman-harris | none")(
      "harmonics", po::value(&a.harmonics),
      "harmonic orders for the maps, e.g. 1,3,5 (default: 1–3 below Nyquist)")(
      "of", po::value(&a.of),
      "harmonics of: laser | line (line = the run's expected on-axis fundamental, from run.toml "
      "[kinematics]; default line when the run records it)")(
      "band", po::value(&a.band)->default_value(0.5),
      "half-width of each harmonic band, in units of the base ω")(
      // Checked as parsed, so that an explicit --gamma 0 or --a0 -1 (the "not given" sentinels) is refused too.
      "gamma", po::value(&a.gamma)->notifier(check_gamma_option),
      "for --of line: the line of a head-on beam of this γ, ω(1+β)/(1−β)/(1+a0²/2) (default: the run's ensemble)")(
      "a0", po::value(&a.a0)->notifier(check_a0_option), "a0 for --of line (default: the effective a0 from run.toml)")(
      "threads", po::value(&a.threads), "threads for the FFTs (default: all; results do not depend on it)");
}

std::vector<int> parse_harmonic_list(const std::string& text) {
  std::vector<int> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    std::size_t used = 0;
    int n = 0;
    try {
      n = std::stoi(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != item.size() || n < 1)
      throw ConfigError("EDM-CLI-020",
                        "--harmonics: '" + item + "' is not a harmonic order ≥ 1 (expected e.g. 1,3,5)");
    // A repeated order gave two maps of one harmonic in spectrum.h5 and one PNG drawn twice.
    if (std::find(out.begin(), out.end(), n) != out.end())
      throw ConfigError("EDM-CLI-020", "--harmonics: harmonic " + std::to_string(n) + " is listed twice");
    out.push_back(n);
  }
  if (out.empty()) throw ConfigError("EDM-CLI-020", "--harmonics: empty list (expected e.g. 1,3,5)");
  return out;
}

SpectrumOptions resolve_analysis_options(const AnalysisArgs& a, const RunPhysics& physics, const FieldFile& field) {
  // --gamma and --a0 keep a sentinel for "not given" (0, -1); any other value must be one the line
  // formula can use: NaN, inf or a negative a0 were silently replaced by the run's own values or gave
  // no harmonic maps at all (found by tests/test_hostile). Checked here too for callers that fill
  // AnalysisArgs in code.
  if (a.gamma != 0) check_gamma_option(a.gamma);
  if (a.a0 != -1) check_a0_option(a.a0);
  SpectrumOptions o;
  o.window = parse_window(a.window);
  o.band = a.band;
  o.gamma = a.gamma;
  o.a0 = a.a0;
  o.threads = a.threads;
  const bool known = (a.gamma > 0) || line_known(physics);
  o.of = a.of.empty() ? (known ? HarmonicBase::Line : HarmonicBase::Laser) : parse_harmonic_base(a.of);
  if (!a.harmonics.empty()) {
    o.harmonics = parse_harmonic_list(a.harmonics);
    return o;
  }
  // Default orders: 1–3, keeping only those whose band fits under Nyquist (an explicit request above
  // Nyquist is an error in compute_spectrum; a default simply leaves it out).
  const double nyquist = field.geometry().nyquist_omega;  // 0: fewer than 2 samples (compute_spectrum refuses)
  if (!(nyquist > 0)) return o;
  double base = physics.laser_omega;
  if (o.of == HarmonicBase::Line) base = expected_line_omega(physics, a.gamma, a.a0);
  for (int n = 1; n <= 3; ++n)
    if ((n + o.band) * base <= nyquist) o.harmonics.push_back(n);
  return o;
}

}  // namespace edm::app
