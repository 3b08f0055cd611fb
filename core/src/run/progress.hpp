// Progress of the batch loop (internal), counted from finished device work: the electrons whose
// field launches have completed (FieldAccumulator::electrons_completed), reported to the observer
// while the driving thread waits for the device, with an ETA from this process's own rate.
#pragma once
#include <cstdint>
#include <optional>

#include "run/overlap.hpp"
#include "run/stages.hpp"

namespace edm::detail {

class ProgressMeter {
 public:
  // `total`: this rank's electrons; `done_before`: those already in the cube (a resumed checkpoint).
  ProgressMeter(const RunContext& ctx, std::uint64_t total, std::uint64_t done_before);
  // Waits for the watcher's drain, reporting the finished work every RunOptions::progress_interval
  // while the device runs, and once when it is idle. Returns what DeviceWatcher::wait returns.
  std::optional<Clock::time_point> wait(DeviceWatcher& watcher, ShardedFieldAccumulator& acc);
  // The progress now, from `completed` electrons finished by this process.
  RunProgress measure(std::uint64_t completed) const;

 private:
  const RunContext& ctx_;
  std::uint64_t total_, done_before_;
  Clock::time_point t_loop_;
};

}  // namespace edm::detail
