// thomson scenario plugin: electrons (at rest by default) in the focal plane of a laser along +z.
// The physics lives in plugins/common/laser_scenarios.hpp (shared with inverse_thomson and built
// directly by the physics tests); this file only exports it through the C ABI.
#include "../common/laser_scenarios.hpp"

EDM_DEFINE_PLUGIN(edm::scenarios::ThomsonScenario, "thomson", "1.0",
                  "Thomson scattering: electrons in the focal plane of a laser pulse along +z",
                  edm::scenarios::kModels, nullptr, 0)
