// The fft method of the spectra (field/spectra_fft.hpp): a FieldAccumulator on the angular screen at
// infinity computes one electron's far-field series at a time into its cube on the device;
// FarSeries::project puts its two transverse projections into X (and zeroes the cube for the next
// one: at infinity R·E_far is exactly transverse, field/spectra_series.hpp), and czt_premultiply
// (cl/spectra_fft.cl) takes them from there into slot g of a group of fft_group electrons,
// transposed so that every series is contiguous: 2 series per direction instead of 3;
// per group, clFFT transforms every series forward, czt_multiply applies the chirp's transform,
// clFFT transforms back, and czt_reduce adds w·A and w·|A|² into the sums in electron order. The
// chirp-z algebra is written out in cl/spectra_fft.cl. The field step and the sums are FarSeries
// (field/spectra_series.hpp), shared with the dft method.
#include "field/spectra_fft.hpp"

#include <clFFT.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_fft_complex.h>

#include <cmath>
#include <limits>
#include <complex>
#include <cstdlib>
#include <mutex>
#include <numbers>
#include <string>

#include "edm/accumulator.hpp"
#include "field/kernel_args.hpp"
#include "field/kernels.hpp"
#include "field/opencl_internal.hpp"
#include "field/spectra_dft.hpp"
#include "field/spectra_series.hpp"

