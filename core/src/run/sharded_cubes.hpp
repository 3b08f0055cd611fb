// The run driver's bridge between the field stage and the checkpoint (io/): the sharded
// accumulator's per-device raw cubes as the RawCubes a checkpoint reads and restores.
#pragma once
#include "edm/checkpoint.hpp"
#include "edm/sharded.hpp"
#include "field/fnv1a.hpp"

namespace edm {

class ShardedCubes final : public RawCubes {
 public:
  explicit ShardedCubes(ShardedFieldAccumulator& acc) : acc_(acc) {}
  std::size_t devices() const override { return acc_.device_count(); }
  int buckets() const override { return bucket_count(acc_.device_accumulator(0).mode()); }
  std::uint64_t doubles_per_bucket() const override {
    return acc_.device_accumulator(0).raw_doubles_per_bucket();
  }
  // By pixels the devices hold different tiles: every device's fingerprint, folded in device order,
  // so a checkpoint restores only into the same tiles (by electrons every device has device 0's).
  std::uint64_t layout_hash() const override {
    if (acc_.sharding() != Sharding::Pixels) return acc_.device_accumulator(0).layout_hash();
    std::uint64_t h = detail::kFnvOffset;
    for (std::size_t d = 0; d < acc_.device_count(); ++d)
      for (int b = 0; b < 8; ++b) h = detail::fnv1a_byte(h, (acc_.device_accumulator(d).layout_hash() >> (8 * b)) & 0xffu);
    return h;
  }
  // What the layout comes from: the screen and mode (the cube's size), the effective pixel order,
  // tile width and work group (the permutation).
  LayoutKeys layout_keys() const override {
    const FieldAccumulator& a = acc_.device_accumulator(0);
    const KernelOptions& o = a.options();
    return {{"screen.nx", std::to_string(a.screen().nx)},
            {"screen.ny", std::to_string(a.screen().ny)},
            {"screen.samples", std::to_string(a.screen().samples)},
            {"run.mode", name(a.mode())},
            {"accumulator.pixel_order", name(o.pixel_order)},
            {"accumulator.tile_width", std::to_string(o.tile_width)},
            {"accumulator.work_group", std::to_string(o.work_group)}};
  }
  void download(std::size_t device, const Sink& sink) override {
    acc_.device_accumulator(device).download_raw(sink);
  }
  void upload(std::size_t device, const Source& source) override {
    acc_.device_accumulator(device).upload_raw(source);
  }

 private:
  ShardedFieldAccumulator& acc_;
};

}  // namespace edm
