// Internal: the field cube of a FieldAccumulator on its device, for the fft method of the spectra
// (core/src/field/spectra_fft.cpp), which reads each electron's far-field series where the field
// kernel wrote it instead of downloading it. The cube's layout is [comp][k][position]
// (cl/lienard_wiechert.cl); pixel_of maps a position to its pixel.
#pragma once
#include <cstdint>
#include <vector>

#include "edm/accumulator.hpp"
#include "field/opencl_internal.hpp"

namespace edm::detail {

struct FieldAccess {
  static cl::Buffer& bucket(FieldAccumulator& a, int b);  // 0 E, 1 B (, 2 E_far, 3 B_far in split mode)
  static const std::vector<std::int32_t>& pixel_of(const FieldAccumulator& a);
};

}  // namespace edm::detail
