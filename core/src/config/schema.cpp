// Values and rules of campaign keys (values.hpp): type conversion of TOML nodes and override text,
// range rules and choices with their messages, TOML text of a value, the did-you-mean. Core keys
// (keys.cpp), plugin keys and the library guards all go through these, so a rule reads the same
// wherever it is applied.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <sstream>

#include "config/values.hpp"
#include "edm/campaign.hpp"
#include "edm/error.hpp"

namespace edm {
namespace config {

namespace {

std::string lower(std::string s) {
  for (auto& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

std::size_t levenshtein(const std::string& a, const std::string& b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

// Shortest text that reads back as the same double ("1", "-1", "0.5", "8e-07").
std::string shortest(double x) {
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, x);
  return std::string(buf, r.ptr);
}

bool parse_number(const std::string& s, double& x) {
  if (s.empty()) return false;
  char* end = nullptr;
  x = std::strtod(s.c_str(), &end);
  return end == s.c_str() + s.size() && std::isfinite(x);
}

// A constraint string (KeySpec::constraint) read once per check.
struct Rule {
  enum Kind { None, Above, AtLeast, NonZero, PlusMinusOne, Between } kind = None;
  double lo = 0, hi = 0;
};

Rule parse_rule(const KeySpec& spec) {
  const std::string& c = spec.constraint;
  Rule r;
  const auto dots = c.find("..");
  if (c.empty()) return r;
  if (c == "!=0") {
    r.kind = Rule::NonZero;
  } else if (c == "+-1") {
    r.kind = Rule::PlusMinusOne;
  } else if (c.rfind(">=", 0) == 0 && parse_number(c.substr(2), r.lo)) {
    r.kind = Rule::AtLeast;
  } else if (c.rfind(">", 0) == 0 && parse_number(c.substr(1), r.lo)) {
    r.kind = Rule::Above;
  } else if (dots != std::string::npos && parse_number(c.substr(0, dots), r.lo) &&
             parse_number(c.substr(dots + 2), r.hi) && r.lo <= r.hi) {
    r.kind = Rule::Between;
  } else {
    throw ConfigError(kBadRule, "[" + spec.section + "] " + spec.key + ": the declared constraint '" + c +
                                    "' is not a rule (>X, >=X, !=0, +-1 or A..B)");
  }
  return r;
}

}  // namespace

[[noreturn]] void fail(const char* id, const std::string& where, const std::string& section,
                       const std::string& key, const std::string& problem) {
  throw ConfigError(id, where + ": [" + section + "]" + (key.empty() ? "" : " " + key) + ": " + problem);
}

std::string join(const std::vector<std::string>& v, const char* sep) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : sep) + s;
  return out;
}

std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates) {
  const std::string m = closest_match(word, candidates);
  return m.empty() ? std::string() : " (did you mean '" + m + "'?)";
}

std::string format_double(double v) {
  std::ostringstream os;
  os.precision(17);
  os << v;
  return os.str();
}

std::string describe(const toml::node& n) {
  std::ostringstream os;
  if (n.is_string()) {
    os << "a string (\"" << *n.value<std::string>() << "\")";
  } else if (n.is_integer()) {
    os << "an integer (" << *n.value<std::int64_t>() << ")";
  } else if (n.is_floating_point()) {
    os << "a float (" << format_double(*n.value<double>()) << ")";
  } else if (n.is_boolean()) {
    os << "a boolean (" << (*n.value<bool>() ? "true" : "false") << ")";
  } else if (n.is_table()) {
    os << "a table";
  } else if (n.is_array()) {
    os << "an array";
  } else {
    os << "a " << n.type();
  }
  return os.str();
}

namespace {

std::string expected(const std::string& type) {
  if (type == "int") return "an integer";
  if (type == "float") return "a number";
  if (type == "bool") return "true or false";
  if (type == "string") return "a string";
  if (type == "int|string") return "an integer or \"auto\"";
  return type;
}

}  // namespace

namespace {

// One part of a rule (a constraint is parts joined by ';', every one must hold).
std::string part_problem(const KeySpec& spec, double x) {
  const Rule r = parse_rule(spec);
  switch (r.kind) {
    case Rule::None:
      return "";
    case Rule::Above:
      return x > r.lo ? "" : "must be > " + shortest(r.lo);
    case Rule::AtLeast:
      return x >= r.lo ? "" : "must be >= " + shortest(r.lo);
    case Rule::NonZero:
      return x != 0 ? "" : "must not be 0";
    case Rule::PlusMinusOne:
      return x == 1 || x == -1 ? "" : "must be +1 or -1";
    case Rule::Between:  // the bound that is broken
      if (x < r.lo) return "must be >= " + shortest(r.lo);
      return x <= r.hi ? "" : "must be <= " + shortest(r.hi);
  }
  return "";
}

}  // namespace

std::string rule_problem(const KeySpec& spec, double x) {
  // A composite rule (">0;1e-11..1e-3": positive, and within a physical range) is checked part by
  // part; the first broken part is reported.
  std::string rest = spec.constraint;
  for (;;) {
    const auto semi = rest.find(';');
    KeySpec part = spec;
    part.constraint = rest.substr(0, semi);
    const std::string problem = part_problem(part, x);
    if (!problem.empty() || semi == std::string::npos) return problem;
    rest = rest.substr(semi + 1);
  }
}

void check_value(const KeySpec& spec, KeyValue& v, const std::string& where) {
  if (spec.type == "int|string" && std::holds_alternative<std::string>(v)) {
    // The only string an int|string key takes is "auto", stored as −1 (campaign.hpp).
    const auto& s = std::get<std::string>(v);
    if (s != "auto")
      fail(kBadChoice, where, spec.section, spec.key,
           "'" + s + "' is not allowed: use an integer or \"auto\"" + did_you_mean(s, {"auto"}));
    v = std::int64_t{-1};
    return;
  }
  if (auto* s = std::get_if<std::string>(&v)) {
    if (!spec.choices.empty() &&
        std::find(spec.choices.begin(), spec.choices.end(), *s) == spec.choices.end())
      fail(kBadChoice, where, spec.section, spec.key,
           "'" + *s + "' is not one of " + join(spec.choices) + did_you_mean(*s, spec.choices));
    return;
  }
  double x = 0;
  std::string shown;
  if (auto* i = std::get_if<std::int64_t>(&v)) {
    x = static_cast<double>(*i);
    shown = std::to_string(*i);
  } else if (auto* d = std::get_if<double>(&v)) {
    x = *d;
    shown = format_double(*d);
    if (!std::isfinite(*d) && !(spec.takes_infinity && *d == std::numeric_limits<double>::infinity()))
      fail(kNotFinite, where, spec.section, spec.key, "got " + shown + "; a finite number is needed");
  } else {
    return;  // bool
  }
  const std::string problem = rule_problem(spec, x);
  if (!problem.empty()) fail(kOutOfRange, where, spec.section, spec.key, problem + ", got " + shown);
}

KeyValue from_node(const KeySpec& spec, const toml::node& n, const std::string& where) {
  const std::string& t = spec.type;
  if ((t == "int" || t == "int|string") && n.is_integer()) return *n.value<std::int64_t>();
  if (t == "float" && (n.is_floating_point() || n.is_integer())) return *n.value<double>();
  if (t == "float" && spec.takes_infinity && n.is_string() && *n.value<std::string>() == "infinity")
    return std::numeric_limits<double>::infinity();
  if (t == "bool" && n.is_boolean()) return *n.value<bool>();
  if ((t == "string" || t == "int|string") && n.is_string()) return *n.value<std::string>();
  fail(kWrongType, where, spec.section, spec.key,
       "expected " + expected(t) + (spec.takes_infinity ? " or \"infinity\"" : "") + ", got " + describe(n));
}

KeyValue from_text(const KeySpec& spec, std::string text, const std::string& where) {
  const std::string& t = spec.type;
  auto bad = [&]() -> KeyValue {
    fail(kWrongType, where, spec.section, spec.key, "expected " + expected(t) + ", got '" + text + "'");
  };
  if (text.size() >= 2 && text.front() == '"' && text.back() == '"') {
    // A quoted value is a string whatever the key's type: `--set run.mode="split"`.
    std::string s = text.substr(1, text.size() - 2);
    if (t == "string" || t == "int|string") return s;
    if (t == "float" && spec.takes_infinity && s == "infinity") return std::numeric_limits<double>::infinity();
    return bad();
  }
  if (t == "string") return text;
  if (t == "int" || t == "int|string") {
    std::string digits = (!text.empty() && text[0] == '+') ? text.substr(1) : text;
    std::int64_t i = 0;
    auto r = std::from_chars(digits.data(), digits.data() + digits.size(), i);
    if (!digits.empty() && r.ec == std::errc() && r.ptr == digits.data() + digits.size()) return i;
    if (t == "int|string" && !text.empty() && !std::isdigit(static_cast<unsigned char>(text[0])) &&
        text[0] != '-' && text[0] != '+')
      return text;
    return bad();
  }
  if (t == "float") {
    if (text.empty()) return bad();
    char* end = nullptr;
    const double d = std::strtod(text.c_str(), &end);
    if (end != text.c_str() + text.size()) return bad();
    // A key that takes infinity takes the word, not a number that overflows to it (1e400).
    const std::string l = lower(text);
    if (spec.takes_infinity && std::isinf(d) && d > 0 && l != "inf" && l != "+inf" && l != "infinity" && l != "+infinity")
      fail(kNotFinite, where, spec.section, spec.key, "got " + format_double(d) + "; a finite number is needed");
    return d;
  }
  if (t == "bool") {
    const std::string l = lower(text);
    if (l == "true" || l == "1" || l == "yes" || l == "on") return true;
    if (l == "false" || l == "0" || l == "no" || l == "off") return false;
    return bad();
  }
  return bad();
}

}  // namespace config

