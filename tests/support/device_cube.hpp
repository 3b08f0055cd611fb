// The device the kernel tests run on, and the cube a FieldAccumulator hands back, for the tests
// that compare the kernel's field with a reference.
#pragma once
#include <memory>
#include <vector>

#include "edm/accumulator.hpp"
#include "edm/device.hpp"
#include "edm/screen.hpp"

namespace edm::test {

// EDM_DEVICE (a device spec, as `edm --device`) or "auto": opened once per test process; its name
// goes into the test log.
std::shared_ptr<Device> env_device();

// Finishes `acc` and returns its cube in the slab layout [bucket][comp][iy][ix][k], NaN where the
// accumulator wrote nothing; rows_per_slab > 0 makes the download go in slabs of that many rows.
std::vector<double> download_cube(FieldAccumulator& acc, const Screen& s, Mode mode, int rows_per_slab);

}  // namespace edm::test