namespace edm::detail {

inline constexpr KernelSignature<7> kCztPremultiply{
    "czt_premultiply", "spectra_fft.cl", {"X", "np", "nb", "L", "g", "chirp", "Y"}};
inline constexpr KernelSignature<4> kCztMultiply{"czt_multiply", "spectra_fft.cl", {"Y", "L", "GQ", "H"}};
inline constexpr KernelSignature<12> kCztReduce{
    "czt_reduce",
    "spectra_fft.cl",
    {"Y", "np", "nd", "nw", "L", "count", "position_of", "basis", "post", "weights", "coh", "inc"}};

namespace {

// Cost model constants of "auto" (seconds), measured on the two device classes edm is benchmarked
// on (BENCHMARKS.md, "fft spectra", scripts/studies/spectra_fft_bench.cpp): the direct quadrature
// per (electron, direction, ω) term and
// per radian of phase ω·T over the observer window T (its work grows with the phase it resolves);
// the fft method per slot of the field kernel and per point·log2 of the transforms (2 transverse
// series per direction, forward and backward; the constant was measured with 3 Cartesian ones and
// is per point); the dft method (the same field step) per FLOP of its matrix products and
// per (direction, ω) bin of each reduction launch (one per group of fft_group electrons;
// BENCHMARKS.md "dft spectra"). PoCL's reduction cost is below the noise of its measurement (6
// directions): 0. The H200's gemm_flop is that of the two folded products (nω × 2 directions
// columns each) with the H200's CLBlast parameters (BENCHMARKS.md "stop 23's merged tree"), fitted
// with this model's own field term; PoCL's slot, fft_point and gemm_flop were measured again on the
// folded dft and the two transverse series, on an idle machine (BENCHMARKS.md "The cost model on
// PoCL, stop 23"); its term_radian is the older measurement.
struct CostConstants {
  double term_radian, slot, fft_point, gemm_flop, dft_bin;
};
constexpr CostConstants kGpuCost{5.4e-11, 5.8e-11, 1.05e-11, 8.4e-14, 9.0e-11};  // NVIDIA H200
constexpr CostConstants kCpuCost{5.6e-7, 7.9e-8, 1.47e-8, 3.15e-10, 0.0};        // PoCL, 2 cores

// The premultiply's work-group edge, CZT_TILE of cl/spectra_fft.cl (the program is built with it).
constexpr std::size_t kCztTile = 16;

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

std::string fft_unavailable(const SpectraGrid& grid) { return series_unavailable(grid, true); }

SeriesBytes fft_device_bytes(const SpectraGrid& grid, const SpectraOptions& options) {
  SeriesBytes b = series_fixed_bytes(grid);
  const std::uint64_t N = std::uint64_t(std::max(0, grid.far_screen.samples));
  const long double L = (long double)czt_length(std::size_t(std::max<std::uint64_t>(N, 1)) + grid.omega.size() - 1);
  // Y: L points × fft_group × 2 × positions complex doubles, in long double against a wrap.
  const long double y =
      L * (long double)std::max(1, options.fft_group) * 2.0L * (long double)grid.far_screen.pixels() * 16.0L;
  const std::uint64_t y_bytes = y < 0x1p60L ? std::uint64_t(y) : std::uint64_t(1) << 60;
  b.largest = std::max(b.largest, y_bytes);
  b.total += 2 * y_bytes;  // and clFFT's scratch, at most as large
  return b;
}

SpectraCost spectra_cost(const SpectraGrid& grid, const SpectraOptions& options, const DeviceInfo& device,
                         double covered) {
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
  const double field = D * double(std::max(1, s.samples)) * k.slot;
  // Fft: 2 transverse series per direction, each transformed forward and backward.
  c.fft = field + D * 4.0 * L * std::log2(L) * k.fft_point;
  // Dft: two products of (M × n/2) by (n/2 × 2D) (the series folded about its centre), 2 FLOP per
  // term, and the reduction of every bin.
  const double n = covered < 0 ? double(std::max(1, s.samples)) : covered;
  c.dft = field + 4.0 * M * n * D * k.gemm_flop + D * M * k.dft_bin / double(std::max(1, options.fft_group));
  return c;
}

// The estimates of the methods that can serve: a series method that cannot compute the grid, or
// that `spectra.method` would refuse for memory (EDM-ACC-071, EDM-ACC-076), costs +inf (the direct
// method's buffers are the sums alone, SpectraAccumulator's own concern).
SpectraCost serving_cost(const SpectraGrid& grid, const SpectraOptions& options, const DeviceInfo& device,
                         double covered) {
  SpectraCost c = spectra_cost(grid, options, device, covered);
  constexpr double none = std::numeric_limits<double>::infinity();
  if (!fft_unavailable(grid).empty() || !fft_device_bytes(grid, options).fits(device)) c.fft = none;
  if (!dft_unavailable(grid).empty() || !dft_device_bytes(grid, options).fits(device)) c.dft = none;
  return c;
}

// The cheapest method that serves (a method skipped for memory leaves the next cheapest); on equal
// estimates the first of direct, fft, dft.
SpectraMethod resolve_spectra_method(const SpectraGrid& grid, const SpectraOptions& options, const DeviceInfo& device,
                                     double covered) {
  if (options.method != SpectraMethod::Auto) return options.method;
  const SpectraCost c = serving_cost(grid, options, device, covered);
  SpectraMethod best = SpectraMethod::Direct;
  double cost = c.direct;
  if (c.fft < cost) {
    best = SpectraMethod::Fft;
    cost = c.fft;
  }
  if (c.dft < cost) best = SpectraMethod::Dft;
  return best;
}

struct SpectraFft::Impl {
  std::unique_ptr<FarSeries> series;
  SpectraOptions options;
  int np = 0, nb = 0, G = 1, nd = 0, nw = 0;
  std::size_t L = 0, Q = 0;
  double w0 = 0, dw = 0;
  BoundKernel<kCztPremultiply> pre;
  BoundKernel<kCztMultiply> mul;
  BoundKernel<kCztReduce> red;
  clfftPlanHandle plan = 0;
  cl::Buffer chirp, H, post, Y;
  std::vector<double> group_weights;
  int slot = 0;

