// Progress from finished device work (run/progress.hpp): polled from the launches' events while the
// driving thread waits for the device, so a single pass or a long batch shows its kernels advancing
// and the ETA is never 0 while kernels remain.
#include "run/progress.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <thread>

namespace edm::detail {

ProgressMeter::ProgressMeter(const RunContext& ctx, std::uint64_t total, std::uint64_t done_before)
    : ctx_(ctx), total_(total), done_before_(done_before), t_loop_(Clock::now()) {}

RunProgress ProgressMeter::measure(std::uint64_t completed) const {
  RunProgress p;
  p.total = total_;
  p.resumed = done_before_;
  p.done = std::min(total_, done_before_ + completed);
  p.elapsed = seconds_since(ctx_.t_start);
  const double loop = seconds_since(t_loop_);
  if (p.done == p.total)
    p.eta = 0;
  else if (completed > 0 && loop > 0)
    p.eta = double(p.total - p.done) * loop / double(completed);
  return p;
}

std::optional<Clock::time_point> ProgressMeter::wait(DeviceWatcher& watcher, ShardedFieldAccumulator& acc) {
  if (!watcher.outstanding()) return std::nullopt;
  const auto interval = std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(std::max(ctx_.options.progress_interval, 1e-3)));
  while (!watcher.wait_for(interval)) ctx_.observer.progress(report(acc));
  const auto idle = watcher.wait();  // rethrows what the drain threw
  ctx_.observer.progress(report(acc));
  return idle;
}

RunProgress ProgressMeter::report(ShardedFieldAccumulator& acc) const {
  const std::uint64_t field = acc.electrons_completed();
  if (!spectra_completed) return measure(field);
  const std::uint64_t spectra = spectra_completed();
  RunProgress p = measure(std::min(field, spectra));
  p.spectra_behind = field > spectra ? field - spectra : 0;
  return p;
}

void ProgressMeter::wait_spectra(ShardedFieldAccumulator& acc, std::uint64_t launched) {
  if (!spectra_completed || spectra_completed() >= launched) return;
  const double interval = std::max(ctx_.options.progress_interval, 1e-3);
  // The events are polled (the spectra queue has no watcher thread), finely enough that the wait
  // ends soon after the last kernel; a report every interval.
  const auto poll = std::chrono::duration<double>(std::min(interval, 0.01));
  auto next = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(interval));
  while (spectra_completed() < launched) {
    std::this_thread::sleep_for(poll);
    if (Clock::now() >= next) {
      ctx_.observer.progress(report(acc));
      next += std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(interval));
    }
  }
  ctx_.observer.progress(report(acc));
}

}  // namespace edm::detail
