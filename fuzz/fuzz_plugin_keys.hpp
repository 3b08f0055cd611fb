// Shared by the campaign and manifest fuzz targets: the keys of a scenario section as a plugin
// declares them (inverse_thomson's key plus one of each other type), so that the plugin-section
// paths of parse_campaign (defaults, overrides, type checks) are fuzzed without loading a plugin.
#pragma once
#include <vector>

#include "edm/schema.hpp"

namespace edm::fuzz {

inline const std::vector<edm::KeySpec>& plugin_keys() {
  static const std::vector<edm::KeySpec> keys = {
      {"", "gamma_minus_one", "float", "", "0.0", "γ − 1", {}, ">=0"},
      {"", "harmonics", "int", "", "3", "count", {}, ">=1"},
      {"", "shape", "string", "", "\"flat\"", "choice", {"flat", "round"}, ""},
      {"", "verbose", "bool", "", "false", "flag", {}, ""},
      {"", "limit", "int|string", "", "\"auto\"", "int or auto", {}, ""},
  };
  return keys;
}

}  // namespace edm::fuzz
