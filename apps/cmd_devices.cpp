// edm devices — skeleton placeholder until its module lands (replaced in this session).
#include "commands.hpp"
#include "edm/error.hpp"
namespace edm::app {
int cmd_devices(const Args&) { throw Error("EDM-APP-000", "edm devices is not built yet"); }
}  // namespace edm::app
