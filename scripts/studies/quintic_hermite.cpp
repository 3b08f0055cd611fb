// The study behind the quintic spline layout (trajectory.hpp since the third session; BENCHMARKS.md):
// the cubic-layout kernel was bound by the bytes each lane read per slot — the t,x,y,z, u and a
// cubics of an interval, 44 doubles. A single quintic Hermite for t,x,y,z from the exact x, u = dx/dτ and a = du/dτ at both
// knots (24 doubles) gives x, u = x′ and a = x″. This compares both against the exact plane-wave
// orbits of tests/support at mid-interval points (maximum absolute error over 4 carrier periods).
//   build and run (after scripts/bootstrap):
//   g++ -std=c++20 -O2 -Itests/support -Icore/include scripts/studies/quintic_hermite.cpp \
//       build/tests/libedm_test_support.a -Lbuild/core -ledm -Wl,-rpath,$PWD/build/core \
//       -lboost_unit_test_framework -o /tmp/quintic && /tmp/quintic
#include "analytic_splines.hpp"
#include <cmath>
#include <cstdio>
#include <numbers>
using namespace edm;
// cubic Hermite on [0,h] from f0,d0,f1,d1: value/derivative at s
static void cub(double f0, double d0, double f1, double d1, double h, double s, double& v, double& dv, double& ddv) {
  double c2 = (3 * (f1 - f0) / h - 2 * d0 - d1) / h, c3 = (2 * (f0 - f1) / h + d0 + d1) / (h * h);
  v = f0 + s * (d0 + s * (c2 + s * c3)); dv = d0 + s * (2 * c2 + 3 * c3 * s); ddv = 2 * c2 + 6 * c3 * s;
}
// quintic Hermite from f, f', f'' at both ends: value, 1st, 2nd derivative at s
static void quint(double f0, double d0, double e0, double f1, double d1, double e1, double h, double s, double& v, double& dv, double& ddv) {
  double a0 = f0, a1 = d0, a2 = e0 / 2;
  double F = f1 - (a0 + a1 * h + a2 * h * h), D = d1 - (a1 + 2 * a2 * h), E = e1 - 2 * a2;
  double h3 = h * h * h;
  double a3 = (10 * F - 4 * D * h + E * h * h / 2) / h3;
  double a4 = (-15 * F + 7 * D * h - E * h * h) / (h3 * h);
  double a5 = (6 * F - 3 * D * h + E * h * h / 2) / (h3 * h * h);
  v = a0 + s * (a1 + s * (a2 + s * (a3 + s * (a4 + s * a5))));
  dv = a1 + s * (2 * a2 + s * (3 * a3 + s * (4 * a4 + s * 5 * a5)));
  ddv = 2 * a2 + s * (6 * a3 + s * (12 * a4 + s * 20 * a5));
}
int main() {
  struct Case { const char* name; test::Worldline w; double h0; };
  double gam = 5, beta = std::sqrt(1 - 1 / (gam * gam)), hh = gam * (1 + beta);
  Case cases[] = {{"thomson a0=0.5 from rest", test::plane_wave_orbit(0.5, 0, 1.0, +1), 1.0},
                  {"inverse Thomson gamma=5 a0=0.5", test::plane_wave_orbit(0.5, 0, hh, -1), hh}};
  for (auto& c : cases) for (int kpp : {16, 32}) {
    const double h = 2 * std::numbers::pi / (kpp * c.h0);
    double ex_c = 0, eu_c = 0, ea_c = 0, ex_q = 0, eu_q = 0, ea_q = 0, mx = 0, mu = 0, ma = 0;
    for (int j = 0; j < 4 * kpp; ++j) {
      double y0[8], a0[4], d0[4], y1[8], a1[4], d1[4];
      c.w(j * h, y0, a0, d0); c.w((j + 1) * h, y1, a1, d1);
      for (int q = 1; q < 8; ++q) {
        double s = h * q / 8, y[8], a[4], da[4]; c.w(j * h + s, y, a, da);
        for (int comp = 0; comp < 4; ++comp) {
          double v, dv, ddv;
          // current: x cubic Hermite (x,u), u cubic Hermite (u,a), a cubic Hermite (a, da) (test-support form)
          cub(y0[comp], y0[4 + comp], y1[comp], y1[4 + comp], h, s, v, dv, ddv); ex_c = std::fmax(ex_c, std::fabs(v - y[comp]));
          if (comp > 0) { cub(y0[4 + comp], a0[comp], y1[4 + comp], a1[comp], h, s, v, dv, ddv); eu_c = std::fmax(eu_c, std::fabs(v - y[4 + comp])); }
          cub(a0[comp], d0[comp], a1[comp], d1[comp], h, s, v, dv, ddv); ea_c = std::fmax(ea_c, std::fabs(v - a[comp]));
          quint(y0[comp], y0[4 + comp], a0[comp], y1[comp], y1[4 + comp], a1[comp], h, s, v, dv, ddv);
          ex_q = std::fmax(ex_q, std::fabs(v - y[comp])); if (comp > 0) eu_q = std::fmax(eu_q, std::fabs(dv - y[4 + comp])); ea_q = std::fmax(ea_q, std::fabs(ddv - a[comp]));
          mx = std::fmax(mx, std::fabs(y[comp] - y[0] * (comp == 0))); mu = std::fmax(mu, std::fabs(y[4 + comp]) * (comp > 0)); ma = std::fmax(ma, std::fabs(a[comp]));
        }
      }
    }
    std::printf("%-32s %2d knots/period | cubic pieces: x %.2e u %.2e a %.2e | quintic x: x %.2e u=x' %.2e a=x'' %.2e (abs; |u|max %.2g |a|max %.2g)\n",
                c.name, kpp, ex_c, eu_c, ea_c, ex_q, eu_q, ea_q, mu, ma);
  }
}
