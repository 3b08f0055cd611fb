// The overlap watcher of the batch loop (internal): while batch k's launches run, the driving thread
// solves batch k+1 and this watcher waits on its own thread for the device to go idle, recording
// when, so that [timing] trajectories_overlapped is measured, not guessed.
// It cannot reach std::terminate: the thread is joined on every path (the destructor waits, also
// while an exception of the driving thread unwinds), and what it throws (a device error while
// draining) is handed back to the driving thread by wait().
#pragma once
#include <chrono>
#include <functional>
#include <future>
#include <optional>

namespace edm::detail {

class DeviceWatcher {
 public:
  using Clock = std::chrono::steady_clock;

  DeviceWatcher() = default;
  DeviceWatcher(const DeviceWatcher&) = delete;
  DeviceWatcher& operator=(const DeviceWatcher&) = delete;
  // Joins a watcher still running. Its error, if any, is dropped: the driving thread is then
  // unwinding with an error of its own, which is the one to report.
  ~DeviceWatcher() {
    if (running_.valid()) running_.wait();
  }

  // Runs `drain` (which returns once the device is idle) on a thread of its own. The watcher
  // started before must have been waited for.
  void start(std::function<void()> drain) {
    running_ = std::async(std::launch::async, [d = std::move(drain)] {
      d();
      return Clock::now();
    });
  }

  // Whether a watcher was started and not yet waited for.
  bool outstanding() const { return running_.valid(); }

  // Whether the watcher started last is done (or none is outstanding), waiting at most `d`.
  bool wait_for(Clock::duration d) const {
    return !running_.valid() || running_.wait_for(d) == std::future_status::ready;
  }

  // Waits for the watcher started last: the time the device went idle, or nothing if no watcher
  // is outstanding. Rethrows, in the calling thread, what `drain` threw.
  std::optional<Clock::time_point> wait() {
    if (!running_.valid()) return std::nullopt;
    return running_.get();
  }

 private:
  std::future<Clock::time_point> running_;
};

}  // namespace edm::detail
