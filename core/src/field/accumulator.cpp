// FieldAccumulator: persistent device buffers per bucket in the layout [comp][k][position]
// (position fastest; position → pixel by the pixel order's permutation, see cl/lienard_wiechert.cl),
// one kernel launch per group of G electrons on one in-order queue, and a slab-by-slab download
// through a device-side transpose into the output layout (iy, ix, k). The device's defaults for the
// kernel's tunables come from one table (field/tuning.cpp); the kernels' arguments are bound by
// name (field/kernel_args.hpp).
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "edm/accumulator.hpp"
#include "field/field_access.hpp"
#include "field/fnv1a.hpp"
#include "field/kernel_args.hpp"
#include "field/kernels.hpp"
#include "field/opencl_internal.hpp"
#include "field/tuning.hpp"

#include <clblast.h>

namespace edm {

struct FieldAccumulator::Impl {
  std::shared_ptr<Device> device;
  Screen screen;
  Mode mode;
  KernelOptions options;
  detail::BoundKernel<detail::kLwAccumulate> lw;
  detail::BoundKernel<detail::kSlabTranspose> transpose;
  detail::BoundKernel<detail::kLwLightFront> light_front;
  std::vector<std::int32_t> pixel_of;  // pixel at each device position (pixel_permutation)
  std::uint64_t layout_hash = 0;
  cl::Buffer pixel_of_buf, position_of_buf;  // the permutation and its inverse
  // Angular screens: n̂ and n_z − s_z per pixel. The flat screen gets one zeroed entry that its
  // kernel never reads: every kernel argument must still be a valid buffer object.
  cl::Buffer dirs_buf;
  std::vector<cl::Buffer> buckets;   // bucket_count(mode) buffers of 3·samples·pixels doubles
  std::uint64_t bucket_bytes = 0;
  // Coefficient buffers of enqueued launches, each with its launch's event: kept alive until that
  // launch completes (pruned on every accumulate, cleared on drain).
  struct InFlight {
    cl::Buffer coef;
    cl::Event last;
  };
  std::deque<InFlight> in_flight;
  // accumulate_in_slabs: the device positions grouped by slab of `slab_rows` screen rows (ascending
  // within a slab), slab s at [slab_first[s], slab_first[s + 1]); and, for the slabs of the last
  // such call, the event after which rows [.., y1) of the cube are final (finish() waits on it).
  cl::Buffer positions_buf;
  int slab_rows = 0;
  std::vector<int> slab_first;
  struct SlabDone {
    int y1;
    cl::Event last;
  };
  std::vector<SlabDone> slab_done;
  // The bounded queue (share/docs/errors.md, "Stops"): every launch is first a Pending one, and
  // pump() moves launches onto the device queue only while the kernel work queued ahead is
  // estimated below kQueueSeconds (from the finished launches' profiling times), checking the stop
  // flag before each. A stop request thus waits for a fraction of a second of kernels, and the
  // cube then holds exactly the launches enqueued (halted: the rest are never enqueued).
  struct Pending {
    cl::Buffer coef, positions;
    std::vector<double> grp;  // the launch's electrons by value (lw_group)
    cl_int count = 0;
    int pos_first = 0, n_positions = 0;
    std::size_t items = 0;
    std::uint64_t first_index = 0, last_index = 0;  // global electron indices (messages, stopped_at)
    double work = 0;   // electrons × positions: the unit of the time estimate
    int slab_y1 = 0;   // > 0: the last launch of a slab of accumulate_in_slabs (rows [.., y1) final after it)
    bool in_slab() const { return n_positions > 0; }  // a launch over one slab's positions
  };
  std::deque<Pending> pending;
  const std::atomic<bool>* stop = nullptr;
  bool halted = false;                          // a stop request left launches pending
  double measured_seconds = 0, measured_work = 0;  // finished launches: the rate of the estimate
  // upload_ahead: the splines of the batch at `ahead_of` (its first electron and size) already on
  // the device, for the accumulate() of that batch.
  cl::Buffer ahead;
  const SplineBatch* ahead_of = nullptr;
  std::uint64_t ahead_first = 0, ahead_size = 0;
  std::vector<cl::Event> launches;  // profiling events not yet summed
  // Progress (electrons_completed): each launch's event with its electron count, until seen done.
  // Read from the driving thread while a watcher thread drains, hence the lock.
  std::mutex progress_mu;
  struct Running {
    cl::Event ev;
    std::uint64_t count = 0;
    double work = 0;
  };
  std::deque<Running> unfinished;
  std::uint64_t completed = 0;
  std::vector<cl::Event> passes;    // the same for the light-front passes (kernel time, not launches)
  AccumulatorTiming timing;
  bool finished = false;
  std::size_t global = 0, local = 0;
  std::string build_log;
  std::map<std::string, double> kernel_resources;  // lw's work-group info (FieldAccumulator::kernel_resources)
  std::map<std::string, std::string> defines;  // of the field program (program_defines)
  bool weighted = false;  // lw is the LW_WEIGHTED build: 7 doubles per electron in its table

  std::string where() const {
    return "device " + std::to_string(device->info().index) + " (" + device->info().name + ")";
  }

  void collect_timing() {
    for (auto& e : launches) {
      const auto t0 = e.getProfilingInfo<CL_PROFILING_COMMAND_START>();
      const auto t1 = e.getProfilingInfo<CL_PROFILING_COMMAND_END>();
      timing.kernel_seconds += double(t1 - t0) * 1e-9;
      timing.launch_seconds.push_back(double(t1 - t0) * 1e-9);
    }
    launches.clear();
    for (auto& e : passes)
      timing.kernel_seconds += double(e.getProfilingInfo<CL_PROFILING_COMMAND_END>() -
                                      e.getProfilingInfo<CL_PROFILING_COMMAND_START>()) * 1e-9;
    passes.clear();
  }

