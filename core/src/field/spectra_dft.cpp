// The dft method of the spectra (field/spectra_dft.hpp): per electron, the field step (FarSeries),
// the projection of the cube's rows [k_lo, k_hi) on each direction's transverse basis into the work
// buffer X (FarSeries::project, which also zeroes those cube rows for the next electron: at infinity
// R·E_far is exactly transverse, field/spectra_series.hpp), then ONE CLBlast DGEMM of the Fourier
// matrix W's columns [k_lo, k_hi) by X's rows [k_lo, k_hi) (2 nω × 2 np) into slot g of a group of
// fft_group electrons; per group, dft_reduce (cl/spectra_dft.cl) rebuilds the Cartesian amplitudes
// and adds w·A and w·|A|² into the sums in electron order.
#include "field/spectra_dft.hpp"

#include <clblast.h>

#include <cmath>
#include <limits>
#include <string>

#include "field/kernel_args.hpp"
#include "field/kernels.hpp"
#include "field/opencl_internal.hpp"
#include "field/spectra_series.hpp"

namespace edm {

std::array<int, 2> far_series_samples(const Screen& s, const SplineBatch& batch, std::size_t e) {
  const ElectronSpline& el = batch.electrons[e];
  double first[kSplineComponents], last[kSplineComponents];
  const double* c = batch.coef.data() + el.offset;
  eval_interval(c, 0.0, first);
  eval_interval(c + std::uint64_t(el.n_intervals - 1) * kCoefPerInterval, el.dtau, last);
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (std::size_t p = 0; p < s.directions.size(); ++p) {
    lo = std::min(lo, s.arrival_rel_dir(first, p));
    hi = std::max(hi, s.arrival_rel_dir(last, p));
  }
  // The device forms the same arrival times with the same operations, from its own evaluation of
  // the spline at τ0 and τ_end and its light-front coefficients: they differ from these by a few
  // ulps of t, far below a sample (dt). Two samples of margin either side hold any such difference
  // and the rounding of the quotients below.
  constexpr double kMargin = 2.0;
  const double a = std::floor((lo - s.t0_rel) / s.dt) - kMargin, b = std::ceil((hi - s.t0_rel) / s.dt) + kMargin + 1;
  const double n = double(s.samples);
  const int k_lo = int(std::clamp(a, 0.0, n)), k_hi = int(std::clamp(b, 0.0, n));
  return {k_lo, std::max(k_lo, k_hi)};
}

namespace detail {

inline constexpr KernelSignature<9> kDftReduce{
    "dft_reduce", "spectra_dft.cl", {"C", "np", "nw", "count", "direction_of", "basis", "weights", "coh", "inc"}};

std::string dft_unavailable(const SpectraGrid& grid) { return series_unavailable(grid, false); }

SeriesBytes dft_device_bytes(const SpectraGrid& grid, const SpectraOptions& options) {
  SeriesBytes b = series_fixed_bytes(grid);
  // In long double, each term saturated at 2^60 bytes (no wrap: test_bad_inputs' grids).
  const auto bytes = [](long double v) { return v < 0x1p60L ? std::uint64_t(v) : std::uint64_t(1) << 60; };
  const long double P = (long double)grid.far_screen.pixels(), M = (long double)grid.omega.size();
  const long double N = (long double)std::max(0, grid.far_screen.samples);
  // C: fft_group slots of 2 nω × 2 np doubles; W: 2 nω × samples doubles.
  const std::uint64_t c = bytes((long double)std::max(1, options.fft_group) * 2.0L * M * 2.0L * P * sizeof(double));
  const std::uint64_t w = bytes(2.0L * M * N * sizeof(double));
  b.largest = std::max({b.largest, c, w});
  b.total += c + w;
  return b;
}

struct SpectraDft::Impl {
  std::unique_ptr<FarSeries> series;
  int np = 0, nb = 0, nw = 0, G = 1;
  BoundKernel<kDftReduce> red;
  cl::Buffer W, C;  // the Fourier matrix (2 nω × samples, row-major) and the group's amplitudes
  std::vector<double> group_weights;
  int slot = 0;

