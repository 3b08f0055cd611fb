// ctest-label: unit
// The error-id registry (core/src/error/ids.def) against the source tree. A scan of core/, apps/,
// plugins/ and cl/ finds every id literal, strips comments, and tells for each throw site the
// family thrown there — directly (throw IoError("EDM-IO-010", …)), through a named constant
// (fail(kOutOfRange, …)), through a helper that takes the id as a parameter (h5::check_stored,
// traced to its definition), or a template argument (rethrow_plugin_error<PhysicsError>). It fails
// on an unregistered id, a stale entry, a duplicate entry, an id thrown at several sites that the
// registry does not mark as shared, and an exit code that is not the family's. A second case runs
// the same scan on a small synthetic tree with one fault of each kind, so that the checks are seen
// to fail. The last case checks `edm explain` and the ids in main's messages through the binary.
#define BOOST_TEST_MODULE error_ids
#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "edm/error.hpp"
#include "edm/sweep.hpp"
#include "test_support.hpp"

#ifndef EDM_SOURCE_ROOT
#error "tests/CMakeLists.txt passes EDM_SOURCE_ROOT, the source tree this test scans"
#endif

namespace fs = std::filesystem;

namespace {

// The exit code of each family, from the classes themselves (not a copy of main's table).
const std::map<std::string, int>& family_exit_codes() {
  static const std::map<std::string, int> m = {
      {"Error", edm::Error("x", "x").exit_code()},
      {"ConfigError", edm::ConfigError("x", "x").exit_code()},
      {"DeviceError", edm::DeviceError("x", "x").exit_code()},
      {"BuildError", edm::BuildError("x", "", "").exit_code()},
      {"IoError", edm::IoError("x", "x").exit_code()},
      {"PluginError", edm::PluginError("x", "x").exit_code()},
      {"PhysicsError", edm::PhysicsError("x", "x").exit_code()},
      {"CellsFailed", edm::CellsFailed("x", "x").exit_code()},
      {"Interrupted", edm::Interrupted("x", "x").exit_code()},
  };
  return m;
}

// ---- The source text -------------------------------------------------------------------------

struct SourceFile {
  std::string rel;                 // path below the root, for messages
  std::string text;                // as read
  std::string code;                // comments blanked (same length, newlines kept)
  std::vector<std::size_t> lines;  // offsets of line starts
  int line_of(std::size_t pos) const {
    return int(std::upper_bound(lines.begin(), lines.end(), pos) - lines.begin());
  }
};

// Length of the string or character literal starting at s[i] (a quote, or R"delim( of a raw one).
std::size_t literal_length(const std::string& s, std::size_t i) {
  if (s[i] == 'R' && i + 1 < s.size() && s[i + 1] == '"') {
    const std::size_t open = s.find('(', i + 2);
    if (open == std::string::npos) return 1;
    const std::string close = ")" + s.substr(i + 2, open - i - 2) + "\"";
    const std::size_t end = s.find(close, open);
    return end == std::string::npos ? s.size() - i : end + close.size() - i;
  }
  const char q = s[i];
  std::size_t j = i + 1;
  while (j < s.size() && s[j] != q && s[j] != '\n') j += s[j] == '\\' ? 2 : 1;
  return std::min(j + 1, s.size()) - i;
}

bool starts_raw_literal(const std::string& s, std::size_t i) {
  return s[i] == 'R' && i + 1 < s.size() && s[i + 1] == '"' &&
         (i == 0 || !(std::isalnum(static_cast<unsigned char>(s[i - 1])) || s[i - 1] == '_'));
}

// Comments become spaces; literals stay. Returns the code and the comments' text (for mentions).
std::string blank_comments(const std::string& s, std::string& comments) {
  std::string out = s;
  comments.assign(s.size(), ' ');
  for (std::size_t i = 0; i < s.size();) {
    if (s[i] == '"' || s[i] == '\'' || starts_raw_literal(s, i)) {
      // A ' between digits is a digit separator (1'000), not a character literal.
      if (s[i] == '\'' && i > 0 && std::isdigit(static_cast<unsigned char>(s[i - 1]))) {
        ++i;
        continue;
      }
      i += literal_length(s, i);
    } else if (s.compare(i, 2, "//") == 0) {
      const std::size_t end = std::min(s.find('\n', i), s.size());
      for (std::size_t k = i; k < end; ++k) comments[k] = s[k], out[k] = ' ';
      i = end;
    } else if (s.compare(i, 2, "/*") == 0) {
      const std::size_t close = s.find("*/", i + 2);
      const std::size_t end = close == std::string::npos ? s.size() : close + 2;
      for (std::size_t k = i; k < end; ++k)
        if (s[k] != '\n') comments[k] = s[k], out[k] = ' ';
      i = end;
    } else {
      ++i;
    }
  }
  return out;
}

// ---- Where an expression sits --------------------------------------------------------------

bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// The innermost bracket open at `pos` and the argument index of `pos` in it.
struct Frame {
  char opener = 0;
  std::size_t open = 0;
  int arg = 0;
};
std::optional<Frame> enclosing(const std::string& code, std::size_t pos) {
  std::vector<Frame> stack;
  for (std::size_t i = 0; i < pos && i < code.size();) {
    const char c = code[i];
    if (c == '"' || c == '\'' || starts_raw_literal(code, i)) {
      if (c == '\'' && i > 0 && std::isdigit(static_cast<unsigned char>(code[i - 1]))) {
        ++i;
        continue;
      }
      i += literal_length(code, i);
      continue;
    }
    if (c == '(' || c == '{' || c == '[') stack.push_back({c, i, 0});
    if ((c == ')' || c == '}' || c == ']') && !stack.empty()) stack.pop_back();
    if (c == ',' && !stack.empty()) ++stack.back().arg;
    // A statement ends the arguments of no call, but it does end a braced initialiser's element.
    ++i;
  }
  if (stack.empty()) return std::nullopt;
  return stack.back();
}

// The name called by the bracket at `open` ("h5::check_stored" → check_stored) and its template
// arguments, if any ("rethrow_plugin_error<PhysicsError>(" → "PhysicsError").
struct Callee {
  std::string name, template_args;
};
Callee callee_before(const std::string& code, std::size_t open) {
  Callee c;
  std::size_t i = open;
  auto skip_space = [&] {
    while (i > 0 && std::isspace(static_cast<unsigned char>(code[i - 1]))) --i;
  };
  skip_space();
  if (i > 0 && code[i - 1] == '>') {
    int depth = 0;
    std::size_t end = i - 1;
    while (i > 0) {
      --i;
      if (code[i] == '>') ++depth;
      if (code[i] == '<' && --depth == 0) break;
    }
    c.template_args = code.substr(i + 1, end - i - 1);
    skip_space();
  }
  std::size_t end = i;
  while (i > 0 && ident_char(code[i - 1])) --i;
  c.name = code.substr(i, end - i);
  return c;
}

// What precedes `pos` once spaces are skipped: the two characters before it.
std::string before(const std::string& code, std::size_t pos) {
  while (pos > 0 && std::isspace(static_cast<unsigned char>(code[pos - 1]))) --pos;
  return code.substr(pos >= 2 ? pos - 2 : 0, pos >= 2 ? 2 : pos);
}
std::string after(const std::string& code, std::size_t pos) {
  while (pos < code.size() && std::isspace(static_cast<unsigned char>(code[pos]))) ++pos;
  return code.substr(pos, 2);
}

// ---- The scan ------------------------------------------------------------------------------

struct Site {
  std::string id, where;           // where: file:line
  std::set<std::string> families;  // the families thrown with this id here
  std::string unresolved;          // why no family could be told (empty when one was)
};

struct Scan {
  std::vector<SourceFile> files;
  std::set<std::string> families;                    // Error and every class derived from it, as declared
  std::vector<Site> sites;                           // throw sites: one per literal (a named constant is one)
  std::multimap<std::string, std::string> mentions;  // id → file:line, in messages or comments
  std::vector<std::string> faults;                   // things the scan cannot check
};

class Scanner {
 public:
  explicit Scanner(Scan& s) : s_(s) {}

