// The field accumulator: device buffers of Nx × Ny × 3 × N_samples doubles per bucket that persist
// across electron batches; one launch per group of electrons over (pixel, sample chunk) work-items,
// each owning its slots (no atomics), in electron order on one in-order queue — so a given device
// adds the same contributions in the same order whatever the batching.
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "edm/coverage.hpp"
#include "edm/device.hpp"
#include "edm/kernel_options.hpp"
#include "edm/screen.hpp"
#include "edm/trajectory.hpp"

namespace edm {

namespace detail {
struct FieldAccess;  // core/src/field/field_access.hpp (the fft spectra read the cube on the device)
}

// The permutation: pixel (iy·nx + ix) at each device position, every pixel exactly once. tile_w,
// tile_h only for Tiles. Deterministic across platforms (IEEE-exact arithmetic only: no libm).
std::vector<std::int32_t> pixel_permutation(const Screen& screen, PixelOrder order, int tile_w = 4, int tile_h = 8);

// Receives the finished cube slab by slab, in SI-free normalised units (writer scales):
// bucket (0 E, 1 B, 2 E_far, 3 B_far), component (0 x, 1 y, 2 z), rows [iy0, iy1), data laid out
// (iy1 − iy0, nx, samples), time fastest — exactly a hyperslab of field.h5's dataset. The rows are
// the full screen's: an accumulator on a tile (screen_tile, Screen::row0) hands over rows
// [row0, row0 + ny), the tile's hyperslab of the full screen's dataset.
using SlabSink = std::function<void(int bucket, int comp, int iy0, int iy1, const double* data)>;

struct AccumulatorTiming {
  double kernel_seconds = 0;   // sum of OpenCL profiling times of the launches
  std::uint64_t launches = 0;
  std::uint64_t electrons = 0;
  std::vector<double> launch_seconds;  // each launch's profiling time, in launch order
  // The batches' spline uploads (blocking writes on the transfer queue): wall seconds and bytes.
  // Their ratio is the cost model's upload constant (plan.cpp, accumulator.sharding = "auto").
  double upload_seconds = 0;
  std::uint64_t upload_bytes = 0;
};

// The memory guard (DeviceError naming the numbers and the screen setting): the cube's buffers must
// fit the device's maximum allocation and global memory. Returns the bytes per bucket. The
// accumulator calls it; the run driver calls it first of all, before any trajectory work.
std::uint64_t check_device_memory(const DeviceInfo& info, const Screen& screen, Mode mode);
// The largest field buffer (one bucket) edm allocates on a device, and the global memory its
// buffers may take: the device's max allocation and global memory, or less where the environment's
// EDM_MAX_DEVICE_ALLOCATION or EDM_MAX_DEVICE_MEMORY (bytes; meant for tests, share/docs/design.md)
// cap them, so that a screen larger than the cap runs in tiles in turn. ConfigError EDM-TILE-003
// naming the variable for a value that is not a positive integer.
std::uint64_t allowed_allocation(const DeviceInfo& info);
std::uint64_t allowed_global_memory(const DeviceInfo& info);

class FieldAccumulator {
 public:
  FieldAccumulator(std::shared_ptr<Device> device, const Screen& screen, Mode mode,
                   const KernelOptions& options);
  ~FieldAccumulator();
  FieldAccumulator(FieldAccumulator&&) noexcept;
  FieldAccumulator& operator=(FieldAccumulator&&) noexcept;