  std::string where() const { return series->where(); }
  // Doubles per slot: 2 nω rows (Re, then Im) × 2 np columns (e1 of every position, then e2).
  std::uint64_t plane() const { return 4 * std::uint64_t(nw) * std::uint64_t(np); }
  std::uint64_t c_bytes() const { return std::uint64_t(G) * plane() * sizeof(double); }
  std::uint64_t w_bytes() const { return 2 * std::uint64_t(nw) * std::uint64_t(nb) * sizeof(double); }
  // Before anything is allocated: EDM-ACC-076 where dft_device_bytes does not fit the device.
  static void check_memory(const SpectraGrid& grid, const SpectraOptions& options, const DeviceInfo& info);
  void upload_fourier_matrix();
  void transform(int k_lo, int n);
  void add_electron(const SplineBatch& batch, std::size_t e, double weight);
  void flush();
};

void SpectraDft::Impl::check_memory(const SpectraGrid& grid, const SpectraOptions& options, const DeviceInfo& info) {
  const SeriesBytes bytes = dft_device_bytes(grid, options);
  const std::uint64_t total = bytes.total;
  const int G = options.fft_group, nw = int(grid.omega.size()), np = int(grid.far_screen.pixels()),
            nb = grid.far_screen.samples;
  const std::string where = "device " + std::to_string(info.index) + " (" + info.name + ")";
  if (!bytes.fits(info))
    throw DeviceError("EDM-ACC-076", "spectra dft: " + std::to_string(total) + " bytes of device buffers (" +
                                         std::to_string(G) + " electrons × 2 × 2 × " + std::to_string(nw) +
                                         " frequencies × " + std::to_string(np) + " directions of amplitudes, " +
                                         "screen.samples = " + std::to_string(nb) + ") exceed " + where +
                                         " (max allocation " + std::to_string(info.max_allocation) +
                                         ", global memory " + std::to_string(info.global_memory) +
                                         "); reduce spectra.count or the directions, or use spectra.method = \"direct\"");
}

// W[j][k] = dt cos(ω_j t_k), W[nω + j][k] = dt sin(ω_j t_k), t_k = t0 + k dt: the phase ω_j t_k in
// double is within ~ε|ω_j t_k| of exact, as the fft method's post-factors e^{iω_j t0}.
void SpectraDft::Impl::upload_fourier_matrix() {
  const Screen& s = series->grid.far_screen;
  const auto& omega = series->grid.omega;
  std::vector<double> w(2 * std::size_t(nw) * std::size_t(nb));
  for (int j = 0; j < nw; ++j)
    for (int k = 0; k < nb; ++k) {
      const double phase = omega[std::size_t(j)] * s.t_rel(k);
      w[std::size_t(j) * std::size_t(nb) + std::size_t(k)] = s.dt * std::cos(phase);
      w[(std::size_t(nw) + std::size_t(j)) * std::size_t(nb) + std::size_t(k)] = s.dt * std::sin(phase);
    }
  W = cl::Buffer(series->device->context(), CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, w.size() * sizeof(double),
                 w.data());
}

SpectraDft::SpectraDft(std::shared_ptr<Device> device, const SpectraGrid& grid, const SpectraOptions& options)
    : impl_(std::make_unique<Impl>()) {
  auto& m = *impl_;
  if (const std::string why = dft_unavailable(grid); !why.empty())
    throw ConfigError("EDM-CFG-651", "spectra.method = \"dft\" cannot compute this grid: " + why);
  if (options.fft_group < 1)
    throw ConfigError("EDM-ACC-077", "spectra dft: the electron group must be >= 1, got " + std::to_string(options.fft_group));
  Impl::check_memory(grid, options, device->info());
  m.series = std::make_unique<FarSeries>(std::move(device), grid, SpectraMethod::Dft);
  m.np = m.series->np;
  m.nb = m.series->nb;
  m.nw = m.series->nw;
  m.G = options.fft_group;
  m.group_weights.assign(std::size_t(m.G), 0.0);
  Device& dev = *m.series->device;
  cl::Program program = dev.program({"spectra_dft.cl"}, {});
  try {
    m.red = {program, kernel_source("spectra_dft.cl")};
    m.upload_fourier_matrix();
    m.C = cl::Buffer(dev.context(), CL_MEM_READ_WRITE, std::size_t(m.c_bytes()));
    m.red.set("C", m.C);
    m.red.set("np", cl_int(m.np));
    m.red.set("nw", cl_int(m.nw));
    m.red.set("direction_of", m.series->direction_of);
    m.red.set("basis", m.series->basis);
    m.red.set("coh", m.series->coh);
    m.red.set("inc", m.series->inc);
  } catch (const cl::Error& e) {
    throw_device_error(e, "creating the dft spectra buffers (" + std::to_string(m.c_bytes() + m.w_bytes()) +
                              " bytes) on " + m.where());
  }
}

SpectraDft::~SpectraDft() {
  if (!impl_ || !impl_->series) return;
  try {
    impl_->series->device->queue().finish();  // before W and C go
  } catch (...) {
  }
}

// Slot `slot`'s amplitudes from the projections of the cube's rows [k_lo, k_lo + n) (X's same rows,
// FarSeries::project, which zeroes the cube rows), one product C = W[:, k_lo:k_lo+n] · X[k_lo:k_lo+n, :]
// of m = 2 nω, n = 2 np (ldb = ldc = 2 np): 8 nω n np FLOP where the 3 Cartesian components took 12.
// An electron that covers no sample gets a slot of zeros.
void SpectraDft::Impl::transform(int k_lo, int n) {
  auto& q = series->device->queue();
  const std::size_t P2 = 2 * std::size_t(np), M2 = 2 * std::size_t(nw);
  const std::size_t slot0 = std::size_t(slot) * std::size_t(plane());
  if (n == 0) {
    q.enqueueFillBuffer(C, 0.0, slot0 * sizeof(double), std::size_t(plane()) * sizeof(double));
    return;
  }
  series->project(k_lo, n);
  cl_command_queue cq = q();
  cl_event ev = nullptr;
  const auto st = clblast::Gemm<double>(clblast::Layout::kRowMajor, clblast::Transpose::kNo, clblast::Transpose::kNo, M2,
                                        P2, std::size_t(n), 1.0, W(), std::size_t(k_lo), std::size_t(nb), series->X(),
                                        std::size_t(k_lo) * P2, P2, 0.0, C(), slot0, P2, &cq, &ev);
  if (st != clblast::StatusCode::kSuccess)
    throw DeviceError("EDM-ACC-075", "CLBlast's Gemm (" + std::to_string(M2) + " × " + std::to_string(P2) + " × " +
                                         std::to_string(n) + ") of the dft spectra failed with status " +
                                         std::to_string(int(st)) + " on " + where(),
                      int(st));
  series->events.emplace_back(ev);
}

void SpectraDft::Impl::add_electron(const SplineBatch& batch, std::size_t e, double weight) {
  const auto range = far_series_samples(series->grid.far_screen, batch, e);
  series->field_step(batch, e);
  transform(range[0], range[1] - range[0]);
  group_weights[std::size_t(slot)] = weight;
  series->sums.weight_sum += weight;
  ++series->sums.electrons;
  if (++slot == G) flush();
}

void SpectraDft::Impl::flush() {
  if (slot == 0) return;
  // The weights travel in a buffer of their own, copied at creation (no wait on the queue).
  cl::Buffer wb(series->device->context(), CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                group_weights.size() * sizeof(double), group_weights.data());
  red.set("count", cl_int(slot));
  red.set("weights", wb);
  cl::Event ev;
  series->device->queue().enqueueNDRangeKernel(red.kernel(), cl::NullRange,
                                               cl::NDRange(std::size_t(np), std::size_t(nw)), cl::NullRange, nullptr,
                                               &ev);
  series->events.push_back(ev);
  slot = 0;
  series->group_done(ev);
}

void SpectraDft::accumulate(const SplineBatch& batch, std::span<const double> weights) {
  accumulate_series(*impl_, batch, weights, "dft");
}

SpectraSums SpectraDft::download_sums() { return exchange_series_sums(*impl_, "dft", nullptr); }

void SpectraDft::upload_sums(const SpectraSums& s) { exchange_series_sums(*impl_, "dft", &s); }

}  // namespace detail
}  // namespace edm
