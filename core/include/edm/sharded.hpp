// ShardedFieldAccumulator: one FieldAccumulator per device, the devices running concurrently
// (launches are asynchronous), in one of two ways (accumulator.sharding):
// - by electrons: every batch is split over the devices in contiguous blocks of electrons, each
//   device holds a full cube, and finish() reduces every cube into device 0's with CLBlast, slab by
//   slab, then downloads once. Agreement with one device: relative L2 < 1e-12 (addition order differs).
// - by pixels: each device holds a tile of screen rows (screen_tile) and takes every electron of
//   every batch; finish() downloads each device's own rows in turn, no reduce. Every slot sees the
//   same electrons in the same order as on one device: bit-identical to one device. The tiles are
//   of one height (ceil(ny / D); the last one moved up to end at the last row, so it may repeat a
//   few rows of the one before, computed twice and written once), so that every device's raw cube
//   has one size and a checkpoint keeps its format; each device owns and writes its rows of a
//   near-equal split (owned_rows).
#pragma once
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "edm/accumulator.hpp"

namespace edm {

class ShardedFieldAccumulator {
 public:
  // `by`: Sharding::Pixels or Sharding::Electrons (Auto is resolved by the caller: taken as
  // Electrons). By pixels on fewer screen rows than devices, the first ny devices only (one of
  // them: by electrons, i.e. alone); the run refuses that before (plan_sharding, EDM-TILE-002).
  ShardedFieldAccumulator(const std::vector<DeviceInfo>& devices, const Screen& screen, Mode mode,
                          const KernelOptions& options, Sharding by = Sharding::Electrons);
  void accumulate(const SplineBatch& batch);
  // FieldAccumulator::accumulate_in_slabs on one device; on several, accumulate() (their cubes are
  // reduced before any slab can be downloaded).
  void accumulate_in_slabs(const SplineBatch& batch, int rows);
  // FieldAccumulator::upload_ahead on one device; on several nothing (their slices are uploaded by
  // accumulate()).
  void upload_ahead(const SplineBatch& batch);
  // Drains every device together: each device's bounded queue is fed while the others run.
  void drain();
  void set_stop(const std::atomic<bool>* flag);  // FieldAccumulator::set_stop on every device
  bool stopped() const;                          // on any device
  // FieldAccumulator::stopped_at on one device; none on several (their blocks of the batch were
  // cut at different electrons, so the cubes together hold no prefix of the ensemble).
  std::optional<std::uint64_t> stopped_at() const;
  std::uint64_t electrons_completed();  // summed over devices (FieldAccumulator::electrons_completed)
  void finish(const SlabSink& sink, int rows_per_slab = 0);

  std::size_t device_count() const { return accs_.size(); }
  Sharding sharding() const { return by_; }
  // By pixels: the rows [first, second) that device d owns and writes, in the full screen's
  // numbering (a partition of the screen's rows, in device order); by electrons: empty.
  const std::vector<std::pair<int, int>>& owned_rows() const { return owned_; }
  std::uint64_t device_buffer_bytes() const;  // per device
  AccumulatorTiming timing() const;           // summed over devices
  const KernelOptions& options() const { return accs_.front().options(); }
  double reduce_seconds() const { return reduce_seconds_; }
  // Checkpoint access to each device's accumulator (device order).
  FieldAccumulator& device_accumulator(std::size_t d) { return accs_.at(d); }
  const FieldAccumulator& device_accumulator(std::size_t d) const { return accs_.at(d); }

 private:
  std::vector<FieldAccumulator> accs_;
  Sharding by_ = Sharding::Electrons;
  std::vector<std::pair<int, int>> owned_;
  double reduce_seconds_ = 0;
};

// Electrons [first, first + count) of a batch as a batch of their own (coefficients copied).
SplineBatch slice_batch(const SplineBatch& b, std::size_t first, std::size_t count);

// The devices' tiles of pixel sharding, rows [first, second) of ny: each ceil(ny / devices) rows,
// containing the device's rows of split_rows(ny, devices) (the last ones moved up to end at row
// ny). ConfigError EDM-TILE-002 naming `what` when devices > ny.
std::vector<std::pair<int, int>> pixel_shard_tiles(int ny, int devices, const std::string& what);

}  // namespace edm
