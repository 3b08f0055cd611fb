// Multi-device accumulation: shard each batch over the devices, reduce with CLBlast at the end.
#include "edm/sharded.hpp"

#include <chrono>

#include "edm/error.hpp"

namespace edm {

SplineBatch slice_batch(const SplineBatch& b, std::size_t first, std::size_t count) {
  SplineBatch out;
  if (count == 0) return out;
  const std::uint64_t begin = b.electrons[first].offset;
  const auto& last = b.electrons[first + count - 1];
  const std::uint64_t end = last.offset + std::uint64_t(last.n_intervals) * kCoefPerInterval;
  out.coef.assign(b.coef.begin() + std::ptrdiff_t(begin), b.coef.begin() + std::ptrdiff_t(end));
  out.electrons.assign(b.electrons.begin() + std::ptrdiff_t(first),
                       b.electrons.begin() + std::ptrdiff_t(first + count));
  for (auto& e : out.electrons) e.offset -= begin;
  return out;
}

ShardedFieldAccumulator::ShardedFieldAccumulator(const std::vector<DeviceInfo>& devices, const Screen& screen,
                                                 Mode mode, const KernelOptions& options) {
  if (devices.empty()) throw ConfigError("EDM-DEV-004", "no device to accumulate on");
  // Every device's buffers are created (and the memory guard checked) before anything is solved.
  for (const auto& d : devices) accs_.emplace_back(open_device(d), screen, mode, options);
}

void ShardedFieldAccumulator::accumulate(const SplineBatch& batch) {
  if (accs_.size() == 1) {
    accs_[0].accumulate(batch);
    return;
  }
  const std::size_t n = batch.electrons.size(), D = accs_.size();
  for (std::size_t d = 0; d < D; ++d) {
    const std::size_t lo = n * d / D, hi = n * (d + 1) / D;
    if (hi > lo) accs_[d].accumulate(slice_batch(batch, lo, hi - lo));
  }
}

void ShardedFieldAccumulator::accumulate_in_slabs(const SplineBatch& batch, int rows) {
  if (accs_.size() == 1)
    accs_[0].accumulate_in_slabs(batch, rows);
  else
    accumulate(batch);
}

void ShardedFieldAccumulator::upload_ahead(const SplineBatch& batch) {
  if (accs_.size() == 1) accs_[0].upload_ahead(batch);
}

void ShardedFieldAccumulator::drain() {
  if (accs_.size() > 1)
    for (;;) {  // a device's drain alone would let the others' queues run dry meanwhile
      FieldAccumulator* waiting = nullptr;
      for (auto& a : accs_)
        if (a.feed() && !waiting) waiting = &a;
      if (!waiting) break;
      waiting->wait_for_launch();
    }
  for (auto& a : accs_) a.drain();
}

void ShardedFieldAccumulator::set_stop(const std::atomic<bool>* flag) {
  for (auto& a : accs_) a.set_stop(flag);
}

bool ShardedFieldAccumulator::stopped() const {
  for (const auto& a : accs_)
    if (a.stopped()) return true;
  return false;
}

std::optional<std::uint64_t> ShardedFieldAccumulator::stopped_at() const {
  if (accs_.size() != 1) return std::nullopt;
  return accs_[0].stopped_at();
}

std::uint64_t ShardedFieldAccumulator::electrons_completed() {
  std::uint64_t n = 0;
  for (auto& a : accs_) n += a.electrons_completed();
  return n;
}

void ShardedFieldAccumulator::finish(const SlabSink& sink, int rows_per_slab) {
  const auto t0 = std::chrono::steady_clock::now();
  for (std::size_t d = 1; d < accs_.size(); ++d) accs_[d].reduce_into(accs_[0]);
  reduce_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  accs_[0].finish(sink, rows_per_slab);
}

std::uint64_t ShardedFieldAccumulator::device_buffer_bytes() const {
  return accs_.front().device_buffer_bytes();
}

AccumulatorTiming ShardedFieldAccumulator::timing() const {
  AccumulatorTiming t;
  for (const auto& a : accs_) {
    const auto x = a.timing();
    t.kernel_seconds += x.kernel_seconds;
    t.launches += x.launches;
    t.electrons += x.electrons;
    t.launch_seconds.insert(t.launch_seconds.end(), x.launch_seconds.begin(), x.launch_seconds.end());
  }
  return t;
}

}  // namespace edm
