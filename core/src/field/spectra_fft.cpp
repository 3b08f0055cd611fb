// The fft method of the spectra (field/spectra_fft.hpp): a FieldAccumulator on the angular screen at
// infinity computes one electron's far-field series at a time into its cube on the device;
// czt_premultiply (cl/spectra_fft.cl) takes it from there into slot g of a group of fft_group
// electrons, transposed so that every series is contiguous (and zeroes the cube for the next one); per group, clFFT transforms every series
// forward, czt_multiply applies the chirp's transform, clFFT transforms back, and czt_reduce adds
// w·A and w·|A|² into the sums in electron order. The chirp-z algebra is written out in
// cl/spectra_fft.cl.
#include "field/spectra_fft.hpp"

#include <clFFT.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_fft_complex.h>

#include <cmath>
#include <cstdlib>
#include <complex>
#include <deque>
#include <mutex>
#include <numbers>
#include <string>

#include "edm/accumulator.hpp"
#include "field/field_access.hpp"
#include "field/kernel_args.hpp"
#include "field/kernels.hpp"
#include "field/opencl_internal.hpp"

namespace edm::detail {

inline constexpr KernelSignature<8> kCztPremultiply{
    "czt_premultiply", "spectra_fft.cl", {"E", "np", "nb", "L", "G", "g", "chirp", "Y"}};
inline constexpr KernelSignature<4> kCztMultiply{"czt_multiply", "spectra_fft.cl", {"Y", "L", "GQ", "H"}};
inline constexpr KernelSignature<11> kCztReduce{
    "czt_reduce",
    "spectra_fft.cl",
    {"Y", "np", "nd", "nw", "L", "count", "position_of", "post", "weights", "coh", "inc"}};

namespace {

// Cost model constants of "auto" (seconds), measured on the two device classes edm is benchmarked
// on (BENCHMARKS.md, "fft spectra", scripts/studies/spectra_fft_bench.cpp): the direct quadrature
// per (electron, direction, ω) term and
// per radian of phase ω·T over the observer window T (its work grows with the phase it resolves);
// the fft method per slot of the field kernel and per point·log2 of the transforms (3 components,
// forward and backward).
struct CostConstants {
  double term_radian, slot, fft_point;
};
constexpr CostConstants kGpuCost{5.4e-11, 5.8e-11, 1.05e-11};  // NVIDIA H200
constexpr CostConstants kCpuCost{5.6e-7, 2.2e-7, 3.9e-8};       // PoCL, 2 cores

// A linear grid: ω_j = ω0 + j δω to rounding (spectra_frequencies builds it so).
bool linear_grid(const std::vector<double>& w, double& w0, double& dw) {
  w0 = w.front();
  dw = w.size() > 1 ? (w.back() - w.front()) / double(w.size() - 1) : 0.0;
  for (std::size_t j = 0; j < w.size(); ++j)
    if (std::fabs(w[j] - (w0 + double(j) * dw)) > 1e-12 * std::fabs(w.back())) return false;
  return w.size() == 1 || dw > 0.0;
}

void check_clfft(clfftStatus st, const char* call, const std::string& where) {
  if (st != CLFFT_SUCCESS)
    throw DeviceError("EDM-ACC-070", std::string("clFFT's ") + call + " failed with status " + std::to_string(int(st)) +
                                         " on " + where + " (spectra.method = \"fft\")",
                      int(st));
}

// clFFT's library state, once per process.
void clfft_setup_once() {
  static std::once_flag once;
  static clfftStatus status = CLFFT_SUCCESS;
  std::call_once(once, [] {
    clfftSetupData setup;
    status = clfftInitSetupData(&setup);
    if (status == CLFFT_SUCCESS) status = clfftSetup(&setup);
    // Its resources go at exit (clFFT warns on stderr otherwise); accumulators are gone by then.
    if (status == CLFFT_SUCCESS) std::atexit([] { clfftTeardown(); });
  });
  check_clfft(status, "clfftSetup", "this process");
}

}  // namespace

std::size_t czt_length(std::size_t n) {
  for (std::size_t L = std::max<std::size_t>(n, 1);; ++L) {
    std::size_t r = L;
    for (std::size_t p : {2, 3, 5, 7})
      while (r % p == 0) r /= p;
    if (r == 1) return L;
  }
}

std::string fft_unavailable(const SpectraGrid& grid) {
  const Screen& s = grid.far_screen;
  if (!s.far_field())
    return "it samples the far field of an angular screen at infinity (screen.type = \"angular\", "
           "screen.distance = \"infinity\")";
  if (s.directions.size() != grid.directions.size()) return "the screen's directions are not the spectra's";
  for (std::size_t d = 0; d < grid.directions.size(); ++d)
    for (int c = 0; c < 3; ++c)
      if (std::fabs(s.directions[d].n[std::size_t(c)] - grid.directions[d][std::size_t(c)]) > 1e-12)
        return "the screen's direction " + std::to_string(d) + " is not the spectra's";
  double w0 = 0, dw = 0;
  if (!linear_grid(grid.omega, w0, dw))
    return "it evaluates a linear frequency grid (spectra.scale = \"linear\"); use spectra.method = \"direct\" "
           "for a logarithmic one";
  if (s.samples < 2 || !(s.dt > 0)) return "the screen needs at least 2 samples (screen.samples)";
  const double nyquist = std::numbers::pi / s.dt;
  if (!(grid.omega.back() < nyquist))
    return "spectra.omega_max (" + std::to_string(grid.omega.back()) + " laser ω) is not below the Nyquist frequency " +
           std::to_string(nyquist) + " of the screen's samples; raise screen.samples_per_period (or screen.samples)";
  return {};
}

SpectraCost spectra_cost(const SpectraGrid& grid, const SpectraOptions& options, const DeviceInfo& device) {
  const CostConstants& k = device.type == "CPU" ? kCpuCost : kGpuCost;
  const double D = double(grid.directions.size()), M = double(grid.omega.size());
  const Screen& s = grid.far_screen;
  const double T = s.samples > 1 ? s.dt * double(s.samples) : 0.0;
  double mean_w = 0;
  for (double w : grid.omega) mean_w += w / M;
  SpectraCost c;
  // Direct: nodes/phase evaluations per radian, at least one sub-piece of `nodes` per interval.
  c.direct = D * M * k.term_radian * std::max(1.0, mean_w * T) * double(options.nodes) / options.phase;
  const double L = double(czt_length(std::size_t(std::max(1, s.samples)) + grid.omega.size() - 1));
  c.fft = D * (double(std::max(1, s.samples)) * k.slot + 6.0 * L * std::log2(L) * k.fft_point);
  return c;
}

SpectraMethod resolve_spectra_method(const SpectraGrid& grid, const SpectraOptions& options, const DeviceInfo& device) {
  if (options.method != SpectraMethod::Auto) return options.method;
  if (!fft_unavailable(grid).empty()) return SpectraMethod::Direct;
  const SpectraCost c = spectra_cost(grid, options, device);
  return c.fft < c.direct ? SpectraMethod::Fft : SpectraMethod::Direct;
}

struct SpectraFft::Impl {
  std::shared_ptr<Device> device;
  SpectraGrid grid;
  SpectraOptions options;
  std::unique_ptr<FieldAccumulator> field;
  int np = 0, nb = 0, G = 1, nd = 0, nw = 0;
  std::size_t L = 0, Q = 0;
  double w0 = 0, dw = 0;
  BoundKernel<kCztPremultiply> pre;
  BoundKernel<kCztMultiply> mul;
  BoundKernel<kCztReduce> red;
  clfftPlanHandle plan = 0;
  cl::Buffer chirp, H, post, position_of, Y, coh, inc;
  std::vector<double> group_weights;
  int slot = 0;
  std::deque<cl::Event> flushes;   // the last reduce of each group in flight (the host stays close)
  std::vector<cl::Event> events;   // profiling, summed at download
  SpectraSums sums;

