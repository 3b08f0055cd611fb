// Command-line helpers shared by the subcommands: `--set section.key=value`, one positional argument.
#include "options.hpp"

#include <iostream>

#include <cctype>

#include "edm/error.hpp"

namespace edm::app {

namespace {

bool is_name(const std::string& s) {
  if (s.empty()) return false;
  for (char ch : s)
    if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '_' && ch != '-') return false;
  return true;
}

}  // namespace

std::vector<Override> parse_set_options(const std::vector<std::string>& sets) {
  std::vector<Override> out;
  for (const auto& s : sets) {
    const auto eq = s.find('=');
    const std::string key = s.substr(0, eq);
    const auto dot = key.find('.');
    const bool ok = eq != std::string::npos && dot != std::string::npos && is_name(key.substr(0, dot)) &&
                    is_name(key.substr(dot + 1));
    if (!ok)
      throw ConfigError("EDM-CFG-010", "--set '" + s +
                                           "': expected section.key=value, e.g. --set screen.nx=128 "
                                           "(`edm schema` lists the keys)");
    out.push_back(Override{key, s.substr(eq + 1), Origin::CommandLine});
  }
  return out;
}

bool parse_command(const std::vector<std::string>& args, const boost::program_options::options_description& desc,
                   const char* name, std::string& positional, boost::program_options::variables_map& vm) {
  namespace po = boost::program_options;
  po::options_description hidden;
  po::positional_options_description pos;
  if (name) {
    hidden.add_options()(name, po::value(&positional));
    pos.add(name, 1);
  }
  po::options_description all;
  all.add(desc).add(hidden);
  po::store(po::command_line_parser(args).options(all).positional(pos).run(), vm);
  po::notify(vm);
  if (vm.count("help")) {
    std::cout << desc << "\n";
    return false;
  }
  return true;
}

}  // namespace edm::app
