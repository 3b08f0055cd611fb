// Internal: 64-bit FNV-1a, the one hash of the core — the kernel-cache key (device.cpp) and the
// fingerprint of the cube's device layout (accumulator.cpp). Not for security; collisions only
// cost what the caller says.
#pragma once
#include <cstdint>
#include <string_view>

namespace edm::detail {

inline constexpr std::uint64_t kFnvOffset = 0xcbf29ce484222325ULL;

inline std::uint64_t fnv1a_byte(std::uint64_t h, unsigned char c) { return (h ^ c) * 0x100000001b3ULL; }

inline std::uint64_t fnv1a(std::string_view bytes, std::uint64_t h = kFnvOffset) {
  for (unsigned char c : bytes) h = fnv1a_byte(h, c);
  return h;
}

}  // namespace edm::detail
