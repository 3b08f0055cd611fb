// libFuzzer target: bytes → temporary checkpoint.h5 → read_checkpoint_state, check_resume_state
// (the campaign's N of the seeds) and load_checkpoint_cube into host cubes (fuzz_host_cubes.hpp).
// Bad files must be refused with an edm::Error; any other exception (bad_alloc from a size taken on
// trust included), a crash or UB is a bug. What is accepted must hold what the readers promise:
// γ vectors of one length, a restored cube that is finite; and an accepted state, written again
// with write_checkpoint, must read back the same.
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "edm/checkpoint.hpp"
#include "edm/error.hpp"
#include "fuzz_host_cubes.hpp"
#include "fuzz_input_file.hpp"

namespace {

bool same(const edm::CheckpointState& a, const edm::CheckpointState& b) {
  return a.run_id == b.run_id && a.campaign_text == b.campaign_text && a.next_electron == b.next_electron &&
         a.batches_done == b.batches_done && a.knots_total == b.knots_total && a.gamma.sum == b.gamma.sum &&
         a.gamma.count == b.gamma.count && a.gamma.drain.size() == b.gamma.drain.size() &&
         a.coverage.size() == b.coverage.size() && a.kernel == b.kernel;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static edm::fuzz::InputFile file(".h5");
  static edm::fuzz::InputFile again(".again.h5");
  const std::string& path = file.write(data, size);
  edm::CheckpointState st;
  try {
    st = edm::read_checkpoint_state(path);
  } catch (const edm::Error&) {
    return 0;
  }
  const std::size_t n = st.gamma.count.size();
  if (st.gamma.sum.size() != n || st.gamma.min.size() != n || st.gamma.max.size() != n) __builtin_trap();
  try {
    edm::check_resume_state(st, edm::fuzz::kSeedElectrons, path);
  } catch (const edm::Error&) {
  }
  edm::fuzz::HostCubes cubes;
  try {
    edm::load_checkpoint_cube(path, cubes);
    for (double v : cubes.cube())
      if (!std::isfinite(v)) __builtin_trap();
  } catch (const edm::Error&) {
    return 0;
  }
  // Not in a try: an accepted state and cube must be writable and read back unchanged.
  edm::write_checkpoint(again.path(), st, cubes);
  if (!same(edm::read_checkpoint_state(again.path()), st)) __builtin_trap();
  return 0;
}
