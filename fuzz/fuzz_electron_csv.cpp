// libFuzzer target: bytes → temporary CSV file → edm::read_electron_csv. Bad input must be refused
// with an edm::Error; any other exception, a crash or UB is a bug. An accepted list must hold what
// the reader promises: at least one electron, every value finite, |u| within its documented bound.
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "edm/ensemble.hpp"
#include "edm/error.hpp"
#include "fuzz_input_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static edm::fuzz::InputFile file(".csv");
  const std::string& path = file.write(data, size);
  std::vector<edm::ElectronInit> list;
  try {
    list = edm::read_electron_csv(path);
  } catch (const edm::Error&) {
    return 0;
  }
  if (list.empty()) __builtin_trap();
  for (const auto& e : list) {
    const double v[7] = {e.t0, e.x, e.y, e.z, e.ux, e.uy, e.uz};
    for (double x : v)
      if (!std::isfinite(x)) __builtin_trap();
    if (!(e.ux * e.ux + e.uy * e.uy + e.uz * e.uz <= 1e16)) __builtin_trap();
  }
  return 0;
}
