// Device telemetry while a run computes (run.toml [telemetry], share/docs/outputs.md): a thread that
// keeps the vendor's monitoring tool running as a child process (nvidia-smi, one line per GPU each
// second) and folds its lines into statistics, and the field kernel's resources from its build log.
// Out of process and best effort: a missing tool, one that hangs or one that prints garbage is
// recorded as such and never slows, stops or fails the run.
#pragma once
#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <toml++/toml.h>

#include "edm/run_summary.hpp"
#include "edm/sharded.hpp"

namespace edm::detail {

// min / mean / max over the samples of one quantity.
struct TelemetryStat {
  double min = 0, max = 0, sum = 0;
  std::uint64_t count = 0;
  void add(double v);
};

// One GPU as the tool lists it.
struct TelemetryGpu {
  int index = 0;
  std::string name;
  TelemetryStat power_w, sm_clock_mhz, utilization_pct, memory_used_mib;
};

// Parses one line of `nvidia-smi --query-gpu=index,name,power.draw,clocks.sm,utilization.gpu,
// memory.used --format=csv,noheader,nounits` into gpus (a quantity the tool gives as "[N/A]" or
// "[Not Supported]" is left out of its statistics); false for a line that is not such a line.
bool parse_nvidia_smi_line(const std::string& line, std::vector<TelemetryGpu>& gpus);

// The field kernel's resources from an NVIDIA build log (-cl-nv-verbose: ptxas's "Used N registers",
// spill stores and loads, of the entry function `kernel`); empty when the log has none (another
// platform, or a program loaded from a binary cache, which has no log).
toml::table kernel_resources_from_log(const std::string& log, const std::string& kernel);

class TelemetrySampler {
 public:
  // Looks for nvidia-smi (then rocm-smi, xpu-smi) on PATH and starts sampling when it finds
  // nvidia-smi. `no_line_timeout`: a tool silent for that long is killed and sampling ends.
  explicit TelemetrySampler(std::chrono::milliseconds interval = std::chrono::milliseconds(1000),
                            std::chrono::milliseconds no_line_timeout = std::chrono::milliseconds(10000));
  ~TelemetrySampler();  // stops (kills the tool, joins the thread)
  TelemetrySampler(const TelemetrySampler&) = delete;
  TelemetrySampler& operator=(const TelemetrySampler&) = delete;

  // Stops sampling and returns run.toml's [telemetry] table. Quick: the tool is killed, not waited for.
  toml::table finish();

 private:
  void start(const std::string& tool_path);
  void loop();
  void stop_child();

  std::string tool_, why_;
  std::chrono::milliseconds interval_, no_line_timeout_;
  std::chrono::steady_clock::time_point started_;
  pid_t child_ = -1;
  int fd_ = -1;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::mutex mutex_;  // guards gpus_, lines_, rejected_, why_ while the thread runs
  std::vector<TelemetryGpu> gpus_;
  std::uint64_t lines_ = 0, rejected_ = 0;
  bool timed_out_ = false, finished_ = false;
};

// Stops the sampler and fills S.telemetry: its table, with [telemetry.kernel] the field kernel's
// registers and spills from device 0's build log (or why there are none).
void record_telemetry(TelemetrySampler& sampler, const ShardedFieldAccumulator& acc, RunSummary& S);

}  // namespace edm::detail
