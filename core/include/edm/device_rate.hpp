// Per-device measurements cached per device and driver (~/.cache/edm): the field rate `edm bench`
// reached (slots/s, for `edm run --dry-run` time estimates) and the FP64 peak of the FMA-chain probe
// (FLOP/s, for the manifest's peak_fraction_field and `edm bench`), so that estimates and fractions
// come from measurements rather than guesses, without re-measuring on every run.
#pragma once
#include <string>

#include "edm/device.hpp"

namespace edm {

void record_device_value(const DeviceInfo& info, const std::string& name, double value);
double cached_device_value(const DeviceInfo& info, const std::string& name);  // 0 if never measured

inline void record_device_rate(const DeviceInfo& info, double slots_per_second) {
  record_device_value(info, "rate", slots_per_second);
}
inline double cached_device_rate(const DeviceInfo& info) { return cached_device_value(info, "rate"); }
// The FMA-chain peak: measured (and cached) unless a cached value exists or `remeasure` is set.
double fp64_peak(const DeviceInfo& info, bool remeasure = false);
// The cache entry of that peak. Since the probe runs its chains on the device's FP64 vector lanes
// (cl/fma_peak.cl) it has a new name: the scalar probe's values (an eighth of an AVX-512 core's
// peak) are not read as this one's.
inline constexpr const char* kPeakValue = "peak-lanes";

}  // namespace edm
