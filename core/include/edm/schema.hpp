// The key table: every campaign key with type, unit, default, range or choices, meaning,
// environment name, CLI flag and the Campaign member it sets. Parsing, validation, `edm schema`,
// the environment knobs, `--set`, to_toml (the manifest's [campaign] and replay), the manifest's
// origins and the did-you-mean all walk it; the table itself is core/src/config/keys.cpp.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace edm {

struct Campaign;

// A key's value after type checking. A choice holds its word; an integer key that also takes
// "auto" (accumulator.electron_batch) holds "auto" as that string.
using KeyValue = std::variant<std::int64_t, double, bool, std::string>;

// The text view of a key: what `edm schema` prints and what a scenario plugin declares for its own
// section (plugin keys have no environment name or flag).
struct KeySpec {
  std::string section;               // "screen"
  std::string key;                   // "nx"
  std::string type;                  // "int" | "float" | "string" | "bool" | "int|string"
  std::string unit;                  // "m", "s", "" …
  std::string default_value;         // as TOML text; "" for an optional key (absent by default)
  std::string meaning;               // one line
  std::vector<std::string> choices;  // allowed strings, if an enumeration
  // Range rule checked by validation and shown by `edm schema`: "" (none), ">X", ">=X", "!=0",
  // "+-1", or "A..B" (both ends included). Added after choices so that existing aggregate
  // initialisers keep compiling.
  std::string constraint;
  std::string environment;  // EDM_* variable that overrides the key ("" if none)
  std::string flag;         // `edm run` option(s), space-separated ("device devices"); "" if none
  // A float key that also takes "infinity" (a string in TOML, or TOML's inf), held as +inf
  // (screen.distance: the far field). −inf and NaN stay refused.
  bool takes_infinity = false;
};

// One core key: its text view and access to its member of edm::Campaign.
struct CoreKey {
  KeySpec spec;
  KeyValue initial;                  // the member's default (a default-constructed Campaign)
  bool optional = false;             // the default means "absent" (laser.direction): to_toml leaves it out
  std::vector<std::string> targets;  // an alias (screen.half_width) sets these keys of its section
  std::function<KeyValue(const Campaign&)> get;  // empty for an alias
  // Stores a value that passed validation; ConfigError EDM-CFG-006 "`where`: … out of range" when
  // an integer does not fit the member's type.
  std::function<void(Campaign&, const KeyValue&, const std::string& where)> set;
  std::string full_name() const { return spec.section + "." + spec.key; }
};

// The core keys ([run] [laser] [electrons] [trajectory] [screen] [accumulator]) in table order.
const std::vector<CoreKey>& core_keys();
// The entry of section.key, or nullptr.
const CoreKey* core_key(std::string_view section, std::string_view key);
const CoreKey* core_key(std::string_view full_name);  // "screen.nx"

// The text views of core_keys(), same order.
const std::vector<KeySpec>& core_schema();
// The spec of section.key among the core keys, or nullptr.
const KeySpec* find_core_key(const std::string& section, const std::string& key);
// The core section names in schema order: run, laser, electrons, trajectory, screen, accumulator.
const std::vector<std::string>& core_sections();

// Closest candidate by edit distance ("" if nothing is close): the did-you-mean.
std::string closest_match(const std::string& word, const std::vector<std::string>& candidates);

// Guards of library entry points that receive values not from a campaign (a KernelOptions,
// SolveOptions or section built in code): the table's rule for `key` ("accumulator.newton_iters"),
// so that the rule exists in one place. ConfigError `id` (default: the campaign's EDM-CFG-006 for
// a range, EDM-CFG-007 for a non-finite number, EDM-CFG-008 for a choice) naming the key.
void check_key_value(std::string_view key, double value, const char* id = nullptr);
void check_key_choice(std::string_view key, std::size_t index, const char* id = nullptr);

// A constraint as `edm schema` shows it: ">= 1", "1..64", "+1 or -1", "not 0".
std::string rule_text(const std::string& constraint);
// A value as TOML text: 64, 8e-7, 5.0, true, "auto".
std::string toml_text(const KeyValue& value);

}  // namespace edm
