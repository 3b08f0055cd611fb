// scripts/ncu (see prepare): solves N electrons of a campaign and writes their splines, the screen
// and the ring pixel order to cell.bin for the CUDA harness.
#include <edm/run.hpp>
#include <edm/accumulator.hpp>
#include <edm/campaign.hpp>
#include <edm/plugins.hpp>
#include <cstdio>
#include <cstdlib>
using namespace edm;
int main(int argc, char** argv) {
  const int n = argc > 2 ? std::atoi(argv[2]) : 16;
  std::vector<Override> ov; ov.push_back({"electrons.count", std::to_string(n + 1), Origin::CommandLine});
  auto reg = PluginRegistry::discover();
  Campaign c = load_campaign(argv[1], ov, reg.get("inverse_thomson").keys());
  PreparedCell cell(c, reg);
  SplineBatch b = cell.solve(1, n);
  const Screen& s = cell.screen();
  auto perm = pixel_permutation(s, PixelOrder::Rings);
  FILE* f = std::fopen("cell.bin", "wb");
  double hdr[10] = {double(s.nx), double(s.ny), double(s.samples), s.half_x, s.half_y, s.z, s.t0_rel, s.dt, double(n), double(b.coef.size())};
  std::fwrite(hdr, 8, 10, f);
  for (auto& e : b.electrons) {
    double t[6] = {double(e.offset), double(e.n_intervals), e.tau0, e.dtau, 1.0 / e.dtau, e.tau0 + e.dtau * double(e.n_intervals)};
    std::fwrite(t, 8, 6, f);
  }
  std::fwrite(b.coef.data(), 8, b.coef.size(), f);
  std::fwrite(perm.data(), 4, perm.size(), f);
  std::fclose(f);
  std::printf("dumped %d electrons, %zu doubles\n", n, b.coef.size());
}
