// SpectraAccumulator (edm/spectra.hpp): checks the grid, the options and every batch for all
// methods, and holds the one method the factory built (field/spectra_method.hpp: the campaign's
// spectra.method, or the cost model's pick for "auto"). Also the direct method, the host side of
// cl/spectra.cl: the program, the coherent and incoherent sums in device buffers across batches,
// each batch's splines uploaded and groups of electrons launched in electron order on the device's
// in-order queue.
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
#include "field/spectra_method.hpp"

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

namespace detail {

// The direct method: cl/spectra.cl's quadrature over each electron's spline pieces, the sums in
// device buffers across batches, groups of electrons launched in electron order on the device's
// in-order queue.
class DirectSpectra final : public SpectraMethodImpl {
 public:
  DirectSpectra(std::shared_ptr<Device> device, const SpectraGrid& grid, const SpectraOptions& options);
  SpectraMethod method() const override { return SpectraMethod::Direct; }
  void accumulate(const SplineBatch& batch, std::span<const double> weights) override;
  SpectraSums snapshot() override;
  SpectraSums finish() override;
  void restore(const SpectraSums& sums) override;
  std::uint64_t electrons_completed() override;

 private:
  std::shared_ptr<Device> device;
  SpectraGrid grid;
  SpectraOptions options;
  BoundKernel<kSpecAccumulate> kernel;
  cl::Buffer dirs, omega, gl, coh, inc;
  std::size_t local = 1;  // work-items per group (spectra_work_group)
  std::vector<cl::Event> launches;
  std::vector<std::uint64_t> launch_electrons;  // electrons of each event in `launches`
  std::size_t polled = 0;                        // launches[0, polled) seen complete
  std::uint64_t completed = 0;                   // their electrons (electrons_completed)
  SpectraSums sums;

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

void DirectSpectra::create_buffers() {
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

DirectSpectra::DirectSpectra(std::shared_ptr<Device> dev, const SpectraGrid& g, const SpectraOptions& o)
    : device(std::move(dev)), grid(g), options(o) {
  sums.directions = grid.directions.size();
  sums.frequencies = grid.omega.size();
  const std::map<std::string, std::string> defines = {{"SPEC_NODES", std::to_string(options.nodes)},
                                                      {"SPEC_BLOCK", std::to_string(options.block)},
                                                      {"SPEC_PHASE", std::to_string(options.phase)}};
  cl::Program program = device->program({"spectra.cl"}, defines);
  try {
    kernel = BoundKernel<kSpecAccumulate>(program, kernel_source("spectra.cl"));
    local = spectra_work_group(kernel.kernel(), device->device(), work_items());
    create_buffers();
  } catch (const cl::Error& e) {
    throw_device_error(e, "creating the spectra buffers (" + std::to_string(grid.directions.size()) +
                              " directions × " + std::to_string(grid.omega.size()) + " frequencies) on " + where());
  }
}

// One launch of electrons [first, first + count) of the batch: their table (offset, intervals, dτ,
// weight) as a small buffer, the sums read and written once per bin per electron, in order.
void DirectSpectra::launch(const cl::Buffer& coef, const SplineBatch& batch, std::size_t first, std::size_t count,
                           std::span<const double> weights) {
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
  ++sums.launches;
  sums.electrons += count;
}

void DirectSpectra::accumulate(const SplineBatch& batch, std::span<const double> weights) {
  const std::size_t bytes = batch.coef.size() * sizeof(double);
  try {
    cl::Buffer coef(device->context(), CL_MEM_READ_ONLY, bytes);
    device->queue().enqueueWriteBuffer(coef, CL_TRUE, 0, bytes, batch.coef.data());
    const std::size_t n = batch.electrons.size(), G = std::size_t(options.electron_group);
    for (std::size_t first = 0; first < n; first += G) launch(coef, batch, first, std::min(G, n - first), weights);
    device->queue().flush();
  } catch (const cl::Error& e) {
    throw_device_error(e, "spectra of electrons " + std::to_string(batch.electrons.front().index) + "…" +
                              std::to_string(batch.electrons.back().index) + " on " + where());
  }
}

// The device sums into `out` (blocking reads on the in-order queue: they wait for every launch).
void DirectSpectra::download(SpectraSums& out) {
  out.coherent.resize(6 * bins());
  out.incoherent.resize(bins());
  device->queue().enqueueReadBuffer(coh, CL_TRUE, 0, out.coherent.size() * sizeof(double), out.coherent.data());
  device->queue().enqueueReadBuffer(inc, CL_TRUE, 0, out.incoherent.size() * sizeof(double), out.incoherent.data());
}

// After the queue has finished: the launches' kernel time into the sums, their electrons into the
// completed count, and the events released (a long run keeps no growing list between snapshots).
void DirectSpectra::collect_kernel_seconds() {
  for (auto& ev : launches)
    sums.kernel_seconds += 1e-9 * double(ev.getProfilingInfo<CL_PROFILING_COMMAND_END>() -
                                         ev.getProfilingInfo<CL_PROFILING_COMMAND_START>());
  for (std::size_t i = polled; i < launch_electrons.size(); ++i) completed += launch_electrons[i];
  launches.clear();
  launch_electrons.clear();
  polled = 0;
}

SpectraSums DirectSpectra::finish() {
  try {
    download(sums);
    collect_kernel_seconds();
  } catch (const cl::Error& e) {
    throw_device_error(e, "downloading the spectra from " + where());
  }
  return std::move(sums);
}

SpectraSums DirectSpectra::snapshot() {
  SpectraSums out;
  try {
    download(out);
    device->queue().finish();
    collect_kernel_seconds();
  } catch (const cl::Error& e) {
    throw_device_error(e, "downloading the spectra for a checkpoint from " + where());
  }
  out.directions = sums.directions;
  out.frequencies = sums.frequencies;
  out.electrons = sums.electrons;
  out.launches = sums.launches;
  out.kernel_seconds = sums.kernel_seconds;
  out.weight_sum = sums.weight_sum;
  return out;
}

void DirectSpectra::restore(const SpectraSums& saved) {
  try {
    device->queue().enqueueWriteBuffer(coh, CL_TRUE, 0, saved.coherent.size() * sizeof(double), saved.coherent.data());
    device->queue().enqueueWriteBuffer(inc, CL_TRUE, 0, saved.incoherent.size() * sizeof(double),
                                       saved.incoherent.data());
  } catch (const cl::Error& e) {
    throw_device_error(e, "uploading the checkpoint's spectra to " + where());
  }
  sums.electrons = saved.electrons;
  sums.launches = saved.launches;
  sums.kernel_seconds = saved.kernel_seconds;
  sums.weight_sum = saved.weight_sum;
}

std::uint64_t DirectSpectra::electrons_completed() {
  // One in-order queue: launches complete in order, so the done ones are a prefix. A failed launch
  // (a negative status) is reported at once: a caller waiting for the count would wait forever.
  while (polled < launches.size()) {
    cl_int status = CL_QUEUED;
    try {
      status = launches[polled].getInfo<CL_EVENT_COMMAND_EXECUTION_STATUS>();
      if (status < 0) throw cl::Error(status, "spec_accumulate");
    } catch (const cl::Error& e) {
      throw_device_error(e, "the spectra kernel on " + where());
    }
    if (status != CL_COMPLETE) break;
    completed += launch_electrons[polled++];
  }
  return completed;
}

// The fft and dft methods (SpectraFft, SpectraDft): the sums and their counters live in the method's
// FarSeries. They run at most a few electron groups ahead of their device, so an electron whose
// accumulate() returned counts as done for progress.
template <class Series, SpectraMethod M>
class SeriesSpectra final : public SpectraMethodImpl {
 public:
  SeriesSpectra(std::shared_ptr<Device> device, const SpectraGrid& grid, const SpectraOptions& options)
      : series_(std::move(device), grid, options) {}
  SpectraMethod method() const override { return M; }
  void accumulate(const SplineBatch& batch, std::span<const double> weights) override {
    series_.accumulate(batch, weights);
    completed_ += batch.electrons.size();
  }
  SpectraSums snapshot() override { return series_.download_sums(); }
  SpectraSums finish() override { return series_.download_sums(); }
  void restore(const SpectraSums& sums) override { series_.upload_sums(sums); }
  std::uint64_t electrons_completed() override { return completed_; }

 private:
  Series series_;
  std::uint64_t completed_ = 0;
};

std::unique_ptr<SpectraMethodImpl> make_spectra_method(const SpectraChoice& choice, std::shared_ptr<Device> device,
                                                       const SpectraGrid& grid, const SpectraOptions& options) {
  switch (choice.method) {
    case SpectraMethod::Fft:
      return std::make_unique<SeriesSpectra<SpectraFft, SpectraMethod::Fft>>(std::move(device), grid, options);
    case SpectraMethod::Dft:
      return std::make_unique<SeriesSpectra<SpectraDft, SpectraMethod::Dft>>(std::move(device), grid, options);
    case SpectraMethod::Direct:
    case SpectraMethod::Auto:  // never: choose_spectra_method resolves it
      break;
  }
  return std::make_unique<DirectSpectra>(std::move(device), grid, options);
}

}  // namespace detail

SpectraChoice choose_spectra_method(const SpectraGrid& grid, const SpectraOptions& options, const DeviceInfo& device) {
  SpectraChoice c;
  c.asked = options.method;
  c.cost = detail::serving_cost(grid, options, device, options.series_samples);
  c.method = detail::resolve_spectra_method(grid, options, device, options.series_samples);
  return c;
}

struct SpectraAccumulator::Impl {
  SpectraChoice choice;
  std::unique_ptr<detail::SpectraMethodImpl> method;
  std::size_t directions = 0, frequencies = 0;
  bool finished = false, accumulated = false;
  std::size_t bins() const { return directions * frequencies; }
};

SpectraAccumulator::SpectraAccumulator(std::shared_ptr<Device> device, const SpectraGrid& grid,
                                       const SpectraOptions& options)
    : impl_(std::make_unique<Impl>()) {
  auto& m = *impl_;
  if (!device) throw ConfigError("EDM-ACC-056", "SpectraAccumulator needs an open device");
  check_grid(grid);
  check_options(options);
  m.directions = grid.directions.size();
  m.frequencies = grid.omega.size();
  m.choice = choose_spectra_method(grid, options, device->info());
  m.method = detail::make_spectra_method(m.choice, std::move(device), grid, options);
}

SpectraAccumulator::~SpectraAccumulator() = default;
SpectraAccumulator::SpectraAccumulator(SpectraAccumulator&&) noexcept = default;
SpectraAccumulator& SpectraAccumulator::operator=(SpectraAccumulator&&) noexcept = default;

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
  m.accumulated = true;
  m.method->accumulate(batch, weights);
}

SpectraSums SpectraAccumulator::finish() {
  auto& m = *impl_;
  if (m.finished) throw Error("EDM-ACC-057", "SpectraAccumulator::finish() called twice");
  m.finished = true;
  return m.method->finish();
}

SpectraSums SpectraAccumulator::snapshot() {
  auto& m = *impl_;
  if (m.finished) throw Error("EDM-ACC-057", "SpectraAccumulator::snapshot() after finish()");
  return m.method->snapshot();
}

void SpectraAccumulator::restore(const SpectraSums& saved) {
  auto& m = *impl_;
  if (m.finished || m.accumulated)
    throw Error("EDM-CKP-069", "SpectraAccumulator::restore() after accumulate() or finish()");
  if (saved.directions != m.directions || saved.frequencies != m.frequencies ||
      saved.coherent.size() != 6 * m.bins() || saved.incoherent.size() != m.bins())
    throw Error("EDM-CKP-069", "spectra: saved sums of " + std::to_string(saved.directions) + " directions × " +
                                   std::to_string(saved.frequencies) + " frequencies restored into a grid of " +
                                   std::to_string(m.directions) + " × " + std::to_string(m.frequencies));
  m.method->restore(saved);
}

SpectraMethod SpectraAccumulator::method() const { return impl_->method->method(); }

const SpectraChoice& SpectraAccumulator::choice() const { return impl_->choice; }

std::uint64_t SpectraAccumulator::electrons_completed() { return impl_->method->electrons_completed(); }

}  // namespace edm
