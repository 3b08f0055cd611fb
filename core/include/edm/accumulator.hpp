// The field accumulator (DESIGN §4): device buffers of Nx × Ny × 3 × N_samples doubles per bucket
// that persist across electron batches; one launch per electron over (pixel, sample chunk)
// work-items, each owning its slots (no atomics), in electron order on one in-order queue — so a
// given device adds the same contributions in the same order whatever the batching.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "edm/device.hpp"
#include "edm/screen.hpp"
#include "edm/trajectory.hpp"

namespace edm {

// How device positions map to pixels (the cube's device layout [comp][k][position] and which pixels
// share a warp). Only speed depends on it: every slot gets the same additions in the same order.
//   Rings: bands half a pixel pitch wide around the screen centre, each band by angle — a warp's
//          32 pixels form an arc at one distance from the axis, so their retarded times (which
//          depend on that distance) sit within a few knots of each other for every electron of a
//          beam near the axis, and the warp's interval loads touch a few cache lines instead of
//          ~18 (benchmark cell; BENCHMARKS.md).
//   Tiles: tile_width × (work_group / tile_width) blocks, row-major within a block.
//   Rows:  plain row order (identity).
enum class PixelOrder { Auto = 0, Rings = 1, Tiles = 2, Rows = 3 };
const char* pixel_order_name(PixelOrder o);  // "auto", "rings", "tiles", "rows"
PixelOrder parse_pixel_order(const std::string& name);  // ConfigError naming the key on a bad name

// The permutation: pixel (iy·nx + ix) at each device position, every pixel exactly once. tile_w,
// tile_h only for Tiles. Deterministic across platforms (IEEE-exact arithmetic only: no libm).
std::vector<std::int32_t> pixel_permutation(const Screen& screen, PixelOrder order, int tile_w = 4, int tile_h = 8);

struct KernelOptions {
  int newton_iters = 2;       // ≥ 1 Newton steps per sample after the warm start
  bool coef_reuse = true;     // load an interval's coefficients once per sample, not per evaluation
  int sample_chunks = 0;      // C ≥ 1 chunks per pixel; 0 = from the device
  int work_group = 0;         // 0 = from the device
  int electron_group = 0;     // G ≥ 1 electrons per launch, 0 = from the device: each slot is read
                              // and written once per launch (bit-identical to G = 1, slot traffic / G)
  int tile_width = 0;         // pixels per tile row (pixel_order tiles; divides work_group);
                              // > 0 with pixel_order auto selects tiles, < 0 row order; the
                              // effective value is 0 unless the order is tiles
  PixelOrder pixel_order = PixelOrder::Auto;  // Auto: tiles when tile_width > 0, rows when
                                              // tile_width < 0, else rings (effective value set)
  int state_local = 0;        // the G electrons' solver state in local memory instead of registers:
                              // 0 = from the device (GPUs, when it fits), 1 = on, < 0 = off
  int max_registers = 0;      // register cap per work-item where the compiler has one (NVIDIA);
                              // 0 = from the device (128 on NVIDIA GPUs), < 0 = none
  int fast_recip = 0;         // divisions and square roots of the per-slot path from refined
                              // seeds (within a few ulps, no slow-path branch; seeds: nv_seed):
                              // 0 = from the device (GPUs), 1 = on, < 0 = off (the built-ins)
  int nv_seed = 0;            // with fast_recip: seeds from NVIDIA's FP64 approximation instructions
                              // (inline PTX, 2⁻²⁰: one refinement instead of two, no float round
                              // trip). 0 = from the device (NVIDIA), 1 = on (NVIDIA only), < 0 = off
  int interleave = 0;         // the G warm solves of a sample phase by phase (all predictors, each
                              // Newton step for all, all fields): overlap for out-of-order CPUs;
                              // needs the state in registers. 0 = from the device (CPUs), 1 on, < 0 off
};

// Receives the finished cube slab by slab, in SI-free normalised units (writer scales):
// bucket (0 E, 1 B, 2 E_far, 3 B_far), component (0 x, 1 y, 2 z), rows [iy0, iy1), data laid out
// (iy1 − iy0, nx, samples), time fastest — exactly a hyperslab of field.h5's dataset.
using SlabSink = std::function<void(int bucket, int comp, int iy0, int iy1, const double* data)>;

struct AccumulatorTiming {
  double kernel_seconds = 0;   // sum of OpenCL profiling times of the launches
  std::uint64_t launches = 0;
  std::uint64_t electrons = 0;
  std::vector<double> launch_seconds;  // each launch's profiling time, in launch order
};

// The memory guard (DeviceError naming the numbers and the screen setting): the cube's buffers must
// fit the device's maximum allocation and global memory. Returns the bytes per bucket. The
// accumulator calls it; the run driver calls it first of all, before any trajectory work.
std::uint64_t check_device_memory(const DeviceInfo& info, const Screen& screen, Mode mode);

class FieldAccumulator {
 public:
  FieldAccumulator(std::shared_ptr<Device> device, const Screen& screen, Mode mode,
                   const KernelOptions& options);
  ~FieldAccumulator();
  FieldAccumulator(FieldAccumulator&&) noexcept;
  FieldAccumulator& operator=(FieldAccumulator&&) noexcept;

  // Uploads the batch's splines and enqueues one launch per electron; returns without waiting
  // for the kernels (the batch may be released once this returns: uploads are complete).
  void accumulate(const SplineBatch& batch);
  // Waits for every launch, then streams the cube to `sink` in slabs of rows. May be called with
  // no batch accumulated (zero field). The accumulator is finished afterwards.
  void finish(const SlabSink& sink, int rows_per_slab = 0);
  // Waits for the launches (no download).
  void drain();
  // Adds this cube into `target`'s on target's device (CLBlast, in chunks) and finishes this one.
  // Screens and modes must match (Error otherwise). The multi-device reduce.
  void reduce_into(FieldAccumulator& target);

  // Checkpoints: the raw device buffers (device layout, bucket by bucket, in chunks). download_raw
  // drains first; upload_raw overwrites the buffers (same screen, mode and device layout).
  using RawSink = std::function<void(int bucket, std::uint64_t offset, const double* data, std::size_t n)>;
  using RawSource = std::function<void(int bucket, std::uint64_t offset, double* data, std::size_t n)>;
  std::uint64_t raw_doubles_per_bucket() const;
  // FNV-1a hash of the pixel permutation: the raw layout's fingerprint (a checkpoint records it, a
  // reduce and a resume require it to match).
  std::uint64_t layout_hash() const;
  void download_raw(const RawSink& sink);
  void upload_raw(const RawSource& source);

  const Screen& screen() const;
  Mode mode() const;
  std::uint64_t device_buffer_bytes() const;
  AccumulatorTiming timing() const;
  const KernelOptions& options() const;  // effective (auto values resolved)
  // The compiler's build log of the field kernel (with -cl-nv-verbose on NVIDIA: registers, spills);
  // empty when the program came from a binary cache (edm's, or NVIDIA's own JIT cache when the same
  // source and options were built before — set EDM_NO_KERNEL_CACHE=1 and clear ~/.nv/ComputeCache
  // to see it again).
  const std::string& build_log() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// Plain C++ double-precision reference of the same physics sharing no code with the kernel (its own
// retarded-time root finder on the spline: GSL Brent; the 3-vector Liénard–Wiechert form). Returns
// the cube in the slab layout: [bucket][comp][iy][ix][k] (normalised).
std::vector<double> host_reference_field(const Screen& screen, Mode mode, const SplineBatch& batch);

}  // namespace edm
