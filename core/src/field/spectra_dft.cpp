// The dft method of the spectra (field/spectra_dft.hpp): per electron, the field step (FarSeries);
// the projection of the cube's samples [k_lo, k_hi) on each direction's transverse basis, folded
// about the centre sample k_c into even and odd parts in the work buffer X (dft_fold, which also
// zeroes those cube samples for the next electron: at infinity R·E_far is exactly transverse,
// field/spectra_series.hpp); then two CLBlast DGEMMs, the cosine half of the Fourier matrix W by
// the even rows and the sine half by the odd rows (nω × 2 np each, over about n/2 rows: half the
// FLOP of one product over the n samples), into slot g of a group of fft_group electrons; per
// group, dft_reduce (cl/spectra_dft.cl) turns them by the slot's phase e^{iω t_c}, rebuilds the
// Cartesian amplitudes and adds w·A and w·|A|² into the sums in electron order.
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

inline constexpr KernelSignature<10> kDftReduce{
    "dft_reduce", "spectra_dft.cl", {"C", "np", "nw", "count", "direction_of", "basis", "weights", "phase", "coh", "inc"}};
inline constexpr KernelSignature<10> kDftFold{
    "dft_fold", "spectra_dft.cl", {"E", "np", "nb", "k_lo", "n", "k_c", "h", "rd", "basis", "X"}};

std::string dft_unavailable(const SpectraGrid& grid) { return series_unavailable(grid, false); }

SeriesBytes dft_device_bytes(const SpectraGrid& grid, const SpectraOptions& options) {
  SeriesBytes b = series_fixed_bytes(grid);
  // In long double, each term saturated at 2^60 bytes (no wrap: test_bad_inputs' grids).
  const auto bytes = [](long double v) { return v < 0x1p60L ? std::uint64_t(v) : std::uint64_t(1) << 60; };
  const long double P = (long double)grid.far_screen.pixels(), M = (long double)grid.omega.size();
  const long double N = (long double)std::max(0, grid.far_screen.samples);
  // C: fft_group slots of 2 nω × 2 np doubles; W: 2 nω × (samples/2 + 1) doubles.
  const std::uint64_t c = bytes((long double)std::max(1, options.fft_group) * 2.0L * M * 2.0L * P * sizeof(double));
  const std::uint64_t w = bytes(2.0L * M * (std::floor(N / 2.0L) + 1.0L) * sizeof(double));
  b.largest = std::max({b.largest, c, w});
  b.total += c + w;
  return b;
}

struct SpectraDft::Impl {
  std::unique_ptr<FarSeries> series;
  int np = 0, nb = 0, nw = 0, G = 1;
  int hw = 0;  // columns of W, nb/2 + 1: the largest half-width h of a series is nb/2
  BoundKernel<kDftReduce> red;
  BoundKernel<kDftFold> fold;
  // The Fourier matrix's halves, row-major nω × hw each: W[j][m] = dt cos(ω_j m dt), then
  // W[nω + j][m] = dt sin(ω_j m dt); and the group's amplitudes.
  cl::Buffer W, C;
  std::vector<double> group_weights;
  std::vector<double> group_phase;  // per slot and ω_j: cos, sin of ω_j t_c (the slot's centre)
  int slot = 0;