  // Construction, in order (the constructor's steps).
  void create_kernels(const cl::Program& program, detail::KernelTuning& tuning);
  void upload_pixel_order();
  void upload_directions();
  void create_buckets();
  void bind_screen_arguments();
  // accumulate()'s steps.
  void check_batch(const SplineBatch& batch) const;
  void check_substeps(const SplineBatch& batch) const;
  void release_finished_batches();
  cl::Buffer upload(const SplineBatch& batch);
  cl::Buffer take_upload(const SplineBatch& batch);
  void form_light_front(const cl::Buffer& coef, const SplineBatch& batch);
  // One pending launch per group over the positions [pos_first, pos_first + n_positions) of
  // positions_buf (n_positions = 0: every position); the last one marked as ending rows [.., slab_y1).
  void queue_groups(const cl::Buffer& coef, const std::vector<ElectronSpline>& electrons, int pos_first = 0,
                    int n_positions = 0, int slab_y1 = 0);
  // The bounded queue: enqueue_front() moves the first pending launch onto the device queue;
  // room() says whether the budget allows one more; wait_oldest() waits for the oldest launch
  // running; stopping() is the stop check before every launch (true: a stop request halted the
  // launches); step() does one of the two (false: halted); pump(block) enqueues while there is
  // room, waiting for launches to finish when `block`; true when nothing is left pending.
  void enqueue_front();
  bool room();
  bool stopping();
  void wait_oldest();
  bool step();
  bool pump(bool block);
  void retire_locked();  // the finished prefix of `unfinished` (progress_mu held)
  void build_slab_positions(int rows);
  // finish()'s steps.
  cl::Event ready_event(int iy1);
  void download_pipelined(const SlabSink& sink, int rows_per_slab);
  void use_weighted_kernel();
};

namespace {

// The kernel work the bounded queue keeps enqueued ahead (seconds, estimated from the finished
// launches): a stop request waits for about this much (share/docs/errors.md, "Stops"), and it is
// well above a launch's enqueue cost, so the device never waits for the host.
constexpr double kQueueSeconds = 0.25;

// The device's kernel-argument space (≥ 1 KiB by the standard, 4 KiB on NVIDIA); it bounds the
// electrons per launch, which travel by value.
std::size_t max_parameter_bytes(const Device& d) {
  try {
    return d.device().getInfo<CL_DEVICE_MAX_PARAMETER_SIZE>();
  } catch (const cl::Error&) {
    return 1024;
  }
}

// The rk4 kernel's largest move of τ per RK4 sub-step, in knot spacings: cl/lw_slot.cl's
// LW_RK4_KNOT_FRACTION (passed as that define, so the kernel's "auto" and the host's check of a
// fixed count use one number). share/docs/design.md states the error bound it gives.
constexpr double kRk4KnotFraction = 0.125;

// The retarded-time kernel the request resolves to (kernel selection). Auto: the faster kernel measured for the
// device (BENCHMARKS.md, "Second kernel"). Rk4 runs on the flat screen's scalar kernel: the vector
// lanes and the interleaved schedule are Newton's, so an explicit request for them is refused with it.
KernelOptions select_field_kernel(KernelOptions o, const DeviceInfo& info, const Screen& screen,
                                  const std::string& where) {
  if (o.kernel == FieldKernel::Auto) o.kernel = FieldKernel::Newton;
  if (o.kernel != FieldKernel::Rk4) return o;
  if (o.substeps != -1) check_key_value("accumulator.substeps", o.substeps, "EDM-ACC-081");
  const char* clash = screen.angular() ? "screen.type = \"angular\""
                      : o.simd > 0     ? "accumulator.simd = 1"
                      : o.interleave > 0 ? "accumulator.interleave = 1"
                                         : nullptr;
  if (clash)
    throw ConfigError("EDM-ACC-080", std::string("accumulator.kernel = \"rk4\" cannot run with ") + clash + " on " +
                                         where + ": the RK4 march is the flat screen's scalar kernel; use "
                                         "accumulator.kernel = \"newton\" there");
  (void)info;
  o.simd = -1;
  o.interleave = -1;
  return o;
}

// The four-potential (run.mode = "potential") is summed by the scalar kernel (the vector lanes form
// the fields only): the lanes are switched off, as for any request they cannot meet (tuning.cpp,
// resolve_simd), and the manifest's [config] simd records it.
KernelOptions select_mode_kernel(KernelOptions o, Mode mode) {
  if (mode == Mode::Potential) o.simd = -1;
  return o;
}

// The compile-time defines of the field program (cl/lienard_wiechert.cl lists them).
std::map<std::string, std::string> program_defines(const detail::KernelTuning& t, Mode mode, const Screen& screen) {
  const KernelOptions& o = t.options;
  std::map<std::string, std::string> d{{"NEWTON_ITERS", std::to_string(o.newton_iters)},
          {"COEF_REUSE", o.coef_reuse ? "1" : "0"},
          {"SAMPLE_CHUNKS", std::to_string(o.sample_chunks)},
          {"SPLIT_MODE", mode == Mode::Split ? "1" : "0"},
          {"ELECTRON_GROUP", std::to_string(o.electron_group)},
          {"SCREEN_SIGN", screen.light_front_sign() > 0.0 ? "1.0" : "-1.0"},
          {"LW_STATE_LOCAL", t.fixed_work_group > 0 ? "1" : "0"},
          {"LW_FAST_RECIP", o.fast_recip > 0 ? "1" : "0"},
          {"LW_INTERLEAVE", o.interleave > 0 ? "1" : "0"},
          {"LW_NV_SEED", o.nv_seed > 0 ? "1" : "0"},
          {"LW_WG", std::to_string(std::max<std::size_t>(1, t.fixed_work_group))},
          {"LW_SIMD", std::to_string(std::max(0, o.simd))}};
  // The angular screen's observer (cl/lw_direction.cl); absent for the flat screen, whose program
  // stays what it was.
  if (screen.angular()) d["LW_ANGULAR"] = screen.far_field() ? "2" : "1";
  if (mode == Mode::Potential) d["LW_POTENTIAL"] = "1";  // absent for the fields: their program stays what it was
  if (o.kernel == FieldKernel::Rk4) {  // absent for Newton: its program stays what it was
    d["LW_RK4"] = "1";
    d["LW_SUBSTEPS"] = std::to_string(std::max(0, o.substeps));
    d["LW_RK4_KNOT_FRACTION"] = std::to_string(kRk4KnotFraction);
  }
  return d;
}

// The program's files: the flat screen's, with the angular observer before the launch where needed,
// or with the vector-lane kernel after it (options.simd > 0, which only the flat screen takes).
std::vector<std::string> program_files(const Screen& screen, const KernelOptions& o) {
  if (screen.angular()) return {"lw_slot.cl", "lw_direction.cl", "lienard_wiechert.cl"};
  if (o.simd > 0) return {"lw_slot.cl", "lienard_wiechert.cl", "lw_simd.cl"};
  return {"lw_slot.cl", "lienard_wiechert.cl"};
}

// Device positions per work-item: the lanes of the vector kernel, else 1.
std::size_t positions_per_item(const KernelOptions& o) { return o.simd > 0 ? std::size_t(o.simd) : 1; }

}  // namespace

const char* pixel_order_name(PixelOrder o) {
  switch (o) {
    case PixelOrder::Rings: return "rings";
    case PixelOrder::Tiles: return "tiles";
    case PixelOrder::Rows: return "rows";
    default: return "auto";
  }
}

PixelOrder parse_pixel_order(const std::string& name) {
  for (PixelOrder o : {PixelOrder::Auto, PixelOrder::Rings, PixelOrder::Tiles, PixelOrder::Rows})
    if (name == pixel_order_name(o)) return o;
  throw ConfigError("EDM-ACC-014", "accumulator.pixel_order = \"" + name +
                                       "\" is not one of \"auto\", \"rings\", \"tiles\", \"rows\"");
}

std::vector<std::int32_t> pixel_permutation(const Screen& s, PixelOrder order, int tile_w, int tile_h) {
  const std::int64_t n = std::int64_t(s.nx) * s.ny;
  std::vector<std::int32_t> out;
  out.reserve(std::size_t(n));
  if (order == PixelOrder::Tiles && tile_w > 0 && tile_h > 0) {
    for (int ty = 0; ty < s.ny; ty += tile_h)
      for (int tx = 0; tx < s.nx; tx += tile_w)
        for (int y = ty; y < std::min(ty + tile_h, s.ny); ++y)
          for (int x = tx; x < std::min(tx + tile_w, s.nx); ++x) out.push_back(std::int32_t(y * s.nx + x));
    return out;
  }
  for (std::int64_t p = 0; p < n; ++p) out.push_back(std::int32_t(p));
  if (order != PixelOrder::Rings && order != PixelOrder::Auto) return out;
  // Rings: band = ⌊ρ / (pitch/2)⌋ (the larger pixel pitch), then the
  // "diamond angle" in [0, 4) — monotone in the polar angle, and a division instead of atan2, so the
  // order (and with it the checkpoint layout) is the same on every platform.
  const double px = s.nx > 1 ? 2.0 * s.half_x / (s.nx - 1) : 0.0, py = s.ny > 1 ? 2.0 * s.half_y / (s.ny - 1) : 0.0;
  // Bands half a pitch wide: a quarter-warp (8 lanes, one L1 wavefront per distinct interval
  // of a 16-byte load) then spans ~2 knots radially and about as much from electrons off the
  // axis; thinner bands gain nothing (BENCHMARKS.md, "Tuning defaults", "Every device").
  const double band = 0.5 * (std::max(px, py) > 0 ? std::max(px, py) : 1.0);
  struct Key {
    std::int64_t band;
    double angle;
    std::int32_t p;
  };
  std::vector<Key> keys;
  keys.reserve(std::size_t(n));
  for (std::int64_t p = 0; p < n; ++p) {
    const double x = s.pixel_x(int(p % s.nx)), y = s.pixel_y(int(p / s.nx));
    const double rho = std::sqrt(x * x + y * y);
    const double a = (x == 0 && y == 0) ? 0.0
                     : y >= 0          ? (x >= 0 ? y / (x + y) : 1.0 - x / (-x + y))
                                       : (x < 0 ? 2.0 - y / (-x - y) : 3.0 + x / (x - y));
    keys.push_back({std::int64_t(std::floor(rho / band)), a, std::int32_t(p)});
  }
  std::sort(keys.begin(), keys.end(), [](const Key& a, const Key& b) {
    return a.band != b.band ? a.band < b.band : a.angle != b.angle ? a.angle < b.angle : a.p < b.p;
  });
  for (std::size_t i = 0; i < keys.size(); ++i) out[i] = keys[i].p;
  return out;
}

// A potential run needs a finite observer distance: refused on the far-field screen before anything
// is allocated or written (the driver's memory guard calls this first).
static void check_mode_screen(const Screen& screen, Mode mode) {
  if (mode == Mode::Potential && screen.far_field())
    throw ConfigError("EDM-ACC-090",
                      "run.mode = \"potential\" with screen.type = \"angular\" and screen.distance = \"infinity\": "
                      "the four-potential A^mu = K u^mu/(X.u) falls as 1/R and needs an observer at a finite "
                      "distance (share/docs/potential.md); set screen.distance to the sphere's radius in m, or "
                      "use a flat screen");
}

namespace {
// `value`, or less where the environment variable `name` (bytes; for tests) caps it.
std::uint64_t capped_by_env(const char* name, std::uint64_t value) {
  const char* cap = std::getenv(name);
  if (!cap || !*cap) return value;
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(cap, &end, 10);
  if (errno != 0 || *end != '\0' || v == 0 || cap[0] == '-')
    throw ConfigError("EDM-TILE-003", std::string(name) + " = \"" + cap +
                                          "\": a cap on the device's memory must be a positive number of bytes");
  return std::min<std::uint64_t>(value, v);
}
}  // namespace

std::uint64_t allowed_allocation(const DeviceInfo& info) {
  return capped_by_env("EDM_MAX_DEVICE_ALLOCATION", info.max_allocation);
}
std::uint64_t allowed_global_memory(const DeviceInfo& info) {
  return capped_by_env("EDM_MAX_DEVICE_MEMORY", info.global_memory);
}

// The memory guard: one buffer of 3 × samples × pixels doubles per bucket must fit the device's
// maximum allocation, and all buckets its global memory. Returns the bytes per bucket.
std::uint64_t check_device_memory(const DeviceInfo& info, const Screen& screen, Mode mode) {
  check_mode_screen(screen, mode);
  const int nb = bucket_count(mode);
  const std::string where = "device " + std::to_string(info.index) + " (" + info.name + ")";
  // In long double first: nx·ny and samples may each approach 2^31, so 24 × samples × pixels can
  // exceed 2^64, and the wrapped integer passed the guard (nx = 32768, ny = 10923,
  // samples = 2147418114 came out as "1 MiB"; found by tests/test_bad_inputs).
  const long double exact_bytes = 3.0L * screen.samples * static_cast<long double>(screen.pixels()) * sizeof(double);
  const std::uint64_t bucket_bytes = exact_bytes < 0x1p63L ? static_cast<std::uint64_t>(exact_bytes) : std::uint64_t(1) << 63;
  char shown[32];
  std::snprintf(shown, sizeof shown, "%.3Le", exact_bytes);
  const std::string shown_bytes = exact_bytes < 0x1p63L ? std::to_string(bucket_bytes) : std::string(shown);
  const std::string setting = "screen nx = " + std::to_string(screen.nx) + ", ny = " + std::to_string(screen.ny) +
                              ", samples = " + std::to_string(screen.samples) + ", mode = " +
                              name(mode);
  const std::uint64_t allowed = allowed_allocation(info);
  if (exact_bytes > static_cast<long double>(allowed))
    throw DeviceError("EDM-ACC-001", "field buffer of " + shown_bytes +
                                         " bytes per bucket (3 × samples × pixels doubles; " + setting +
                                         ") exceeds the max allocation of " + std::to_string(allowed) +
                                         " bytes of " + where +
                                         (allowed < info.max_allocation ? " (EDM_MAX_DEVICE_ALLOCATION)" : "") +
                                         "; reduce screen.nx/ny/samples");
  if (bucket_bytes * nb > allowed_global_memory(info))
    throw DeviceError("EDM-ACC-002", "field buffers of " + std::to_string(bucket_bytes * nb) + " bytes (" +
                                         std::to_string(nb) + " buckets; " + setting +
                                         ") exceed the global memory of " + std::to_string(allowed_global_memory(info)) +
                                         " bytes of " + where + "; reduce screen.nx/ny/samples or use total mode");

  return bucket_bytes;
}

FieldAccumulator::FieldAccumulator(std::shared_ptr<Device> device, const Screen& screen, Mode mode,
                                   const KernelOptions& options)
    : impl_(std::make_unique<Impl>()) {
  auto& m = *impl_;
  if (!device) throw ConfigError("EDM-ACC-003", "FieldAccumulator needs an open device");
  m.device = std::move(device);
  m.screen = screen;
  m.mode = mode;
  const DeviceInfo& info = m.device->info();
  if (screen.nx < 1 || screen.ny < 1 || screen.samples < 1)
    throw ConfigError("EDM-ACC-004", "screen.nx, screen.ny and screen.samples must be >= 1");
  const KernelOptions selected = select_mode_kernel(select_field_kernel(options, info, screen, m.where()), mode);
  // A tile is tuned as its whole screen: the sample chunks (where the Newton solves start cold)
  // must be the full screen's for its rows to be bit-identical to the full screen's.
  detail::KernelTuning tuning = detail::resolve_tuning(
      selected, info, max_parameter_bytes(*m.device), screen.is_tile() ? whole_screen_shape(screen) : screen, m.where());
  m.options = tuning.options;
  // The memory guard before any allocation (the driver also calls it before anything else).
  m.bucket_bytes = check_device_memory(info, screen, mode);

  m.defines = program_defines(tuning, mode, screen);
  cl::Program program = m.device->program(program_files(screen, tuning.options), m.defines,
                                          std::max(0, tuning.options.max_registers));
  try {
    m.create_kernels(program, tuning);
    m.upload_pixel_order();
    m.upload_directions();
    m.create_buckets();
    m.bind_screen_arguments();
    m.device->queue().flush();
  } catch (const cl::Error& e) {
    throw_device_error(e, "creating the field buffers (screen nx = " + std::to_string(screen.nx) + ", ny = " +
                              std::to_string(screen.ny) + ", samples = " + std::to_string(screen.samples) + ") on " +
                              m.where());
  }
}

// The kernels, checked against their signatures, and then the launch shape, which needs the
// built kernel's work-group limits: the options are final after this.
void FieldAccumulator::Impl::create_kernels(const cl::Program& program, detail::KernelTuning& tuning) {
  try {
    build_log = program.getBuildInfo<CL_PROGRAM_BUILD_LOG>(device->device());
  } catch (const cl::Error&) {
    build_log.clear();  // a log is informative only
  }
  const std::string source = detail::kernel_source(std::string(detail::kLwAccumulate.file));
  lw = {program, source};
  transpose = {program, source};
  light_front = {program, source};
  const auto& dev = device->device();
  const std::size_t kmax = lw.kernel().getWorkGroupInfo<CL_KERNEL_WORK_GROUP_SIZE>(dev);
  std::size_t mult = 1;
  try {
    mult = lw.kernel().getWorkGroupInfo<CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE>(dev);
  } catch (const cl::Error&) {
    mult = 1;
  }
  detail::resolve_launch_shape(tuning, device->info(), kmax, mult, where());
  options = tuning.options;
  local = std::size_t(options.work_group);
  kernel_resources = {{"max_work_group", double(kmax)}, {"preferred_work_group_multiple", double(mult)},
                      {"work_group", double(local)}};
  // What the runtime tells of the built kernel (run.toml [telemetry.kernel]); informative only.
  try {
    kernel_resources["private_mem_bytes"] = double(lw.kernel().getWorkGroupInfo<CL_KERNEL_PRIVATE_MEM_SIZE>(dev));
    kernel_resources["local_mem_bytes"] = double(lw.kernel().getWorkGroupInfo<CL_KERNEL_LOCAL_MEM_SIZE>(dev));
  } catch (const cl::Error&) {
  }
}

// The pixel order's permutation and its inverse on the device, and the layout's fingerprint.
void FieldAccumulator::Impl::upload_pixel_order() {
  const int tw = options.tile_width;
  pixel_of = pixel_permutation(screen, options.pixel_order, tw, tw > 0 ? int(local / std::size_t(tw)) : 0);
  std::vector<std::int32_t> position_of(pixel_of.size());
  for (std::size_t q = 0; q < pixel_of.size(); ++q) position_of[std::size_t(pixel_of[q])] = std::int32_t(q);
  layout_hash = detail::kFnvOffset;  // FNV-1a over the permutation's bytes, little-endian on every host
  for (std::int32_t v : pixel_of)
    for (int b = 0; b < 4; ++b) layout_hash = detail::fnv1a_byte(layout_hash, (std::uint32_t(v) >> (8 * b)) & 0xffu);
  // A tile's window too (row0, rows_total): two tiles of one height share a permutation, and a
  // checkpoint of one must not restore into the other. A whole screen's hash stays what it was.
  if (screen.is_tile())
    for (std::int32_t v : {std::int32_t(screen.row0), std::int32_t(screen.rows_total)})
      for (int b = 0; b < 4; ++b) layout_hash = detail::fnv1a_byte(layout_hash, (std::uint32_t(v) >> (8 * b)) & 0xffu);
  const std::size_t lanes = positions_per_item(options);
  const std::size_t items_per_chunk = (std::size_t(screen.pixels()) + lanes - 1) / lanes;
  const std::size_t groups_per_chunk = (items_per_chunk + local - 1) / local;
  global = groups_per_chunk * local * std::size_t(options.sample_chunks);
  const std::size_t perm_bytes = pixel_of.size() * sizeof(std::int32_t);
  pixel_of_buf = cl::Buffer(device->context(), CL_MEM_READ_ONLY, perm_bytes);
  position_of_buf = cl::Buffer(device->context(), CL_MEM_READ_ONLY, perm_bytes);
  device->queue().enqueueWriteBuffer(pixel_of_buf, CL_TRUE, 0, perm_bytes, pixel_of.data());
  device->queue().enqueueWriteBuffer(position_of_buf, CL_TRUE, 0, perm_bytes, position_of.data());
}

// The angular screen's directions, per pixel (iy·nx + ix): n̂ and n_z − s_z (n_z_minus_sign), the
// form in which the kernel writes t − n̂·x without cancellation (cl/lw_direction.cl).
void FieldAccumulator::Impl::upload_directions() {
  std::vector<double> d(4, 0.0);
  if (screen.angular()) {
    d.assign(4 * screen.directions.size(), 0.0);
    const double s = screen.light_front_sign();
    for (std::size_t p = 0; p < screen.directions.size(); ++p) {
      const auto& n = screen.directions[p].n;
      d[4 * p] = n[0];
      d[4 * p + 1] = n[1];
      d[4 * p + 2] = n[2];
      d[4 * p + 3] = n_z_minus_sign(n, s);
    }
  }
  dirs_buf = cl::Buffer(device->context(), CL_MEM_READ_ONLY, d.size() * sizeof(double));
  device->queue().enqueueWriteBuffer(dirs_buf, CL_TRUE, 0, d.size() * sizeof(double), d.data());
}

// Buffers created and zeroed once; they persist across batches.
void FieldAccumulator::Impl::create_buckets() {
  for (int b = 0; b < bucket_count(mode); ++b) {
    buckets.emplace_back(device->context(), CL_MEM_READ_WRITE, std::size_t(bucket_bytes));
    device->queue().enqueueFillBuffer(buckets.back(), 0.0, 0, std::size_t(bucket_bytes));
  }
}

// The field kernel's arguments that stay the same for every launch.
void FieldAccumulator::Impl::bind_screen_arguments() {
  const Screen& s = screen;
  lw.set("nx", s.nx);
  lw.set("ny", s.ny);
  lw.set("samples", s.samples);
  lw.set("half_x", s.half_x);
  lw.set("half_y", s.half_y);
  lw.set("zs", s.z);
  lw.set("t0_rel", s.t0_rel);
  lw.set("dt", s.dt);
  lw.set("E", buckets[0]);
  lw.set("B", buckets[1]);
  // Total mode: the far buffers are not touched (SPLIT_MODE 0); E and B stand in for them.
  lw.set("Ef", buckets[mode == Mode::Split ? 2 : 0]);
  lw.set("Bf", buckets[mode == Mode::Split ? 3 : 1]);
  lw.set("pixel_of", pixel_of_buf);
  lw.set("dirs", dirs_buf);
  lw.set("positions", pixel_of_buf);  // not read while n_positions = 0
  lw.set("pos_first", cl_int(0));
  lw.set("n_positions", cl_int(0));
  lw.set("row0", cl_int(s.row0));
  lw.set("rows_total", cl_int(s.full_ny()));
}

FieldAccumulator::~FieldAccumulator() {
  // Destructors only wait (never throw): kernels may still reference the buffers.
  if (impl_) {
    try {
      impl_->device->queue().finish();
    } catch (...) {
    }
  }
}
FieldAccumulator::FieldAccumulator(FieldAccumulator&&) noexcept = default;
FieldAccumulator& FieldAccumulator::operator=(FieldAccumulator&&) noexcept = default;

void FieldAccumulator::accumulate(const SplineBatch& batch) {
  auto& m = *impl_;
  if (m.finished) throw Error("EDM-ACC-010", "accumulate() after finish() on " + m.where());
  if (batch.electrons.empty()) return;
  m.release_finished_batches();
  m.check_batch(batch);
  m.check_substeps(batch);
  cl::Buffer coef = m.take_upload(batch);
  m.form_light_front(coef, batch);
  // Every row now waits for this batch too (a batch in slabs before it: its launches still come first).
  for (auto& p : m.pending) p.slab_y1 = 0;
  m.slab_done.clear();
  m.queue_groups(coef, batch.electrons);
  m.pump(false);  // start the launches now, as many as the queue's budget allows
}

// A fixed rk4 sub-step count against the bound that "auto" meets sample by sample: one sub-step of
// h = dt/m moves τ by h/D ≤ h (u⁰ + |u|) (D = u⁰ − n̂·u ≥ 1/(u⁰ + |u|) for any n̂), which must stay
// within kRk4KnotFraction of a knot spacing at every knot of every electron of the batch. Checked
// before the batch's first launch, so a count that cannot meet it never adds a contribution.
void FieldAccumulator::Impl::check_substeps(const SplineBatch& batch) const {
  if (options.kernel != FieldKernel::Rk4 || options.substeps < 1) return;
  for (const auto& e : batch.electrons) {
    double rate = 0;
    for (std::uint32_t j = 0; j < e.n_intervals; ++j) {
      const double* c = &batch.coef[e.offset + std::uint64_t(j) * kCoefPerInterval];
      const double u = std::sqrt(c[7] * c[7] + c[13] * c[13] + c[19] * c[19]);
      rate = std::max(rate, c[1] + u);  // u⁰ + |u| at knot j (the quintics' first-power coefficients)
    }
    const double need = std::ceil(screen.dt * rate / (e.dtau * kRk4KnotFraction));
    if (double(options.substeps) < need)
      throw ConfigError("EDM-ACC-081",
                        "accumulator.substeps = " + std::to_string(options.substeps) +
                            " cannot meet the rk4 kernel's bound for electron " + std::to_string(e.index) +
                            ": its retarded time can move " + std::to_string(screen.dt * rate / e.dtau) +
                            " knots per sample (u0 + |u| up to " + std::to_string(rate) +
                            "), and a sub-step may move it an eighth of a knot at most: set accumulator.substeps >= " +
                            std::to_string(std::int64_t(need)) + " or \"auto\"");
  }
}

// Validate the spline table before the device reads it (an out-of-range offset would be an
// out-of-bounds read on the device, not an error; intervals start at multiples of 24 doubles,
// which the light-front pass and the kernel's paired loads rely on).
void FieldAccumulator::Impl::check_batch(const SplineBatch& batch) const {
  for (const auto& e : batch.electrons) {
    if (e.n_intervals == 0 || !(e.dtau > 0) || !std::isfinite(e.tau0) || e.offset % kCoefPerInterval != 0 ||
        e.offset + std::uint64_t(e.n_intervals) * kCoefPerInterval > batch.coef.size())
      throw PhysicsError("EDM-ACC-011", "electron " + std::to_string(e.index) +
                                            ": spline table inconsistent (intervals, dtau or offset)");
  }
}

void FieldAccumulator::accumulate_in_slabs(const SplineBatch& batch, int rows) {
  auto& m = *impl_;
  if (m.finished) throw Error("EDM-ACC-060", "accumulate_in_slabs() after finish() on " + m.where());
  if (batch.electrons.empty()) return;
  rows = std::clamp(rows, 1, m.screen.ny);
  m.release_finished_batches();
  m.check_batch(batch);
  m.check_substeps(batch);
  cl::Buffer coef = m.take_upload(batch);
  m.form_light_front(coef, batch);
  try {
    if (rows != m.slab_rows) m.build_slab_positions(rows);
  } catch (const cl::Error& err) {
    throw_device_error(err, "launching the field kernel slab by slab on " + m.where());
  }
  for (auto& p : m.pending) p.slab_y1 = 0;
  m.slab_done.clear();
  const std::size_t slabs = m.slab_first.size() - 1;
  for (std::size_t sl = 0; sl < slabs; ++sl)
    m.queue_groups(coef, batch.electrons, m.slab_first[sl], m.slab_first[sl + 1] - m.slab_first[sl],
                   std::min(m.screen.ny, int(sl + 1) * m.slab_rows));
  m.pump(false);  // the device starts on slab 0 now
}

// The positions of each slab of `rows` rows, in ascending order (a warp then still holds
// neighbours of the pixel order: pieces of the same rings), slab after slab.
void FieldAccumulator::Impl::build_slab_positions(int rows) {
  const int nx = screen.nx, slabs = (screen.ny + rows - 1) / rows;
  auto of_slab = std::vector<std::vector<std::int32_t>>(std::size_t(slabs));
  for (std::size_t q = 0; q < pixel_of.size(); ++q) of_slab[std::size_t(pixel_of[q] / nx / rows)].push_back(std::int32_t(q));
  std::vector<std::int32_t> all;
  all.reserve(pixel_of.size());
  slab_first.assign(1, 0);
  for (const auto& v : of_slab) {
    all.insert(all.end(), v.begin(), v.end());
    slab_first.push_back(int(all.size()));
  }
  positions_buf = cl::Buffer(device->context(), CL_MEM_READ_ONLY, all.size() * sizeof(std::int32_t));
  device->queue().enqueueWriteBuffer(positions_buf, CL_TRUE, 0, all.size() * sizeof(std::int32_t), all.data());
  slab_rows = rows;
}

void FieldAccumulator::upload_ahead(const SplineBatch& batch) {
  auto& m = *impl_;
  if (m.finished || batch.electrons.empty()) return;
  m.check_batch(batch);
  m.check_substeps(batch);
  m.ahead = m.upload(batch);
  m.ahead_of = &batch;
  m.ahead_first = batch.electrons.front().index;
  m.ahead_size = batch.coef.size();
}

// The batch's splines on the device: those of upload_ahead when they are this batch's, else
// uploaded now.
cl::Buffer FieldAccumulator::Impl::take_upload(const SplineBatch& batch) {
  // Every launch path takes its splines here, so the weighted build is chosen here, once per batch.
  if (!weighted && std::any_of(batch.electrons.begin(), batch.electrons.end(),
                               [](const ElectronSpline& e) { return e.weight != 1.0; })) {
    pump(true);  // the launches pending were formed for the unweighted build: enqueued with it
    use_weighted_kernel();
  }
  const bool same =
      ahead_of == &batch && ahead_first == batch.electrons.front().index && ahead_size == batch.coef.size();
  cl::Buffer coef = same ? std::move(ahead) : upload(batch);
  ahead = cl::Buffer();
  ahead_of = nullptr;
  return coef;
}

// Releases the coefficient buffers of batches whose launches are done.
void FieldAccumulator::Impl::release_finished_batches() {
  try {
    while (!in_flight.empty() && in_flight.front().last.getInfo<CL_EVENT_COMMAND_EXECUTION_STATUS>() == CL_COMPLETE)
      in_flight.pop_front();
  } catch (const cl::Error& e) {
    throw_device_error(e, "checking earlier launches on " + where());
  }
}

cl::Buffer FieldAccumulator::Impl::upload(const SplineBatch& batch) {
  const std::size_t bytes = batch.coef.size() * sizeof(double);
  cl::Buffer coef;
  try {
    coef = cl::Buffer(device->context(), CL_MEM_READ_WRITE, bytes);
    // A blocking write on the transfer queue: it does not wait for earlier kernels on the compute
    // queue, and when it returns the data is on the device, so the caller may free the batch.
    const auto t0 = std::chrono::steady_clock::now();
    device->transfer_queue().enqueueWriteBuffer(coef, CL_TRUE, 0, bytes, batch.coef.data());
    timing.upload_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    timing.upload_bytes += bytes;
  } catch (const cl::Error& e) {
    throw_device_error(e, "uploading " + std::to_string(bytes) + " bytes of splines (electrons " +
                              std::to_string(batch.electrons.front().index) + "…" +
                              std::to_string(batch.electrons.back().index) + ") to " + where());
  }
  return coef;
}

// The light front t − s_z z over the t-quintic of every interval, once for the batch, ahead of its
// launches on the same in-order queue (lw_form_light_front in cl/lw_slot.cl says why).
void FieldAccumulator::Impl::form_light_front(const cl::Buffer& coef, const SplineBatch& batch) {
  try {
    const std::uint64_t intervals = batch.coef.size() / kCoefPerInterval;
    light_front.set("coef", coef);
    light_front.set("intervals", cl_ulong(intervals));
    cl::Event ev;
    // An explicit work group of 64: left to the runtime, PoCL chose one that divides each batch's
    // global size (3560, 3536, 3168, … items) and compiled a work-group function for every new one at
    // its enqueue, after the plan had measured the host memory: LLVM's pages put a run 9 MiB over
    // --max-host-memory (tests/test_bounds, max_host_memory_bounds_the_measured_peak, about 1 in 20).
    const std::size_t wg = light_front.kernel().getWorkGroupInfo<CL_KERNEL_WORK_GROUP_SIZE>(device->device());
    device->queue().enqueueNDRangeKernel(light_front.kernel(), cl::NullRange, cl::NDRange((intervals + 63) / 64 * 64),
                                         wg >= 64 ? cl::NDRange(64) : cl::NullRange, nullptr, &ev);
    passes.push_back(ev);
  } catch (const cl::Error& err) {
    throw_device_error(err, "forming the light front of electrons " + std::to_string(batch.electrons.front().index) +
                                "…" + std::to_string(batch.electrons.back().index) + " on " + where());
  }
}

// One pending launch per group of G electrons, in electron order.
void FieldAccumulator::Impl::queue_groups(const cl::Buffer& coef, const std::vector<ElectronSpline>& electrons,
                                          int pos_first, int n_positions, int slab_y1) {
  const std::size_t n = electrons.size(), G = std::size_t(options.electron_group);
  const std::size_t lanes = positions_per_item(options);
  const std::size_t items = n_positions > 0 ? ((std::size_t(n_positions) + lanes - 1) / lanes + local - 1) / local *
                                                  local * std::size_t(options.sample_chunks)
                                            : global;
  const double positions = n_positions > 0 ? double(n_positions) : double(screen.pixels());
  for (std::size_t first = 0; first < n; first += G) {
    const std::size_t count = std::min(G, n - first);
    // The launch's electrons by value (lw_group in the kernel): 6 doubles each — coefficient offset
    // (< 2^53, exact), intervals, τ0, dτ, and 1/dτ and the last knot computed here once, so the
    // kernel never divides to find an interval. Unused entries stay 0 (the kernel reads `count`).
    const std::size_t stride = weighted ? 7 : 6;  // + the weight (LW_WEIGHTED)
    Pending p;
    p.grp.assign(stride * G, 0.0);
    for (std::size_t e = 0; e < count; ++e) {
      const auto& el = electrons[first + e];
      double* g = &p.grp[stride * e];
      if (weighted) g[6] = el.weight;
      g[0] = double(el.offset);
      g[1] = double(el.n_intervals);
      g[2] = el.tau0;
      g[3] = el.dtau;
      g[4] = 1.0 / el.dtau;
      g[5] = el.tau0 + el.dtau * double(el.n_intervals);
    }
    p.coef = coef;
    p.positions = n_positions > 0 ? positions_buf : pixel_of_buf;
    p.count = cl_int(count);
    p.pos_first = pos_first;
    p.n_positions = n_positions;
    p.items = items;
    p.first_index = electrons[first].index;
    p.last_index = electrons[first + count - 1].index;
    p.work = double(count) * positions;
    p.slab_y1 = first + G >= n ? slab_y1 : 0;
    pending.push_back(std::move(p));
  }
}

void FieldAccumulator::Impl::enqueue_front() {
  Pending p = std::move(pending.front());
  pending.pop_front();
  try {
    lw.set("positions", p.positions);
    lw.set("pos_first", cl_int(p.pos_first));
    lw.set("n_positions", cl_int(p.n_positions));
    lw.set("coef", p.coef);
    lw.set_bytes("grp", p.grp.size() * sizeof(double), p.grp.data());
    lw.set("count", p.count);
    cl::Event ev;
    device->queue().enqueueNDRangeKernel(lw.kernel(), cl::NullRange, cl::NDRange(p.items), cl::NDRange(local),
                                         nullptr, &ev);
    device->queue().flush();  // start it now; no host round trip per launch otherwise
    launches.push_back(ev);
    {
      const std::lock_guard<std::mutex> lock(progress_mu);
      unfinished.push_back({ev, std::uint64_t(p.count), p.work});
    }
    in_flight.push_back({std::move(p.coef), ev});
    if (p.slab_y1 > 0) slab_done.push_back({p.slab_y1, ev});
    ++timing.launches;
    timing.electrons += std::uint64_t(p.count);
  } catch (const cl::Error& err) {
    throw_device_error(err, "launching the field kernel for electrons " + std::to_string(p.first_index) + "…" +
                                std::to_string(p.last_index) + " on " + where());
  }
}

// The launches done so far, oldest first (one in-order queue: the done ones are a prefix), each
// adding its profiling time to the rate of the estimate. A launch that failed (a negative status)
// is left for drain() to report.
void FieldAccumulator::Impl::retire_locked() {
  while (!unfinished.empty()) {
    cl_int status = CL_QUEUED;
    try {
      status = unfinished.front().ev.getInfo<CL_EVENT_COMMAND_EXECUTION_STATUS>();
    } catch (const cl::Error&) {
      return;  // drain() reports it
    }
    if (status != CL_COMPLETE) return;
    try {
      const auto& ev = unfinished.front().ev;
      measured_seconds += double(ev.getProfilingInfo<CL_PROFILING_COMMAND_END>() -
                                 ev.getProfilingInfo<CL_PROFILING_COMMAND_START>()) * 1e-9;
      measured_work += unfinished.front().work;
    } catch (const cl::Error&) {
    }
    completed += unfinished.front().count;
    unfinished.pop_front();
  }
}

// Room for the first pending launch: always while fewer than two run (so the device never waits
// for the host between launches), else while the work queued, this launch included, is estimated
// within kQueueSeconds at the rate of the finished launches (none finished yet: no estimate, two).
bool FieldAccumulator::Impl::room() {
  const std::lock_guard<std::mutex> lock(progress_mu);
  retire_locked();
  if (unfinished.size() < 2) return true;
  if (!(measured_work > 0 && measured_seconds > 0)) return false;
  double queued = pending.front().work;
  for (const auto& r : unfinished) queued += r.work;
  return queued * (measured_seconds / measured_work) <= kQueueSeconds;
}

void FieldAccumulator::Impl::wait_oldest() {
  cl::Event ev;
  {
    const std::lock_guard<std::mutex> lock(progress_mu);
    if (unfinished.empty()) return;
    ev = unfinished.front().ev;
  }
  try {
    ev.wait();
  } catch (const cl::Error& e) {
    throw_device_error(e, "waiting for a field kernel on " + where());
  }
  const std::lock_guard<std::mutex> lock(progress_mu);
  retire_locked();
}

bool FieldAccumulator::Impl::stopping() {
  if (!halted && !(stop && stop->load())) return false;
  halted = halted || !pending.empty();
  return true;
}

bool FieldAccumulator::Impl::step() {
  if (stopping()) return false;
  if (room())
    enqueue_front();
  else
    wait_oldest();
  return true;
}

// room() once per launch: it retires the finished launches and sums the queued work under the lock.
bool FieldAccumulator::Impl::pump(bool block) {
  while (!pending.empty() && !stopping()) {
    if (room())
      enqueue_front();
    else if (block)
      wait_oldest();
    else
      break;
  }
  return pending.empty();
}

// From the first batch with a weight other than 1 on, lw is the LW_WEIGHTED build of the same
// program (cl/lienard_wiechert.cl: its results for weight 1 are bit-identical, so unweighted runs
// keep the build they had and a run may switch between batches). Launches already enqueued keep
// the kernel they were enqueued with.
void FieldAccumulator::Impl::use_weighted_kernel() {
  const std::size_t G = std::size_t(options.electron_group);
  if (7 * sizeof(double) * G + 256 > max_parameter_bytes(*device))
    throw ConfigError("EDM-CFG-640", "accumulator.electron_group = " + std::to_string(G) +
                                         ": the weights of a weighted ensemble (7 doubles per electron) do not fit "
                                         "the kernel parameters of " + where() + "; lower accumulator.electron_group");
  auto defs = defines;
  defs["LW_WEIGHTED"] = "1";
  cl::Program program =
      device->program(program_files(screen, options), defs, std::max(0, options.max_registers));
  try {
    detail::BoundKernel<detail::kLwAccumulate> k(program,
                                                 detail::kernel_source(std::string(detail::kLwAccumulate.file)));
    if (k.kernel().getWorkGroupInfo<CL_KERNEL_WORK_GROUP_SIZE>(device->device()) < local)
      throw ConfigError("EDM-CFG-641", "the weighted field kernel cannot run work-groups of " +
                                           std::to_string(local) + " on " + where() +
                                           "; lower accumulator.work_group");
    lw = std::move(k);
    bind_screen_arguments();
  } catch (const cl::Error& e) {
    throw_device_error(e, "creating the weighted field kernel on " + where());
  }
  weighted = true;
}

void FieldAccumulator::drain() {
  auto& m = *impl_;
  m.pump(true);  // a stop request halts it: the launches left pending are never enqueued
  try {
    m.device->queue().finish();
    m.collect_timing();
  } catch (const cl::Error& e) {
    throw_device_error(e, "waiting for the field kernels on " + m.where());
  }
  m.in_flight.clear();
  const std::lock_guard<std::mutex> lock(m.progress_mu);
  for (const auto& u : m.unfinished) m.completed += u.count;
  m.unfinished.clear();
}

void FieldAccumulator::enqueue_pending() {
  auto& m = *impl_;
  // A stop has halted the queue: what is pending stays unsent (stopped_at() describes the cube
  // without it), and it may have been formed for another kernel build than the current one.
  if (m.halted) return;
  while (!m.pending.empty()) m.enqueue_front();
}

bool FieldAccumulator::feed() { return !impl_->pump(false) && !impl_->halted; }
void FieldAccumulator::wait_for_launch() { impl_->wait_oldest(); }
void FieldAccumulator::set_stop(const std::atomic<bool>* flag) { impl_->stop = flag; }
bool FieldAccumulator::stopped() const { return impl_->halted && !impl_->pending.empty(); }

std::optional<std::uint64_t> FieldAccumulator::stopped_at() const {
  const auto& m = *impl_;
  if (!stopped() || m.pending.front().in_slab()) return std::nullopt;
  return m.pending.front().first_index;
}

std::uint64_t FieldAccumulator::electrons_completed() {
  auto& m = *impl_;
  const std::lock_guard<std::mutex> lock(m.progress_mu);
  m.retire_locked();
  return m.completed;
}

void FieldAccumulator::finish(const SlabSink& sink, int rows_per_slab) {
  auto& m = *impl_;
  if (m.finished) throw Error("EDM-ACC-012", "finish() called twice on " + m.where());
  const Screen& s = m.screen;
  const std::uint64_t row_bytes = std::uint64_t(s.nx) * s.samples * sizeof(double);
  if (rows_per_slab <= 0) {
    // Slabs of at most 64 MiB (and within the device's max allocation): the host never holds the
    // whole cube, and each slab is one contiguous hyperslab of the output dataset.
    const std::uint64_t cap = std::min<std::uint64_t>(64ull << 20, m.device->info().max_allocation);
    rows_per_slab = int(std::max<std::uint64_t>(1, cap / row_bytes));
  }
  rows_per_slab = std::min(rows_per_slab, s.ny);
  try {
    m.download_pipelined(sink, rows_per_slab);
  } catch (const cl::Error& e) {
    throw_device_error(e, "downloading the field cube from " + m.where());
  }
  drain();  // every launch is done by now: their timings
  m.finished = true;
  m.buckets.clear();  // the device memory goes back now
}

// The event after which rows [.., iy1) of the cube are final: their slab's last launch
// (accumulate_in_slabs), else a marker behind everything enqueued so far.
cl::Event FieldAccumulator::Impl::ready_event(int iy1) {
  // The slab's launches enqueued through the bounded queue; a stop request halts them, and the
  // cube's slabs then hold different electrons: nothing to download or checkpoint.
  for (;;) {
    for (const auto& d : slab_done)
      if (d.y1 >= iy1) return d.last;
    if (pending.empty()) break;
    if (!step())
      throw Interrupted("EDM-RUN-051", std::string("stopped on request during the field kernels on ") + where() +
                                           (pending.front().in_slab()
                                                ? " of a batch launched slab by slab: its slabs hold different "
                                                  "electrons, so the cube can be neither written nor checkpointed"
                                                : ": the cube holds only part of its electrons, so it cannot be "
                                                  "written"));
  }
  cl::Event marker;
  device->queue().enqueueMarkerWithWaitList(nullptr, &marker);
  device->queue().flush();
  return marker;
}

// The download on the transfer queue, so that it runs beside later launches: each piece (rows of one
// component of one bucket) waits for its rows' launches, is transposed into the output layout and
// read into one of two pinned host buffers while the host hands the other one to the sink (the
// writer), so device work, transfers and the write overlap. The sink sees the pieces row slab by row
// slab, each slab's buckets and components in order.
void FieldAccumulator::Impl::download_pipelined(const SlabSink& sink, int rows_per_slab) {
  const Screen& s = screen;
  const std::size_t slab_bytes = std::size_t(s.nx) * std::size_t(s.samples) * sizeof(double) * std::size_t(rows_per_slab);
  cl::CommandQueue& tq = device->transfer_queue();
  struct Pinned {
    cl::CommandQueue& q;
    cl::Buffer buf;
    double* host = nullptr;
    Pinned(cl::CommandQueue& q, const cl::Context& ctx, std::size_t bytes)
        : q(q), buf(ctx, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, bytes) {
      host = static_cast<double*>(q.enqueueMapBuffer(buf, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, bytes));
    }
    ~Pinned() {
      try {
        q.finish();  // no read may still target the mapping
        q.enqueueUnmapMemObject(buf, host);
        q.finish();
      } catch (...) {
      }
    }
  };
  Pinned host[2] = {{tq, device->context(), slab_bytes}, {tq, device->context(), slab_bytes}};
  cl::Buffer staging(device->context(), CL_MEM_READ_WRITE, slab_bytes);
  struct Piece {
    int b, comp, iy0, rows;
    cl::Event read;
  };
  std::vector<Piece> pieces;
  for (int iy0 = 0; iy0 < s.ny; iy0 += rows_per_slab)
    for (int b = 0; b < bucket_count(mode); ++b)
      for (int comp = 0; comp < 3; ++comp) pieces.push_back({b, comp, iy0, std::min(rows_per_slab, s.ny - iy0), {}});
  const auto hand_over = [&](std::size_t i) {
    Piece& p = pieces[i];
    p.read.wait();
    pump(false);  // keep the bounded queue fed while the sink writes
    // Rows in the full screen's numbering: a tile's slab is that hyperslab of the full field.h5.
    sink(p.b, p.comp, s.row0 + p.iy0, s.row0 + p.iy0 + p.rows, host[i % 2].host);
  };
  cl::Event ready;
  int ready_to = -1;
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    Piece& p = pieces[i];
    if (p.iy0 + p.rows > ready_to) {
      ready = ready_event(p.iy0 + p.rows);
      ready_to = s.ny;  // a marker covers every row
      for (const auto& d : slab_done)
        if (d.y1 >= p.iy0 + p.rows) {
          ready_to = d.y1;
          break;
        }
    }
    transpose.set("src", buckets[std::size_t(p.b)]);
    transpose.set("dst", staging);
    transpose.set("nx", s.nx);
    transpose.set("ny", s.ny);
    transpose.set("samples", s.samples);
    transpose.set("comp", p.comp);
    transpose.set("iy0", p.iy0);
    transpose.set("rows", p.rows);
    transpose.set("position_of", position_of_buf);
    const std::vector<cl::Event> wait{ready};
    tq.enqueueNDRangeKernel(transpose.kernel(), cl::NullRange,
                            cl::NDRange(std::size_t(s.samples), std::size_t(p.rows) * s.nx), cl::NullRange, &wait);
    // Buffer i % 2 was last handed over as piece i − 2 (below, before this piece was enqueued).
    const std::size_t n = std::size_t(p.rows) * s.nx * s.samples;
    tq.enqueueReadBuffer(staging, CL_FALSE, 0, n * sizeof(double), host[i % 2].host, nullptr, &p.read);
    tq.flush();
    if (i > 0) hand_over(i - 1);
  }
  if (!pieces.empty()) hand_over(pieces.size() - 1);
}

