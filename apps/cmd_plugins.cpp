// `edm plugins [--json]`: the scenario plugins found on the search path (name, version, path,
// description, models, section keys), then every file that failed to load and why. Failures are
// reported, not fatal: the exit code is 0 so that a broken third-party plugin does not hide the rest.
#include <iostream>
#include <sstream>

#include <boost/program_options.hpp>

#include "commands.hpp"
#include "options.hpp"
#include "edm/plugins.hpp"

namespace po = boost::program_options;

namespace edm::app {

namespace {

std::string json_string(const std::string& s) {
  std::ostringstream os;
  os << '"';
  for (unsigned char ch : s) {
    switch (ch) {
      case '"': os << "\\\""; break;
      case '\\': os << "\\\\"; break;
      case '\n': os << "\\n"; break;
      case '\t': os << "\\t"; break;
      case '\r': os << "\\r"; break;
      default:
        if (ch < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", ch);
          os << buf;
        } else {
          os << ch;
        }
    }
  }
  os << '"';
  return os.str();
}

void print_json(std::ostream& os, const PluginRegistry& reg, const std::vector<std::filesystem::path>& path) {
  os << "{\n  \"plugins\": [";
  bool first = true;
  for (const auto& p : reg.plugins()) {
    const auto& d = p->descriptor();
    os << (first ? "\n" : ",\n") << "    {\"name\": " << json_string(p->name())
       << ", \"version\": " << json_string(d.version ? d.version : "") << ", \"path\": " << json_string(p->path().string())
       << ", \"description\": " << json_string(d.description ? d.description : "") << ", \"models\": [";
    const auto models = p->models();
    for (std::size_t i = 0; i < models.size(); ++i) os << (i ? ", " : "") << json_string(models[i]);
    os << "], \"keys\": [";
    const auto keys = p->keys();
    for (std::size_t i = 0; i < keys.size(); ++i)
      os << (i ? ", " : "") << "{\"key\": " << json_string(keys[i].key) << ", \"type\": " << json_string(keys[i].type)
         << ", \"unit\": " << json_string(keys[i].unit) << ", \"default\": " << json_string(keys[i].default_value)
         << ", \"meaning\": " << json_string(keys[i].meaning) << "}";
    os << "]}";
    first = false;
  }
  os << (first ? "" : "\n  ") << "],\n  \"failures\": [";
  first = true;
  for (const auto& f : reg.failures()) {
    os << (first ? "\n" : ",\n") << "    {\"path\": " << json_string(f.path.string())
       << ", \"reason\": " << json_string(f.reason) << "}";
    first = false;
  }
  os << (first ? "" : "\n  ") << "],\n  \"search_path\": [";
  for (std::size_t i = 0; i < path.size(); ++i) os << (i ? ", " : "") << json_string(path[i].string());
  os << "],\n  \"abi_version\": " << EDM_PLUGIN_ABI_VERSION << "\n}\n";
}

void print_text(std::ostream& os, const PluginRegistry& reg, const std::vector<std::filesystem::path>& path) {
  os << "Scenario plugins (" << reg.plugins().size() << "):\n";
  if (reg.plugins().empty()) os << "  none found\n";
  for (const auto& p : reg.plugins()) {
    const auto& d = p->descriptor();
    os << "  " << p->name() << "  " << (d.version ? d.version : "") << "\n"
       << "    path:        " << p->path().string() << "\n"
       << "    description: " << (d.description ? d.description : "") << "\n"
       << "    models:     ";
    for (const auto& m : p->models()) os << " " << m;
    os << "\n    keys:       ";
    const auto keys = p->keys();
    if (keys.empty()) os << " (none)";
    for (const auto& k : keys) os << " " << p->name() << "." << k.key << " (" << k.type << ")";
    os << "\n";
  }
  if (!reg.failures().empty()) {
    os << "\nLoad failures (" << reg.failures().size() << "; these files were skipped):\n";
    for (const auto& f : reg.failures()) os << "  " << f.path.string() << ": " << f.reason << "\n";
  }
  os << "\nSearch path (EDM_PLUGIN_PATH first; files *.edmplugin, one folder deep):\n";
  for (const auto& p : path) os << "  " << p.string() << "\n";
  os << "\nThis edm loads plugins of ABI version " << EDM_PLUGIN_ABI_VERSION << " (edm/plugin.h).\n";
}

}  // namespace

int cmd_plugins(const Args& args) {
  po::options_description opts("edm plugins: scenario plugins, their models and load failures");
  opts.add_options()("help,h", "this help")("json", "machine-readable output");
  po::variables_map vm;
  std::string none;
  if (!parse_command(args, opts, nullptr, none, vm)) return 0;  // --help
  const auto path = PluginRegistry::default_search_path();
  const PluginRegistry reg = PluginRegistry::from_paths(path);
  if (vm.count("json"))
    print_json(std::cout, reg, path);
  else
    print_text(std::cout, reg, path);
  return 0;
}

}  // namespace edm::app
