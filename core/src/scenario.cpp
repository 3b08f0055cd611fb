// Scenario: RAII and error translation over a plugin's C scenario table.
#include <string>

#include "edm/error.hpp"
#include "edm/plugins.hpp"

namespace edm {

Scenario::Scenario(const Plugin& plugin, const Campaign& campaign) {
  char err[1024] = {0};
  if (plugin.descriptor().create(to_handle(campaign), &s_, err, sizeof err) != 0)
    throw PluginError("EDM-PLG-020", "scenario '" + plugin.name() + "' (" + plugin.path().string() +
                                         ") refused the campaign: " + err);
}

Scenario::Scenario(const edm_scenario_v1& created) : s_(created) {}

Scenario::~Scenario() {
  if (s_.destroy) s_.destroy(s_.self);
}

std::uint64_t Scenario::electron_count() const { return s_.electron_count(s_.self); }

void Scenario::initial_state(std::uint64_t i, double y[8]) const {
  char err[1024] = {0};
  if (s_.initial_state(s_.self, i, y, err, sizeof err) != 0)
    throw PhysicsError("EDM-TRJ-001", "initial state of electron " + std::to_string(i) + ": " + err);
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
    throw PhysicsError("EDM-TRJ-003", "track of electron " + std::to_string(i) + ": " + err);
  return t;
}

}  // namespace edm
