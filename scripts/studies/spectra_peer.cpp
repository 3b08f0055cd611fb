// The peer case of the direct spectra (BENCHMARKS.md "Direct spectra"): one inverse-Thomson track
// (γ = 5, a0 = 0.1, plane-wave pulse of τ0 = 26.7 fs), 2001 frequencies × 10 directions, on the
// OpenCL device 0, for a list of (knots per period, nodes, phase) settings; prints the kernel time
// and the worst relative L2 (over the directions) of d²W/dωdΩ against the most accurate setting,
// and, for the cost model, the time of the alternative: the field kernel on a 10-pixel far screen
// with the same sampling (T/2048) plus GSL FFTs of its three components.
//   build and run (after the edm build):
//   g++ -std=c++20 -O2 -Icore/include scripts/studies/spectra_peer.cpp -Lbuild/core -ledm \
//       -Wl,-rpath,$PWD/build/core $(pkg-config --libs gsl) -o /tmp/spectra_peer
//   EDM_PLUGIN_PATH=build/plugins /tmp/spectra_peer
#include <gsl/gsl_fft_real.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <numbers>
#include <string>
#include <vector>

#include "edm/accumulator.hpp"
#include "edm/campaign.hpp"
#include "edm/device.hpp"
#include "edm/run.hpp"
#include "edm/spectra.hpp"

using namespace edm;

namespace {

// The screen only bounds the trajectory (it is integrated until the screen's window is covered):
// a small near one for the spectra, whose directions are their own grid; for the FFT path a far
// one of 10 pixels within 0.1 mrad, sampled like the peer case.
std::string campaign_text(int knots, int samples) {
  return "[run]\nscenario = \"inverse_thomson\"\n[laser]\nprofile = \"plane_wave\"\na0 = 0.1\nduration = 26.7e-15\n"
         "[electrons]\ndistribution = \"sunflower\"\ncount = 1\nradius = 0.0\ngamma = 5.0\n"
         "[trajectory]\nknots_per_period = " + std::to_string(knots) +
         (samples > 16 ? "\n[screen]\ndistance = 1.0\nhalf_width_x = 1e-4\n" : "\n[screen]\ndistance = 0.002\nhalf_width_x = 2e-5\n") +
         "half_width_y = 1e-6\nnx = 10\nny = 1\nsamples = " +
         std::to_string(samples) + "\nsamples_per_period = 2048\n";
}

double seconds(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main() {
  const auto registry = PluginRegistry::discover();
  const auto keys = registry.get("inverse_thomson").keys();
  auto dev = open_device(select_devices("0").front());
  // The grid: 10 polar angles 0 … 2/γ about the electron's direction (+z), 2001 frequencies over
  // 0.02 … 1.5 of the line ω_1 = ω(1+β)/(1−β)/(1 + a0²/2).
  const double gamma = 5.0, beta = std::sqrt(1 - 1 / (gamma * gamma));
  const double line = (1 + beta) / (1 - beta) / (1 + 0.005);
  SpectraGrid grid;
  for (int k = 0; k < 2001; ++k) grid.omega.push_back(line * (0.02 + 1.48 * k / 2000.0));
  for (int d = 0; d < 10; ++d) {
    const double th = 0.4 * d / 9.0;
    grid.directions.push_back({std::sin(th), 0.0, std::cos(th)});
  }
  struct Setting {
    int knots, nodes;
    double phase;
  };
  // The first setting is the reference (the most accurate); the others are timed against it.
  const std::vector<Setting> settings = {{32, 12, 1.0}, {16, 8, 2.0}, {16, 6, 2.0}, {16, 4, 1.0},
                                         {16, 8, 4.0},  {8, 8, 2.0}};
  std::vector<double> ref;
  for (const auto& s : settings) {
    const Campaign c = parse_campaign(campaign_text(s.knots, 16), "peer", {}, keys, false);
    PreparedCell cell(c, registry);
    const SplineBatch batch = cell.solve(0, 1);
    SpectraOptions o;
    o.nodes = s.nodes;
    o.phase = s.phase;
    const auto t0 = std::chrono::steady_clock::now();
    SpectraAccumulator acc(dev, grid, o);  // the program build is outside the timed kernel
    acc.accumulate(batch);
    const SpectraSums sums = acc.finish();
    const double wall = seconds(t0);
    if (ref.empty()) ref = sums.incoherent;
    double worst = 0;
    for (std::size_t d = 0; d < grid.directions.size(); ++d) {
      double num = 0, den = 0;
      for (std::size_t k = 0; k < grid.omega.size(); ++k) {
        const std::size_t i = d * grid.omega.size() + k;
        num += (sums.incoherent[i] - ref[i]) * (sums.incoherent[i] - ref[i]);
        den += ref[i] * ref[i];
      }
      worst = std::max(worst, std::sqrt(num / den));
    }
    std::printf("knots/period %3d  nodes %2d  phase %.2f  intervals %6u  kernel %8.3f s  wall %8.3f s  "
                "worst rel. L2 %.2e\n",
                s.knots, s.nodes, s.phase, batch.electrons[0].n_intervals, sums.kernel_seconds, wall, worst);
  }
  // The FFT path's first step on the same device: R E_far on 10 pixels at T/2048 over the track.
  const int samples = 134480;
  const Campaign c = parse_campaign(campaign_text(16, samples), "peer-fft", {}, keys, false);
  PreparedCell cell(c, registry);
  const SplineBatch batch = cell.solve(0, 1);
  const auto t0 = std::chrono::steady_clock::now();
  FieldAccumulator field(dev, cell.screen(), Mode::Split, KernelOptions{});
  field.accumulate(batch);
  std::vector<double> trace(samples);
  field.finish([&](int b, int comp, int, int, const double* d) {
    if (b == 2 && comp == 0) std::copy(d, d + samples, trace.begin());
  });
  const double t_field = seconds(t0);
  const auto t1 = std::chrono::steady_clock::now();
  gsl_fft_real_wavetable* wt = gsl_fft_real_wavetable_alloc(samples);
  gsl_fft_real_workspace* ws = gsl_fft_real_workspace_alloc(samples);
  for (int r = 0; r < 30; ++r) {  // 10 directions × 3 components
    std::vector<double> x = trace;
    gsl_fft_real_transform(x.data(), 1, samples, wt, ws);
  }
  gsl_fft_real_wavetable_free(wt);
  gsl_fft_real_workspace_free(ws);
  std::printf("FFT path: field kernel (10 pixels x %d samples, split mode) %.3f s (kernel %.3f s), "
              "30 GSL FFTs of %d: %.3f s\n",
              samples, t_field, field.timing().kernel_seconds, samples, seconds(t1));
  return 0;
}
