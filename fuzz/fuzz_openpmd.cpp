// libFuzzer target: bytes → temporary .h5 file → edm::read_openpmd_tracks (a group-based openPMD
// series in one file). Bad files must be refused with an edm::Error; any other exception (bad_alloc
// from a declared shape taken on trust included), a crash or UB is a bug. Accepted tracks must satisfy
// openpmd_particles.hpp: one id per track, equal column lengths, ≥ 4 samples, t increasing, every
// value within the bounds of every electron input (edm/ensemble.hpp).
#include <cstddef>
#include <cstdint>

#include "edm/ensemble.hpp"
#include "edm/error.hpp"
#include "edm/openpmd_particles.hpp"
#include "fuzz_input_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static edm::fuzz::InputFile file(".h5");
  const std::string& path = file.write(data, size);
  try {
    const edm::OpenPmdTracks out = edm::read_openpmd_tracks(path);
    if (out.ids.size() != out.tracks.size()) __builtin_trap();
    for (const auto& td : out.tracks) {
      const std::size_t n = td.t.size();
      if (n < 4 || td.x.size() != n || td.y.size() != n || td.z.size() != n || td.ux.size() != n ||
          td.uy.size() != n || td.uz.size() != n)
        __builtin_trap();
      for (std::size_t k = 0; k < n; ++k) {
        if (k > 0 && !(td.t[k] > td.t[k - 1])) __builtin_trap();
        const edm::ElectronInit e{td.t[k], td.x[k], td.y[k], td.z[k], td.ux[k], td.uy[k], td.uz[k], td.w};
        if (!edm::electron_out_of_range(e).empty()) __builtin_trap();
      }
    }
  } catch (const edm::Error&) {
  }
  return 0;
}
