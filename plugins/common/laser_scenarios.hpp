// The two laser-scattering scenarios as C++ classes (header-only so the physics tests can build
// them without dlopen; each plugin .cpp only wraps one with EDM_DEFINE_PLUGIN). LaserScenario holds
// what both share: laser, trajectory model (lorentz | landau_lifshitz | tracks | lpwa), integration window
// and the straight-line placement of every electron where the pulse has not reached it yet.
#pragma once
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <numbers>
#include <string>
#include <vector>

#include "edm/ensemble.hpp"
#include "edm/error.hpp"
#include "edm/laser.hpp"
#include "edm/plugin_sdk.hpp"
#include "edm/openpmd_particles.hpp"
#include "edm/tracks.hpp"
#include "edm/trajectory.hpp"
#include "edm/units.hpp"
#include "lpwa.hpp"

namespace edm::scenarios {

inline const char* const kModels[] = {"lorentz", "landau_lifshitz", "tracks", "openpmd", "lpwa", nullptr};

// A path from the campaign, relative to the campaign file's folder when it is relative.
inline std::string campaign_path(const Campaign& c, const std::string& p) {
  std::filesystem::path path(p);
  if (path.is_relative() && !c.file.empty()) path = c.file.parent_path() / path;
  return path.string();
}

// The campaign's [electrons] as drawn, before a scenario places them: the sunflower disk (at rest,
// z = 0), the seeded Gaussian beam about γ, or the CSV list as given. Unknown distributions are
// refused by name.
inline std::vector<ElectronInit> campaign_ensemble(const Campaign& c, double gamma) {
  const auto& e = c.electrons;
  if (e.distribution == Distribution::Sunflower) return sunflower_disk(e.count, e.radius);
  if (e.distribution == Distribution::Gaussian) return gaussian_beam(e, gamma, c.run.seed);
  if (e.distribution == Distribution::List) return read_electron_csv(campaign_path(c, e.file));
  throw ConfigError("EDM-CFG-405", std::string("electrons.distribution: unknown value '") + name(e.distribution) +
                                       "' (sunflower | gaussian | list)");
}

class LaserScenario : public ScenarioBase {
 public:
  // Integration window in the laser phase ξ = t − s z: where the envelope has fallen to exp(−P²),
  // P = trajectory.padding: [−P τ0, +P τ0] for the gaussian (exp(−P²) ≈ 2e-16 at the ends for
  // P = 6), ±P^(1/p) τ0 for a supergaussian of order p, whose flat top ends at τ0 (±P τ0 would
  // integrate P − 1 durations of free flight on each side). A constant envelope has no duration,
  // so the window is ±P carrier periods (2π P) and the electron starts inside the field.
  LaserScenario(const Campaign& c, int default_direction)
      : units_(Normalization::from_wavelength(c.laser.wavelength)),
        laser_(make_laser(c.laser, units_, default_direction)) {
    const double P = c.trajectory.padding;
    if (!(P > 0)) throw ConfigError("EDM-CFG-401", "trajectory.padding must be > 0");
    const double half = laser_->tau0() > 0 ? envelope_reach(laser_->tau0(), laser_->order(), P * P)
                                            : P * 2.0 * std::numbers::pi;
    xi_start_ = -half;
    xi_end_ = half;
    const TrajectoryModel model = c.trajectory.model;
    if (model == TrajectoryModel::Lorentz) {
      model_ = Model::Lorentz;
    } else if (model == TrajectoryModel::LandauLifshitz) {
      model_ = Model::LandauLifshitz;
      tau_rad_ = units_.tau_rad();
    } else if (model == TrajectoryModel::Tracks) {
      model_ = Model::Tracks;
      if (c.trajectory.file.empty())
        throw ConfigError("EDM-CFG-402", "trajectory.model = \"tracks\" needs trajectory.file");
      load_tracks(read_tracks(campaign_path(c, c.trajectory.file)));
    } else if (model == TrajectoryModel::OpenPMD) {
      // An openPMD particle series becomes tracks on load and runs like a tracks file.
      model_ = Model::Tracks;
      if (c.trajectory.file.empty())
        throw ConfigError("EDM-CFG-647", "trajectory.model = \"openpmd\" needs trajectory.file (the series)");
      load_tracks(read_openpmd_tracks(campaign_path(c, c.trajectory.file), c.trajectory.species).tracks);
    } else if (model == TrajectoryModel::Lpwa) {
      lpwa_check(c);  // closed form in the local plane wave: set_electrons builds the tracks
    } else {
      throw ConfigError("EDM-CFG-403", std::string("trajectory.model: unknown value '") + name(model) +
                                           "' (lorentz | landau_lifshitz | tracks | openpmd | lpwa)");
    }
  }