  std::string where() const { return series->where(); }
  // Doubles per slot: 2 nω rows (Re, then Im) × 2 np columns (e1 of every position, then e2).
  std::uint64_t plane() const { return 4 * std::uint64_t(nw) * std::uint64_t(np); }
  std::uint64_t c_bytes() const { return std::uint64_t(G) * plane() * sizeof(double); }
  std::uint64_t w_bytes() const { return 2 * std::uint64_t(nw) * std::uint64_t(hw) * sizeof(double); }
  // Before anything is allocated: EDM-ACC-076 where dft_device_bytes does not fit the device.
  static void check_memory(const SpectraGrid& grid, const SpectraOptions& options, const DeviceInfo& info);
  void upload_fourier_matrix();
  void transform(int k_lo, int n);
  void gemm(std::size_t k, std::size_t a_offset, std::size_t b_offset, std::size_t c_offset);
  void set_phase(int k_c);
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

// W[j][m] = dt cos(ω_j m dt), W[nω + j][m] = dt sin(ω_j m dt) for m < nb/2 + 1: the offsets from
// an electron's centre sample (its phase e^{iω_j t_c} is applied per electron, set_phase). The
// phases ω_j m dt in double are within ~ε|ω_j m dt| of exact, smaller than the ω_j t_k of a sum
// over absolute times.
void SpectraDft::Impl::upload_fourier_matrix() {
  const Screen& s = series->grid.far_screen;
  const auto& omega = series->grid.omega;
  std::vector<double> w(2 * std::size_t(nw) * std::size_t(hw));
  for (int j = 0; j < nw; ++j)
    for (int m = 0; m < hw; ++m) {
      const double phase = omega[std::size_t(j)] * (double(m) * s.dt);
      w[std::size_t(j) * std::size_t(hw) + std::size_t(m)] = s.dt * std::cos(phase);
      w[(std::size_t(nw) + std::size_t(j)) * std::size_t(hw) + std::size_t(m)] = s.dt * std::sin(phase);
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
  m.hw = m.nb / 2 + 1;
  m.G = options.fft_group;
  m.group_weights.assign(std::size_t(m.G), 0.0);
  m.group_phase.assign(2 * std::size_t(m.G) * std::size_t(m.nw), 0.0);
  Device& dev = *m.series->device;
  cl::Program program = dev.program({"spectra_dft.cl"}, {});
  try {
    m.red = {program, kernel_source("spectra_dft.cl")};
    m.fold = {program, kernel_source("spectra_dft.cl")};
    m.fold.set("E", m.series->cube());
    m.fold.set("np", cl_int(m.np));
    m.fold.set("nb", cl_int(m.nb));
    m.fold.set("rd", cl_int(m.hw));
    m.fold.set("basis", m.series->basis);
    m.fold.set("X", m.series->X);
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

// One DGEMM into slot `slot`: C[c_offset…] (rows × 2 np, ldc = 2 np) = W[a_offset…] (rows × k, lda
// = hw) · X[b_offset…] (k × 2 np, ldb = 2 np), with k = the rows of X that hold this half.
void SpectraDft::Impl::gemm(std::size_t k, std::size_t a_offset, std::size_t b_offset, std::size_t c_offset) {
  const std::size_t P2 = 2 * std::size_t(np), M = std::size_t(nw);
  cl_command_queue cq = series->device->queue()();
  cl_event ev = nullptr;
  const auto st = clblast::Gemm<double>(clblast::Layout::kRowMajor, clblast::Transpose::kNo, clblast::Transpose::kNo, M,
                                        P2, k, 1.0, W(), a_offset, std::size_t(hw), series->X(), b_offset, P2, 0.0, C(),
                                        c_offset, P2, &cq, &ev);
  if (st != clblast::StatusCode::kSuccess)
    throw DeviceError("EDM-ACC-075", "CLBlast's Gemm (" + std::to_string(M) + " × " + std::to_string(P2) + " × " +
                                         std::to_string(k) + ") of the dft spectra failed with status " +
                                         std::to_string(int(st)) + " on " + where(),
                      int(st));
  series->events.emplace_back(ev);
}

// The slot's phase e^{iω_j t_c}, t_c = t0 + k_c dt, in double on the host (the arguments as exact
// as the absolute phases ω_j t_k of an unfolded sum).
void SpectraDft::Impl::set_phase(int k_c) {
  const Screen& s = series->grid.far_screen;
  const double t_c = s.t_rel(k_c);
  double* ph = group_phase.data() + 2 * std::size_t(slot) * std::size_t(nw);
  for (int j = 0; j < nw; ++j) {
    const double a = series->grid.omega[std::size_t(j)] * t_c;
    ph[2 * j] = std::cos(a);
    ph[2 * j + 1] = std::sin(a);
  }
}

// Slot `slot`'s amplitudes from the cube's samples [k_lo, k_lo + n): folded about k_c = k_lo +
// (n − 1)/2 into X (dft_fold, which zeroes those cube samples), S_0…S_h in rows 0…h and D_1…D_h in
// rows hw…hw + h − 1 (h = n − 1 − (n − 1)/2 ≤ nb/2), then the even part R = W_cos[:, 0…h] · S and the
// odd part I = W_sin[:, 1…h] · D, nω × 2 np each: 4 nω n np FLOP, where one product over the n
// samples took 8 (cl/spectra_dft.cl). An electron that covers no sample gets a slot of zeros.
void SpectraDft::Impl::transform(int k_lo, int n) {
  auto& q = series->device->queue();
  const std::size_t P2 = 2 * std::size_t(np), half = std::size_t(nw) * P2;
  const std::size_t slot0 = std::size_t(slot) * std::size_t(plane());
  if (n == 0) {
    q.enqueueFillBuffer(C, 0.0, slot0 * sizeof(double), std::size_t(plane()) * sizeof(double));
    set_phase(0);
    return;
  }
  const int k_c = k_lo + (n - 1) / 2, h = n - 1 - (n - 1) / 2;
  fold.set("k_lo", cl_int(k_lo));
  fold.set("n", cl_int(n));
  fold.set("k_c", cl_int(k_c));
  fold.set("h", cl_int(h));
  cl::Event ev;
  q.enqueueNDRangeKernel(fold.kernel(), cl::NullRange, cl::NDRange(std::size_t(np), std::size_t(h) + 1), cl::NullRange,
                         nullptr, &ev);
  series->events.push_back(ev);
  gemm(std::size_t(h) + 1, 0, 0, slot0);
  if (h > 0)
    gemm(std::size_t(h), std::size_t(nw) * std::size_t(hw) + 1, std::size_t(hw) * P2, slot0 + half);
  else
    q.enqueueFillBuffer(C, 0.0, (slot0 + half) * sizeof(double), half * sizeof(double));
  set_phase(k_c);
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
  // The weights and phases travel in buffers of their own, copied at creation (no wait on the queue).
  const auto& ctx = series->device->context();
  cl::Buffer wb(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, group_weights.size() * sizeof(double),
                group_weights.data());
  cl::Buffer pb(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, group_phase.size() * sizeof(double),
                group_phase.data());
  red.set("count", cl_int(slot));
  red.set("weights", wb);
  red.set("phase", pb);
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