std::string closest_match(const std::string& word, const std::vector<std::string>& candidates) {
  // Case-insensitive edit distance; a suggestion must be within about a third of the word's length
  // (at least 1), so that "nxx" finds "nx" and "wavelenght" finds "wavelength" but "foo" finds
  // nothing among unrelated short keys.
  const std::string w = config::lower(word);
  std::string best;
  std::size_t best_d = static_cast<std::size_t>(-1);
  for (const auto& c : candidates) {
    const std::string lc = config::lower(c);
    const std::size_t d = config::levenshtein(w, lc);
    const std::size_t limit = std::max<std::size_t>(1, std::min(w.size(), lc.size()) / 3 + 1);
    if (d <= limit && d < std::max(w.size(), lc.size()) && d < best_d) {
      best = c;
      best_d = d;
    }
  }
  return best;
}

std::string rule_text(const std::string& c) {
  if (const auto semi = c.find(';'); semi != std::string::npos)
    return rule_text(c.substr(0, semi)) + ", " + rule_text(c.substr(semi + 1));
  if (c == "+-1") return "+1 or -1";
  if (c == "!=0") return "not 0";
  if (c.rfind(">=", 0) == 0) return ">= " + c.substr(2);
  if (c.rfind(">", 0) == 0) return "> " + c.substr(1);
  return c;  // "" or a range A..B
}

