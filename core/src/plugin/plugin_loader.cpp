// Plugin discovery and two-phase loading: find *.edmplugin files on the search path,
// dlopen each with RTLD_NOW | RTLD_LOCAL, query the C descriptor and check its size and ABI version
// before calling anything else, then register. A bad file becomes a PluginFailure with the reason;
// it never stops the others from loading. A plugin's code can crash edm (a constructor that aborts,
// a query returning a wild pointer), so nothing of a plugin runs in this process before it has run
// once in a forked child: a run loads only its scenario's plugin, found by the descriptor file
// `<library>.scenario` that edm_add_plugin writes beside it (the others' code never runs) or by
// probing a library without one, and that plugin too is probed in a child before it is opened here
// (a descriptor file is only a name, not proof that the library loads); `edm plugins` probes every
// candidate in a child and reports a crash as a load failure.
#include <dlfcn.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <tuple>

#include "plugin/stdout_guard.hpp"
#include "edm/error.hpp"
#include "edm/plugins.hpp"

#ifndef EDM_PLUGIN_BUILD_DIR
#define EDM_PLUGIN_BUILD_DIR ""
#endif
#ifndef EDM_PLUGIN_INSTALL_DIR
#define EDM_PLUGIN_INSTALL_DIR ""
#endif
#ifndef EDM_PLUGIN_INSTALL_RELDIR
#define EDM_PLUGIN_INSTALL_RELDIR "lib/edm/plugins"
#endif

namespace fs = std::filesystem;

