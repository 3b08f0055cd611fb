// Pixel orders judged on the CPU: the cubic-layout field kernel (second session) was bound by the
// L1 data pipe, which serves a warp's 16-byte load a quarter-warp (8 lanes, 8 consecutive device
// positions) at a time, one wavefront per distinct interval among them (the quintic kernel is
// bound by FP64 latency instead, but reads fewer lines when lanes share intervals all the same). This solves a few electrons of a
// campaign, finds every pixel's retarded time at a few samples (bisection on the spline), and prints
// for each pixel order the mean number of distinct intervals per quarter-warp, summed over the 4
// quarters of a warp — a proxy for wavefronts per load (4 at best). How the proxy tracked the H200's
// times for ring bands of different widths: BENCHMARKS.md, second session.
//   build and run: scripts/order-proxy/run [CAMPAIGN] [ELECTRONS]
#include <edm/accumulator.hpp>
#include <edm/campaign.hpp>
#include <edm/plugins.hpp>
#include <edm/run.hpp>

#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>
#include <vector>

using namespace edm;

int main(int argc, char** argv) {
  const std::string file = argc > 1 ? argv[1] : "share/campaigns/inverse_thomson_bench.toml";
  const int n = argc > 2 ? std::atoi(argv[2]) : 4;
  auto reg = PluginRegistry::discover();
  const std::string scenario = peek_scenario(file, {});
  const Campaign c = load_campaign(file, {{"electrons.count", std::to_string(n), Origin::CommandLine}},
                                   reg.get(scenario).keys());
  PreparedCell cell(c, reg);
  const SplineBatch b = cell.solve(0, std::uint64_t(n));
  const Screen& s = cell.screen();
  struct Order {
    const char* name;
    std::vector<std::int32_t> perm;
  };
  const std::vector<Order> orders = {{"rings", pixel_permutation(s, PixelOrder::Rings)},
                                     {"tiles 4x8", pixel_permutation(s, PixelOrder::Tiles, 4, 8)},
                                     {"rows", pixel_permutation(s, PixelOrder::Rows)}};
  std::printf("%-10s", "electron");
  for (const auto& o : orders) std::printf(" %10s", o.name);
  std::printf("   (distinct intervals per quarter-warp, summed over a warp; 4 at best)\n");
  for (int e = 0; e < n; ++e) {
    const auto& sp = b.electrons[std::size_t(e)];
    std::vector<double> sum(orders.size(), 0.0);
    int rounds = 0;
    for (int k : {s.samples / 4, s.samples / 2, 3 * s.samples / 4}) {
      const double t = s.t_rel(k);
      std::vector<long> j(s.pixels());
      for (int iy = 0; iy < s.ny; ++iy)
        for (int ix = 0; ix < s.nx; ++ix) {
          double lo = sp.tau0, hi = sp.tau_end(), y[kSplineComponents];
          for (int it = 0; it < 60; ++it) {
            const double m = 0.5 * (lo + hi);
            b.eval(std::size_t(e), m, y);
            (s.arrival_rel(y, s.pixel_x(ix), s.pixel_y(iy)) < t ? lo : hi) = m;
          }
          j[std::size_t(iy) * s.nx + ix] = long((lo - sp.tau0) / sp.dtau);
        }
      for (std::size_t o = 0; o < orders.size(); ++o) {
        const auto& p = orders[o].perm;
        double tot = 0;
        std::size_t warps = 0;
        for (std::size_t w = 0; w + 32 <= p.size(); w += 32, ++warps)
          for (int q = 0; q < 4; ++q) {
            std::set<long> d;
            for (int l = 0; l < 8; ++l) d.insert(j[std::size_t(p[w + 8 * q + l])]);
            tot += double(d.size());
          }
        sum[o] += warps ? tot / double(warps) : 0.0;
      }
      ++rounds;
    }
    std::printf("%-10d", e);
    for (double v : sum) std::printf(" %10.2f", v / rounds);
    std::printf("\n");
  }
}
