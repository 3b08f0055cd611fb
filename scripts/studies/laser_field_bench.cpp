// Time of one laser field evaluation (edm::Laser::field) for the Gaussian and the Laguerre–Gauss beam
// of share/campaigns/seed_strong_cell.toml (a0 0.3, w0 60 µm, LG p = 2, m = −2, circular_minus). The
// trajectory solve evaluates the field 14 times per knot (rk8pd's 13 stages and the knot's record), so
// this bounds the host's share of a cell with many knots (BENCHMARKS.md, "the LG field").
// Build here after scripts/bootstrap:
//   g++ -std=c++20 -O2 -Icore/include scripts/studies/laser_field_bench.cpp -o /tmp/laser_field_bench \
//       -Lbuild/core -ledm -Wl,-rpath,$PWD/build/core && /tmp/laser_field_bench
#include <chrono>
#include <cstdio>

#include "edm/laser.hpp"
#include "edm/schema.hpp"

int main() {
  using namespace edm;
  const Normalization units = Normalization::from_wavelength(800e-9);
  for (const char* profile : {"gaussian", "laguerre_gauss"}) {
    LaserSection s;
    s.profile = parse_choice<LaserProfile>(profile);
    s.a0 = 0.3;
    s.waist = 60e-6;
    s.envelope = parse_choice<Envelope>("gaussian");
    s.duration = 63.66e-15;
    s.p = 2;
    s.m = -2;
    s.polarization = parse_choice<Polarization>("circular_minus");
    s.phase = -1.5707963267948966;
    const auto laser = make_laser(s, units, -1);
    double sum = 0, E[3], B[3];
    const int n = 2000000;
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < n; ++i) {
      const double x4[4] = {0.001 * i, 100.0 + 1e-4 * i, 50.0, -0.001 * i};  // through the pulse
      laser->field(x4, E, B);
      sum += E[0] + B[2];  // used, so the loop is not dropped
    }
    const double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("%s: %.1f ns per field evaluation (checksum %.6g)\n", profile, dt / n * 1e9, sum);
  }
}