const Screen& FieldAccumulator::screen() const { return impl_->screen; }
Mode FieldAccumulator::mode() const { return impl_->mode; }
std::uint64_t FieldAccumulator::device_buffer_bytes() const {
  return impl_->bucket_bytes * std::uint64_t(bucket_count(impl_->mode));
}
AccumulatorTiming FieldAccumulator::timing() const { return impl_->timing; }

cl::Buffer& detail::FieldAccess::bucket(FieldAccumulator& a, int b) { return a.impl_->buckets.at(std::size_t(b)); }
const std::vector<std::int32_t>& detail::FieldAccess::pixel_of(const FieldAccumulator& a) { return a.impl_->pixel_of; }
const KernelOptions& FieldAccumulator::options() const { return impl_->options; }
const std::string& FieldAccumulator::build_log() const { return impl_->build_log; }
const std::map<std::string, double>& FieldAccumulator::kernel_resources() const { return impl_->kernel_resources; }

}  // namespace edm

namespace edm {

// ---- multi-device reduce -----------------------------------------------------------------------
// Adds this accumulator's cube into `target`'s, on target's device: the raw buffers travel in
// chunks of at most 64 MiB through host staging (the devices have separate contexts) and CLBlast's
// daxpy adds each chunk in place, so neither host nor device ever holds a second whole cube.
// Called in device order, so the reduction order — and the result — is fixed for a device set.
void FieldAccumulator::reduce_into(FieldAccumulator& target) {
  auto& src = *impl_;
  auto& dst = *target.impl_;
  if (&src == &dst) return;
  const Screen &a = src.screen, &b = dst.screen;
  if (a.nx != b.nx || a.ny != b.ny || a.samples != b.samples || a.dt != b.dt || a.t0_rel != b.t0_rel ||
      a.z != b.z || a.half_x != b.half_x || a.half_y != b.half_y || a.row0 != b.row0 ||
      a.full_ny() != b.full_ny() || src.mode != dst.mode)
    throw Error("EDM-ACC-020", "reducing accumulators of different screens or modes (" + src.where() +
                                   " into " + dst.where() + ")");
  if (src.layout_hash != dst.layout_hash)
    throw Error("EDM-ACC-023", "reducing accumulators with different pixel orders (" + src.where() + ": " +
                                   pixel_order_name(src.options.pixel_order) + ", " + dst.where() + ": " +
                                   pixel_order_name(dst.options.pixel_order) + ")");
  if (src.finished || dst.finished)
    throw Error("EDM-ACC-021", "reducing a finished accumulator (" + src.where() + ")");
  drain();
  target.drain();
  const std::uint64_t total = src.bucket_bytes / sizeof(double);
  const std::uint64_t chunk = std::min<std::uint64_t>(total, std::min<std::uint64_t>(
                                                                 8ull << 20, dst.device->info().max_allocation / 8));
  std::vector<double> host(chunk);
  try {
    cl::Buffer scratch(dst.device->context(), CL_MEM_READ_ONLY, chunk * sizeof(double));
    cl_command_queue q = dst.device->queue()();
    for (std::size_t bucket = 0; bucket < src.buckets.size(); ++bucket)
      for (std::uint64_t off = 0; off < total; off += chunk) {
        const std::uint64_t n = std::min(chunk, total - off);
        src.device->queue().enqueueReadBuffer(src.buckets[bucket], CL_TRUE, off * sizeof(double),
                                              n * sizeof(double), host.data());
        dst.device->queue().enqueueWriteBuffer(scratch, CL_TRUE, 0, n * sizeof(double), host.data());
        const auto status = clblast::Axpy<double>(n, 1.0, scratch(), 0, 1, dst.buckets[bucket](), off, 1, &q);
        if (status != clblast::StatusCode::kSuccess)
          throw DeviceError("EDM-ACC-022", "CLBlast Axpy failed with status " + std::to_string(int(status)) +
                                               " while reducing " + src.where() + " into " + dst.where(),
                            int(status));
        dst.device->queue().finish();  // the scratch buffer is reused by the next chunk
      }
  } catch (const cl::Error& e) {
    throw_device_error(e, "reducing the field cube of " + src.where() + " into " + dst.where());
  }
  src.finished = true;
  src.buckets.clear();
}

}  // namespace edm

