// A run folder with a field chosen by the test (issue 14's twisted-light tests): field.h5 written by
// edm::FieldWriter from a function of pixel position and absolute observer time (SI), and a minimal
// run.toml, so that the analysis runs without `edm run`.
#pragma once
#include <filesystem>
#include <functional>
#include <string>

#include "edm/screen.hpp"

namespace edm::test {

struct SyntheticRun {
  int nx = 17, ny = 17, samples = 512, samples_per_period = 32;
  double half_width = 1e-3, z = 0.05;  // m (z signed: the screen plane)
  double wavelength = 800e-9;          // m
  double t_start = 0;                  // s: absolute time of sample 0 is |z|/c + t_start
  Mode mode = Mode::Total;
  std::string scenario = "thomson";
  double a0 = 0.1;
};

// Field at pixel centre (x, y) (m) and absolute time t (s): E (V/m) and B (T), the same for every
// bucket of the mode (E_far = E in split mode).
using SyntheticField = std::function<void(double x, double y, double t, double E[3], double B[3])>;

// Writes <temp>/<tag>/field.h5 and run.toml; returns the folder.
std::filesystem::path make_synthetic_run(const std::string& tag, const SyntheticRun& s,
                                         const SyntheticField& f);

}  // namespace edm::test