  // The families thrown with the parameter `arg` of a function `name` (a helper taking the id).
  std::set<std::string> helper_families(const std::string& name, int arg, const SourceFile& from, int depth) {
    static const std::set<std::string> keywords = {
        "if",    "while",    "for",           "switch",  "return",   "sizeof",
        "catch", "decltype", "static_assert", "alignof", "noexcept", "throw"};
    std::set<std::string> out;
    if (depth > 4 || name.empty() || keywords.count(name)) return out;
    // Definitions in the calling file first: helpers are usually local (several files have a fail()).
    for (int pass = 0; pass < 2 && out.empty(); ++pass)
      for (const auto& f : s_.files)
        if ((pass == 0) == (&f == &from)) definitions(name, arg, f, depth, out);
    return out;
  }

  // The families of the bracket enclosing `pos` in `f`, or why none can be told.
  std::set<std::string> families_at(const SourceFile& f, std::size_t pos, std::string& why, int depth = 0) {
    const auto frame = enclosing(f.code, pos);
    if (!frame) {
      why = "not an argument of a call";
      return {};
    }
    const Callee c = callee_before(f.code, frame->open);
    if (s_.families.count(c.name)) return {c.name};
    // A conversion in between (std::string("EDM-…"), std::move(id)): the call around it decides.
    static const std::set<std::string> conversions = {"string", "string_view", "move", "forward"};
    if (conversions.count(c.name)) return families_at(f, frame->open - c.name.size(), why, depth);
    for (const auto& fam : s_.families)
      if (std::regex_search(c.template_args, std::regex("\\b" + fam + "\\b"))) return {fam};
    auto out = helper_families(c.name, frame->arg, f, depth);
    if (out.empty())
      why = c.name.empty() ? "not an argument of a named call"
                           : "argument " + std::to_string(frame->arg) + " of " + c.name +
                                 "(), whose definition throws no edm::Error family with it";
    return out;
  }