// ---- raw cube access for checkpoints -----------------------------------------------------------
// The device layout is saved as is (no transpose): a checkpoint is only read back by the same
// accumulator configuration, and the bytes restored are exactly the bytes summed so far, so a
// resumed run continues the same additions in the same order (bit-identical on one device).
namespace edm {

std::uint64_t FieldAccumulator::raw_doubles_per_bucket() const { return impl_->bucket_bytes / sizeof(double); }
std::uint64_t FieldAccumulator::layout_hash() const { return impl_->layout_hash; }

namespace {
// Walks every bucket in chunks of at most 8 Mi doubles through one host buffer: f(bucket index,
// offset, host buffer, count). Errors name `what` and the device.
template <class F>
void for_raw_chunks(FieldAccumulator::Impl& m, std::uint64_t total, const char* what, F&& f) {
  const std::uint64_t chunk = std::min<std::uint64_t>(total, 8ull << 20);
  std::vector<double> host(chunk);
  try {
    for (std::size_t b = 0; b < m.buckets.size(); ++b)
      for (std::uint64_t off = 0; off < total; off += chunk) f(b, off, host.data(), std::min(chunk, total - off));
  } catch (const cl::Error& e) {
    throw_device_error(e, std::string(what) + " the field cube of " + m.where());
  }
}
}  // namespace

void FieldAccumulator::download_raw(const RawSink& sink) {
  auto& m = *impl_;
  drain();
  for_raw_chunks(m, raw_doubles_per_bucket(), "saving",
                 [&](std::size_t b, std::uint64_t off, double* host, std::uint64_t n) {
                   m.device->queue().enqueueReadBuffer(m.buckets[b], CL_TRUE, off * sizeof(double),
                                                       n * sizeof(double), host);
                   sink(int(b), off, host, std::size_t(n));
                 });
}

void FieldAccumulator::upload_raw(const RawSource& source) {
  auto& m = *impl_;
  drain();
  for_raw_chunks(m, raw_doubles_per_bucket(), "restoring",
                 [&](std::size_t b, std::uint64_t off, double* host, std::uint64_t n) {
                   source(int(b), off, host, std::size_t(n));
                   m.device->queue().enqueueWriteBuffer(m.buckets[b], CL_TRUE, off * sizeof(double),
                                                        n * sizeof(double), host);
                 });
}

}  // namespace edm