  std::uint64_t electron_count() const override { return states_.size(); }
  void initial_state(std::uint64_t i, double y[8]) const override {
    const auto& s = states_.at(i);
    std::copy(s.begin(), s.end(), y);
  }
  bool has_rhs() const override { return model_ != Model::Tracks; }
  void rhs(double, const double y[8], double dy[8]) const override {
    if (model_ == Model::LandauLifshitz)
      landau_lifshitz_rhs(*laser_, tau_rad_, y, dy);
    else
      lorentz_rhs(*laser_, y, dy);
  }
  void laser_field(const double x4[4], double E[3], double B[3]) const override { laser_->field(x4, E, B); }
  bool has_tracks() const override { return model_ == Model::Tracks; }
  edm_track track(std::uint64_t i) const override {
    const TrackData& t = tracks_.at(i);
    return edm_track{t.t.size(), t.t.data(),  t.x.data(),  t.y.data(),
                     t.z.data(), t.ux.data(), t.uy.data(), t.uz.data()};
  }
  // Weights from the CSV's weight column or the tracks' w; a scenario whose weights are all 1 has
  // none, so its run builds the field kernel it always did.
  bool has_weights() const override {
    return std::any_of(weights_.begin(), weights_.end(), [](double w) { return w != 1.0; });
  }
  double weight(std::uint64_t i) const override { return weights_.at(i); }
  int laser_direction() const override { return laser_->direction(); }
  double xi_end() const override { return xi_end_; }
  // Runaway guard: 50× the proper time the slowest electron (smallest h = γ − s uᶻ, dξ/dτ = h)
  // needs to cross the window, room for the observer-window extension past ξ_end and for LL losses.
  double tau_max() const override { return tau_max_; }
  const Laser& laser() const { return *laser_; }
  const Normalization& units() const { return units_; }
  double xi_start() const { return xi_start_; }

 protected:
  // Places the ensemble (SI) at ξ = xi_start along straight lines (not for tracks).
  void set_electrons(const std::vector<ElectronInit>& ens) {
    if (model_ == Model::Tracks) return;  // the tracks file is the ensemble
    if (ens.empty()) throw ConfigError("EDM-CFG-404", "electrons.count must be >= 1");
    states_.resize(ens.size());
    weights_.resize(ens.size());
    for (std::size_t i = 0; i < ens.size(); ++i) weights_[i] = ens[i].weight;
    double h_min = INFINITY;
    for (std::size_t i = 0; i < ens.size(); ++i) {
      place_at_phase(ens[i], units_, laser_->direction(), xi_start_, states_[i].data());
      h_min = std::min(h_min, states_[i][4] - laser_->direction() * states_[i][7]);
    }
    tau_max_ = 50.0 * (xi_end_ - xi_start_) / h_min;
    if (lpwa_per_period_ > 0) build_lpwa_tracks();
  }

 private:
  enum class Model { Lorentz, LandauLifshitz, Tracks };

  void load_tracks(std::vector<TrackData> tracks) {
    tracks_ = std::move(tracks);
    const double T = units_.time(), L = units_.length();
    double tmax = 0;
    for (auto& t : tracks_) {
      for (auto& v : t.t) v /= T;
      for (auto* c : {&t.x, &t.y, &t.z})
        for (auto& v : *c) v /= L;
      std::array<double, 8> y{};
      y[0] = t.t[0];
      y[1] = t.x[0];
      y[2] = t.y[0];
      y[3] = t.z[0];
      y[5] = t.ux[0];
      y[6] = t.uy[0];
      y[7] = t.uz[0];
      y[4] = std::sqrt(1 + y[5] * y[5] + y[6] * y[6] + y[7] * y[7]);
      states_.push_back(y);
      weights_.push_back(t.w);
      tmax = std::max(tmax, t.t.back() - t.t.front());
    }
    tau_max_ = 2.0 * tmax;  // τ ≤ t along any track
  }