  void scan_file(const SourceFile& f) {
    static const std::regex any_id(R"(EDM-[A-Z0-9]+-[0-9]+)");
    static const std::regex bare_prefix(R"("EDM-[A-Z0-9]+-")");
    for (auto it = std::sregex_iterator(f.code.begin(), f.code.end(), bare_prefix);
         it != std::sregex_iterator(); ++it)
      s_.faults.push_back(where(f, it->position()) + ": an id put together at run time (" + it->str() +
                          "…) cannot be checked: write the whole id");
    for (auto it = std::sregex_iterator(f.code.begin(), f.code.end(), any_id); it != std::sregex_iterator();
         ++it) {
      const std::size_t pos = it->position(), len = it->length();
      const bool whole =
          pos > 0 && f.code[pos - 1] == '"' && pos + len < f.code.size() && f.code[pos + len] == '"';
      if (!whole) {
        s_.mentions.emplace(it->str(), where(f, pos));
        continue;
      }
      classify(f, it->str(), pos - 1, len + 2);
    }
    // Ids cited in comments must exist too (they are not sites).
    std::string comments;
    blank_comments(f.text, comments);
    for (auto it = std::sregex_iterator(comments.begin(), comments.end(), any_id);
         it != std::sregex_iterator(); ++it)
      s_.mentions.emplace(it->str(), where(f, it->position()));
  }

 private:
  static std::string where(const SourceFile& f, std::size_t pos) {
    return f.rel + ":" + std::to_string(f.line_of(pos));
  }

  // One whole literal "EDM-…" at [lit, lit + n).
  void classify(const SourceFile& f, const std::string& id, std::size_t lit, std::size_t n) {
    const std::string b = before(f.code, lit), a = after(f.code, lit + n);
    if (b == "==" || b == "!=" || a == "==" || a == "!=") {  // e.id() == "EDM-TRJ-011": a test, no site
      s_.mentions.emplace(id, where(f, lit));
      return;
    }
    Site site{id, where(f, lit), {}, ""};
    if (auto name = constant_name(f.code, lit)) {
      // A named id (constexpr const char* kOutOfRange = "EDM-CFG-006"; or a #define): one site,
      // thrown wherever the name is used.
      // Uses in the defining file; a name defined in a header and used only elsewhere, in the others.
      const std::regex use("\\b" + *name + "\\b");
      int uses = 0;
      for (int pass = 0; pass < 2 && uses == 0; ++pass)
        for (const auto& g : s_.files) {
          if ((pass == 0) != (&g == &f)) continue;
          for (auto it = std::sregex_iterator(g.code.begin(), g.code.end(), use);
               it != std::sregex_iterator(); ++it) {
            const std::size_t p = it->position();
            if (&g == &f && p < lit && lit - p < 200 && f.code.find(';', p) > lit)
              continue;  // the definition
            ++uses;
            std::string why;
            auto fams = families_at(g, p, why);
            if (fams.empty()) site.unresolved = "the use of " + *name + " at " + where(g, p) + " is " + why;
            site.families.insert(fams.begin(), fams.end());
          }
        }
      if (uses == 0) site.unresolved = *name + " is never used";
    } else {
      site.families = families_at(f, lit, site.unresolved);
    }
    if (!site.families.empty() && site.unresolved.empty()) site.unresolved.clear();
    s_.sites.push_back(site);
  }

