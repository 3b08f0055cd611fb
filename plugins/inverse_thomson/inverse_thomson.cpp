// inverse_thomson scenario plugin: an electron beam along +z meets a laser pulse along −z at the
// origin at t = 0 (Compton backscatter). Physics in plugins/common/laser_scenarios.hpp; this file
// exports it through the C ABI and declares the plugin's own key.
#include "../common/laser_scenarios.hpp"

namespace {
const edm_key_spec kKeys[] = {
    {"gamma_minus_one", "float", "", "0.0",
     "γ − 1 of the beam, 0..1e6; when > 0 it replaces electrons.gamma (keeps every digit at low energy)"},
};
}  // namespace

EDM_DEFINE_PLUGIN(edm::scenarios::InverseThomsonScenario, "inverse_thomson", "1.0",
                  "Inverse Thomson: an electron beam along +z meets a laser pulse along -z at t = 0",
                  edm::scenarios::kModels, kKeys, 1)
