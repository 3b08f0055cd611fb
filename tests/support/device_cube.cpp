// The device of the kernel tests and the cube of a finished accumulator (device_cube.hpp).
#include "device_cube.hpp"

#include <boost/test/unit_test.hpp>
#include <cmath>
#include <cstdlib>
#include <cstring>

namespace edm::test {

std::shared_ptr<Device> env_device() {
  static std::shared_ptr<Device> d = [] {
    const char* spec = std::getenv("EDM_DEVICE");
    auto sel = select_devices(spec ? spec : "auto");
    BOOST_TEST_MESSAGE("device: [" << sel.front().index << "] " << sel.front().name << " ("
                                   << sel.front().platform << ")");
    return open_device(sel.front());
  }();
  return d;
}

std::vector<double> download_cube(FieldAccumulator& acc, const Screen& s, Mode mode, int rows_per_slab) {
  const std::size_t row = std::size_t(s.nx) * s.samples;
  std::vector<double> cube(std::size_t(bucket_count(mode)) * 3 * s.ny * row, std::nan(""));
  acc.finish(
      [&](int b, int c, int iy0, int iy1, const double* d) {
        std::memcpy(cube.data() + ((std::size_t(b) * 3 + c) * s.ny + iy0) * row, d,
                    std::size_t(iy1 - iy0) * row * sizeof(double));
      },
      rows_per_slab);
  return cube;
}

}  // namespace edm::test