  std::string where() const { return "device " + std::to_string(device->info().index) + " (" + device->info().name + ")"; }
  std::size_t bins() const { return std::size_t(nd) * std::size_t(nw); }
  std::uint64_t y_bytes() const { return std::uint64_t(L) * std::uint64_t(G) * Q * 16; }
  void upload_tables();
  void create_plan();
  void check_memory() const;
  void add_electron(const SplineBatch& batch, std::size_t e, double weight);
  void flush();
};

// The chirp y-factors, the wrapped chirp's DFT H (GSL, on the host, once) and the post-factors.
void SpectraFft::Impl::upload_tables() {
  const double dt = grid.far_screen.dt, t0 = grid.far_screen.t0_rel, alpha = dw * dt;
  std::vector<std::complex<double>> c(static_cast<std::size_t>(nb)), h(L, 0.0), p(static_cast<std::size_t>(nw));
  for (int k = 0; k < nb; ++k) c[std::size_t(k)] = std::polar(1.0, double(k) * dt * (w0 + 0.5 * dw * double(k)));
  for (int n = 0; n < nw; ++n) h[std::size_t(n)] = std::polar(1.0, -0.5 * alpha * double(n) * double(n));
  for (int n = 1; n < nb; ++n) h[L - std::size_t(n)] = std::polar(1.0, -0.5 * alpha * double(n) * double(n));
  for (int j = 0; j < nw; ++j) {
    const double wj = w0 + double(j) * dw;
    p[std::size_t(j)] = dt * std::polar(1.0, wj * t0) * std::polar(1.0, 0.5 * alpha * double(j) * double(j));
  }
  gsl_fft_complex_wavetable* wt = gsl_fft_complex_wavetable_alloc(L);
  gsl_fft_complex_workspace* ws = gsl_fft_complex_workspace_alloc(L);
  const int st = gsl_fft_complex_forward(reinterpret_cast<double*>(h.data()), 1, L, wt, ws);
  gsl_fft_complex_workspace_free(ws);
  gsl_fft_complex_wavetable_free(wt);
  if (st != GSL_SUCCESS) throw PhysicsError("EDM-ACC-073", "spectra fft: GSL's FFT of the chirp (length " +
                                                               std::to_string(L) + ") failed with status " + std::to_string(st));
  const auto& ctx = device->context();
  const auto ro = CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR;
  chirp = cl::Buffer(ctx, ro, c.size() * 16, c.data());
  H = cl::Buffer(ctx, ro, h.size() * 16, h.data());
  post = cl::Buffer(ctx, ro, p.size() * 16, p.data());
  // Direction d → device position of the field cube (the accumulator's pixel order).
  const auto& pixel_of = FieldAccess::pixel_of(*field);
  std::vector<cl_int> pos(pixel_of.size());
  for (std::size_t q = 0; q < pixel_of.size(); ++q) pos[std::size_t(pixel_of[q])] = cl_int(q);
  position_of = cl::Buffer(ctx, ro, pos.size() * sizeof(cl_int), pos.data());
}

// One plan for the group: L-point complex transforms, in place, of every series (contiguous).
void SpectraFft::Impl::create_plan() {
  clfft_setup_once();
  const std::string w = where();
  std::size_t len[1] = {L}, stride[1] = {1};
  check_clfft(clfftCreateDefaultPlan(&plan, device->context()(), CLFFT_1D, len), "clfftCreateDefaultPlan", w);
  check_clfft(clfftSetPlanPrecision(plan, CLFFT_DOUBLE), "clfftSetPlanPrecision", w);
  check_clfft(clfftSetLayout(plan, CLFFT_COMPLEX_INTERLEAVED, CLFFT_COMPLEX_INTERLEAVED), "clfftSetLayout", w);
  check_clfft(clfftSetResultLocation(plan, CLFFT_INPLACE), "clfftSetResultLocation", w);
  check_clfft(clfftSetPlanInStride(plan, CLFFT_1D, stride), "clfftSetPlanInStride", w);
  check_clfft(clfftSetPlanOutStride(plan, CLFFT_1D, stride), "clfftSetPlanOutStride", w);
  check_clfft(clfftSetPlanDistance(plan, L, L), "clfftSetPlanDistance", w);
  check_clfft(clfftSetPlanBatchSize(plan, std::size_t(G) * Q), "clfftSetPlanBatchSize", w);
  cl_command_queue q = device->queue()();
  check_clfft(clfftBakePlan(plan, 1, &q, nullptr, nullptr), "clfftBakePlan", w);
}

// The work buffer (and, at most as large, clFFT's own scratch) beside the field cube and the sums.
void SpectraFft::Impl::check_memory() const {
  const DeviceInfo& info = device->info();
  const std::uint64_t total = field->device_buffer_bytes() + 2 * y_bytes() + 7 * bins() * sizeof(double);
  const std::string setting = "L = " + std::to_string(L) + " points × " + std::to_string(G) +
                              " electrons × 3 × " + std::to_string(np) + " directions (screen.samples = " +
                              std::to_string(nb) + ", spectra.count = " + std::to_string(nw) + ")";
  if (y_bytes() > info.max_allocation || total > info.global_memory)
    throw DeviceError("EDM-ACC-071", "spectra fft: " + std::to_string(total) + " bytes of device buffers (" + setting +
                                         ") exceed " + where() + " (max allocation " +
                                         std::to_string(info.max_allocation) + ", global memory " +
                                         std::to_string(info.global_memory) +
                                         "); reduce spectra.count, screen.samples or the directions, or use "
                                         "spectra.method = \"direct\"");
}

SpectraFft::SpectraFft(std::shared_ptr<Device> device, const SpectraGrid& grid, const SpectraOptions& options)
    : impl_(std::make_unique<Impl>()) {
  auto& m = *impl_;
  if (const std::string why = fft_unavailable(grid); !why.empty())
    throw ConfigError("EDM-CFG-650", "spectra.method = \"fft\" cannot compute this grid: " + why);
  if (options.fft_group < 1)
    throw ConfigError("EDM-ACC-074", "spectra fft: the electron group must be >= 1, got " + std::to_string(options.fft_group));
  m.device = std::move(device);
  m.grid = grid;
  m.options = options;
  linear_grid(grid.omega, m.w0, m.dw);
  m.np = int(grid.far_screen.pixels());
  m.nb = grid.far_screen.samples;
  m.nd = int(grid.directions.size());
  m.nw = int(grid.omega.size());
  m.G = options.fft_group;
  m.Q = 3 * std::size_t(m.np);
  m.L = czt_length(std::size_t(m.nb) + std::size_t(m.nw) - 1);
  m.group_weights.assign(std::size_t(m.G), 0.0);
  m.sums.directions = grid.directions.size();
  m.sums.frequencies = grid.omega.size();
  m.sums.method = SpectraMethod::Fft;
  m.field = std::make_unique<FieldAccumulator>(m.device, grid.far_screen, Mode::Total, KernelOptions{});
  m.check_memory();
  cl::Program program = m.device->program({"spectra_fft.cl"}, {});
  try {
    const std::string src = kernel_source("spectra_fft.cl");
    m.pre = {program, src};
    m.mul = {program, src};
    m.red = {program, src};
    m.upload_tables();
    const auto& ctx = m.device->context();
    m.Y = cl::Buffer(ctx, CL_MEM_READ_WRITE, std::size_t(m.y_bytes()));
    m.coh = cl::Buffer(ctx, CL_MEM_READ_WRITE, 6 * m.bins() * sizeof(double));
    m.inc = cl::Buffer(ctx, CL_MEM_READ_WRITE, m.bins() * sizeof(double));
    m.device->queue().enqueueFillBuffer(m.coh, 0.0, 0, 6 * m.bins() * sizeof(double));
    m.device->queue().enqueueFillBuffer(m.inc, 0.0, 0, m.bins() * sizeof(double));
    m.device->queue().enqueueFillBuffer(m.Y, 0.0, 0, std::size_t(m.y_bytes()));
  } catch (const cl::Error& e) {
    throw_device_error(e, "creating the fft spectra buffers (" + std::to_string(m.y_bytes()) + " bytes) on " + m.where());
  }
  m.create_plan();
}

SpectraFft::~SpectraFft() {
  if (!impl_) return;
  try {
    impl_->device->queue().finish();
  } catch (...) {
  }
  if (impl_->plan) clfftDestroyPlan(&impl_->plan);
}

// Electron e of the batch alone (weight 1: the weight enters the sums) through the field kernel,
// then into slot `slot` of the group.
void SpectraFft::Impl::add_electron(const SplineBatch& batch, std::size_t e, double weight) {
  const ElectronSpline& el = batch.electrons[e];
  SplineBatch one;
  one.electrons.push_back(el);
  one.electrons[0].offset = 0;
  one.electrons[0].weight = 1.0;
  const auto first = batch.coef.begin() + std::ptrdiff_t(el.offset);
  one.coef.assign(first, first + std::ptrdiff_t(std::uint64_t(el.n_intervals) * kCoefPerInterval));
  field->accumulate(one);
  // The field's bounded queue may hold launches back; the series is read next on the same queue,
  // so every launch of this electron must be on it first.
  field->enqueue_pending();
  pre.set("E", FieldAccess::bucket(*field, 0));
  pre.set("np", cl_int(np));
  pre.set("nb", cl_int(nb));
  pre.set("L", cl_int(L));
  pre.set("G", cl_int(G));
  pre.set("g", cl_int(slot));
  pre.set("chirp", chirp);
  pre.set("Y", Y);
  cl::Event ev;
  const std::size_t T = 16;  // CZT_TILE of cl/spectra_fft.cl
  device->queue().enqueueNDRangeKernel(pre.kernel(), cl::NullRange,
                                       cl::NDRange((std::size_t(np) + T - 1) / T * T, (L + T - 1) / T * T, 3),
                                       cl::NDRange(T, T, 1), nullptr, &ev);
  events.push_back(ev);
  group_weights[std::size_t(slot)] = weight;
  sums.weight_sum += weight;
  ++sums.electrons;
  if (++slot == G) flush();
}

// The group's transforms and reduction; slots past `slot` hold stale series whose transforms are
// computed and never read.
void SpectraFft::Impl::flush() {
  if (slot == 0) return;
  auto& q = device->queue();
  cl_command_queue cq = q();
  cl_mem y = Y();
  cl_event fe = nullptr;
  check_clfft(clfftEnqueueTransform(plan, CLFFT_FORWARD, 1, &cq, 0, nullptr, &fe, &y, nullptr, nullptr),
              "clfftEnqueueTransform (forward)", where());
  events.emplace_back(fe);
  mul.set("Y", Y);
  mul.set("L", cl_int(L));
  mul.set("GQ", cl_int(std::size_t(G) * Q));
  mul.set("H", H);
  cl::Event ev;
  q.enqueueNDRangeKernel(mul.kernel(), cl::NullRange, cl::NDRange(L, std::size_t(G) * Q), cl::NullRange, nullptr, &ev);
  events.push_back(ev);
  cl_event be = nullptr;
  check_clfft(clfftEnqueueTransform(plan, CLFFT_BACKWARD, 1, &cq, 0, nullptr, &be, &y, nullptr, nullptr),
              "clfftEnqueueTransform (backward)", where());
  events.emplace_back(be);
  // The weights travel in a buffer of their own, copied at creation (no wait on the queue).
  cl::Buffer wb(device->context(), CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, group_weights.size() * sizeof(double),
                group_weights.data());
  red.set("Y", Y);
  red.set("np", cl_int(np));
  red.set("nd", cl_int(nd));
  red.set("nw", cl_int(nw));
  red.set("L", cl_int(L));
  red.set("count", cl_int(slot));
  red.set("position_of", position_of);
  red.set("post", post);
  red.set("weights", wb);
  red.set("coh", coh);
  red.set("inc", inc);
  cl::Event rev;
  q.enqueueNDRangeKernel(red.kernel(), cl::NullRange, cl::NDRange(std::size_t(nw), std::size_t(nd)), cl::NullRange,
                         nullptr, &rev);
  events.push_back(rev);
  q.flush();
  ++sums.launches;
  slot = 0;
  // The host may run ahead of the device by a few groups only: every single-electron batch holds its
  // splines on the device until its launch is done.
  flushes.push_back(rev);
  while (flushes.size() > 4) {
    flushes.front().wait();
    flushes.pop_front();
  }
}

void SpectraFft::accumulate(const SplineBatch& batch, std::span<const double> weights) {
  auto& m = *impl_;
  try {
    for (std::size_t e = 0; e < batch.electrons.size(); ++e)
      m.add_electron(batch, e, weights.empty() ? batch.electrons[e].weight : weights[e]);
    m.flush();
  } catch (const cl::Error& err) {
    throw_device_error(err, "fft spectra of electrons " + std::to_string(batch.electrons.front().index) + "…" +
                                std::to_string(batch.electrons.back().index) + " on " + m.where());
  }
}

SpectraSums SpectraFft::download_sums() {
  auto& m = *impl_;
  SpectraSums out = m.sums;
  try {
    m.flush();
    m.field->drain();
    out.coherent.resize(6 * m.bins());
    out.incoherent.resize(m.bins());
    m.device->queue().enqueueReadBuffer(m.coh, CL_TRUE, 0, out.coherent.size() * sizeof(double), out.coherent.data());
    m.device->queue().enqueueReadBuffer(m.inc, CL_TRUE, 0, out.incoherent.size() * sizeof(double), out.incoherent.data());
    for (auto& ev : m.events)
      m.sums.kernel_seconds += 1e-9 * double(ev.getProfilingInfo<CL_PROFILING_COMMAND_END>() -
                                             ev.getProfilingInfo<CL_PROFILING_COMMAND_START>());
    m.events.clear();
    m.flushes.clear();
  } catch (const cl::Error& e) {
    throw_device_error(e, "downloading the fft spectra from " + m.where());
  }
  out.kernel_seconds = m.sums.kernel_seconds + m.field->timing().kernel_seconds;
  return out;
}

void SpectraFft::upload_sums(const SpectraSums& s) {
  auto& m = *impl_;
  if (s.directions != std::size_t(m.nd) || s.frequencies != std::size_t(m.nw) || s.coherent.size() != 6 * m.bins() ||
      s.incoherent.size() != m.bins())
    throw Error("EDM-ACC-072", "spectra restore: sums of " + std::to_string(s.directions) + " directions × " +
                                   std::to_string(s.frequencies) + " frequencies for a grid of " + std::to_string(m.nd) +
                                   " × " + std::to_string(m.nw));
  try {
    m.flush();
    m.device->queue().enqueueWriteBuffer(m.coh, CL_TRUE, 0, s.coherent.size() * sizeof(double), s.coherent.data());
    m.device->queue().enqueueWriteBuffer(m.inc, CL_TRUE, 0, s.incoherent.size() * sizeof(double), s.incoherent.data());
  } catch (const cl::Error& e) {
    throw_device_error(e, "uploading the fft spectra to " + m.where());
  }
  m.sums.electrons = s.electrons;
  m.sums.launches = s.launches;
  m.sums.weight_sum = s.weight_sum;
  m.sums.kernel_seconds = s.kernel_seconds;
}

std::uint64_t SpectraFft::device_bytes() const {
  return impl_->field->device_buffer_bytes() + impl_->y_bytes() + 7 * impl_->bins() * sizeof(double);
}

}  // namespace edm::detail
