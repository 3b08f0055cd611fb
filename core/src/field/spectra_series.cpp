// The shared part of the fft and dft spectra (field/spectra_series.hpp).
#include "field/spectra_series.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "field/field_access.hpp"
#include "field/kernels.hpp"

namespace edm::detail {

bool linear_grid(const std::vector<double>& w, double& w0, double& dw) {
  w0 = w.front();
  dw = w.size() > 1 ? (w.back() - w.front()) / double(w.size() - 1) : 0.0;
  for (std::size_t j = 0; j < w.size(); ++j)
    if (std::fabs(w[j] - (w0 + double(j) * dw)) > 1e-12 * std::fabs(w.back())) return false;
  return w.size() == 1 || dw > 0.0;
}

std::array<std::array<double, 3>, 2> transverse_basis(const std::array<double, 3>& n) {
  std::size_t axis = 0;
  for (std::size_t i = 1; i < 3; ++i)
    if (std::fabs(n[i]) < std::fabs(n[axis])) axis = i;
  std::array<double, 3> e1{}, e2{};
  const double na = n[axis];
  for (std::size_t i = 0; i < 3; ++i) e1[i] = (i == axis ? 1.0 : 0.0) - na * n[i];
  const double norm = std::sqrt(e1[0] * e1[0] + e1[1] * e1[1] + e1[2] * e1[2]);
  for (double& v : e1) v /= norm;
  e2 = {n[1] * e1[2] - n[2] * e1[1], n[2] * e1[0] - n[0] * e1[2], n[0] * e1[1] - n[1] * e1[0]};
  return {e1, e2};
}

SeriesBytes series_fixed_bytes(const SpectraGrid& grid) {
  const Screen& s = grid.far_screen;
  // In long double, each term saturated at 2^60 bytes: a screen's samples × positions can exceed
  // 2^64 (the field accumulator's guard says so too), and such a grid must read as "does not fit".
  const auto bytes = [](long double b) { return b < 0x1p60L ? std::uint64_t(b) : std::uint64_t(1) << 60; };
  const long double P = (long double)s.pixels(), N = (long double)std::max(0, s.samples);
  const std::uint64_t bucket = bytes(3.0L * N * P * sizeof(double)), x = bytes((N + 1.0L) * 2.0L * P * sizeof(double));
  const std::uint64_t sums = bytes(7.0L * (long double)grid.directions.size() * grid.omega.size() * sizeof(double));
  return {std::max({bucket, x, sums / 7 * 6}), std::uint64_t(bucket_count(Mode::Total)) * bucket + x + sums};
}

std::string series_unavailable(const SpectraGrid& grid, bool linear_only) {
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
  if (linear_only && !linear_grid(grid.omega, w0, dw))
    return "it evaluates a linear frequency grid (spectra.scale = \"linear\"); use spectra.method = \"dft\" or "
           "\"direct\" for a logarithmic one";
  if (s.samples < 2 || !(s.dt > 0)) return "the screen needs at least 2 samples (screen.samples)";
  const double nyquist = std::numbers::pi / s.dt;
  double top = 0;
  for (double w : grid.omega) top = std::max(top, w);
  if (!(top < nyquist))
    return "spectra.omega_max (" + std::to_string(top) + " laser ω) is not below the Nyquist frequency " +
           std::to_string(nyquist) + " of the screen's samples; raise screen.samples_per_period (or screen.samples)";
  return {};
}

FarSeries::FarSeries(std::shared_ptr<Device> dev, const SpectraGrid& g, SpectraMethod method)
    : device(std::move(dev)), grid(g) {
  np = int(grid.far_screen.pixels());
  nb = grid.far_screen.samples;
  nd = int(grid.directions.size());
  nw = int(grid.omega.size());
  sums.directions = grid.directions.size();
  sums.frequencies = grid.omega.size();
  sums.method = method;
  field = std::make_unique<FieldAccumulator>(device, grid.far_screen, Mode::Total, KernelOptions{});
  // FieldAccumulator holds both maps on the device already; FieldAccess does not reach them, so
  // they are built here once from its host copy.
  const auto& pixel_of = FieldAccess::pixel_of(*field);
  std::vector<cl_int> pos(pixel_of.size()), dir(pixel_of.size());
  std::vector<double> frame(6 * pixel_of.size());
  for (std::size_t q = 0; q < pixel_of.size(); ++q) {
    pos[std::size_t(pixel_of[q])] = cl_int(q);
    dir[q] = cl_int(pixel_of[q]);
    const auto e = transverse_basis(grid.directions[std::size_t(pixel_of[q])]);
    for (std::size_t i = 0; i < 3; ++i) {
      frame[6 * q + i] = e[0][i];
      frame[6 * q + 3 + i] = e[1][i];
    }
  }
  // series_project serves the fft method; the dft projects and folds in its own kernel (dft_fold).
  cl::Program program;
  if (method == SpectraMethod::Fft) program = device->program({"spectra_series.cl"}, {});
  try {
    const auto& ctx = device->context();
    const auto ro = CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR;
    position_of = cl::Buffer(ctx, ro, pos.size() * sizeof(cl_int), pos.data());
    direction_of = cl::Buffer(ctx, ro, dir.size() * sizeof(cl_int), dir.data());
    basis = cl::Buffer(ctx, ro, frame.size() * sizeof(double), frame.data());
    X = cl::Buffer(ctx, CL_MEM_READ_WRITE, std::size_t(x_bytes()));
    if (method == SpectraMethod::Fft) {
      projection = {program, kernel_source("spectra_series.cl")};
      projection.set("E", cube());
      projection.set("np", cl_int(np));
      projection.set("nb", cl_int(nb));
      projection.set("basis", basis);
      projection.set("X", X);
    }
    coh = cl::Buffer(ctx, CL_MEM_READ_WRITE, 6 * bins() * sizeof(double));
    inc = cl::Buffer(ctx, CL_MEM_READ_WRITE, bins() * sizeof(double));
    device->queue().enqueueFillBuffer(coh, 0.0, 0, 6 * bins() * sizeof(double));
    device->queue().enqueueFillBuffer(inc, 0.0, 0, bins() * sizeof(double));
  } catch (const cl::Error& e) {
    throw_device_error(e, "creating the spectra sums and projections (" + std::to_string(sums_bytes() + x_bytes()) +
                              " bytes) on " + where());
  }
}

FarSeries::~FarSeries() {
  try {
    device->queue().finish();
  } catch (...) {
  }
}

std::string FarSeries::where() const {
  return "device " + std::to_string(device->info().index) + " (" + device->info().name + ")";
}

cl::Buffer& FarSeries::cube() { return FieldAccess::bucket(*field, 0); }

void FarSeries::field_step(const SplineBatch& batch, std::size_t e) {
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
}

void FarSeries::project(int k_lo, int n) {
  if (n == 0) return;
  projection.set("k_lo", cl_int(k_lo));
  projection.set("n", cl_int(n));
  cl::Event ev;
  device->queue().enqueueNDRangeKernel(projection.kernel(), cl::NullRange, cl::NDRange(std::size_t(np), std::size_t(n)),
                                       cl::NullRange, nullptr, &ev);
  events.push_back(ev);
}

void FarSeries::group_done(const cl::Event& ev) {
  device->queue().flush();
  ++sums.launches;
  flushes.push_back(ev);
  while (flushes.size() > 4) {
    flushes.front().wait();
    flushes.pop_front();
  }
}

SpectraSums FarSeries::download_sums() {
  SpectraSums out = sums;
  try {
    field->drain();
    out.coherent.resize(6 * bins());
    out.incoherent.resize(bins());
    device->queue().enqueueReadBuffer(coh, CL_TRUE, 0, out.coherent.size() * sizeof(double), out.coherent.data());
    device->queue().enqueueReadBuffer(inc, CL_TRUE, 0, out.incoherent.size() * sizeof(double), out.incoherent.data());
    for (auto& ev : events)
      sums.kernel_seconds += 1e-9 * double(ev.getProfilingInfo<CL_PROFILING_COMMAND_END>() -
                                           ev.getProfilingInfo<CL_PROFILING_COMMAND_START>());
    events.clear();
    flushes.clear();
  } catch (const cl::Error& e) {
    throw_device_error(e, "downloading the " + std::string(name(sums.method)) + " spectra from " + where());
  }
  out.kernel_seconds = sums.kernel_seconds + field->timing().kernel_seconds;
  return out;
}

void FarSeries::upload_sums(const SpectraSums& s) {
  try {
    device->queue().enqueueWriteBuffer(coh, CL_TRUE, 0, s.coherent.size() * sizeof(double), s.coherent.data());
    device->queue().enqueueWriteBuffer(inc, CL_TRUE, 0, s.incoherent.size() * sizeof(double), s.incoherent.data());
  } catch (const cl::Error& e) {
    throw_device_error(e, "uploading the " + std::string(name(sums.method)) + " spectra to " + where());
  }
  sums.electrons = s.electrons;
  sums.launches = s.launches;
  sums.weight_sum = s.weight_sum;
  sums.kernel_seconds = s.kernel_seconds;
}

}  // namespace edm::detail