  // `NAME = "EDM-…"` or `#define NAME "EDM-…"` outside any call: the name.
  static std::optional<std::string> constant_name(const std::string& code, std::size_t lit) {
    std::size_t i = lit;
    while (i > 0 && std::isspace(static_cast<unsigned char>(code[i - 1])) && code[i - 1] != '\n') --i;
    const bool define = [&] {
      const std::size_t bol = code.rfind('\n', i ? i - 1 : 0);
      const std::string line =
          code.substr(bol == std::string::npos ? 0 : bol + 1, i - (bol == std::string::npos ? 0 : bol + 1));
      return std::regex_match(line, std::regex(R"(\s*#\s*define\s+\w+\s*)"));
    }();
    if (!define) {
      if (i == 0 || code[i - 1] != '=' ||
          (i >= 2 && std::string("=!<>").find(code[i - 2]) != std::string::npos))
        return std::nullopt;
      --i;
      while (i > 0 && std::isspace(static_cast<unsigned char>(code[i - 1]))) --i;
    }
    std::size_t end = i;
    while (i > 0 && ident_char(code[i - 1])) --i;
    if (i == end) return std::nullopt;
    return code.substr(i, end - i);
  }

  // Definitions of `name` in `f`: a parameter list followed by a body. Adds the families thrown
  // with parameter `arg`, following it into further helpers.
  void definitions(const std::string& name, int arg, const SourceFile& f, int depth,
                   std::set<std::string>& out) {
    const std::regex def("(^|[^.\\w>])" + name + "\\s*\\(");
    for (auto it = std::sregex_iterator(f.code.begin(), f.code.end(), def); it != std::sregex_iterator();
         ++it) {
      const std::size_t open = it->position() + it->length() - 1;
      const std::size_t close = matching(f.code, open);
      if (close == std::string::npos) continue;
      std::size_t j = close + 1;
      while (j < f.code.size() &&
             (ident_char(f.code[j]) || std::isspace(static_cast<unsigned char>(f.code[j])) ||
              std::string(":<>*&-,").find(f.code[j]) != std::string::npos))
        ++j;
      if (j >= f.code.size() || f.code[j] != '{') continue;
      const auto params = split_params(f.code.substr(open + 1, close - open - 1));
      if (arg >= int(params.size())) continue;
      const std::string p = param_name(params[std::size_t(arg)]);
      if (p.empty()) continue;
      const std::size_t body_end = matching(f.code, j);
      const std::regex use("\\b" + p + "\\b");
      for (auto u = std::sregex_iterator(f.code.begin() + long(j), f.code.begin() + long(body_end), use);
           u != std::sregex_iterator(); ++u) {
        std::string why;
        auto fams = families_at(f, j + std::size_t(u->position()), why, depth + 1);
        out.insert(fams.begin(), fams.end());
      }
    }
  }

  static std::size_t matching(const std::string& code, std::size_t open) {
    const char o = code[open], c = o == '(' ? ')' : o == '{' ? '}' : ']';
    int depth = 0;
    for (std::size_t i = open; i < code.size();) {
      if (code[i] == '"' ||
          (code[i] == '\'' && !(i && std::isdigit(static_cast<unsigned char>(code[i - 1])))) ||
          starts_raw_literal(code, i)) {
        i += literal_length(code, i);
        continue;
      }
      if (code[i] == o) ++depth;
      if (code[i] == c && --depth == 0) return i;
      ++i;
    }
    return std::string::npos;
  }

  static std::vector<std::string> split_params(const std::string& s) {
    std::vector<std::string> out(1);
    int depth = 0;
    for (char c : s) {
      if (c == '(' || c == '<' || c == '[' || c == '{') ++depth;
      if (c == ')' || c == '>' || c == ']' || c == '}') --depth;
      if (c == ',' && depth == 0)
        out.emplace_back();
      else
        out.back() += c;
    }
    return out;
  }

