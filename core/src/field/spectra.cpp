// SpectraAccumulator (edm/spectra.hpp): the host side of cl/spectra.cl — checks the grid, builds
// the program, keeps the coherent and incoherent sums in device buffers across batches, uploads each
// batch's splines and launches groups of electrons in electron order on the device's in-order queue.
#include "edm/spectra.hpp"

#include <gsl/gsl_integration.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include "edm/schema.hpp"
#include "field/kernel_args.hpp"
#include "field/kernels.hpp"
#include "field/opencl_internal.hpp"
#include "field/spectra_dft.hpp"
#include "field/spectra_fft.hpp"

namespace edm {
namespace detail {
inline constexpr KernelSignature<10> kSpecAccumulate{
    "spec_accumulate",
    "spectra.cl",
    {"coef", "tab", "count", "dirs", "ndir", "omega", "nw", "gl", "coh", "inc"}};
}  // namespace detail

namespace {

void check_grid(const SpectraGrid& grid) {
  if (grid.directions.empty())
    throw ConfigError("EDM-ACC-050", "spectra: the direction grid is empty (screen.nx, screen.ny)");
  if (grid.omega.empty()) throw ConfigError("EDM-CFG-622", "spectra.count: no frequency on the grid");
  for (std::size_t k = 0; k < grid.omega.size(); ++k)
    if (!(grid.omega[k] > 0.0) || !std::isfinite(grid.omega[k]))
      throw ConfigError("EDM-CFG-620", "spectra.omega_min/omega_max: frequency " + std::to_string(k) + " is " +
                                           std::to_string(grid.omega[k]) + "; every ω must be > 0 and finite");
  for (std::size_t d = 0; d < grid.directions.size(); ++d) {
    const auto& n = grid.directions[d];
    const double norm = std::sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
    // A direction grid is built from angles, so its vectors are unit to rounding.
    if (!(std::fabs(norm - 1.0) < 1e-12))
      throw ConfigError("EDM-ACC-051", "spectra: direction " + std::to_string(d) + " has |n| = " +
                                           std::to_string(norm) + ", not a unit vector");
  }
}

void check_options(const SpectraOptions& o) {
  // The key table holds the ranges (core/src/config/keys.cpp).
  check_key_value("spectra.nodes", double(o.nodes), "EDM-ACC-052");
  check_key_value("spectra.phase", o.phase, "EDM-ACC-054");
  if (o.block < 1 || o.block > 32)
    throw ConfigError("EDM-ACC-053", "spectra.block must be in 1..32, got " + std::to_string(o.block));
  if (o.electron_group < 1)
    throw ConfigError("EDM-ACC-055", "spectra.electron_group must be >= 1, got " + std::to_string(o.electron_group));
}

// The launch's work-group size. Left to the runtime, PoCL put a launch whose item count has no
// convenient divisor in one group, run by one thread: 10 directions × 2001 ω (2510 items) was one
// group of 2510 on one of its two cores, 2048 ω two groups of 1280 (BENCHMARKS.md "Direct spectra: an
// explicit work-group size"). So the size is
// chosen here, as the field kernel's is (tuning.cpp resolve_launch_shape): kSpecWorkGroup rounded
// down to the kernel's preferred multiple, halved while the launch would have fewer than
// kSpecGroupsPerUnit groups per compute unit (a small grid still spreads over the device), never
// below that multiple nor above the kernel's maximum; the launch is padded up to a multiple of it
// and the kernel returns on the padded items. A work-item's sums do not depend on the size.
constexpr std::size_t kSpecWorkGroup = 64;
constexpr std::size_t kSpecGroupsPerUnit = 4;

std::size_t spectra_work_group(const cl::Kernel& kernel, const cl::Device& dev, std::size_t items) {
  const std::size_t kmax = std::max<std::size_t>(1, kernel.getWorkGroupInfo<CL_KERNEL_WORK_GROUP_SIZE>(dev));
  std::size_t mult = 1;
  try {
    mult = std::max<std::size_t>(1, kernel.getWorkGroupInfo<CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE>(dev));
  } catch (const cl::Error&) {
    mult = 1;  // a runtime without the query: any size
  }
  mult = std::min(mult, kmax);
  const std::size_t units = std::max<cl_uint>(1, dev.getInfo<CL_DEVICE_MAX_COMPUTE_UNITS>());
  std::size_t wg = std::max(mult, std::min(kSpecWorkGroup, kmax) / mult * mult);
  while (wg / 2 >= mult && (wg / 2) % mult == 0 && (items + wg - 1) / wg < kSpecGroupsPerUnit * units) wg /= 2;
  return wg;
}

// Gauss–Legendre nodes and weights on [−1, 1], interleaved (x, w), from GSL.
std::vector<double> gauss_legendre(int n) {
  gsl_integration_glfixed_table* t = gsl_integration_glfixed_table_alloc(std::size_t(n));
  std::vector<double> out(2 * std::size_t(n));
  for (int i = 0; i < n; ++i) gsl_integration_glfixed_point(-1.0, 1.0, std::size_t(i), &out[2 * i], &out[2 * i + 1], t);
  gsl_integration_glfixed_table_free(t);
  return out;
}

}  // namespace

struct SpectraAccumulator::Impl {
  std::shared_ptr<Device> device;
  SpectraGrid grid;
  SpectraOptions options;
  detail::BoundKernel<detail::kSpecAccumulate> kernel;
  cl::Buffer dirs, omega, gl, coh, inc;
  std::size_t local = 1;  // work-items per group (spectra_work_group)
  std::vector<cl::Event> launches;
  std::vector<std::uint64_t> launch_electrons;  // electrons of each event in `launches`
  std::size_t polled = 0;                        // launches[0, polled) seen complete
  std::uint64_t completed = 0;                   // their electrons (electrons_completed)
  SpectraSums sums;
  bool finished = false, accumulated = false;
  std::unique_ptr<detail::SpectraFft> fft;  // spectra.method resolved to fft: the sums live there
  std::unique_ptr<detail::SpectraDft> dft;  // or to dft

