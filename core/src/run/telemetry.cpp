// Device telemetry while a run computes (run/telemetry.hpp): nvidia-smi as a child process in its own
// process group, its stdout read line by line on a thread of its own, statistics per GPU, and the
// field kernel's registers and spills from its build log. Nothing here throws into the run: every
// failure becomes run.toml's `sampled = false` and a `why`.
#include "run/telemetry.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <regex>
#include <sstream>

extern char** environ;

namespace edm::detail {
namespace {

// The tool's path when it is an executable file in a folder of PATH, else "".
std::string on_path(const std::string& tool) {
  const char* path = std::getenv("PATH");
  if (!path) return "";
  std::stringstream ss(path);
  std::string dir;
  while (std::getline(ss, dir, ':')) {
    if (dir.empty()) continue;
    const std::filesystem::path p = std::filesystem::path(dir) / tool;
    std::error_code ec;
    if (std::filesystem::is_regular_file(p, ec) && access(p.c_str(), X_OK) == 0) return p.string();
  }
  return "";
}

std::string trim(const std::string& s) {
  const auto a = s.find_first_not_of(" \t\r");
  if (a == std::string::npos) return "";
  return s.substr(a, s.find_last_not_of(" \t\r") - a + 1);
}

// A finite number filling the whole field, else NaN ("[N/A]", "[Not Supported]", garbage).
double number(const std::string& field) {
  const std::string f = trim(field);
  if (f.empty()) return NAN;
  char* end = nullptr;
  const double v = std::strtod(f.c_str(), &end);
  return (end && *end == '\0' && std::isfinite(v)) ? v : NAN;
}

toml::table stat_table(const TelemetryStat& s) {
  return toml::table{{"min", s.min}, {"mean", s.sum / double(s.count)}, {"max", s.max}, {"count", int64_t(s.count)}};
}

}  // namespace

void TelemetryStat::add(double v) {
  if (std::isnan(v)) return;
  min = count ? std::min(min, v) : v;
  max = count ? std::max(max, v) : v;
  sum += v;
  ++count;
}

bool parse_nvidia_smi_line(const std::string& line, std::vector<TelemetryGpu>& gpus) {
  std::vector<std::string> f;
  std::stringstream ss(line);
  std::string field;
  while (std::getline(ss, field, ',')) f.push_back(field);
  if (f.size() != 6) return false;
  const double index = number(f[0]);
  // The index is a small integer; a line whose quantities are all unreadable says nothing.
  if (std::isnan(index) || index < 0 || index > 4096 || index != std::floor(index)) return false;
  const double q[4] = {number(f[2]), number(f[3]), number(f[4]), number(f[5])};
  if (std::all_of(q, q + 4, [](double v) { return std::isnan(v); })) return false;
  auto it = std::find_if(gpus.begin(), gpus.end(), [&](const TelemetryGpu& g) { return g.index == int(index); });
  if (it == gpus.end()) {
    gpus.push_back(TelemetryGpu{int(index), trim(f[1]), {}, {}, {}, {}});
    it = gpus.end() - 1;
  }
  it->power_w.add(q[0]);
  it->sm_clock_mhz.add(q[1]);
  it->utilization_pct.add(q[2]);
  it->memory_used_mib.add(q[3]);
  return true;
}

toml::table kernel_resources_from_log(const std::string& log, const std::string& kernel) {
  // ptxas prints, per function: "Compiling entry function 'NAME' for 'sm_90'" and "Function
  // properties for NAME", then "N bytes stack frame, S bytes spill stores, L bytes spill loads" and
  // "Used R registers, …"; the lines after a function's name belong to it.
  static const std::regex name_re(R"((?:Compiling entry function '|Function properties for )([A-Za-z_0-9]+))");
  static const std::pair<std::regex, const char*> fields[] = {
      {std::regex(R"(Used (\d+) registers)"), "registers"},
      {std::regex(R"((\d+) bytes spill stores)"), "spill_store_bytes"},
      {std::regex(R"((\d+) bytes spill loads)"), "spill_load_bytes"},
      {std::regex(R"((\d+) bytes stack frame)"), "stack_frame_bytes"}};
  std::stringstream ss(log);
  std::string line, current;
  toml::table t;
  std::smatch m;
  while (std::getline(ss, line)) {
    if (std::regex_search(line, m, name_re)) {
      current = m[1];
      continue;
    }
    if (current != kernel) continue;
    for (const auto& [re, key] : fields)
      if (std::regex_search(line, m, re) && !t.contains(key)) t.insert(key, int64_t(std::stoll(m[1])));
  }
  return t;
}

TelemetrySampler::TelemetrySampler(std::chrono::milliseconds interval, std::chrono::milliseconds no_line_timeout)
    : interval_(interval), no_line_timeout_(no_line_timeout), started_(std::chrono::steady_clock::now()) {
  const std::string nv = on_path("nvidia-smi");
  if (!nv.empty()) {
    start(nv);
    return;
  }
  for (const char* other : {"rocm-smi", "xpu-smi"})
    if (!on_path(other).empty()) {
      tool_ = other;
      why_ = std::string(other) + " is on PATH, but edm reads only nvidia-smi's output (not sampled)";
      return;
    }
  why_ = "no nvidia-smi, rocm-smi or xpu-smi on PATH (not sampled; on PoCL there is nothing to sample)";
}

TelemetrySampler::~TelemetrySampler() {
  stop_ = true;
  stop_child();
  if (thread_.joinable()) thread_.join();
  if (fd_ >= 0) close(fd_);
}

void TelemetrySampler::start(const std::string& tool_path) {
  tool_ = "nvidia-smi";
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    why_ = "no pipe for nvidia-smi (not sampled)";
    return;
  }
  posix_spawn_file_actions_t fa;
  posix_spawnattr_t attr;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawnattr_init(&attr);
  // Its own process group, so that a kill reaches whatever the tool started (a script's children).
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);
  const std::string query = "--query-gpu=index,name,power.draw,clocks.sm,utilization.gpu,memory.used";
  std::vector<std::string> args = {tool_path, query, "--format=csv,noheader,nounits", "-lms",
                                   std::to_string(interval_.count())};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const int rc = posix_spawn(&child_, tool_path.c_str(), &fa, &attr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  close(fds[1]);
  if (rc != 0) {
    close(fds[0]);
    child_ = -1;
    why_ = "nvidia-smi could not be started (not sampled)";
    return;
  }
  fd_ = fds[0];
  thread_ = std::thread([this] { loop(); });
}