  // "const std::string& id = {}" → "id".
  static std::string param_name(std::string p) {
    int depth = 0;
    for (std::size_t i = 0; i < p.size(); ++i) {
      if (p[i] == '<' || p[i] == '(') ++depth;
      if (p[i] == '>' || p[i] == ')') --depth;
      if (p[i] == '=' && depth == 0) {
        p.resize(i);
        break;
      }
    }
    while (!p.empty() && !ident_char(p.back())) p.pop_back();
    std::size_t i = p.size();
    while (i > 0 && ident_char(p[i - 1])) --i;
    // A declaration has a type before the name ("const char* id"); a call's argument ("!id") has not.
    const std::string n = p.substr(i);
    const bool declared =
        i > 0 && (std::isspace(static_cast<unsigned char>(p[i - 1])) || p[i - 1] == '*' || p[i - 1] == '&');
    return (n.empty() || std::isdigit(static_cast<unsigned char>(n[0])) || !declared) ? std::string() : n;
  }

  Scan& s_;
};

bool scanned_extension(const fs::path& p) {
  static const std::set<std::string> ext = {".cpp", ".cc", ".c", ".h", ".hpp", ".cl", ".inc", ".def", ".py"};
  return ext.count(p.extension().string()) > 0;
}

// Scans `dirs` below `root` (those that exist); `registry` (relative) is the table, not a use.
Scan scan_tree(const fs::path& root, const std::vector<std::string>& dirs, const std::string& registry) {
  Scan s;
  for (const auto& d : dirs) {
    if (!fs::is_directory(root / d)) continue;
    std::vector<fs::path> paths;
    for (const auto& e : fs::recursive_directory_iterator(root / d))
      if (e.is_regular_file() && scanned_extension(e.path())) paths.push_back(e.path());
    std::sort(paths.begin(), paths.end());
    for (const auto& p : paths) {
      const std::string rel = fs::relative(p, root).generic_string();
      if (rel == registry) continue;
      std::ifstream in(p, std::ios::binary);
      std::stringstream ss;
      ss << in.rdbuf();
      SourceFile f{rel, ss.str(), "", {0}};
      std::string comments;
      f.code = blank_comments(f.text, comments);
      for (std::size_t i = 0; i < f.text.size(); ++i)
        if (f.text[i] == '\n') f.lines.push_back(i + 1);
      s.files.push_back(std::move(f));
    }
  }
  // The families: Error and every class derived from one of them, wherever it is declared.
  s.families = {"Error"};
  const std::regex derived(R"(class\s+(\w+)\s*(?:final\s*)?:\s*public\s+(?:edm::)?(\w+))");
  for (bool grew = true; grew;) {
    grew = false;
    for (const auto& f : s.files)
      for (auto it = std::sregex_iterator(f.code.begin(), f.code.end(), derived);
           it != std::sregex_iterator(); ++it)
        if (s.families.count((*it)[2].str()) && s.families.insert((*it)[1].str()).second) grew = true;
  }
  Scanner scanner(s);
  for (const auto& f : s.files) scanner.scan_file(f);
  return s;
}

// Every way the registry and the tree disagree, one line each.
std::vector<std::string> check(const Scan& s, const std::vector<edm::ErrorIdInfo>& registry,
                               const std::map<std::string, int>& family_exit) {
  std::vector<std::string> bad = s.faults;
  std::map<std::string, const edm::ErrorIdInfo*> reg;
  const std::regex id_form(R"(EDM-[A-Z]+-[0-9]{3})");
  std::string previous;
  std::set<int> codes;
  for (const auto& [f, code] : family_exit) codes.insert(code);
  for (const auto& e : registry) {
    const std::string id(e.id);
    if (!reg.emplace(id, &e).second) bad.push_back(id + ": registered twice");
    if (!std::regex_match(id, id_form)) bad.push_back(id + ": not of the form EDM-XXX-NNN");
    if (!previous.empty() && id <= previous)
      bad.push_back(id + ": registered after " + previous + " (keep ids ascending)");
    previous = id;
    if (!codes.count(e.exit_code))
      bad.push_back(id + ": exit code " + std::to_string(e.exit_code) + " is no family's");
    for (auto text : {e.meaning, e.action})
      if (text.empty() || text.find('\n') != std::string_view::npos)
        bad.push_back(id + ": meaning and what to do must be one non-empty line each");
  }
  for (const auto& f : s.families)
    if (!family_exit.count(f))
      bad.push_back("error family " + f + " is not known to this test: add its exit code");
  std::map<std::string, std::vector<const Site*>> by_id;
  for (const auto& site : s.sites) by_id[site.id].push_back(&site);
  for (const auto& site : s.sites) {
    const auto r = reg.find(site.id);
    if (r == reg.end()) {
      bad.push_back(site.where + ": " + site.id + " is not registered (core/src/error/ids.def)");
      continue;
    }
    if (!site.unresolved.empty())
      bad.push_back(site.where + ": cannot tell the family thrown with " + site.id + ": " + site.unresolved);
    for (const auto& fam : site.families) {
      const auto code = family_exit.find(fam);
      if (code != family_exit.end() && code->second != r->second->exit_code)
        bad.push_back(site.where + ": " + site.id + " is thrown as " + fam + " (exit " +
                      std::to_string(code->second) + ") but registered with exit " +
                      std::to_string(r->second->exit_code));
    }
  }
  for (const auto& [id, where] : s.mentions)
    if (!reg.count(id)) bad.push_back(where + ": " + id + " is mentioned but not registered");
  for (const auto& [id, e] : reg) {
    const auto it = by_id.find(id);
    const std::size_t n = it == by_id.end() ? 0 : it->second.size();
    if (n == 0) bad.push_back(id + ": registered but thrown nowhere (stale entry)");
    if (n > 1 && !e->shared) {
      std::string at;
      for (const auto* site : it->second) at += " " + site->where;
      bad.push_back(id + ": thrown at " + std::to_string(n) + " sites (" + at.substr(1) +
                    "): give each problem its own id, or mark the entry shared if it is one problem");
    }
    if (n == 1 && e->shared)
      bad.push_back(id + ": marked shared but thrown at one site (" + it->second[0]->where + ")");
  }
  return bad;
}

std::vector<edm::ErrorIdInfo> real_registry() {
  const auto ids = edm::error_ids();
  return {ids.begin(), ids.end()};
}

bool any_contains(const std::vector<std::string>& v, const std::string& a, const std::string& b = "") {
  return std::any_of(v.begin(), v.end(), [&](const std::string& s) {
    return s.find(a) != std::string::npos && s.find(b) != std::string::npos;
  });
}

void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

}  // namespace

