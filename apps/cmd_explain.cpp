// `edm explain [ID]`: what an error id means, its exit code and what to do about it, printed from
// the registry (core/src/error/ids.def, error.hpp), the same table the error-id test checks against
// the throw sites. Without an id it lists every id, one line each.
#include <algorithm>
#include <cctype>
#include <iostream>
#include <vector>

#include "commands.hpp"
#include "edm/error.hpp"
#include "edm/schema.hpp"
#include "options.hpp"

namespace edm::app {

namespace {

// "cfg-006" and "EDM-CFG-006" name the same id: people type what they remember.
std::string normalise(std::string id) {
  std::transform(id.begin(), id.end(), id.begin(), [](unsigned char c) { return char(std::toupper(c)); });
  if (id.rfind("EDM-", 0) != 0) id = "EDM-" + id;
  return id;
}

void print_one(const ErrorIdInfo& e) {
  std::cout << e.id << "  (exit " << e.exit_code << ": " << exit_code_meaning(e.exit_code) << ")\n"
            << "  What it means: " << e.meaning << "\n"
            << "  What to do:    " << e.action << "\n";
}

void print_all() {
  std::cout << "Every error id (edm explain ID says what one means and what to do).\n\nExit codes:\n";
  for (int code : {0, 1, 2, 3, 4, 5, 6, 130}) {
    const std::string c = std::to_string(code);
    std::cout << "  " << c << std::string(5 - c.size(), ' ') << exit_code_meaning(code) << "\n";
  }
  std::cout << "\n";
  std::size_t w = 0;
  for (const auto& e : error_ids()) w = std::max(w, e.id.size());
  for (const auto& e : error_ids()) {
    std::string code = std::to_string(e.exit_code);
    std::cout << e.id << std::string(w - e.id.size() + 2, ' ') << code << std::string(5 - code.size(), ' ')
              << e.meaning << "\n";
  }
}

}  // namespace

int cmd_explain(const Args& args) {
  namespace po = boost::program_options;
  po::options_description desc(
      "edm explain [ID]: what an error id (as in \"edm: error [EDM-XXX-NNN]\") means, its exit code and what "
      "to do; without an id, every id");
  desc.add_options()("help,h", "this help");
  std::string id;
  po::variables_map vm;
  if (!parse_command(args, desc, "id", id, vm)) return 0;  // --help
  if (id.empty()) {
    print_all();
    return 0;
  }
  const std::string want = normalise(id);
  if (const ErrorIdInfo* e = find_error_id(want)) {
    print_one(*e);
    return 0;
  }
  std::vector<std::string> known;
  for (const auto& e : error_ids()) known.emplace_back(e.id);
  const std::string near = closest_match(want, known);
  throw ConfigError("EDM-CLI-005", "unknown error id '" + id + "'" +
                                       (near.empty() ? std::string() : " (did you mean " + near + "?)") +
                                       "; edm explain without an id lists them all");
}

}  // namespace edm::app
