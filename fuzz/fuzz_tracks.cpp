// libFuzzer target: bytes → temporary .h5 file → edm::read_tracks, then the field.h5 readers
// (read_field_component, read_dataset_1d) on the same file. Bad files must be refused with an
// edm::Error; any other exception (bad_alloc from a size taken on trust included), a crash or UB is
// a bug. Accepted tracks must satisfy tracks.hpp: equal column lengths, ≥ 4 samples, t increasing.
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "edm/error.hpp"
#include "edm/tracks.hpp"
#include "edm/writer.hpp"
#include "fuzz_input_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static edm::fuzz::InputFile file(".h5");
  const std::string& path = file.write(data, size);
  try {
    for (const auto& td : edm::read_tracks(path)) {
      const std::size_t n = td.t.size();
      if (n < 4 || td.x.size() != n || td.y.size() != n || td.z.size() != n || td.ux.size() != n ||
          td.uy.size() != n || td.uz.size() != n)
        __builtin_trap();
      for (std::size_t k = 1; k < n; ++k)
        if (!(td.t[k] > td.t[k - 1])) __builtin_trap();
    }
  } catch (const edm::Error&) {
  }
  // The same bytes as a field file: the readers used by tests and `edm info` take sizes from it.
  try {
    std::size_t ny = 0, nx = 0, ns = 0;
    const auto v = edm::read_field_component(path, "/E/x", &ny, &nx, &ns);
    if (v.size() != ny * nx * ns) __builtin_trap();
  } catch (const edm::Error&) {
  }
  try {
    (void)edm::read_dataset_1d(path, "/axes/t");
  } catch (const edm::Error&) {
  }
  return 0;
}
