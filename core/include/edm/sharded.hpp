// ShardedFieldAccumulator: one FieldAccumulator per device; every batch is split over the same
// devices in contiguous blocks of electrons, the devices run concurrently (launches are
// asynchronous), and finish() reduces every cube into device 0's with CLBlast, slab by slab, then
// downloads once. Agreement with one device: relative L2 < 1e-12 (addition order differs).
#pragma once
#include <memory>
#include <vector>

#include "edm/accumulator.hpp"

namespace edm {

class ShardedFieldAccumulator {
 public:
  ShardedFieldAccumulator(const std::vector<DeviceInfo>& devices, const Screen& screen, Mode mode,
                          const KernelOptions& options);
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
  std::uint64_t device_buffer_bytes() const;  // per device
  AccumulatorTiming timing() const;           // summed over devices
  const KernelOptions& options() const { return accs_.front().options(); }
  double reduce_seconds() const { return reduce_seconds_; }
  // Checkpoint access to each device's accumulator (device order).
  FieldAccumulator& device_accumulator(std::size_t d) { return accs_.at(d); }
  const FieldAccumulator& device_accumulator(std::size_t d) const { return accs_.at(d); }

 private:
  std::vector<FieldAccumulator> accs_;
  double reduce_seconds_ = 0;
};

// Electrons [first, first + count) of a batch as a batch of their own (coefficients copied).
SplineBatch slice_batch(const SplineBatch& b, std::size_t first, std::size_t count);

}  // namespace edm
