// What identifies a sweep's campaign and a cell's run (internal to core/src/sweep).
#pragma once
#include <toml++/toml.h>

#include "edm/campaign.hpp"

namespace edm::detail {

// The effective campaign's table without run.output (the folder may move; `edm resume` names it as
// typed) and accumulator.devices (another machine of one campaign): the campaign fingerprint of a
// sweep folder and the test of whether a complete run in a cell's folder is that cell's both use
// it, so that they cannot drift apart.
inline toml::table campaign_identity(const Campaign& c) {
  toml::table t = c.to_toml();
  if (toml::table* run = t["run"].as_table()) run->erase("output");
  if (toml::table* acc = t["accumulator"].as_table()) acc->erase("devices");
  return t;
}

}  // namespace edm::detail
