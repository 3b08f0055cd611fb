// edm compare RUN_A RUN_B (issue 31 item 5): how far two runs of the same screen differ, dataset by
// dataset, taking the io owners' objects (FieldFile, SpectrumFile), never a path. Relative L2
// ‖a−b‖/‖b‖ and max |a−b| per field.h5 component (read slab by slab: bounded memory), per numeric
// dataset of spectrum.h5's two parts (SpectrumFile::datasets); complex maps (the harmonic maps)
// also in amplitude and in phase weighted by B's amplitude. Runs of another screen, mode or bucket
// set are refused (ConfigError EDM-CMP-001 naming the first difference), not compared.
#pragma once
#include <string>
#include <vector>

#include "edm/field_file.hpp"
#include "edm/spectrum_file.hpp"

namespace edm {

// One compared quantity. `rel_l2` is ‖a−b‖/‖b‖ (0 when both are zero, inf when only b is); for a
// "phase" row it is the amplitude-weighted RMS of the wrapped phase difference (rad), which for
// small differences is the relative error the phase adds to the complex value. `max_abs` is
// max |a−b| in the dataset's unit (a phase row: the largest wrapped |Δφ| where |b| is above
// kPhaseFloor of its maximum). A NaN in one run and not the other makes both inf.
struct CompareRow {
  std::string file;     // "field.h5" | "spectrum.h5"
  std::string name;     // "/E/x", "harmonic_field/circular", "direct/coherent"
  std::string measure;  // "value" | "amplitude" | "phase"
  std::string unit;     // the dataset's unit ("" unknown; "rad" for a phase row)
  double rel_l2 = 0, max_abs = 0;
  std::size_t elements = 0;
};

struct CompareResult {
  std::vector<CompareRow> rows;
  std::vector<std::string> only_a, only_b;  // datasets (or spectrum.h5 parts) that one run has
  std::vector<std::string> not_compared;    // what both have but the comparison leaves out (mirror_z: spectrum.h5)
  // The row of largest rel_l2 (NaN and inf first); nullptr without rows.
  const CompareRow* largest() const;
};

// The fraction of B's largest amplitude below which a pixel's phase is left out of a phase row's
// max_abs (its weighted RMS needs no floor: the weight is |b|²).
inline constexpr double kPhaseFloor = 1e-3;
// The relative agreement two screens' axes (x, y, t) must have to be the same screen.
inline constexpr double kAxisTolerance = 1e-12;

// ConfigError EDM-CMP-001 naming the first difference (screen type, nx, ny, samples, an axis x,
// y or t beyond kAxisTolerance relative, the screen distance, mode, buckets) when the two field
// files are not of one screen. mirror_z: B is a mirror run of A, reflected in z → −z (thomson
// against inverse_thomson at γ = 1, whose lasers run along +z and −z): flat screens only (an
// angular screen's mirror reverses its θy grid: refused), B's at −distance of A's.
void check_comparable(const FieldFile& a, const FieldFile& b, bool mirror_z = false);

// check_comparable, then every component of field.h5, then the spectrum.h5 parts both have (a or
// b may be null: that run has no spectrum.h5, and what the other has is listed as only its own).
// A dataset both have in other shapes is EDM-CMP-001 naming it. mirror_z: B's field reflected
// before it is compared (E a vector, B an axial vector: E_z, B_x and B_y change sign); spectrum.h5
// is then listed as not compared (its components and polarisations do not reflect component-wise).
CompareResult compare_runs(const FieldFile& a, const FieldFile& b, const SpectrumFile* sa, const SpectrumFile* sb,
                           bool mirror_z = false);

}  // namespace edm
