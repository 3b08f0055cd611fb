// Window coverage of solved trajectories (share/docs/design.md, the observer window): per
// electron, the margin by which its spline's first and last knots cover the window at every pixel.
#pragma once
#include <cstdint>
#include <vector>

#include "edm/screen.hpp"
#include "edm/trajectory.hpp"

namespace edm {

// Per electron: the samples whose retarded time falls before the first
// or after the last knot at some pixel.
struct CoverageRecord {
  std::uint64_t electron = 0;
  double margin_start = 0;   // t0_rel − latest arrival of the first knot (≥ 0 is covered)
  double margin_end = 0;     // earliest arrival of the last knot − last sample (≥ 0 is covered)
  std::uint64_t dropped_slots = 0;  // slots with no retarded time inside the spline (upper bound)
  bool clipped() const { return margin_start < 0 || margin_end < 0; }
};
struct CoverageReport {
  std::vector<CoverageRecord> records;   // per electron, concatenated over batches
  std::uint64_t clipped_electrons() const;
  std::uint64_t dropped_slots() const;
  double min_margin_start() const;
  double min_margin_end() const;
};
CoverageReport check_coverage(const Screen& screen, const SplineBatch& batch);

}  // namespace edm