  bool series() const { return fft || dft; }
  SpectraSums series_sums() { return fft ? fft->download_sums() : dft->download_sums(); }

  std::string where() const { return "device " + std::to_string(device->info().index) + " (" + device->info().name + ")"; }
  std::size_t bins() const { return grid.directions.size() * grid.omega.size(); }
  std::size_t work_items() const {
    const std::size_t blocks = (grid.omega.size() + std::size_t(options.block) - 1) / std::size_t(options.block);
    return grid.directions.size() * blocks;
  }
  // work_items() padded up to a multiple of the work-group size.
  std::size_t padded_items() const { return (work_items() + local - 1) / local * local; }
  void create_buffers();
  void download(SpectraSums& out);
  void collect_kernel_seconds();
  void launch(const cl::Buffer& coef, const SplineBatch& batch, std::size_t first, std::size_t count,
              std::span<const double> weights);
};

void SpectraAccumulator::Impl::create_buffers() {
  const auto& ctx = device->context();
  std::vector<double> d(3 * grid.directions.size());
  for (std::size_t i = 0; i < grid.directions.size(); ++i)
    for (int c = 0; c < 3; ++c) d[3 * i + c] = grid.directions[i][c];
  const auto nodes = gauss_legendre(options.nodes);
  dirs = cl::Buffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, d.size() * sizeof(double), d.data());
  omega = cl::Buffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, grid.omega.size() * sizeof(double),
                     const_cast<double*>(grid.omega.data()));
  gl = cl::Buffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, nodes.size() * sizeof(double),
                  const_cast<double*>(nodes.data()));
  coh = cl::Buffer(ctx, CL_MEM_READ_WRITE, 6 * bins() * sizeof(double));
  inc = cl::Buffer(ctx, CL_MEM_READ_WRITE, bins() * sizeof(double));
  device->queue().enqueueFillBuffer(coh, 0.0, 0, 6 * bins() * sizeof(double));
  device->queue().enqueueFillBuffer(inc, 0.0, 0, bins() * sizeof(double));
  kernel.set("dirs", dirs);
  kernel.set("ndir", cl_int(grid.directions.size()));
  kernel.set("omega", omega);
  kernel.set("nw", cl_int(grid.omega.size()));
  kernel.set("gl", gl);
  kernel.set("coh", coh);
  kernel.set("inc", inc);
}

