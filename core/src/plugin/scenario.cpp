// Scenario: RAII and error translation over a plugin's C scenario table, and the kinematics of the
// ensemble it starts (for the manifest).
#include <cmath>
#include <string>

#include "edm/error.hpp"
#include "edm/plugins.hpp"
#include "plugin/stdout_guard.hpp"

namespace edm {

namespace {
// plugin_sdk.hpp passes an edm::Error as "[<id>:<exit code>] message". Rethrow it in its own family
// with the call as context (any other message: the Fallback family and id), so that a bad CSV or
// tracks file named by the campaign reports the reader's id and exit code (2 input, 4 I/O,
// 6 physics), not a generic plugin failure.
template <class Fallback>
[[noreturn]] void rethrow_plugin_error(const std::string& context, const std::string& err,
                                       const char* fallback_id) {
  const auto close = err.find("] ");
  const auto colon = err.rfind(':', close);
  if (err.size() > 2 && err[0] == '[' && close != std::string::npos && colon != std::string::npos &&
      colon > 1 && close == colon + 2) {
    const std::string id = err.substr(1, colon - 1), what = context + err.substr(close + 2);
    switch (err[colon + 1]) {
      case '2': throw ConfigError(id, what);
      case '3': throw DeviceError(id, what);
      case '4': throw IoError(id, what);
      case '6': throw PhysicsError(id, what);
      default: throw Fallback(id, what);
    }
  }
  throw Fallback(fallback_id, context + err);
}
}  // namespace

Scenario::Scenario(const Plugin& plugin, const Campaign& campaign) {
  char err[1024] = {0};
  const CampaignView view(campaign);  // only C types cross: the view lives through create
  int rc = 0;
  {
    const detail::StdoutToStderr guard;  // a plugin's prints during create stay off edm's stdout
    rc = plugin.descriptor().create(view.get(), &s_, err, sizeof err);
  }
  if (rc != 0)
    rethrow_plugin_error<PluginError>(
        "scenario '" + plugin.name() + "' (" + plugin.path().string() + ") refused the campaign: ", err, "EDM-PLG-020");
}

Scenario::Scenario(const edm_scenario_v1& created) : s_(created) {}

Scenario::~Scenario() {
  if (s_.destroy) s_.destroy(s_.self);
}

std::uint64_t Scenario::electron_count() const { return s_.electron_count(s_.self); }

void Scenario::initial_state(std::uint64_t i, double y[8]) const {
  char err[1024] = {0};
  if (s_.initial_state(s_.self, i, y, err, sizeof err) != 0)
    rethrow_plugin_error<PhysicsError>("initial state of electron " + std::to_string(i) + ": ", err, "EDM-TRJ-001");
}

void Scenario::rhs(double tau, const double y[8], double dy[8]) const {
  if (!s_.rhs || s_.rhs(s_.self, tau, y, dy) != 0)
    throw PhysicsError("EDM-TRJ-002", "equations of motion failed at tau = " + std::to_string(tau));
}

void Scenario::laser_field(const double x4[4], double E[3], double B[3]) const {
  s_.laser_field(s_.self, x4, E, B);
}

edm_track Scenario::track(std::uint64_t i) const {
  edm_track t{};
  char err[1024] = {0};
  if (!s_.track || s_.track(s_.self, i, &t, err, sizeof err) != 0)
    rethrow_plugin_error<PhysicsError>("track of electron " + std::to_string(i) + ": ", err, "EDM-TRJ-003");
  return t;
}

double Scenario::weight(std::uint64_t i) const {
  if (!s_.weight) return 1.0;
  const double w = s_.weight(s_.self, i);
  if (!(std::isfinite(w) && w >= 0))
    throw PluginError("EDM-TRJ-050", "weight of electron " + std::to_string(i) + " is " + std::to_string(w) +
                                         ": a macro-particle weight must be finite and >= 0");
  return w;
}

EnsembleKinematics initial_kinematics(const Scenario& scenario) {
  EnsembleKinematics k;
  const std::uint64_t n = scenario.electron_count();
  if (n == 0) return k;
  const int s = scenario.laser_direction();
  double h = 0, gamma = 0, uperp2 = 0, weight = 0;
  for (std::uint64_t i = 0; i < n; ++i) {
    double y[8];
    scenario.initial_state(i, y);
    const double up2 = y[5] * y[5] + y[6] * y[6];
    // h (γ + s u_z) = 1 + u_⊥²: the quotient keeps the digits that γ − s u_z loses for an electron
    // moving fast along the laser.
    h += s * y[7] > 0 ? (1 + up2) / (y[4] + s * y[7]) : y[4] - s * y[7];
    gamma += y[4];
    uperp2 += up2;
    weight += scenario.weight(i);
  }
  k.electrons = n;
  k.laser_direction = s;
  k.light_front_h = h / double(n);
  k.gamma_mean = gamma / double(n);
  k.u_perp2_mean = uperp2 / double(n);
  k.total_weight = weight;
  return k;
}

}  // namespace edm
