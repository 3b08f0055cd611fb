// edm run — skeleton placeholder until its module lands (replaced in this session).
#include "commands.hpp"
#include "edm/error.hpp"
namespace edm::app {
int cmd_run(const Args&) { throw Error("EDM-APP-000", "edm run is not built yet"); }
}  // namespace edm::app