// Reads the tool's lines until it exits, is stopped, or stays silent for no_line_timeout.
void TelemetrySampler::loop() {
  std::string pending;
  auto last_line = std::chrono::steady_clock::now();
  char buf[4096];
  int drain_reads = 0;
  for (;;) {
    // Once stopped, what the tool left in the pipe is still read (a bounded number of reads: a
    // child of the tool that escaped the kill could keep writing), without waiting for more.
    const bool stopping = stop_;
    if (stopping && ++drain_reads > 64) break;
    pollfd p{fd_, POLLIN, 0};
    const int r = poll(&p, 1, stopping ? 0 : 100);  // wakes for stop_ every 100 ms
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) break;
    if (r == 0) {
      if (stopping) break;
      if (std::chrono::steady_clock::now() - last_line > no_line_timeout_) {
        std::lock_guard<std::mutex> lock(mutex_);
        timed_out_ = true;
        break;
      }
      continue;
    }
    const ssize_t n = read(fd_, buf, sizeof buf);
    if (n <= 0) break;  // the tool exited (or closed its output)
    pending.append(buf, std::size_t(n));
    // A tool that prints without newlines cannot grow this without bound.
    if (pending.size() > (1u << 20)) pending.clear();
    std::size_t nl;
    while ((nl = pending.find('\n')) != std::string::npos) {
      const std::string line = pending.substr(0, nl);
      pending.erase(0, nl + 1);
      last_line = std::chrono::steady_clock::now();
      std::lock_guard<std::mutex> lock(mutex_);
      ++lines_;
      if (!parse_nvidia_smi_line(line, gpus_)) ++rejected_;
    }
  }
  stop_child();
}

