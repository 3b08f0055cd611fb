// Values of campaign keys, shared by the parser (campaign.cpp) and the key table (keys.cpp): a TOML
// node or a text (--set, environment) → KeyValue of the key's type, then the key's choices and
// range rule. One set of rules and messages for core keys, plugin keys and the library guards.
#pragma once
#include <toml++/toml.h>

#include <string>

#include "edm/schema.hpp"

namespace edm::config {

// Error ids (stable: users search for them; never reuse a number for another problem).
inline constexpr const char* kSyntax = "EDM-CFG-001";
inline constexpr const char* kNoFile = "EDM-CFG-002";
inline constexpr const char* kUnknownSection = "EDM-CFG-003";
inline constexpr const char* kUnknownKey = "EDM-CFG-004";
inline constexpr const char* kWrongType = "EDM-CFG-005";
inline constexpr const char* kOutOfRange = "EDM-CFG-006";
inline constexpr const char* kNotFinite = "EDM-CFG-007";
inline constexpr const char* kBadChoice = "EDM-CFG-008";
inline constexpr const char* kMissingData = "EDM-CFG-009";
inline constexpr const char* kBadOverride = "EDM-CFG-010";
inline constexpr const char* kBadScenario = "EDM-CFG-012";
inline constexpr const char* kBadRule = "EDM-CFG-013";  // a key declares a constraint that is no rule
inline constexpr const char* kNotAKey = "EDM-CFG-014";  // a library guard asked for a key the table lacks

// "where: [section] key: problem" as a ConfigError.
[[noreturn]] void fail(const char* id, const std::string& where, const std::string& section,
                       const std::string& key, const std::string& problem);

// What a TOML node is, for "expected X, got Y" messages.
std::string describe(const toml::node& n);
std::string format_double(double v);  // 17 significant digits, for "got …"
std::string join(const std::vector<std::string>& v, const char* sep = ", ");
std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates);

// TOML node → value of the key's type (a float key takes an integer: `distance = 1`).
KeyValue from_node(const KeySpec& spec, const toml::node& n, const std::string& where);
// Text (--set value, environment variable) → value of the key's type.
KeyValue from_text(const KeySpec& spec, std::string text, const std::string& where);
// The key's choices and range rule; an int|string key's "auto" becomes −1 (campaign.hpp).
void check_value(const KeySpec& spec, KeyValue& v, const std::string& where);

// The problem with number `x` under `constraint`, or "" when the rule allows it ("must be >= 1").
std::string rule_problem(const KeySpec& spec, double x);

}  // namespace edm::config
