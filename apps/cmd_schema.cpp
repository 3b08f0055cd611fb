// `edm schema [PLUGIN]`: every campaign key, grouped by section, with type, unit, default, meaning,
// allowed values, environment variable and `edm run` option — printed from the key table
// (core_schema()), the same table validation uses, so the two cannot drift. With a scenario name it
// also prints that plugin's own section.
#include <algorithm>
#include <iostream>
#include <sstream>

#include <boost/program_options.hpp>

#include "commands.hpp"
#include "edm/plugins.hpp"
#include "edm/schema.hpp"

namespace po = boost::program_options;

namespace edm::app {

namespace {

// Columns line up by characters shown, not bytes: units such as "m·rad" are UTF-8.
std::size_t width(const std::string& s) {
  std::size_t n = 0;
  for (unsigned char ch : s) n += (ch & 0xC0) != 0x80;
  return n;
}

void print_section(std::ostream& os, const std::string& section, const std::vector<KeySpec>& keys) {
  std::vector<const KeySpec*> rows;
  for (const auto& k : keys)
    if (k.section == section) rows.push_back(&k);
  std::size_t wk = 4, wt = 4, wu = 4, wd = 7;
  for (auto* k : rows) {
    wk = std::max(wk, width(section) + 1 + width(k->key));
    wt = std::max(wt, width(k->type));
    wu = std::max(wu, width(k->unit));
    wd = std::max(wd, width(k->default_value));
  }
  auto pad = [](const std::string& s, std::size_t w) { return s + std::string(w > width(s) ? w - width(s) : 0, ' '); };
  os << "[" << section << "]\n";
  for (auto* k : rows) {
    os << "  " << pad(section + "." + k->key, wk) << "  " << pad(k->type, wt) << "  " << pad(k->unit.empty() ? "-" : k->unit, wu)
       << "  " << pad(k->default_value.empty() ? "(none)" : k->default_value, wd) << "  " << k->meaning;
    if (!k->choices.empty()) {
      os << "  {";
      for (std::size_t i = 0; i < k->choices.size(); ++i) os << (i ? " | " : "") << k->choices[i];
      os << "}";
    }
    if (!k->constraint.empty()) os << "  [" << rule_text(k->constraint) << "]";
    if (!k->environment.empty()) os << "  $" << k->environment;
    std::istringstream flags(k->flag);
    for (std::string f; flags >> f;) os << "  --" << f.substr(0, f.find(','));
    os << "\n";
  }
  if (rows.empty()) os << "  (no keys)\n";
  os << "\n";
}

}  // namespace

int cmd_schema(const Args& args) {
  po::options_description opts("edm schema [PLUGIN]: every campaign key (type, SI unit, default, meaning)");
  opts.add_options()("help,h", "this help")("plugin", po::value<std::string>(), "also print this scenario's section");
  po::positional_options_description pos;
  pos.add("plugin", 1);
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(opts).positional(pos).run(), vm);
  po::notify(vm);
  if (vm.count("help")) {
    std::cout << opts << "\n";
    return 0;
  }
  std::vector<KeySpec> plugin_keys;
  std::string plugin;
  if (vm.count("plugin")) {
    // Look the plugin up before printing anything: an unknown name is an error (PluginError lists
    // the scenarios that exist), not a schema without its section.
    const PluginRegistry reg = PluginRegistry::discover();
    const Plugin& p = reg.get(vm["plugin"].as<std::string>());
    plugin = p.name();
    plugin_keys = p.keys();
  }
  std::cout << "Campaign keys (TOML; SI units). Columns: key, type, unit, default, meaning {choices} [rule]\n"
               "$EDM_VARIABLE (the environment variable that sets it) --option (the `edm run` option that sets it).\n"
               "Override any key with --set section.key=value; precedence: command line > EDM_* environment > "
               "file > default.\n\n";
  for (const auto& s : core_sections()) print_section(std::cout, s, core_schema());
  if (!plugin.empty()) print_section(std::cout, plugin, plugin_keys);
  return 0;
}

}  // namespace edm::app
