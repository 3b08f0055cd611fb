// edm plugins — skeleton placeholder until its module lands (replaced in this session).
#include "commands.hpp"
#include "edm/error.hpp"
namespace edm::app {
int cmd_plugins(const Args&) { throw Error("EDM-APP-000", "edm plugins is not built yet"); }
}  // namespace edm::app