  // Uploads the batch's splines and queues one launch per group of electrons (the first ones go
  // onto the device at once, the rest as the bounded queue below allows: drain, finish); returns
  // without waiting for the kernels (the batch may be released once this returns: uploads are
  // complete).
  void accumulate(const SplineBatch& batch);
  // The same additions as accumulate() (so the cube is bit-identical), but launched slab by slab of
  // `rows` screen rows — every group over slab 0, then every group over slab 1, … — so that
  // finish() can download and hand over each slab as soon as its launches are done, while the
  // device computes the later slabs. Meant for the last batch of a run (run/batches.cpp).
  void accumulate_in_slabs(const SplineBatch& batch, int rows);
  // Uploads the batch's splines now, on a transfer queue beside the launches in flight, so that the
  // accumulate() (or accumulate_in_slabs) of the same batch, next, only enqueues its launches: the
  // device then goes from one batch to the next without waiting for the upload.
  void upload_ahead(const SplineBatch& batch);
  // Streams the cube to `sink` in slabs of rows, each as soon as the launches that add to it are
  // done (so the download and the sink overlap the last launches after accumulate_in_slabs), and
  // waits for every launch. May be called with no batch accumulated (zero field). The accumulator
  // is finished afterwards.
  void finish(const SlabSink& sink, int rows_per_slab = 0);
  // Waits for the launches (no download). Launches go onto the device queue through a bounded
  // queue (about a quarter of a second of kernel work ahead, estimated from the finished launches):
  // accumulate() and accumulate_in_slabs() enqueue what fits and keep the rest pending, drain()
  // and finish() enqueue the rest as launches finish. With a stop flag set (set_stop), no pending
  // launch is enqueued any more: drain() then returns after the launches already enqueued, and
  // stopped() holds.
  void drain();
  // Enqueues every pending launch now, past the queue's budget and without waiting, for a caller
  // that reads the cube on the device next, behind the launches on the same in-order queue (the
  // fft spectra read each electron's series so). Nothing is sent once a stop has halted the queue.
  void enqueue_pending();
  // The stop request (SIGINT/SIGTERM, set by the app) checked before every launch; null: none.
  void set_stop(const std::atomic<bool>* flag);
  // Whether a stop request left launches pending (they are never enqueued).
  bool stopped() const;
  // When stopped(): the first electron (global index) of the first launch left pending, i.e. the
  // cube holds the accumulated electrons before it and none from it on; none for a batch launched
  // in slabs (its slabs then hold different electrons).
  std::optional<std::uint64_t> stopped_at() const;
  // For drains across devices (ShardedFieldAccumulator): enqueues what the budget allows without
  // waiting, true while launches are left pending (and no stop halted them); and waits for the
  // oldest launch running.
  bool feed();
  void wait_for_launch();
  // Electrons whose launches on this device have completed, since construction (not those of a
  // cube restored by upload_raw): finished device work, for progress. Polls the launches' events,
  // without waiting; safe to call while another thread is in drain().
  std::uint64_t electrons_completed();
  // Adds this cube into `target`'s on target's device (CLBlast, in chunks) and finishes this one.
  // Screens and modes must match (Error otherwise). The multi-device reduce.
  void reduce_into(FieldAccumulator& target);

  // Checkpoints: the raw device buffers (device layout, bucket by bucket, in chunks). download_raw
  // drains first; upload_raw overwrites the buffers (same screen, mode and device layout).
  using RawSink = std::function<void(int bucket, std::uint64_t offset, const double* data, std::size_t n)>;
  using RawSource = std::function<void(int bucket, std::uint64_t offset, double* data, std::size_t n)>;
  std::uint64_t raw_doubles_per_bucket() const;
  // FNV-1a hash of the pixel permutation (and, on a tile, of its row0 and rows_total): the raw
  // layout's fingerprint (a checkpoint records it, a reduce and a resume require it to match, so a
  // tile's checkpoint never restores into another tile).
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
  // The field kernel as the OpenCL runtime reports it once built: max_work_group,
  // preferred_work_group_multiple, work_group (the one launched), private_mem_bytes and
  // local_mem_bytes (CL_KERNEL_PRIVATE_MEM_SIZE, CL_KERNEL_LOCAL_MEM_SIZE, where the runtime answers).
  const std::map<std::string, double>& kernel_resources() const;

  struct Impl;

 private:
  friend struct detail::FieldAccess;
  std::unique_ptr<Impl> impl_;
};

// Plain C++ double-precision reference of the same physics sharing no code with the kernel (its own
// retarded-time root finder on the spline: GSL Brent; the 3-vector Liénard–Wiechert form). Returns
// the cube in the slab layout: [bucket][comp][iy][ix][k] (normalised).
std::vector<double> host_reference_field(const Screen& screen, Mode mode, const SplineBatch& batch);

}  // namespace edm