namespace edm {

namespace {

constexpr const char* kSuffix = ".edmplugin";

std::string str_or_empty(const char* s) { return s ? s : ""; }

bool is_plugin_file(const fs::path& p) {
  std::error_code ec;
  return p.extension() == kSuffix && fs::is_regular_file(p, ec);
}

// `<dir>/*.edmplugin` and `<dir>/*/*.edmplugin` (one folder per plugin, as the build tree lays them
// out), sorted so that which of two duplicates wins does not depend on directory order.
std::vector<fs::path> scan(const fs::path& entry) {
  std::vector<fs::path> found;
  std::error_code ec;
  if (is_plugin_file(entry)) return {entry};
  if (!fs::is_directory(entry, ec)) return {};
  for (const auto& d : fs::directory_iterator(entry, fs::directory_options::skip_permission_denied, ec)) {
    if (is_plugin_file(d.path())) {
      found.push_back(d.path());
    } else if (d.is_directory(ec)) {
      for (const auto& f : fs::directory_iterator(d.path(), fs::directory_options::skip_permission_denied, ec))
        if (is_plugin_file(f.path())) found.push_back(f.path());
    }
  }
  std::sort(found.begin(), found.end());
  return found;
}

// The plugin's section keys must be usable by core's validation: a name, a known type, and a
// default that is TOML of that type (or empty: no default). Checked at load so that a plugin bug is
// reported by `edm plugins`, not as a confusing campaign error later.
std::string check_keys(const edm_plugin_v2& d) {
  std::set<std::string> names;
  for (uint32_t i = 0; i < d.n_keys; ++i) {
    const edm_key_spec& k = d.keys[i];
    const std::string key = str_or_empty(k.key), type = str_or_empty(k.type), def = str_or_empty(k.default_value);
    if (key.empty()) return "key " + std::to_string(i) + " has no name";
    if (!names.insert(key).second) return "key '" + key + "' is declared twice";
    if (type != "int" && type != "float" && type != "string" && type != "bool")
      return "key '" + key + "' has type '" + type + "' (int, float, string or bool)";
    if (def.empty()) continue;
    toml::table t;
    try {
      t = toml::parse("v = " + def);
    } catch (const toml::parse_error&) {
      return "key '" + key + "' has default '" + def + "', which is not a TOML value";
    }
    const toml::node& v = *t.get("v");
    const bool ok = (type == "int" && v.is_integer()) || (type == "float" && v.is_number()) ||
                    (type == "string" && v.is_string()) || (type == "bool" && v.is_boolean());
    if (!ok) return "key '" + key + "' has default '" + def + "', which is not of type " + type;
  }
  return "";
}

// Phase 1: open and query; nothing of the plugin runs but its constructors and its query
// function. Returns the checked descriptor (and the handle), or null with the reason.
const edm_plugin_v2* open_checked(const fs::path& file, void*& handle, std::string& reason) {
  dlerror();
  handle = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    reason = "cannot load: " + str_or_empty(dlerror());
    return nullptr;
  }
  auto fail = [&](std::string why) -> const edm_plugin_v2* {
    dlclose(handle);
    handle = nullptr;
    reason = std::move(why);
    return nullptr;
  };
  dlerror();
  void* sym = dlsym(handle, EDM_PLUGIN_ENTRY);
  if (!sym) return fail("not a plugin: no symbol " EDM_PLUGIN_ENTRY);
  const auto query = reinterpret_cast<edm_plugin_query_fn>(sym);
  const edm_plugin_v2* desc = query();
  if (!desc) return fail(EDM_PLUGIN_ENTRY " returned NULL");
  // The version is read first: struct_size and abi_version are the two fields every version
  // keeps at the front, and a wrong version explains a wrong size.
  if (desc->abi_version != EDM_PLUGIN_ABI_VERSION)
    return fail("wrong ABI version " + std::to_string(desc->abi_version) + " (this edm speaks " +
                std::to_string(EDM_PLUGIN_ABI_VERSION) + ")");
  if (desc->struct_size < sizeof(edm_plugin_v2))
    return fail("descriptor too small: " + std::to_string(desc->struct_size) + " bytes, ABI " +
                std::to_string(EDM_PLUGIN_ABI_VERSION) + " needs " + std::to_string(sizeof(edm_plugin_v2)));
  if (!desc->name || !*desc->name) return fail("descriptor has no scenario name");
  if (!desc->create) return fail("descriptor of '" + std::string(desc->name) + "' has no create function");
  if (desc->n_keys > 0 && !desc->keys)
    return fail("descriptor of '" + std::string(desc->name) + "' declares " + std::to_string(desc->n_keys) +
                " keys but no key table");
  if (std::string bad = check_keys(*desc); !bad.empty())
    return fail("descriptor of '" + std::string(desc->name) + "': " + bad);
  // Everything `edm plugins` prints is read once here, so a wild pointer in it crashes the probe.
  std::string touch = str_or_empty(desc->version) + str_or_empty(desc->description);
  if (desc->models)
    for (const char* const* m = desc->models; *m; ++m) touch += *m;
  for (uint32_t i = 0; i < desc->n_keys; ++i)
    touch += str_or_empty(desc->keys[i].unit) + str_or_empty(desc->keys[i].meaning);
  return desc;
}

// open_checked in this process with the plugin's stdout sent to stderr: what it prints while
// loaded (the probe's child already kept it in the probe's log) never mixes into edm's own output.
const edm_plugin_v2* open_checked_off_stdout(const fs::path& file, void*& handle, std::string& reason) {
  const detail::StdoutToStderr guard;
  return open_checked(file, handle, reason);
}

const char* signal_name(int sig) {
  switch (sig) {
    case SIGSEGV: return "SIGSEGV";
    case SIGABRT: return "SIGABRT";
    case SIGBUS: return "SIGBUS";
    case SIGILL: return "SIGILL";
    case SIGFPE: return "SIGFPE";
    case SIGALRM: return "SIGALRM, no answer within 10 s";
    default: return "a signal";
  }
}

// How long a probe may take before the parent kills it. The child's own alarm(10) ends a plugin
// that merely hangs, but one that ignores or blocks SIGALRM (and never returns from its query) hung
// every command that probes it: the parent's deadline does not depend on the child's cooperation.
constexpr int kProbeSeconds = 10;
// The most of a probe's output kept for its failure's reason (its last bytes).
constexpr std::size_t kProbeLogBytes = 2000;

// The child's side: stdout and stderr into the probe's log (a plugin that prints on stdout while
// loaded corrupted `edm sweep --slurm --print-only` and every output meant for a pipe), open and
// query, the verdict on `answer`.
[[noreturn]] void run_probe_child(const fs::path& file, int answer, int log) {
  dup2(log, STDOUT_FILENO);
  dup2(log, STDERR_FILENO);
  close(log);
  alarm(kProbeSeconds);
  void* handle = nullptr;
  std::string why;
  const edm_plugin_v2* d = open_checked(file, handle, why);
  const std::string msg = d ? "N" + std::string(d->name) : "F" + why;
  const ssize_t n = write(answer, msg.data(), msg.size());
  fflush(stdout);
  _exit(n == ssize_t(msg.size()) ? 0 : 1);
}

// The parent's side: reads the answer and the log until both close or the deadline passes; then
// the child is killed (SIGKILL: it cannot be ignored) and reaped. True when the deadline passed.
bool collect_probe(pid_t pid, int answer, int log, std::string& msg, std::string& out, int& status) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(kProbeSeconds + 2);
  pollfd fds[2] = {{answer, POLLIN, 0}, {log, POLLIN, 0}};
  bool timed_out = false;
  char buf[512];
  while (fds[0].fd >= 0 || fds[1].fd >= 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    const int r = poll(fds, 2, int(left.count()));
    if (r < 0 && errno != EINTR) break;
    for (int k = 0; r > 0 && k < 2; ++k) {
      if (fds[k].fd < 0 || !(fds[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const ssize_t n = read(fds[k].fd, buf, sizeof buf);
      if (n > 0) (k == 0 ? msg : out).append(buf, std::size_t(n));
      if (n == 0 || (n < 0 && errno != EINTR)) fds[k].fd = -1;
    }
    if (out.size() > 2 * kProbeLogBytes) out.erase(0, out.size() - kProbeLogBytes);
  }
  if (timed_out) kill(pid, SIGKILL);
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return timed_out;
}

// Runs open_checked in a forked child. True with the scenario name when it succeeded there; false
// with the reason (the child's own, its crash, or no answer within kProbeSeconds: a plugin that
// hangs in its constructor or query is a failure too) otherwise, with the end of what it printed.
bool probe_in_child_uncached(const fs::path& file, std::string& name, std::string& reason) {
  int answer[2], log[2];
  if (pipe(answer) != 0) {
    reason = "cannot probe: pipe failed";
    return false;
  }
  if (pipe(log) != 0) {
    close(answer[0]);
    close(answer[1]);
    reason = "cannot probe: pipe failed";
    return false;
  }
  fflush(stdout);  // nothing of the parent's buffered output is written twice by the child
  fflush(stderr);
  const pid_t pid = fork();
  if (pid == 0) {
    close(answer[0]);
    close(log[0]);
    run_probe_child(file, answer[1], log[1]);
  }
  close(answer[1]);
  close(log[1]);
  if (pid < 0) {
    close(answer[0]);
    close(log[0]);
    reason = "cannot probe: fork failed";
    return false;
  }
  std::string msg, out;
  int status = 0;
  const bool timed_out = collect_probe(pid, answer[0], log[0], msg, out, status);
  close(answer[0]);
  close(log[0]);
  if (out.size() > kProbeLogBytes) out.erase(0, out.size() - kProbeLogBytes);
  const std::string printed = out.empty() ? "" : "; it printed: " + out;
  if (timed_out) {
    reason = "gave no answer within " + std::to_string(kProbeSeconds) + " s while loading or querying it (killed); edm did not load it" + printed;
    return false;
  }
  if (WIFSIGNALED(status)) {
    reason = std::string("crashed while loading or querying it (") + signal_name(WTERMSIG(status)) +
             "); edm did not load it" + printed;
    return false;
  }
  if (msg.empty() || (msg[0] != 'N' && msg[0] != 'F')) {
    reason = "the probe of it exited without an answer (status " + std::to_string(WEXITSTATUS(status)) + ")" + printed;
    return false;
  }
  (msg[0] == 'N' ? name : reason) = msg.substr(1);
  if (msg[0] == 'F') reason += printed;
  return msg[0] == 'N';
}

// The verdicts of this process's probes (PluginRegistry::probe_search_path), by the identity of the
// file probed: a library replaced since (another inode, size or time) is probed again.
struct ProbeVerdict {
  bool ok = false;
  std::string text;  // the scenario's name (ok) or the reason it failed
};
using ProbeKey = std::tuple<dev_t, ino_t, off_t, long long>;
std::mutex& probe_mutex() {
  static std::mutex m;
  return m;
}
std::map<ProbeKey, ProbeVerdict>& probe_cache() {
  static std::map<ProbeKey, ProbeVerdict> c;
  return c;
}
std::optional<ProbeKey> probe_key(const fs::path& file) {
  struct stat st {};
  if (::stat(file.c_str(), &st) != 0) return std::nullopt;
  return ProbeKey{st.st_dev, st.st_ino, st.st_size,
                  (long long)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec};
}

// probe_in_child_uncached once per library (by identity) in this process.
bool probe_in_child(const fs::path& file, std::string& name, std::string& reason) {
  const auto key = probe_key(file);
  if (key) {
    const std::lock_guard<std::mutex> guard(probe_mutex());
    const auto it = probe_cache().find(*key);
    if (it != probe_cache().end()) {
      (it->second.ok ? name : reason) = it->second.text;
      return it->second.ok;
    }
  }
  const bool ok = probe_in_child_uncached(file, name, reason);
  if (key) {
    const std::lock_guard<std::mutex> guard(probe_mutex());
    probe_cache()[*key] = ProbeVerdict{ok, ok ? name : reason};
  }
  return ok;
}


// The scenario named by the descriptor file beside a library ("" if there is none).
std::string descriptor_name(const fs::path& file) {
  std::ifstream in(fs::path(file.string() + ".scenario"));
  std::string name;
  if (in) std::getline(in, name);
  while (!name.empty() && std::isspace(static_cast<unsigned char>(name.back()))) name.pop_back();
  return name;
}

fs::path executable_dir() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path() : exe.parent_path();
}

}  // namespace

Plugin::~Plugin() {
  // Scenarios created from this plugin must be gone by now (they hold its code); the registry
  // outlives them in every caller.
  if (handle_) dlclose(handle_);
}

std::vector<std::string> Plugin::models() const {
  std::vector<std::string> out;
  if (desc_->models)
    for (const char* const* m = desc_->models; *m; ++m) out.emplace_back(*m);
  return out;
}

std::vector<KeySpec> Plugin::keys() const {
  std::vector<KeySpec> out;
  if (!desc_->keys) return out;
  for (uint32_t i = 0; i < desc_->n_keys; ++i) {
    const edm_key_spec& k = desc_->keys[i];
    KeySpec s;
    s.section = name();
    s.key = str_or_empty(k.key);
    s.type = str_or_empty(k.type);
    s.unit = str_or_empty(k.unit);
    s.default_value = str_or_empty(k.default_value);
    s.meaning = str_or_empty(k.meaning);
    out.push_back(std::move(s));
  }
  return out;
}

std::vector<fs::path> PluginRegistry::default_search_path() {
  std::vector<fs::path> out;
  if (const char* env = std::getenv("EDM_PLUGIN_PATH")) {
    std::string s(env);
    std::size_t start = 0;
    while (start <= s.size()) {
      const std::size_t colon = std::min(s.find(':', start), s.size());
      if (colon > start) out.emplace_back(s.substr(start, colon - start));
      start = colon + 1;
    }
  }
  // The running executable's own folders first: an installed (or relocated) edm finds the plugins
  // installed with it, a build tree's edm its build folder; the compiled-in install and build
  // folders only after them (the build tree's must never shadow an install's).
  const fs::path exe = executable_dir();
  if (!exe.empty()) {
    out.push_back((exe / ".." / "plugins").lexically_normal());
    out.push_back((exe / ".." / EDM_PLUGIN_INSTALL_RELDIR).lexically_normal());
    out.push_back((exe / ".." / "lib" / "edm" / "plugins").lexically_normal());
  }
  if (*EDM_PLUGIN_INSTALL_DIR) out.emplace_back(EDM_PLUGIN_INSTALL_DIR);
  if (*EDM_PLUGIN_BUILD_DIR) out.emplace_back(EDM_PLUGIN_BUILD_DIR);
  // Same folder twice (exe-relative = build folder in a build tree) is listed once.
  std::vector<fs::path> unique;
  for (auto p : out) {
    p = p.lexically_normal();
    if (!p.has_filename() && p.has_relative_path()) p = p.parent_path();  // "dir/" is "dir"
    if (std::find(unique.begin(), unique.end(), p) == unique.end()) unique.push_back(p);
  }
  return unique;
}

PluginRegistry PluginRegistry::discover() { return from_paths(default_search_path()); }

void PluginRegistry::probe_search_path() {
  std::set<fs::path> seen;
  for (const auto& entry : default_search_path())
    for (const auto& file : scan(entry)) {
      std::error_code ec;
      const fs::path canon = fs::canonical(file, ec);
      if (!seen.insert(ec ? file : canon).second) continue;
      std::string name, reason;
      (void)probe_in_child(file, name, reason);
    }
}

PluginRegistry PluginRegistry::discover(const std::string& scenario) {
  return from_paths(default_search_path(), scenario);
}

PluginRegistry PluginRegistry::from_paths(const std::vector<fs::path>& paths) { return from_paths(paths, ""); }

PluginRegistry PluginRegistry::from_paths(const std::vector<fs::path>& paths, const std::string& scenario) {
  PluginRegistry reg;
  // Whether `file` may be opened in this process: a probe in a forked child succeeded (and, with a
  // scenario, named it). With a scenario, a descriptor file naming another scenario spares the probe
  // (nothing of that library runs; it is only remembered by name), but one naming the scenario wanted
  // is no proof that the library loads: it is probed too, so a crashing library beside a
  // `.scenario` file is a load failure like any other (it used to be opened here unprobed and took
  // edm down). One fork per run for its own plugin (and one for each library without a descriptor
  // file). A reason is a load failure.
  const auto admit = [&](const fs::path& file, std::string& reason) {
    const std::string named = scenario.empty() ? std::string() : descriptor_name(file);
    if (!named.empty() && named != scenario) {
      reg.elsewhere_.push_back(named);
      return false;
    }
    // A later copy of the scenario once one has loaded (a build and an install folder on the path):
    // the first one wins, so it is neither probed nor reported; it was, as a "skipped" warning on
    // every run (found in review). `edm plugins` (no scenario) still lists such duplicates.
    if (!named.empty() && std::any_of(reg.plugins_.begin(), reg.plugins_.end(),
                                      [&](const auto& p) { return p->name() == scenario; }))
      return false;
    std::string name;
    if (!probe_in_child(file, name, reason)) return false;
    if (scenario.empty() || name == scenario) return true;
    // A descriptor naming the scenario over a library of another one: opening it here would only
    // fail the mismatch check below, so say it without running the library's code again.
    if (!named.empty()) {
      reason = "its descriptor file names scenario '" + named + "' but the library is '" + name +
               "': rebuild the plugin";
      return false;
    }
    reg.elsewhere_.push_back(name);
    return false;
  };
  // The same file reached through two search entries (EDM_PLUGIN_PATH = the build folder) is one
  // file, not a duplicate: compare canonical paths.
  std::set<fs::path> seen;
  for (const auto& entry : paths) {
    for (const auto& file : scan(entry)) {
      std::error_code ec;
      fs::path canon = fs::canonical(file, ec);
      if (ec) canon = file;
      if (!seen.insert(canon).second) continue;

      std::string reason;
      void* handle = nullptr;
      const edm_plugin_v2* desc = nullptr;
      if (!admit(file, reason)) {
        if (!reason.empty()) reg.failures_.push_back({file, std::move(reason)});
        continue;
      }
      if (!(desc = open_checked_off_stdout(file, handle, reason))) {
        reg.failures_.push_back({file, std::move(reason)});
        continue;
      }
      auto fail = [&](std::string why) {
        dlclose(handle);
        reg.failures_.push_back({file, std::move(why)});
      };
      if (const std::string named = descriptor_name(file); !named.empty() && named != desc->name) {
        fail("its descriptor file names scenario '" + named + "' but the library is '" + desc->name +
             "': rebuild the plugin");
        continue;
      }
      // Phase 2: register, first one wins.
      auto dup = std::find_if(reg.plugins_.begin(), reg.plugins_.end(),
                              [&](const auto& p) { return p->name() == desc->name; });
      if (dup != reg.plugins_.end()) {
        fail("duplicate scenario '" + std::string(desc->name) + "': already loaded from " +
             (*dup)->path().string() + "; this copy (" + file.string() + ") is ignored");
        continue;
      }
      reg.plugins_.push_back(std::make_unique<Plugin>(file, handle, desc));
    }
  }
  return reg;
}

std::vector<PluginFailure> PluginRegistry::failures_of(const std::string& scenario) const {
  std::vector<PluginFailure> out;
  if (scenario.empty()) return out;
  for (const auto& f : failures_)
    if (descriptor_name(f.path) == scenario) out.push_back(f);
  return out;
}

const Plugin& PluginRegistry::get(const std::string& scenario) const {
  std::vector<std::string> names;
  for (const auto& p : plugins_) {
    if (p->name() == scenario) return *p;
    names.push_back(p->name());
  }
  for (const auto& n : elsewhere_)
    if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
  // A library whose descriptor file names this scenario but that failed to load (it crashed in its
  // probe, or refused its query) is the scenario's plugin, broken: say so rather than "unknown".
  for (const auto& f : failures_of(scenario))
    throw PluginError("EDM-PLG-002", "the plugin of scenario '" + scenario + "', " + f.path.string() +
                                           " (named by " + f.path.string() + ".scenario), failed to load: " +
                                           f.reason + "; `edm plugins` lists what loaded");
  std::string msg = "unknown scenario '" + scenario + "'";
  const std::string near = closest_match(scenario, names);
  if (!near.empty()) msg += " (did you mean '" + near + "'?)";
  msg += "; available: ";
  if (names.empty()) msg += "none";
  for (std::size_t i = 0; i < names.size(); ++i) msg += (i ? ", " : "") + names[i];
  if (!failures_.empty()) {
    msg += "; plugins that failed to load:";
    for (const auto& f : failures_) msg += "\n  " + f.path.string() + ": " + f.reason;
  }
  msg += "\n(search path: EDM_PLUGIN_PATH, then the build and install plugin folders; `edm plugins` lists them)";
  throw PluginError("EDM-PLG-001", msg);
}

}  // namespace edm