BOOST_AUTO_TEST_CASE(every_id_in_the_tree_is_registered_once_with_its_family_exit_code) {
  const Scan s = scan_tree(EDM_SOURCE_ROOT, {"core", "apps", "plugins", "cl"}, "core/src/error/ids.def");
  // The scan saw the tree: a few hundred files would be wrong, a handful of sites too.
  BOOST_TEST_REQUIRE(s.files.size() > 50u);
  BOOST_TEST_REQUIRE(s.sites.size() > 150u);
  BOOST_TEST(s.families.size() == family_exit_codes().size());
  const auto bad = check(s, real_registry(), family_exit_codes());
  for (const auto& b : bad) BOOST_ERROR(b);
  BOOST_TEST_MESSAGE(s.sites.size() << " throw sites of " << real_registry().size() << " registered ids in "
                                    << s.files.size() << " files");
  // The helpers the scan must see through, each at a real site.
  const auto family_of = [&](const std::string& id) {
    std::set<std::string> f;
    for (const auto& site : s.sites)
      if (site.id == id) f.insert(site.families.begin(), site.families.end());
    return f;
  };
  // h5::check_stored(…, id, …), kOutOfRange through fail(), rethrow_plugin_error<…>, BuildError's base:
  BOOST_TEST((family_of("EDM-IO-054") == std::set<std::string>{"IoError"}));
  BOOST_TEST((family_of("EDM-CFG-006") == std::set<std::string>{"ConfigError"}));
  BOOST_TEST((family_of("EDM-TRJ-001") == std::set<std::string>{"PhysicsError"}));
  BOOST_TEST((family_of("EDM-CL-010") == std::set<std::string>{"DeviceError"}));
}

