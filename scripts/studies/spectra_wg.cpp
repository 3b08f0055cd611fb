// The direct spectra's launch on PoCL (BENCHMARKS.md "Direct spectra: an explicit work-group
// size"): the peer case's track and directions (spectra_peer.cpp; 10 directions × N ω, 1 electron,
// default quadrature), timed REPS times; after each, the user CPU of every thread of this process
// that has more than 0.3 s, which shows how many of PoCL's worker threads ran the kernel (one
// work-group runs on one thread). A shared machine's load moves the times, not that split.
//   build (after the edm build) and run:
//   g++ -std=c++20 -O2 -Icore/include scripts/studies/spectra_wg.cpp -Lbuild/core -ledm \
//       -Wl,-rpath,$PWD/build/core -o /tmp/spectra_wg
//   EDM_PLUGIN_PATH=build/plugins /tmp/spectra_wg 2001 1
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "edm/campaign.hpp"
#include "edm/device.hpp"
#include "edm/run.hpp"
#include "edm/spectra.hpp"

using namespace edm;

namespace {

// "a b c" seconds of user CPU of this process's threads that have more than 0.3 s.
std::string busy_threads() {
  std::string out;
  for (const auto& e : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream f(e.path() / "stat");
    std::string line, tok;
    std::getline(f, line);
    std::istringstream is(line.substr(line.rfind(')') + 2));  // fields from 3 (state) on
    for (int i = 3; i < 14; ++i) is >> tok;
    long ticks = 0;
    is >> ticks;  // field 14: utime
    const double sec = double(ticks) / double(sysconf(_SC_CLK_TCK));
    if (sec > 0.3) out += " " + std::to_string(sec).substr(0, 5);
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  const int nw = argc > 1 ? std::atoi(argv[1]) : 2001, reps = argc > 2 ? std::atoi(argv[2]) : 1;
  const auto registry = PluginRegistry::discover();
  const auto keys = registry.get("inverse_thomson").keys();
  auto dev = open_device(select_devices("0").front());
  const double gamma = 5.0, beta = std::sqrt(1 - 1 / (gamma * gamma));
  const double line = (1 + beta) / (1 - beta) / (1 + 0.005);
  SpectraGrid grid;
  for (int k = 0; k < nw; ++k) grid.omega.push_back(line * (0.02 + 1.48 * k / double(nw - 1)));
  for (int d = 0; d < 10; ++d) {
    const double th = 0.4 * d / 9.0;
    grid.directions.push_back({std::sin(th), 0.0, std::cos(th)});
  }
  const std::string text =
      "[run]\nscenario = \"inverse_thomson\"\n[laser]\nprofile = \"plane_wave\"\na0 = 0.1\nduration = "
      "26.7e-15\n"
      "[electrons]\ndistribution = \"sunflower\"\ncount = 1\nradius = 0.0\ngamma = 5.0\n[trajectory]\n"
      "knots_per_period = 16\n[screen]\ndistance = 0.002\nhalf_width_x = 2e-5\nhalf_width_y = 1e-6\nnx = 10\n"
      "ny = 1\nsamples = 16\nsamples_per_period = 2048\n";
  const Campaign c = parse_campaign(text, "spectra-wg", {}, keys, false);
  PreparedCell cell(c, registry);
  const SplineBatch batch = cell.solve(0, 1);
  for (int r = 0; r < reps; ++r) {
    SpectraAccumulator acc(dev, grid);  // the program build is outside the timed part
    const auto t0 = std::chrono::steady_clock::now();
    acc.accumulate(batch);
    const SpectraSums s = acc.finish();
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("count %d rep %d: kernel %.3f s, wall %.3f s; threads with > 0.3 s user:%s\n", nw, r,
                s.kernel_seconds, wall, busy_threads().c_str());
  }
}
