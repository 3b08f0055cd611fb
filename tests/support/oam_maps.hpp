// Synthetic complex maps on a square pixel grid for the OAM ring tests (test_oam_rings,
// test_oam_headline): the grid and a map of f(x, y) sampled on its pixel centres.
#pragma once
#include <complex>
#include <string>
#include <vector>

#include "edm/harmonics.hpp"

namespace edm::test {

inline bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// n × n pixel centres from −half to +half on both axes.
inline GridGeometry square_grid(std::size_t n, double half) {
  std::vector<double> x(n);
  for (std::size_t i = 0; i < n; ++i) x[i] = -half + 2 * half * double(i) / double(n - 1);
  return grid_geometry(x, x);
}

// A map of f(x, y) on the grid's pixel centres, row-major (iy, ix).
template <class F>
std::vector<std::complex<double>> sample_map(const GridGeometry& g, F f) {
  std::vector<std::complex<double>> m(g.nx * g.ny);
  for (std::size_t j = 0; j < g.ny; ++j)
    for (std::size_t i = 0; i < g.nx; ++i) m[j * g.nx + i] = f(g.x0 + g.dx * double(i), g.y0 + g.dy * double(j));
  return m;
}

}  // namespace edm::test
