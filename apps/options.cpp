// Command-line helpers shared by the subcommands: `--set section.key=value`, the key table's flags,
// one positional argument.
#include "options.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>

#include <cerrno>

#include <cctype>
#include <iostream>
#include <sstream>

#include "edm/error.hpp"
#include "edm/schema.hpp"

extern char** environ;

namespace edm::app {

namespace {

bool is_name(const std::string& s) {
  if (s.empty()) return false;
  for (char ch : s)
    if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '_' && ch != '-') return false;
  return true;
}

std::vector<std::string> words(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

std::string long_name(const std::string& flag) { return flag.substr(0, flag.find(',')); }

}  // namespace

void add_key_flags(boost::program_options::options_description& desc) {
  namespace po = boost::program_options;
  for (const auto& k : core_keys()) {
    const auto flags = words(k.spec.flag);
    for (std::size_t i = 0; i < flags.size(); ++i) {
      const std::string help =
          i == 0 ? k.spec.meaning + " (= " + k.full_name() + ")" : "same as --" + long_name(flags.front());
      desc.add_options()(flags[i].c_str(), po::value<std::string>(), help.c_str());
    }
  }
}

std::vector<Override> key_flag_overrides(const boost::program_options::variables_map& vm) {
  std::vector<Override> out;
  for (const auto& k : core_keys())
    for (const auto& flag : words(k.spec.flag)) {
      const std::string name = long_name(flag);
      if (!vm.count(name)) continue;
      const std::string v = vm[name].as<std::string>();
      if (v.empty()) continue;  // `--output ""` leaves the key as it is
      // A string key takes the text verbatim: quoted, so that core does not strip quotes of its own.
      out.push_back(
          Override{k.full_name(), k.spec.type == "string" ? "\"" + v + "\"" : v, Origin::CommandLine});
    }
  return out;
}

void check_checkpoint_every(const char* command, std::int64_t every) {
  if (every >= -1) return;
  throw ConfigError("EDM-CLI-050", std::string("edm ") + command + " --checkpoint-every " + std::to_string(every) +
                                       ": give K >= 1 (a checkpoint every K batches), 0 (automatic) or -1 (never)");
}

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

namespace {

bool parse_with(const std::vector<std::string>& args, const boost::program_options::options_description& desc,
                const boost::program_options::options_description& hidden,
                const boost::program_options::positional_options_description& pos,
                boost::program_options::variables_map& vm) {
  namespace po = boost::program_options;
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

}  // namespace

bool parse_command(const std::vector<std::string>& args,
                   const boost::program_options::options_description& desc, const char* name,
                   std::string& positional, boost::program_options::variables_map& vm) {
  namespace po = boost::program_options;
  po::options_description hidden;
  po::positional_options_description pos;
  if (name) {
    hidden.add_options()(name, po::value(&positional));
    pos.add(name, 1);
  }
  return parse_with(args, desc, hidden, pos, vm);
}

bool parse_command(const std::vector<std::string>& args, const boost::program_options::options_description& desc,
                   std::vector<std::string>& positionals, boost::program_options::variables_map& vm) {
  namespace po = boost::program_options;
  po::options_description hidden;
  hidden.add_options()("positionals", po::value(&positionals));
  po::positional_options_description pos;
  pos.add("positionals", -1);
  return parse_with(args, desc, hidden, pos, vm);
}

int spawn_wait(const std::vector<std::string>& argv, bool quiet) {
  std::vector<char*> cargv;
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  if (quiet) {
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  }
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, cargv[0], &fa, nullptr, cargv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) return 127;
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return 127;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}


}  // namespace edm::app