BOOST_AUTO_TEST_CASE(registry_lookup) {
  const auto ids = edm::error_ids();
  BOOST_TEST_REQUIRE(!ids.empty());
  for (const auto& e : ids) {
    const auto* found = edm::find_error_id(e.id);
    BOOST_TEST_REQUIRE(found != nullptr);
    BOOST_TEST(found->id == e.id);
    BOOST_TEST(edm::exit_code_meaning(e.exit_code) != "unknown exit code");
  }
  BOOST_TEST(edm::find_error_id("EDM-NOPE-999") == nullptr);
  BOOST_TEST(edm::find_error_id("") == nullptr);
  BOOST_TEST(edm::find_error_id("EDM-CFG-00") == nullptr);
  BOOST_TEST(edm::find_error_id("EDM-CFG-006")->exit_code == 2);
}

// The checks fail where they should: one fault of each kind in a small tree of its own.
BOOST_AUTO_TEST_CASE(the_checks_catch_each_kind_of_fault) {
  const fs::path root = edm::test::temp_dir("error_ids");
  write(root / "core/include/edm/error.hpp",
        "class Error {};\nclass ConfigError : public Error {};\nclass IoError : public Error {};\n"
        "class PhysicsError : public Error {};\n");
  write(root / "core/src/a.cpp",
        "// A comment citing EDM-AAA-404, which does not exist.\n"
        "void f() {\n"
        "  throw ConfigError(\"EDM-AAA-001\", \"direct\");\n"
        "  throw IoError(\"EDM-AAA-002\", \"registered with exit 2: wrong\");\n"
        "  throw ConfigError(\"EDM-AAA-003\", \"unregistered\");\n"
        "  throw ConfigError(\"EDM-AAA-004\", \"first problem\");\n"
        "  throw ConfigError(\"EDM-AAA-004\", \"another problem, same id\");\n"
        "  throw ConfigError(\"EDM-AAA-005\", \"one problem\");\n"
        "  throw ConfigError(\"EDM-AAA-005\", \"the same problem elsewhere\");\n"
        "  if (e.id() == \"EDM-AAA-001\") return;\n"
        "  std::string s = \"EDM-AAA-\" + std::to_string(7);\n"
        "}\n");
  write(root / "core/src/ids.hpp", "inline constexpr const char* kShared = \"EDM-AAA-015\";\n");
  write(root / "core/src/user.cpp",
        "void h() { throw PhysicsError(kShared, \"a constant from a header\"); }\n");
  write(root / "core/src/helpers.cpp",
        "namespace {\n"
        "constexpr const char* kNamed = \"EDM-AAA-010\";\n"
        "[[noreturn]] void io_fail(int x, const char* id = nullptr) { throw IoError(id, \"x\"); }\n"
        "void pass_on(const std::string& what, const char* which) { io_fail(1, which); }\n"
        "template <class F> void rethrow(const char* id) { throw F(id, \"\"); }\n"
        "}\n"
        "void g() {\n"
        "  fail(kNamed, \"the named id through fail()\");\n"
        "  io_fail(2, \"EDM-AAA-011\");\n"
        "  pass_on(\"two helpers deep\", \"EDM-AAA-012\");\n"
        "  rethrow<PhysicsError>(\"EDM-AAA-013\");\n"
        "  mystery(\"EDM-AAA-014\");\n"
        "}\n"
        "[[noreturn]] void fail(const char* id, const std::string& m) { throw ConfigError(id, m); }\n");
  const std::vector<edm::ErrorIdInfo> reg = {
      {"EDM-AAA-001", 2, false, "m", "a"}, {"EDM-AAA-002", 2, false, "m", "a"},
      {"EDM-AAA-004", 2, false, "m", "a"}, {"EDM-AAA-005", 2, true, "m", "a"},
      {"EDM-AAA-006", 2, false, "m", "a"}, {"EDM-AAA-006", 2, false, "m", "a"},
      {"EDM-AAA-008", 2, true, "m", "a"},  {"EDM-AAA-010", 2, false, "m", "a"},
      {"EDM-AAA-011", 4, false, "m", "a"}, {"EDM-AAA-012", 4, false, "m", "a"},
      {"EDM-AAA-013", 2, false, "m", "a"}, {"EDM-AAA-014", 2, false, "m", "a"},
      {"EDM-AAA-015", 2, false, "m", "a"},
  };
  const std::map<std::string, int> exits = {
      {"Error", 1}, {"ConfigError", 2}, {"IoError", 4}, {"PhysicsError", 6}};
  const Scan s = scan_tree(root, {"core", "apps", "cl"}, "core/src/error/ids.def");
  const auto bad = check(s, reg, exits);
  for (const auto& b : bad) BOOST_TEST_MESSAGE("caught: " << b);
  BOOST_TEST(!any_contains(bad, "EDM-AAA-001"));  // direct, registered, one site; the == is no site
  BOOST_TEST(any_contains(bad, "core/src/a.cpp:4",
                          "EDM-AAA-002 is thrown as IoError (exit 4) but registered with exit 2"));
  BOOST_TEST(any_contains(bad, "core/src/a.cpp:5", "EDM-AAA-003 is not registered"));
  BOOST_TEST(any_contains(bad, "EDM-AAA-004: thrown at 2 sites"));
  BOOST_TEST(!any_contains(bad, "EDM-AAA-005"));  // shared: the same problem at two sites
  BOOST_TEST(any_contains(bad, "EDM-AAA-006: registered twice"));
  BOOST_TEST(any_contains(bad, "EDM-AAA-008: registered but thrown nowhere"));
  BOOST_TEST(any_contains(bad, "core/src/a.cpp:1", "EDM-AAA-404 is mentioned but not registered"));
  BOOST_TEST(any_contains(bad, "core/src/a.cpp:11", "put together at run time"));
  BOOST_TEST(!any_contains(bad, "EDM-AAA-010"));  // constant → fail() → ConfigError, exit 2
  BOOST_TEST(!any_contains(bad, "EDM-AAA-011"));  // io_fail(…, id) → IoError, exit 4
  BOOST_TEST(!any_contains(bad, "EDM-AAA-012"));  // pass_on → io_fail → IoError
  BOOST_TEST(any_contains(bad, "EDM-AAA-013 is thrown as PhysicsError (exit 6)"));  // template argument
  BOOST_TEST(any_contains(bad, "cannot tell the family thrown with EDM-AAA-014", "mystery()"));
  BOOST_TEST(any_contains(bad, "core/src/ids.hpp:1", "EDM-AAA-015 is thrown as PhysicsError (exit 6)"));
  BOOST_TEST(any_contains(bad, "error family", "not known to this test") == false);
}

