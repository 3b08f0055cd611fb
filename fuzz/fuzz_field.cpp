// libFuzzer target: bytes → temporary field.h5 → the readers of `edm info` (FieldFile::summary,
// SpectrumFile::summary) and of `edm spectrum` (compute_spectrum, one row per slab so that every
// row read goes through the shape checks, one thread). Bad files must be refused with an
// edm::Error; any other exception (bad_alloc from a size taken on trust included), a crash, a read
// past a buffer or UB is a bug. What is accepted must be consistent: a spectrum of the summary's
// shape, with ⌊N/2⌋ + 1 frequencies.
#include <cstddef>
#include <cstdint>

#include "edm/error.hpp"
#include "edm/field_file.hpp"
#include "edm/run_folder.hpp"
#include "edm/spectrum_file.hpp"
#include "edm/spectrum.hpp"
#include "fuzz_input_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static edm::fuzz::InputFile file(".h5");
  const std::string& path = file.write(data, size);
  edm::FieldFileSummary summary;
  bool summarised = false;
  try {
    summary = edm::FieldFile::open(path).summary();
    summarised = true;
  } catch (const edm::Error&) {
  }
  try {
    (void)edm::SpectrumFile::open(path).summary();
  } catch (const edm::Error&) {
  }
  try {
    // The seeds' laser (800 nm) and a harmonic band, so that the band integrals run too.
    edm::RunPhysics physics;
    physics.scenario = "inverse_thomson";
    physics.laser_omega = 2.354564459136067e15;
    physics.gamma = 5;
    physics.a0 = 0.1;
    edm::SpectrumOptions o;
    o.harmonics = {1};
    o.band = 0.25;
    o.slab_bytes = 1;
    o.threads = 1;
    const edm::SpectrumResult r = edm::compute_spectrum(edm::FieldFile::open(path), physics, o);
    if (r.fluence.size() != r.nx * r.ny || r.omega.size() != r.samples / 2 + 1) __builtin_trap();
    if (summarised && (summary.nx != r.nx || summary.ny != r.ny || summary.samples != r.samples)) __builtin_trap();
  } catch (const edm::Error&) {
  }
  return 0;
}