SpectraAccumulator::SpectraAccumulator(std::shared_ptr<Device> device, const SpectraGrid& grid,
                                       const SpectraOptions& options)
    : impl_(std::make_unique<Impl>()) {
  auto& m = *impl_;
  if (!device) throw ConfigError("EDM-ACC-056", "SpectraAccumulator needs an open device");
  check_grid(grid);
  check_options(options);
  m.device = std::move(device);
  m.grid = grid;
  m.options = options;
  m.sums.directions = grid.directions.size();
  m.sums.frequencies = grid.omega.size();
  const SpectraMethod method = detail::resolve_spectra_method(grid, options, m.device->info(), options.series_samples);
  if (method == SpectraMethod::Fft) {
    m.fft = std::make_unique<detail::SpectraFft>(m.device, grid, options);
    return;
  }
  if (method == SpectraMethod::Dft) {
    m.dft = std::make_unique<detail::SpectraDft>(m.device, grid, options);
    return;
  }
  const std::map<std::string, std::string> defines = {{"SPEC_NODES", std::to_string(options.nodes)},
                                                      {"SPEC_BLOCK", std::to_string(options.block)},
                                                      {"SPEC_PHASE", std::to_string(options.phase)}};
  cl::Program program = m.device->program({"spectra.cl"}, defines);
  try {
    m.kernel = detail::BoundKernel<detail::kSpecAccumulate>(program, detail::kernel_source("spectra.cl"));
    m.local = spectra_work_group(m.kernel.kernel(), m.device->device(), m.work_items());
    m.create_buffers();
  } catch (const cl::Error& e) {
    throw_device_error(e, "creating the spectra buffers (" + std::to_string(grid.directions.size()) +
                              " directions × " + std::to_string(grid.omega.size()) + " frequencies) on " + m.where());
  }
}

SpectraAccumulator::~SpectraAccumulator() = default;
SpectraAccumulator::SpectraAccumulator(SpectraAccumulator&&) noexcept = default;
SpectraAccumulator& SpectraAccumulator::operator=(SpectraAccumulator&&) noexcept = default;

// One launch of electrons [first, first + count) of the batch: their table (offset, intervals, dτ,
// weight) as a small buffer, the sums read and written once per bin per electron, in order.
void SpectraAccumulator::Impl::launch(const cl::Buffer& coef, const SplineBatch& batch, std::size_t first,
                                      std::size_t count, std::span<const double> weights) {
  std::vector<double> tab(4 * count);
  for (std::size_t e = 0; e < count; ++e) {
    const auto& el = batch.electrons[first + e];
    tab[4 * e] = double(el.offset);
    tab[4 * e + 1] = double(el.n_intervals);
    tab[4 * e + 2] = el.dtau;
    tab[4 * e + 3] = weights.empty() ? el.weight : weights[first + e];
    sums.weight_sum += tab[4 * e + 3];
  }
  cl::Buffer tb(device->context(), CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, tab.size() * sizeof(double), tab.data());
  kernel.set("coef", coef);
  kernel.set("tab", tb);
  kernel.set("count", cl_int(count));
  cl::Event ev;
  device->queue().enqueueNDRangeKernel(kernel.kernel(), cl::NullRange, cl::NDRange(padded_items()), cl::NDRange(local),
                                       nullptr, &ev);
  launches.push_back(ev);
  launch_electrons.push_back(count);
  accumulated = true;
  ++sums.launches;
  sums.electrons += count;
}

