// Progress of the batch loop (internal), counted from finished device work: the electrons whose
// field launches have completed (FieldAccumulator::electrons_completed), reported to the observer
// while the driving thread waits for the device, with an ETA from this process's own rate.
#pragma once
#include <cstdint>
#include <functional>
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
  // [spectra] (spectra_stage.cpp): the electrons whose direct spectra this process has finished.
  // When set, an electron counts as done once its field and its spectra are both finished, and
  // RunProgress::spectra_behind says how many wait for their spectra only.
  std::function<std::uint64_t()> spectra_completed;
  // After the batch loop: reports the progress every RunOptions::progress_interval until the
  // direct spectra of the `launched` electrons are finished (they may run past the field's last
  // launch), then once more.
  void wait_spectra(ShardedFieldAccumulator& acc, std::uint64_t launched);

 private:
  RunProgress report(ShardedFieldAccumulator& acc) const;
  const RunContext& ctx_;
  std::uint64_t total_, done_before_;
  Clock::time_point t_loop_;
};

}  // namespace edm::detail
