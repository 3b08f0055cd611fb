// Multi-device accumulation: shard each batch over the devices, reduce with CLBlast at the end.
#include "edm/sharded.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>

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

std::vector<std::pair<int, int>> pixel_shard_tiles(int ny, int devices, const std::string& what) {
  const auto owned = split_rows(ny, devices, what);
  const int h = owned.front().second - owned.front().first;  // the tallest: the first ones are
  std::vector<std::pair<int, int>> tiles;
  for (const auto& [a, b] : owned) {
    const int y0 = std::min(a, ny - h);  // moved up to end at the last row: it still holds [a, b)
    tiles.emplace_back(y0, y0 + h);
  }
  return tiles;
}

ShardedFieldAccumulator::ShardedFieldAccumulator(const std::vector<DeviceInfo>& devices, const Screen& screen,
                                                 Mode mode, const KernelOptions& options, Sharding by) {
  if (devices.empty()) throw ConfigError("EDM-DEV-004", "no device to accumulate on");
  by_ = devices.size() > 1 && by == Sharding::Pixels ? Sharding::Pixels : Sharding::Electrons;
  // Every device's buffers are created (and the memory guard checked) before anything is solved.
  if (by_ == Sharding::Electrons) {
    for (const auto& d : devices) accs_.emplace_back(open_device(d), screen, mode, options);
    return;
  }
  // A tile with fewer rows than devices (the last pass of a screen run in tiles in turn) takes the
  // first ny devices: a device has at least one row. The run refuses more devices than screen rows
  // before this (plan_sharding).
  const int used = int(std::min<std::size_t>(devices.size(), std::size_t(screen.ny)));
  const std::string what = "accumulator.sharding = \"pixels\" over " + std::to_string(used) +
                           " devices (accumulator.devices)";
  const auto tiles = pixel_shard_tiles(screen.ny, used, what);
  for (const auto& [a, b] : split_rows(screen.ny, used, what)) owned_.emplace_back(screen.row0 + a, screen.row0 + b);
  if (used == 1) {  // one device holds the whole tile
    by_ = Sharding::Electrons;
    owned_.clear();
  }
  for (std::size_t d = 0; d < std::size_t(used); ++d)
    accs_.emplace_back(open_device(devices[d]), screen_tile(screen, tiles[d].first, tiles[d].second), mode, options);
}

void ShardedFieldAccumulator::accumulate(const SplineBatch& batch) {
  if (accs_.size() == 1 || by_ == Sharding::Pixels) {
    for (auto& a : accs_) a.accumulate(batch);  // by pixels: every device every electron
    return;
  }
  const std::size_t n = batch.electrons.size(), D = accs_.size();
  for (std::size_t d = 0; d < D; ++d) {
    const std::size_t lo = n * d / D, hi = n * (d + 1) / D;
    if (hi > lo) accs_[d].accumulate(slice_batch(batch, lo, hi - lo));
  }
}

void ShardedFieldAccumulator::accumulate_in_slabs(const SplineBatch& batch, int rows) {
  if (accs_.size() == 1 || by_ == Sharding::Pixels)
    for (auto& a : accs_) a.accumulate_in_slabs(batch, rows);
  else
    accumulate(batch);
}

void ShardedFieldAccumulator::upload_ahead(const SplineBatch& batch) {
  if (accs_.size() == 1 || by_ == Sharding::Pixels)
    for (auto& a : accs_) a.upload_ahead(batch);
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
  if (by_ == Sharding::Pixels) {  // every device sums every electron: done where the slowest is done
    n = UINT64_MAX;
    for (auto& a : accs_) n = std::min(n, a.electrons_completed());
    return n;
  }
  for (auto& a : accs_) n += a.electrons_completed();
  return n;
}

void ShardedFieldAccumulator::finish(const SlabSink& sink, int rows_per_slab) {
  if (by_ == Sharding::Pixels) {
    // Each device's own rows in turn, device order (ascending rows); a row its tile repeats from
    // the tile before is not handed over twice.
    for (std::size_t d = 0; d < accs_.size(); ++d) {
      const auto [o0, o1] = owned_[d];
      const std::size_t row = std::size_t(accs_[d].screen().nx) * std::size_t(accs_[d].screen().samples);
      accs_[d].finish(
          [&, o0 = o0, o1 = o1](int b, int c, int y0, int y1, const double* data) {
            const int a = std::max(y0, o0), e = std::min(y1, o1);
            if (a < e) sink(b, c, a, e, data + std::size_t(a - y0) * row);
          },
          rows_per_slab);
    }
    return;
  }
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
    // By pixels every device sums every electron: the run's electrons once.
    t.electrons = by_ == Sharding::Pixels ? std::max(t.electrons, x.electrons) : t.electrons + x.electrons;
    t.launch_seconds.insert(t.launch_seconds.end(), x.launch_seconds.begin(), x.launch_seconds.end());
    t.upload_seconds += x.upload_seconds;
    t.upload_bytes += x.upload_bytes;
  }
  return t;
}

}  // namespace edm