// `edm explain` and main's messages, through the binary.
BOOST_AUTO_TEST_CASE(edm_explain_and_error_messages) {
  const std::string edm = edm::test::edm_binary().string();
  const auto one = edm::test::run_command(edm + " explain EDM-CFG-006");
  BOOST_TEST(one.exit_code == 0, one.output);
  const auto* e = edm::find_error_id("EDM-CFG-006");
  BOOST_TEST_REQUIRE(e != nullptr);
  for (const std::string& part :
       {std::string("EDM-CFG-006"), std::string("exit 2"), std::string(e->meaning), std::string(e->action)})
    BOOST_TEST(one.output.find(part) != std::string::npos, "lacks '" << part << "': " << one.output);
  const auto lower = edm::test::run_command(edm + " explain cfg-006");
  BOOST_TEST(lower.exit_code == 0);
  BOOST_TEST(lower.output == one.output);

  const auto unknown = edm::test::run_command(edm + " explain EDM-CFG-999");
  BOOST_TEST(unknown.exit_code == 2, unknown.output);
  BOOST_TEST(
      unknown.output.find("edm: error [EDM-CLI-005]: unknown error id 'EDM-CFG-999'") != std::string::npos,
      unknown.output);

  const auto all = edm::test::run_command(edm + " explain");
  BOOST_TEST(all.exit_code == 0);
  for (const auto& id : edm::error_ids())
    BOOST_TEST(all.output.find("\n" + std::string(id.id) + " ") != std::string::npos, "list lacks " << id.id);

  // main: every failure has an id and points at edm explain.
  struct Case {
    std::string args, id;
    int exit_code;
  } cases[] = {
      {"no-such-command", "EDM-CLI-004", 2},
      {"info --no-such-option", "EDM-CLI-001", 2},
      {"run /nonexistent/campaign.toml", "EDM-CFG-002", 2},
  };
  for (const auto& c : cases) {
    const auto r = edm::test::run_command(edm + " " + c.args);
    BOOST_TEST(r.exit_code == c.exit_code, c.args << ": " << r.output);
    BOOST_TEST(r.output.find("edm: error [" + c.id + "]: ") != std::string::npos, c.args << ": " << r.output);
    BOOST_TEST(r.output.find("(edm explain " + c.id + ": ") != std::string::npos, c.args << ": " << r.output);
  }
}
