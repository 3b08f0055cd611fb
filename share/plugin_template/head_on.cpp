// head_on — a complete example scenario plugin for edm (out-of-tree template).
// A line of `count` electrons along x, all moving along +z with Lorentz factor `gamma`, meets the
// campaign's laser travelling along −z; every electron crosses z = 0 when the pulse peak does
// (t = 0). The laser and the equations of motion come from libedm (make_laser, lorentz_rhs), so
// the plugin only describes its ensemble. Its own keys live in the campaign's [head_on] section.
#include <cmath>
#include <memory>
#include <numbers>
#include <stdexcept>
#include <string>

#include <edm/laser.hpp>
#include <edm/plugin_sdk.hpp>
#include <edm/trajectory.hpp>
#include <edm/units.hpp>

namespace {

class HeadOn : public edm::ScenarioBase {
 public:
  explicit HeadOn(const edm::Campaign& c) : units_(edm::Normalization::from_wavelength(c.laser.wavelength)) {
    // Core has validated the types of the [head_on] keys and filled in the defaults declared below;
    // the ranges are this plugin's to check.
    const auto& s = c.scenario_section;
    count_ = s["count"].value_or<std::int64_t>(1);
    spacing_ = s["spacing"].value_or(0.0) / units_.length();
    gamma_ = s["gamma"].value_or(10.0);
    if (count_ < 1) throw std::invalid_argument("[head_on] count must be >= 1, got " + std::to_string(count_));
    if (!(gamma_ >= 1.0)) throw std::invalid_argument("[head_on] gamma must be >= 1, got " + std::to_string(gamma_));
    if (c.trajectory.model != edm::TrajectoryModel::Lorentz)
      throw std::invalid_argument(std::string("head_on supports trajectory model \"lorentz\" only, got \"") +
                                  edm::name(c.trajectory.model) + "\"");

    // Counter-propagating laser (s = −1) unless the campaign's [laser] direction says otherwise.
    laser_ = edm::make_laser(c.laser, units_, -1);
    const double s_dir = laser_->direction();
    uz_ = std::sqrt(gamma_ * gamma_ - 1.0);
    // Start the electrons where the envelope has fallen to exp(−padding²) before the peak reaches
    // them, in the phase ξ = t − s z (`padding` durations τ0 for a gaussian; a supergaussian flat top
    // ends sooner: edm::envelope_reach); a constant envelope has no duration, so take 20 carrier
    // periods instead.
    const double P = c.trajectory.padding;
    const double span = laser_->tau0() > 0 ? edm::envelope_reach(laser_->tau0(), laser_->order(), P * P)
                                           : 20 * 2 * std::numbers::pi;
    const double beta = uz_ / gamma_;
    xi_start_ = -span;
    xi_end_ = span;
    // On the worldline z = β t, ξ = t (1 − s β): solve for the start time.
    t_start_ = xi_start_ / (1.0 - s_dir * beta);
    // Light-front momentum h = γ − s u_z is conserved in a plane wave and dξ/dτ = h, so the passage
    // takes (ξ_end − ξ_start)/h of proper time; ten times that catches a runaway integration.
    const double h = gamma_ - s_dir * uz_;
    tau_max_ = 10.0 * (xi_end_ - xi_start_) / h;
  }

  std::uint64_t electron_count() const override { return static_cast<std::uint64_t>(count_); }

  void initial_state(std::uint64_t i, double y[8]) const override {
    if (i >= electron_count()) throw std::out_of_range("electron " + std::to_string(i) + " of " + std::to_string(count_));
    // Centred line along x, all at z = β t_start so that each crosses z = 0 at t = 0.
    const double x = spacing_ * (double(i) - 0.5 * double(count_ - 1));
    const double beta = uz_ / gamma_;
    const double state[8] = {t_start_, x, 0.0, beta * t_start_, gamma_, 0.0, 0.0, uz_};
    for (int k = 0; k < 8; ++k) y[k] = state[k];
  }

  void rhs(double, const double y[8], double dy[8]) const override { edm::lorentz_rhs(*laser_, y, dy); }

  void laser_field(const double x4[4], double E[3], double B[3]) const override { laser_->field(x4, E, B); }

  int laser_direction() const override { return laser_->direction(); }
  double xi_end() const override { return xi_end_; }
  double tau_max() const override { return tau_max_; }

 private:
  edm::Normalization units_;
  std::unique_ptr<edm::Laser> laser_;
  std::int64_t count_ = 1;
  double spacing_ = 0, gamma_ = 10, uz_ = 0;
  double xi_start_ = 0, xi_end_ = 0, t_start_ = 0, tau_max_ = 0;
};

const char* const kModels[] = {"lorentz", nullptr};

// The [head_on] section: key, type, unit, default (TOML text), meaning — `edm schema head_on` prints them.
const edm_key_spec kKeys[] = {
    {"count", "int", "", "1", "electrons in the line (along x, centred on the axis)"},
    {"spacing", "float", "m", "1e-6", "distance between neighbouring electrons"},
    {"gamma", "float", "", "10.0", "Lorentz factor of every electron (moving along +z)"},
};

}  // namespace

EDM_DEFINE_PLUGIN(HeadOn, "head_on", "0.1.0", "example: a line of electrons meeting the laser head-on", kModels,
                  kKeys, sizeof(kKeys) / sizeof(kKeys[0]))
