// The spectra's device cost alone (BENCHMARKS.md "fft spectra"): solves M distinct electrons of a
// campaign once, then feeds N electrons (the M again and again, each with its own index, in batches
// of M) through one SpectraAccumulator on the campaign's screen and grid, and prints the wall time
// of accumulate + finish (coherent and incoherent together: one pass computes both), the device's
// profiled kernel time, and the grid. The trajectories' own cost (CPU) stays out of the timing; an
// electron's spectra cost does not depend on which electron it is.
//   g++ -std=c++20 -O2 -Icore/include scripts/studies/spectra_fft_bench.cpp -Lbuild/core -ledm \
//       -Wl,-rpath,$PWD/build/core -o build/studies/spectra_fft_bench
//   EDM_PLUGIN_PATH=build/plugins build/studies/spectra_fft_bench CAMPAIGN M N [KEY=VALUE ...]
// The method is the campaign's spectra.method (spectra.method=dft|fft|direct|auto as a KEY=VALUE).
// FFT_GROUP=G sets SpectraOptions::fft_group (the fft and dft methods' electron group); FIELD_ONLY=1
// times instead the fft and dft methods' first step alone: one FieldAccumulator on the same screen
// fed one electron per accumulate(). On an angular screen at infinity it first prints how many
// samples of the window the M electrons' far-field series cover (far_series_samples: what the dft
// method sums over); COVERAGE_ONLY=1 stops there (no device needed). BURST_STUDY=1 measures instead,
// per electron, how much of its far-field series lies outside its burst's light (the samples of
// the arrival window of the burst, PreparedCell::burst(), over all directions, ±2 samples): the
// energy fraction Σ|E|² outside / Σ|E|² and the largest |E| outside over the largest |E|, from the
// field kernel's own cube (what a dft trimmed to the burst would drop); and, for thresholds
// τ = 1e-4 … 1e-12, the samples of the smallest range outside which every |E| ≤ τ·max|E|.
// CUT=a,b (fractions) cuts every spline to its intervals [a·n, b·n) before anything else: a
// timing device only (the physics of a cut track is not the cell's), for the dft method's cost on
// series that cover part of the window.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "edm/accumulator.hpp"
#include "edm/campaign.hpp"
#include "edm/coverage.hpp"
#include "edm/device.hpp"
#include "edm/directions.hpp"
#include "edm/photon_units.hpp"
#include "edm/run.hpp"
#include "edm/spectra.hpp"