void TelemetrySampler::stop_child() {
  // SIGKILL to the group at once: nvidia-smi has nothing to save, and the run must not wait on it.
  pid_t pid;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    pid = child_;
    child_ = -1;
  }
  if (pid <= 0) return;
  kill(-pid, SIGKILL);
  kill(pid, SIGKILL);
  while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
  }
}

toml::table TelemetrySampler::finish() {
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  stop_ = true;
  stop_child();  // the killed tool closes the pipe: the thread sees the end at once
  if (thread_.joinable()) thread_.join();
  std::lock_guard<std::mutex> lock(mutex_);
  toml::table t;
  const bool sampled = std::any_of(gpus_.begin(), gpus_.end(), [](const TelemetryGpu& g) {
    return g.power_w.count + g.sm_clock_mhz.count + g.utilization_pct.count + g.memory_used_mib.count > 0;
  });
  if (!tool_.empty() && why_.empty() && !sampled) {
    std::ostringstream os;
    if (timed_out_)
      os << tool_ << " printed no line for " << no_line_timeout_.count() / 1000.0 << " s and was killed; ";
    os << tool_ << " gave no readable sample in " << seconds << " s (" << lines_ << " lines, " << rejected_
       << " not understood; not sampled)";
    why_ = os.str();
  }
  t.insert("sampled", sampled);
  if (!tool_.empty()) t.insert("tool", tool_);
  if (!sampled) t.insert("why", why_);
  if (fd_ >= 0) {  // the tool ran: what it printed, understood or not
    t.insert("seconds", seconds);
    t.insert("lines", int64_t(lines_));
    t.insert("lines_not_understood", int64_t(rejected_));
  }
  if (!sampled) return t;
  t.insert("interval", interval_.count() / 1000.0);
  if (timed_out_) t.insert("stopped_early", "the tool printed no line for " + std::to_string(no_line_timeout_.count() / 1000) + " s and was killed");
  toml::array gpus;
  for (const auto& g : gpus_) {
    toml::table gt{{"index", g.index}, {"name", g.name}};
    if (g.power_w.count) gt.insert("power_w", stat_table(g.power_w));
    if (g.sm_clock_mhz.count) gt.insert("sm_clock_mhz", stat_table(g.sm_clock_mhz));
    if (g.utilization_pct.count) gt.insert("utilization_pct", stat_table(g.utilization_pct));
    if (g.memory_used_mib.count) gt.insert("memory_used_mib", stat_table(g.memory_used_mib));
    gpus.push_back(std::move(gt));
  }
  t.insert("gpus", std::move(gpus));
  return t;
}

void record_telemetry(TelemetrySampler& sampler, const ShardedFieldAccumulator& acc, RunSummary& S) {
  S.telemetry = sampler.finish();
  const FieldAccumulator& a = acc.device_accumulator(0);
  toml::table k = kernel_resources_from_log(a.build_log(), "lw_accumulate");
  const auto registers = k["registers"].value<int64_t>();
  k.insert("registers_recorded", registers.has_value());
  if (registers) {
    // An NVIDIA SM from Volta to Hopper (H100, H200): 65536 registers, at most 64 warps, registers
    // given to a warp in units of 256. Work-group and local-memory limits can lower it further.
    const int64_t per_warp = (*registers * 32 + 255) / 256 * 256;
    k.insert("warps_per_sm_by_registers", std::min<int64_t>(64, 65536 / std::max<int64_t>(per_warp, 1)));
  } else {
    k.insert("why", std::string("no registers in the build log: only NVIDIA's compiler reports them (ptxas, "
                                "-cl-nv-verbose), and a program loaded from a binary cache has no log "
                                "(EDM_NO_KERNEL_CACHE=1 builds it afresh)"));
  }
  for (const auto& [key, v] : a.kernel_resources()) k.insert(key, int64_t(v));
  S.telemetry.insert("kernel", std::move(k));
}

}  // namespace edm::detail
