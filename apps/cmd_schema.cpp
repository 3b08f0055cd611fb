// edm schema — skeleton placeholder until its module lands (replaced in this session).
#include "commands.hpp"
#include "edm/error.hpp"
namespace edm::app {
int cmd_schema(const Args&) { throw Error("EDM-APP-000", "edm schema is not built yet"); }
}  // namespace edm::app
