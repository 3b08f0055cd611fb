// The schema: every campaign key with type, unit, default and meaning — the one list that
// `edm schema`, validation and the did-you-mean read.
#pragma once
#include <string>
#include <vector>

namespace edm {

struct KeySpec {
  std::string section;   // "screen"
  std::string key;       // "nx"
  std::string type;      // "int" | "float" | "string" | "bool" | "int|string"
  std::string unit;      // "m", "s", "" …
  std::string default_value;  // as TOML text
  std::string meaning;   // one line
  std::vector<std::string> choices;  // allowed strings, if an enumeration
  // Range rule checked by validation and shown by `edm schema`: "" (none), ">0", ">=0", ">=1",
  // "!=0", "+-1". Added last so that existing aggregate initialisers keep compiling.
  std::string constraint;
};

// The core keys ([run] [laser] [electrons] [trajectory] [screen] [accumulator]).
const std::vector<KeySpec>& core_schema();

// The spec of section.key among the core keys, or nullptr.
const KeySpec* find_core_key(const std::string& section, const std::string& key);
// The core section names in schema order: run, laser, electrons, trajectory, screen, accumulator.
const std::vector<std::string>& core_sections();

// Closest candidate by edit distance ("" if nothing is close): the did-you-mean.
std::string closest_match(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace edm