using namespace edm;

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s CAMPAIGN M N [KEY=VALUE ...]\n", argv[0]);
    return 2;
  }
  const std::uint64_t M = std::strtoull(argv[2], nullptr, 10), N = std::strtoull(argv[3], nullptr, 10);
  std::vector<Override> sets;
  for (int i = 4; i < argc; ++i) {
    const std::string a = argv[i];
    sets.push_back({a.substr(0, a.find('=')), a.substr(a.find('=') + 1)});
  }
  sets.push_back({"electrons.count", std::to_string(M)});
  const auto registry = PluginRegistry::discover();
  const Campaign probe = load_campaign(argv[1], sets, {}, false);
  const Campaign c = load_campaign(argv[1], sets, registry.get(probe.run.scenario).keys(), false);
  PreparedCell cell(c, registry);
  const auto t_solve = std::chrono::steady_clock::now();
  SplineBatch base = cell.solve(0, M);
  if (const char* cut = std::getenv("CUT")) {
    const double a = std::atof(cut), b = std::atof(std::strchr(cut, ',') + 1);
    SplineBatch out;
    for (ElectronSpline e : base.electrons) {
      const auto i0 = std::uint32_t(a * e.n_intervals), i1 = std::uint32_t(b * e.n_intervals);
      const auto first = base.coef.begin() + std::ptrdiff_t(e.offset + std::uint64_t(i0) * kCoefPerInterval);
      e.offset = out.coef.size();
      out.coef.insert(out.coef.end(), first, first + std::ptrdiff_t(std::uint64_t(i1 - i0) * kCoefPerInterval));
      e.tau0 += e.dtau * double(i0);
      e.n_intervals = i1 - i0;
      out.electrons.push_back(e);
    }
    base = std::move(out);
  }
  const double solve_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_solve).count();
  SpectraGrid grid;
  const double wl = cell.units().omega;
  for (double w : spectra_frequencies(c.spectra, wl)) grid.omega.push_back(w / wl);
  for (const DirectionCell& d : cell.screen().directions) grid.directions.push_back(d.n);
  grid.far_screen = cell.screen();
  if (grid.far_screen.far_field()) {
    double mean = 0;
    int lo = cell.screen().samples, hi = 0;
    for (std::size_t e = 0; e < base.electrons.size(); ++e) {
      const auto r = far_series_samples(grid.far_screen, base, e);
      mean += double(r[1] - r[0]) / double(base.electrons.size());
      lo = std::min(lo, r[1] - r[0]);
      hi = std::max(hi, r[1] - r[0]);
    }
    std::printf("far-field series of the %llu electrons: %.1f of %d samples covered on average (min %d, max %d)\n",
                (unsigned long long)M, mean, cell.screen().samples, lo, hi);
    if (std::getenv("COVERAGE_ONLY")) return 0;
  }
  if (std::getenv("BURST_STUDY")) {
    auto dev = open_device(select_devices(c.accumulator.devices).front());
    const Screen& s = cell.screen();
    const std::size_t P = std::size_t(s.pixels()), NS = std::size_t(s.samples);
    double worst_energy = 0, worst_peak = 0, mean_n = 0;
    for (std::size_t e = 0; e < base.electrons.size(); ++e) {
      double ys[8], ye[8];
      if (!burst_states(base, base.electrons[e], cell.burst(), ys, ye)) {
        std::printf("electron %zu: no burst\n", e);
        continue;
      }
      double lo = 1e300, hi = -1e300;
      for (std::size_t p = 0; p < P; ++p) {
        lo = std::min(lo, s.arrival_rel_dir(ys, p));
        hi = std::max(hi, s.arrival_rel_dir(ye, p));
      }
      const long k_lo = std::max(0L, long(std::floor((lo - s.t0_rel) / s.dt)) - 2);
      const long k_hi = std::min(long(NS), long(std::ceil((hi - s.t0_rel) / s.dt)) + 3);
      SplineBatch one;
      one.electrons = {base.electrons[e]};
      const auto first = base.coef.begin() + std::ptrdiff_t(one.electrons[0].offset);
      one.coef.assign(first, first + std::ptrdiff_t(std::uint64_t(one.electrons[0].n_intervals) * kCoefPerInterval));
      one.electrons[0].offset = 0;
      FieldAccumulator field(dev, s, Mode::Total, KernelOptions{});
      field.accumulate(one);
      double in_e = 0, out_e = 0, in_peak = 0, out_peak = 0;
      std::vector<double> row_max(NS, 0.0);  // max |E| over directions and components per sample
      field.finish([&](int b, int, int y0, int y1, const double* d) {
        if (b != 0) return;
        for (std::size_t i = 0; i < std::size_t(y1 - y0) * std::size_t(s.nx) * NS; ++i) {
          const long k = long(i % NS);
          row_max[std::size_t(k)] = std::max(row_max[std::size_t(k)], std::fabs(d[i]));
          const double v = d[i] * d[i];
          if (k >= k_lo && k < k_hi) {
            in_e += v;
            in_peak = std::max(in_peak, std::fabs(d[i]));
          } else {
            out_e += v;
            out_peak = std::max(out_peak, std::fabs(d[i]));
          }
        }
      });
      worst_energy = std::max(worst_energy, out_e / (in_e + out_e));
      worst_peak = std::max(worst_peak, out_peak / std::max(in_peak, out_peak));
      mean_n += double(k_hi - k_lo) / double(base.electrons.size());
      const double peak = *std::max_element(row_max.begin(), row_max.end());
      std::printf("electron %zu, samples above tau*peak:", e);
      for (double tau : {1e-4, 1e-6, 1e-8, 1e-10, 1e-12}) {
        long a = -1, z = -1;
        for (std::size_t k = 0; k < NS; ++k)
          if (row_max[k] > tau * peak) {
            if (a < 0) a = long(k);
            z = long(k) + 1;
          }
        std::printf(" %g: %ld", tau, a < 0 ? 0L : z - a);
      }
      std::printf("\n");
    }
    std::printf("burst study, %llu electrons: burst range %.1f of %zu samples on average; outside it, worst energy "
                "fraction %.3e, worst |E| over the peak %.3e\n",
                (unsigned long long)M, mean_n, NS, worst_energy, worst_peak);
    return 0;
  }
  SpectraOptions o;
  o.nodes = c.spectra.nodes;
  o.phase = c.spectra.phase;
  o.method = c.spectra.method;
  auto dev = open_device(select_devices(c.accumulator.devices).front());
  if (const char* g = std::getenv("FFT_GROUP")) o.fft_group = std::atoi(g);
  if (std::getenv("FIELD_ONLY")) {
    FieldAccumulator field(dev, cell.screen(), Mode::Total, KernelOptions{});
    const auto f0 = std::chrono::steady_clock::now();
    for (std::uint64_t e = 0; e < N; ++e) {
      SplineBatch one;
      one.electrons = {base.electrons[std::size_t(e % M)]};
      const auto first = base.coef.begin() + std::ptrdiff_t(one.electrons[0].offset);
      one.coef.assign(first, first + std::ptrdiff_t(std::uint64_t(one.electrons[0].n_intervals) * kCoefPerInterval));
      one.electrons[0].offset = 0;
      one.electrons[0].index = e;
      field.accumulate(one);
    }
    field.drain();
    const double f_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - f0).count();
    std::printf("field only, one electron per accumulate: %.3f s (%.3f ms/electron), kernels %.3f s\n", f_s,
                1e3 * f_s / double(N), field.timing().kernel_seconds);
    return 0;
  }
  const auto t0 = std::chrono::steady_clock::now();
  SpectraAccumulator acc(dev, grid, o);
  const auto t1 = std::chrono::steady_clock::now();
  SplineBatch batch = base;
  for (std::uint64_t first = 0; first < N; first += M) {
    batch.electrons = base.electrons;
    batch.electrons.resize(std::size_t(std::min(M, N - first)));
    for (std::size_t e = 0; e < batch.electrons.size(); ++e) batch.electrons[e].index = first + e;
    acc.accumulate(batch);
  }
  const SpectraSums s = acc.finish();
  const auto t2 = std::chrono::steady_clock::now();
  std::printf("fft_group %d, method %s, %zu directions x %zu frequencies, screen samples %d, %llu electrons (%llu distinct, "
              "solved in %.2f s)\n",
              o.fft_group, name(s.method), grid.directions.size(), grid.omega.size(),
              cell.screen().samples, (unsigned long long)s.electrons, (unsigned long long)M, solve_s);
  const double acc_s = std::chrono::duration<double>(t2 - t1).count();
  std::printf("setup %.3f s, accumulate+finish %.3f s (%.3f ms/electron), device kernels %.3f s\n",
              std::chrono::duration<double>(t1 - t0).count(), acc_s, 1e3 * acc_s / double(N), s.kernel_seconds);
  return 0;
}