  std::string where() const { return series->where(); }
  std::uint64_t y_bytes() const { return std::uint64_t(L) * std::uint64_t(G) * Q * 16; }  // Q = 2 np series
  void upload_tables();
  void bind_arguments();
  void create_plan();
  static void check_memory(const SpectraGrid& grid, const SpectraOptions& options, const DeviceInfo& info);
  void add_electron(const SplineBatch& batch, std::size_t e, double weight);
  void flush();
};

// The chirp y-factors, the wrapped chirp's DFT H (GSL, on the host, once) and the post-factors.
void SpectraFft::Impl::upload_tables() {
  const Screen& screen = series->grid.far_screen;
  const double dt = screen.dt, t0 = screen.t0_rel, alpha = dw * dt;
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
  const auto& ctx = series->device->context();
  const auto ro = CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR;
  chirp = cl::Buffer(ctx, ro, c.size() * 16, c.data());
  H = cl::Buffer(ctx, ro, h.size() * 16, h.data());
  post = cl::Buffer(ctx, ro, p.size() * 16, p.data());
}

// Every argument that does not change from one electron or group to the next, once.
void SpectraFft::Impl::bind_arguments() {
  pre.set("X", series->X);
  pre.set("np", cl_int(np));
  pre.set("nb", cl_int(nb));
  pre.set("L", cl_int(L));
  pre.set("chirp", chirp);
  pre.set("Y", Y);
  mul.set("Y", Y);
  mul.set("L", cl_int(L));
  mul.set("GQ", cl_int(std::size_t(G) * Q));
  mul.set("H", H);
  red.set("Y", Y);
  red.set("np", cl_int(np));
  red.set("nd", cl_int(nd));
  red.set("nw", cl_int(nw));
  red.set("L", cl_int(L));
  red.set("position_of", series->position_of);
  red.set("basis", series->basis);
  red.set("post", post);
  red.set("coh", series->coh);
  red.set("inc", series->inc);
}

// One plan for the group: L-point complex transforms, in place, of every series (contiguous).
void SpectraFft::Impl::create_plan() {
  clfft_setup_once();
  const std::string w = where();
  std::size_t len[1] = {L}, stride[1] = {1};
  check_clfft(clfftCreateDefaultPlan(&plan, series->device->context()(), CLFFT_1D, len), "clfftCreateDefaultPlan", w);
  check_clfft(clfftSetPlanPrecision(plan, CLFFT_DOUBLE), "clfftSetPlanPrecision", w);
  check_clfft(clfftSetLayout(plan, CLFFT_COMPLEX_INTERLEAVED, CLFFT_COMPLEX_INTERLEAVED), "clfftSetLayout", w);
  check_clfft(clfftSetResultLocation(plan, CLFFT_INPLACE), "clfftSetResultLocation", w);
  check_clfft(clfftSetPlanInStride(plan, CLFFT_1D, stride), "clfftSetPlanInStride", w);
  check_clfft(clfftSetPlanOutStride(plan, CLFFT_1D, stride), "clfftSetPlanOutStride", w);
  check_clfft(clfftSetPlanDistance(plan, L, L), "clfftSetPlanDistance", w);
  check_clfft(clfftSetPlanBatchSize(plan, std::size_t(G) * Q), "clfftSetPlanBatchSize", w);
  cl_command_queue q = series->device->queue()();
  check_clfft(clfftBakePlan(plan, 1, &q, nullptr, nullptr), "clfftBakePlan", w);
}

// Before anything is allocated: the work buffer (and, at most as large, clFFT's own scratch) beside
// the field cube, the projections and the sums (fft_device_bytes).
void SpectraFft::Impl::check_memory(const SpectraGrid& grid, const SpectraOptions& options, const DeviceInfo& info) {
  const SeriesBytes bytes = fft_device_bytes(grid, options);
  const std::size_t L = czt_length(std::size_t(std::max(1, grid.far_screen.samples)) + grid.omega.size() - 1);
  const std::string setting = "L = " + std::to_string(L) + " points × " + std::to_string(options.fft_group) +
                              " electrons × 2 × " + std::to_string(grid.far_screen.pixels()) +
                              " directions (screen.samples = " + std::to_string(grid.far_screen.samples) +
                              ", spectra.count = " + std::to_string(grid.omega.size()) + ")";
  if (!bytes.fits(info))
    throw DeviceError("EDM-ACC-071", "spectra fft: " + std::to_string(bytes.total) + " bytes of device buffers (" +
                                         setting + ") exceed device " + std::to_string(info.index) + " (" +
                                         info.name + ") (max allocation " + std::to_string(info.max_allocation) +
                                         ", global memory " + std::to_string(info.global_memory) +
                                         "); reduce spectra.count, screen.samples or the directions, or use "
                                         "spectra.method = \"dft\" or \"direct\"");
}

SpectraFft::SpectraFft(std::shared_ptr<Device> device, const SpectraGrid& grid, const SpectraOptions& options)
    : impl_(std::make_unique<Impl>()) {
  auto& m = *impl_;
  if (const std::string why = fft_unavailable(grid); !why.empty())
    throw ConfigError("EDM-CFG-650", "spectra.method = \"fft\" cannot compute this grid: " + why);
  if (options.fft_group < 1)
    throw ConfigError("EDM-ACC-074", "spectra fft: the electron group must be >= 1, got " + std::to_string(options.fft_group));
  m.options = options;
  linear_grid(grid.omega, m.w0, m.dw);
  Impl::check_memory(grid, options, device->info());
  m.series = std::make_unique<FarSeries>(std::move(device), grid, SpectraMethod::Fft);
  m.np = m.series->np;
  m.nb = m.series->nb;
  m.nd = m.series->nd;
  m.nw = m.series->nw;
  m.G = options.fft_group;
  m.Q = 2 * std::size_t(m.np);
  m.L = czt_length(std::size_t(m.nb) + std::size_t(m.nw) - 1);
  m.group_weights.assign(std::size_t(m.G), 0.0);
  Device& dev = *m.series->device;
  cl::Program program = dev.program({"spectra_fft.cl"}, {{"CZT_TILE", std::to_string(kCztTile)}});
  try {
    const std::string src = kernel_source("spectra_fft.cl");
    m.pre = {program, src};
    m.mul = {program, src};
    m.red = {program, src};
    m.upload_tables();
    m.Y = cl::Buffer(dev.context(), CL_MEM_READ_WRITE, std::size_t(m.y_bytes()));
    dev.queue().enqueueFillBuffer(m.Y, 0.0, 0, std::size_t(m.y_bytes()));
    m.bind_arguments();
  } catch (const cl::Error& e) {
    throw_device_error(e, "creating the fft spectra buffers (" + std::to_string(m.y_bytes()) + " bytes) on " + m.where());
  }
  m.create_plan();
}

SpectraFft::~SpectraFft() {
  if (!impl_ || !impl_->series) return;
  try {
    impl_->series->device->queue().finish();
  } catch (...) {
  }
  if (impl_->plan) clfftDestroyPlan(&impl_->plan);
}

// Electron e of the batch through the field kernel, its whole window projected (X's every row,
// the cube zeroed), then into slot `slot` of the group.
void SpectraFft::Impl::add_electron(const SplineBatch& batch, std::size_t e, double weight) {
  series->field_step(batch, e);
  series->project(0, nb);
  pre.set("g", cl_int(slot));
  cl::Event ev;
  const std::size_t T = kCztTile;
  series->device->queue().enqueueNDRangeKernel(
      pre.kernel(), cl::NullRange, cl::NDRange((std::size_t(np) + T - 1) / T * T, (L + T - 1) / T * T, 2),
      cl::NDRange(T, T, 1), nullptr, &ev);
  series->events.push_back(ev);
  group_weights[std::size_t(slot)] = weight;
  series->sums.weight_sum += weight;
  ++series->sums.electrons;
  if (++slot == G) flush();
}

// The group's transforms and reduction; slots past `slot` hold stale series whose transforms are
// computed and never read.
void SpectraFft::Impl::flush() {
  if (slot == 0) return;
  auto& q = series->device->queue();
  auto& events = series->events;
  cl_command_queue cq = q();
  cl_mem y = Y();
  cl_event fe = nullptr;
  check_clfft(clfftEnqueueTransform(plan, CLFFT_FORWARD, 1, &cq, 0, nullptr, &fe, &y, nullptr, nullptr),
              "clfftEnqueueTransform (forward)", where());
  events.emplace_back(fe);
  cl::Event ev;
  q.enqueueNDRangeKernel(mul.kernel(), cl::NullRange, cl::NDRange(L, std::size_t(G) * Q), cl::NullRange, nullptr, &ev);
  events.push_back(ev);
  cl_event be = nullptr;
  check_clfft(clfftEnqueueTransform(plan, CLFFT_BACKWARD, 1, &cq, 0, nullptr, &be, &y, nullptr, nullptr),
              "clfftEnqueueTransform (backward)", where());
  events.emplace_back(be);
  // The weights travel in a buffer of their own, copied at creation (no wait on the queue).
  cl::Buffer wb(series->device->context(), CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                group_weights.size() * sizeof(double), group_weights.data());
  red.set("count", cl_int(slot));
  red.set("weights", wb);
  cl::Event rev;
  q.enqueueNDRangeKernel(red.kernel(), cl::NullRange, cl::NDRange(std::size_t(nw), std::size_t(nd)), cl::NullRange,
                         nullptr, &rev);
  events.push_back(rev);
  slot = 0;
  series->group_done(rev);
}

void SpectraFft::accumulate(const SplineBatch& batch, std::span<const double> weights) {
  accumulate_series(*impl_, batch, weights, "fft");
}

SpectraSums SpectraFft::download_sums() { return exchange_series_sums(*impl_, "fft", nullptr); }

void SpectraFft::upload_sums(const SpectraSums& s) { exchange_series_sums(*impl_, "fft", &s); }

}  // namespace edm::detail