void SpectraAccumulator::accumulate(const SplineBatch& batch, std::span<const double> weights) {
  auto& m = *impl_;
  if (m.finished) throw Error("EDM-ACC-057", "SpectraAccumulator::accumulate() after finish()");
  if (batch.electrons.empty()) return;
  if (!weights.empty() && weights.size() != batch.electrons.size())
    throw Error("EDM-ACC-058", "spectra: " + std::to_string(weights.size()) + " weights for " +
                                   std::to_string(batch.electrons.size()) + " electrons of the batch");
  for (std::size_t e = 0; e < batch.electrons.size(); ++e) {
    const double w = weights.empty() ? batch.electrons[e].weight : weights[e];
    if (!(w >= 0.0) || !std::isfinite(w))
      throw ConfigError("EDM-CFG-625", "electron " + std::to_string(batch.electrons[e].index) + ": weight " +
                                           std::to_string(w) + " is negative or not finite");
  }
  for (const auto& el : batch.electrons)
    if (el.n_intervals == 0 || !(el.dtau > 0.0) ||
        el.offset + std::uint64_t(el.n_intervals) * kCoefPerInterval > batch.coef.size())
      throw PhysicsError("EDM-ACC-059", "spectra: the spline table of electron " + std::to_string(el.index) +
                                            " is inconsistent (intervals, dtau or offset)");
  if (m.series()) {
    // The fft and dft backends run at most a few electron groups ahead of their device, so an
    // electron whose accumulate() returned counts as done for progress (electrons_completed()).
    m.accumulated = true;
    if (m.fft)
      m.fft->accumulate(batch, weights);
    else
      m.dft->accumulate(batch, weights);
    m.completed += batch.electrons.size();
    return;
  }
  const std::size_t bytes = batch.coef.size() * sizeof(double);
  try {
    cl::Buffer coef(m.device->context(), CL_MEM_READ_ONLY, bytes);
    m.device->queue().enqueueWriteBuffer(coef, CL_TRUE, 0, bytes, batch.coef.data());
    const std::size_t n = batch.electrons.size(), G = std::size_t(m.options.electron_group);
    for (std::size_t first = 0; first < n; first += G) m.launch(coef, batch, first, std::min(G, n - first), weights);
    m.device->queue().flush();
  } catch (const cl::Error& e) {
    throw_device_error(e, "spectra of electrons " + std::to_string(batch.electrons.front().index) + "…" +
                              std::to_string(batch.electrons.back().index) + " on " + m.where());
  }
}

// The device sums into `out` (blocking reads on the in-order queue: they wait for every launch).
void SpectraAccumulator::Impl::download(SpectraSums& out) {
  out.coherent.resize(6 * bins());
  out.incoherent.resize(bins());
  device->queue().enqueueReadBuffer(coh, CL_TRUE, 0, out.coherent.size() * sizeof(double), out.coherent.data());
  device->queue().enqueueReadBuffer(inc, CL_TRUE, 0, out.incoherent.size() * sizeof(double), out.incoherent.data());
}

// After the queue has finished: the launches' kernel time into the sums, their electrons into the
// completed count, and the events released (a long run keeps no growing list between snapshots).
void SpectraAccumulator::Impl::collect_kernel_seconds() {
  for (auto& ev : launches)
    sums.kernel_seconds += 1e-9 * double(ev.getProfilingInfo<CL_PROFILING_COMMAND_END>() -
                                         ev.getProfilingInfo<CL_PROFILING_COMMAND_START>());
  for (std::size_t i = polled; i < launch_electrons.size(); ++i) completed += launch_electrons[i];
  launches.clear();
  launch_electrons.clear();
  polled = 0;
}

