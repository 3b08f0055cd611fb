// For the tests of campaigns, the key table, plugins and sweeps: how Boost.Test prints edm's enums
// in a failed comparison, and a scope in which none of the key table's environment names is set.
#pragma once
#include <cstdlib>
#include <ostream>

#include "edm/campaign.hpp"
#include "edm/schema.hpp"
#include "edm/sweep.hpp"

namespace edm {
// Boost.Test prints the values of a failed comparison.
inline std::ostream& operator<<(std::ostream& os, Origin o) { return os << origin_name(o); }
inline std::ostream& operator<<(std::ostream& os, CellState s) { return os << cell_state_name(s); }
}  // namespace edm

namespace edm::test {

// Clears the EDM_* knobs (every environment name of the key table) on entry and on exit, so that
// the machine's environment cannot leak into a test, nor a test's into the next.
struct CleanEnvironment {
  static void clear() {
    for (const auto& k : edm::core_keys())
      if (!k.spec.environment.empty()) ::unsetenv(k.spec.environment.c_str());
  }
  CleanEnvironment() { clear(); }
  ~CleanEnvironment() { clear(); }
};

}  // namespace edm::test