  // trajectory.model = "lpwa" (share/docs/lpwa.md): the estimated error of the closed form is
  // refused above 30 % (EDM-CFG-731) and warned about above 1 %; the samples per period of its
  // tracks (4 per knot, at least 64: the tracks path's cubic splines of u stay below 1e-6 of a0).
  void lpwa_check(const Campaign& c) {
    const double w0 = c.laser.profile == LaserProfile::PlaneWave ? 0.0 : c.laser.waist / units_.length();
    const double err = lpwa::estimated_error(laser_->a0(), w0, laser_->tau0(), 2.0 * c.trajectory.padding);
    char msg[512];
    std::snprintf(msg, sizeof msg,
                  "trajectory.model = \"lpwa\": estimated error %.2g of the local plane wave for laser.a0 = %.3g "
                  "and laser.waist = %.3g m (the ponderomotive kick, the excursion a0/k and the drift, against the "
                  "waist and the Rayleigh length; share/docs/lpwa.md)",
                  err, laser_->a0(), c.laser.waist);
    if (err > 0.3) throw ConfigError("EDM-CFG-731", std::string(msg) + ": outside its validity, use \"lorentz\"");
    if (err > 0.01) std::fprintf(stderr, "edm: warning: %s\n", msg);
    lpwa_per_period_ = std::max(64, 4 * c.trajectory.knots_per_period);
  }
  // The closed-form track of every placed electron, up to ξ_end; the run then takes the tracks path.
  void build_lpwa_tracks() {
    tracks_.clear();
    for (const auto& y : states_) tracks_.push_back(lpwa::trajectory(*laser_, y.data(), xi_end_, lpwa_per_period_));
    double tmax = 0;
    for (const auto& t : tracks_) tmax = std::max(tmax, t.t.back() - t.t.front());
    tau_max_ = 2.0 * tmax;  // τ ≤ t along any track
    model_ = Model::Tracks;
  }
  int lpwa_per_period_ = 0;  // > 0: trajectory.model = "lpwa"

  Normalization units_;
  std::unique_ptr<Laser> laser_;
  Model model_ = Model::Lorentz;
  double tau_rad_ = 0;
  double xi_start_ = 0, xi_end_ = 0, tau_max_ = 1e9;
  std::vector<std::array<double, 8>> states_;
  std::vector<double> weights_;  // per electron, as states_
  std::vector<TrackData> tracks_;
};

// Thomson scattering: the laser along +z, electrons at rest in the focal plane z = laser.focus
// (sunflower disk), or a Gaussian distribution about the focus (gaussian_beam with γ = 1: the
// emittances give a transverse momentum spread), or the CSV list as given.
class ThomsonScenario : public LaserScenario {
 public:
  explicit ThomsonScenario(const Campaign& c) : LaserScenario(c, +1) {
    refuse_prebunching(c.electrons, "thomson");
    std::vector<ElectronInit> ens = campaign_ensemble(c, 1.0);
    if (c.electrons.distribution == Distribution::Sunflower)
      for (auto& el : ens) el.z = c.laser.focus;
    else if (c.electrons.distribution == Distribution::Gaussian)
      for (auto& el : ens) el.z += c.laser.focus;
    set_electrons(ens);
  }
};

// Inverse Thomson (Compton backscatter): electrons along +z with Lorentz factor electrons.gamma
// (or 1 + [inverse_thomson] gamma_minus_one when > 0, exact at low energy where γ − 1 would lose
// digits), laser along −z. Sunflower and gaussian positions are those at the collision, t = 0:
// every electron is put back along its straight path so that it would reach them at t = 0, when
// the pulse peak crosses z = 0. A CSV list gives (t0, position, u) on the same straight-line basis.
class InverseThomsonScenario : public LaserScenario {
 public:
  explicit InverseThomsonScenario(const Campaign& c) : LaserScenario(c, -1) {
    const auto& e = c.electrons;
    const double gm1 = c.scenario_section["gamma_minus_one"].value_or(0.0);
    if (gm1 < 0) throw ConfigError("EDM-CFG-406", "inverse_thomson.gamma_minus_one must be >= 0");
    // The same physical range as electrons.gamma (1..1e6, core/src/config/keys.cpp).
    if (!(gm1 <= 1e6))
      throw ConfigError("EDM-CFG-408", "inverse_thomson.gamma_minus_one = " + std::to_string(gm1) +
                                           ": must be <= 1e6 (a finite γ − 1 of at most 1e6)");
    const double gamma = gm1 > 0 ? 1.0 + gm1 : e.gamma;
    if (!(gamma >= 1.0)) throw ConfigError("EDM-CFG-407", "electrons.gamma must be >= 1");
    // uᶻ = √(γ² − 1) = √((γ−1)(γ+1)): the second form keeps every digit of a small γ − 1.
    const double uz = gm1 > 0 ? std::sqrt(gm1 * (gm1 + 2.0)) : std::sqrt((gamma - 1) * (gamma + 1));
    std::vector<ElectronInit> ens = campaign_ensemble(c, gamma);
    if (e.distribution == Distribution::Sunflower)
      for (auto& el : ens) el.uz = uz;
    // Phased-array prebunching (edm/ensemble.hpp): at the line of the on-axis Doppler factor h².
    const double h = gamma + uz, a0 = laser().a0();
    prebunch(ens, c, uz / gamma, c.laser.wavelength * (1.0 + 0.5 * a0 * a0) / (h * h));
    set_electrons(ens);
  }
};

}  // namespace edm::scenarios