SpectraSums SpectraAccumulator::finish() {
  auto& m = *impl_;
  if (m.finished) throw Error("EDM-ACC-057", "SpectraAccumulator::finish() called twice");
  m.finished = true;
  if (m.series()) return m.series_sums();
  try {
    m.download(m.sums);
    m.collect_kernel_seconds();
  } catch (const cl::Error& e) {
    throw_device_error(e, "downloading the spectra from " + m.where());
  }
  return std::move(m.sums);
}

SpectraSums SpectraAccumulator::snapshot() {
  auto& m = *impl_;
  if (m.finished) throw Error("EDM-ACC-057", "SpectraAccumulator::snapshot() after finish()");
  if (m.series()) return m.series_sums();
  SpectraSums out;
  try {
    m.download(out);
    m.device->queue().finish();
    m.collect_kernel_seconds();
  } catch (const cl::Error& e) {
    throw_device_error(e, "downloading the spectra for a checkpoint from " + m.where());
  }
  out.directions = m.sums.directions;
  out.frequencies = m.sums.frequencies;
  out.electrons = m.sums.electrons;
  out.launches = m.sums.launches;
  out.kernel_seconds = m.sums.kernel_seconds;
  out.weight_sum = m.sums.weight_sum;
  return out;
}

void SpectraAccumulator::restore(const SpectraSums& saved) {
  auto& m = *impl_;
  if (m.finished || m.accumulated)
    throw Error("EDM-CKP-069", "SpectraAccumulator::restore() after accumulate() or finish()");
  if (saved.directions != m.sums.directions || saved.frequencies != m.sums.frequencies ||
      saved.coherent.size() != 6 * m.bins() || saved.incoherent.size() != m.bins())
    throw Error("EDM-CKP-069", "spectra: saved sums of " + std::to_string(saved.directions) + " directions × " +
                                   std::to_string(saved.frequencies) + " frequencies restored into a grid of " +
                                   std::to_string(m.sums.directions) + " × " + std::to_string(m.sums.frequencies));
  if (m.fft) return m.fft->upload_sums(saved);
  if (m.dft) return m.dft->upload_sums(saved);
  try {
    m.device->queue().enqueueWriteBuffer(m.coh, CL_TRUE, 0, saved.coherent.size() * sizeof(double),
                                         saved.coherent.data());
    m.device->queue().enqueueWriteBuffer(m.inc, CL_TRUE, 0, saved.incoherent.size() * sizeof(double),
                                         saved.incoherent.data());
  } catch (const cl::Error& e) {
    throw_device_error(e, "uploading the checkpoint's spectra to " + m.where());
  }
  m.sums.electrons = saved.electrons;
  m.sums.launches = saved.launches;
  m.sums.kernel_seconds = saved.kernel_seconds;
  m.sums.weight_sum = saved.weight_sum;
}

SpectraMethod SpectraAccumulator::method() const {
  const auto& m = *impl_;
  return m.fft ? SpectraMethod::Fft : m.dft ? SpectraMethod::Dft : SpectraMethod::Direct;
}

std::uint64_t SpectraAccumulator::electrons_completed() {
  auto& m = *impl_;
  if (m.series()) return m.completed;
  // One in-order queue: launches complete in order, so the done ones are a prefix. A failed launch
  // (a negative status) is reported at once: a caller waiting for the count would wait forever.
  while (m.polled < m.launches.size()) {
    cl_int status = CL_QUEUED;
    try {
      status = m.launches[m.polled].getInfo<CL_EVENT_COMMAND_EXECUTION_STATUS>();
      if (status < 0) throw cl::Error(status, "spec_accumulate");
    } catch (const cl::Error& e) {
      throw_device_error(e, "the spectra kernel on " + m.where());
    }
    if (status != CL_COMPLETE) break;
    m.completed += m.launch_electrons[m.polled++];
  }
  return m.completed;
}

}  // namespace edm