std::string toml_text(const KeyValue& value) {
  if (const auto* i = std::get_if<std::int64_t>(&value)) return std::to_string(*i);
  if (const auto* b = std::get_if<bool>(&value)) return *b ? "true" : "false";
  if (const auto* s = std::get_if<std::string>(&value)) {
    // A TOML basic string: quotes, backslashes and control characters escaped.
    std::string out = "\"";
    for (const char ch : *s) {
      const auto u = static_cast<unsigned char>(ch);
      if (ch == '"' || ch == '\\') {
        out += '\\';
        out += ch;
      } else if (u < 0x20 || u == 0x7f) {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\u%04x", u);
        out += buf;
      } else {
        out += ch;
      }
    }
    return out + "\"";
  }
  // A float as the shortest text that reads back exactly, always with a '.' or an exponent so that
  // TOML reads a float ("5.0", "8e-7": the exponent without its leading zeros).
  std::string t = config::shortest(std::get<double>(value));
  const auto e = t.find('e');
  if (e != std::string::npos) {
    std::string mant = t.substr(0, e), exp = t.substr(e + 1);
    const bool neg = !exp.empty() && exp[0] == '-';
    if (!exp.empty() && (exp[0] == '-' || exp[0] == '+')) exp.erase(0, 1);
    exp.erase(0, std::min(exp.find_first_not_of('0'), exp.size() - 1));
    return mant + "e" + (neg ? "-" : "") + exp;
  }
  if (t.find_first_of(".in") == std::string::npos) t += ".0";  // not for inf / nan
  return t;
}

namespace detail {

std::size_t choice_index(const char* const* names, std::size_t n, std::string_view word) {
  std::vector<std::string> all(names, names + n);
  for (std::size_t i = 0; i < n; ++i)
    if (word == names[i]) return i;
  const std::string w(word);
  throw ConfigError(config::kBadChoice,
                    "'" + w + "' is not one of " + config::join(all) + config::did_you_mean(w, all));
}

}  // namespace detail

}  // namespace edm
