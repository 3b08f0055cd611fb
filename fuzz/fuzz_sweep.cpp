// libFuzzer target: campaign TOML text with a [sweep] table → edm::read_sweep, then edm::expand_sweep
// (the cells and their labels). edm::Error is the contract for bad input; any other exception (a
// bad_alloc from a count taken on trust included), a crash or UB is a bug. Accepted sweeps must keep
// their promises: at most the ceiling of cells, every cell with one value per axis, labels distinct
// and short enough for a file name (sweep.hpp, share/docs/sweeps.md).
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>

#include "edm/error.hpp"
#include "edm/sweep.hpp"
#include "fuzz_input_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static edm::fuzz::InputFile file(".toml");
  const std::string& path = file.write(data, size);
  try {
    // The scenario's own keys are checked by name only: none is needed to reach the table's parser.
    const edm::SweepSpec spec = edm::read_sweep(path, "inverse_thomson", {}, false);
    const auto cells = edm::expand_sweep(spec, false);
    if (cells.empty() || cells.size() > 1'000'000) __builtin_trap();
    std::set<std::string> labels;
    for (const auto& c : cells) {
      if (c.overrides.size() != spec.axes.size()) __builtin_trap();
      if (c.label.empty() || c.label.size() > 255 || !labels.insert(c.label).second) __builtin_trap();
    }
  } catch (const edm::Error&) {
  }
  return 0;
}
