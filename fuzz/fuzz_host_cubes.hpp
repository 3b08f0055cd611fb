// Shared by the checkpoint fuzz target and the seed writer (make_seeds.cpp): the raw cubes of a
// one-device, total-mode run (2 buckets) held in host memory. The checkpoint reader under test is
// io/ and sees the field stage only through RawCubes (edm/checkpoint.hpp), so no OpenCL device is
// needed; the sizes and the layout fingerprint are those the seed checkpoints were written with.
#pragma once
#include <cstdint>
#include <vector>

#include "edm/checkpoint.hpp"

namespace edm::fuzz {

inline constexpr std::uint64_t kSeedCubeDoubles = 3 * 3 * 2 * 8;  // 3 comps × (3 × 2 pixels) × 8 samples
inline constexpr std::uint64_t kSeedLayoutHash = 0x5eed5eed5eed5eedull;
inline constexpr std::uint64_t kSeedElectrons = 4;  // the campaign's N for check_resume_state

class HostCubes final : public RawCubes {
 public:
  HostCubes() : cube_(2 * kSeedCubeDoubles, 0.0) {}
  std::size_t devices() const override { return 1; }
  int buckets() const override { return 2; }
  std::uint64_t doubles_per_bucket() const override { return kSeedCubeDoubles; }
  std::uint64_t layout_hash() const override { return kSeedLayoutHash; }
  // In chunks of 32 doubles, so that offsets within a bucket are exercised as on a device.
  void download(std::size_t, const Sink& sink) override {
    for (int b = 0; b < 2; ++b)
      for (std::uint64_t off = 0; off < kSeedCubeDoubles; off += 32)
        sink(b, off, &cube_[b * kSeedCubeDoubles + off], std::size_t(std::min<std::uint64_t>(32, kSeedCubeDoubles - off)));
  }
  void upload(std::size_t, const Source& source) override {
    for (int b = 0; b < 2; ++b)
      for (std::uint64_t off = 0; off < kSeedCubeDoubles; off += 32)
        source(b, off, &cube_[b * kSeedCubeDoubles + off], std::size_t(std::min<std::uint64_t>(32, kSeedCubeDoubles - off)));
  }
  std::vector<double>& cube() { return cube_; }

 private:
  std::vector<double> cube_;
};

}  // namespace edm::fuzz
